#include "json.h"

#include <stdio.h>
#include <string.h>

const char *ce_json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

void ce_json_copy(const cJSON *o, const char *key, char *out, size_t n)
{
    const char *s = ce_json_str(o, key);
    if (n > 0) snprintf(out, n, "%s", s ? s : "");
}

/* One pass over the text: strings (with escapes) and nesting followed, the
 * top-level members' keys compared with name. */
static int top_member(const char *t, size_t len, const char *name, size_t *key_at, size_t *val_at, size_t *end,
                      bool to_end, bool dotted)
{
    size_t i = 0, ks = 0, nl = strlen(name);
    int depth = 0;
    bool want = false;      /* the key just read at depth 1 is name and ':' came */
    bool key_done = false;  /* a depth-1 string just ended: a key if ':' follows */
    bool is_name = false;
    while (i < len) {
        char ch = t[i];
        if (ch == '"') {
            size_t s = i++;
            for (;;) {   /* to the closing quote, a jump at a time (the text is NUL-terminated) */
                if (i >= len) return -1;   /* a backslash was the last byte */
                i += strcspn(t + i, "\"\\");
                if (i >= len) return -1;
                if (t[i] == '"') break;
                i += 2;   /* an escape: the character after the backslash */
            }
            i++;   /* past the closing quote */
            if (depth > 1) {   /* inside a value: only strings and brackets matter */
                i += strcspn(t + i, "\"{}[]");
                continue;
            }
            if (depth == 1 && want) {
                *key_at = ks; *val_at = s; *end = i;
                return 1;
            }
            if (depth == 1) {
                key_done = true;
                is_name = (i - s - 2 == nl || (dotted && i - s - 2 > nl && t[s + 1 + nl] == '.')) &&
                          !memcmp(t + s + 1, name, nl);
                ks = s;
            }
            continue;
        }
        switch (ch) {
        case '{': case '[':
            if (depth == 1 && want && !to_end) {   /* the caller steps over it itself */
                *key_at = ks; *val_at = i; *end = 0;
                return 1;
            }
            if (depth == 1 && want) {   /* the value is this object or array: to its end */
                size_t s = i;
                int d = 0;
                /* jumps from one quote or bracket to the next (strcspn: the text is
                 * NUL-terminated), so a receipt's file list costs little to step over */
                while (i < len) {
                    if (t[i] == '"') {
                        i++;
                        for (;;) {
                            if (i >= len) return -1;
                            i += strcspn(t + i, "\"\\");
                            if (i >= len) return -1;
                            if (t[i] == '"') break;
                            i += 2;   /* an escape: the character after the backslash */
                        }
                    } else if (t[i] == '{' || t[i] == '[') {
                        d++;
                    } else if ((t[i] == '}' || t[i] == ']') && --d == 0) {
                        *key_at = ks; *val_at = s; *end = i + 1;
                        return 1;
                    }
                    i++;
                    i += strcspn(t + i, "\"{}[]");
                }
                return -1;
            }
            depth++;
            break;
        case '}': case ']':
            if (--depth <= 0) return 0;
            break;
        case ':':
            want = depth == 1 && key_done && is_name;
            key_done = false;
            break;
        case ',':
            want = key_done = false;
            break;
        case ' ': case '\t': case '\n': case '\r':
            break;
        default:   /* a number, true, false or null */
            if (depth == 1 && want) {
                size_t s = i;
                while (i < len && !strchr(",}] \t\r\n", t[i])) i++;
                if (i >= len) return -1;
                *key_at = ks; *val_at = s; *end = i;
                return 1;
            }
            key_done = false;
            break;
        }
        i++;
        if (depth > 1) i += strcspn(t + i, "\"{}[]");
    }
    return -1;
}

int ce_json_top_member(const char *t, size_t len, const char *name, size_t *key_at, size_t *val_at, size_t *end)
{
    return top_member(t, len, name, key_at, val_at, end, true, false);
}

int ce_json_top_member_dotted(const char *t, size_t len, const char *name, size_t *key_at, size_t *val_at, size_t *end)
{
    return top_member(t, len, name, key_at, val_at, end, true, true);
}

int ce_json_top_key(const char *t, size_t len, const char *name, size_t *key_at, size_t *val_at)
{
    size_t end;
    return top_member(t, len, name, key_at, val_at, &end, false, false);
}

/* One past the JSON value at t[i] (a string, an object or array stepped over
 * by strcspn jumps, or a scalar), or 0 when the text ends first. */
static size_t value_end(const char *t, size_t len, size_t i)
{
    if (i >= len) return 0;
    if (t[i] == '"' || t[i] == '{' || t[i] == '[') {
        int d = 0;
        while (i < len) {
            if (t[i] == '"') {
                i++;
                for (;;) {
                    if (i >= len) return 0;
                    i += strcspn(t + i, "\"\\");
                    if (i >= len) return 0;
                    if (t[i] == '"') break;
                    i += 2;
                }
                if (d == 0) return i + 1;   /* the value was this string */
            } else if (t[i] == '{' || t[i] == '[') {
                d++;
            } else if ((t[i] == '}' || t[i] == ']') && --d == 0) {
                return i + 1;
            }
            i++;
            i += strcspn(t + i, "\"{}[]");
        }
        return 0;
    }
    while (i < len && !strchr(",}] \t\r\n", t[i])) i++;
    return i < len ? i : 0;
}

static size_t skip_ws(const char *t, size_t len, size_t i)
{
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) i++;
    return i;
}

int ce_json_each_member(const char *t, size_t len, ce_json_member_fn fn, void *ud)
{
    size_t i = skip_ws(t, len, 0);
    if (i >= len || t[i] != '{') return -1;
    i = skip_ws(t, len, i + 1);
    if (i < len && t[i] == '}') return 1;
    for (;;) {
        if (i >= len || t[i] != '"') return -1;
        size_t k = i, ke = value_end(t, len, i);
        if (!ke) return -1;
        i = skip_ws(t, len, ke);
        if (i >= len || t[i] != ':') return -1;
        size_t v = skip_ws(t, len, i + 1), e = value_end(t, len, v);
        if (!e) return -1;
        int r = fn(ud, t, k, ke - k, v, e);
        if (r) return r < 0 ? -1 : 0;
        i = skip_ws(t, len, e);
        if (i < len && t[i] == '}') return 1;
        if (i >= len || t[i] != ',') return -1;
        i = skip_ws(t, len, i + 1);
    }
}
