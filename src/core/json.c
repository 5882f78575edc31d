#include "json.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "status.h"

static size_t line_of(const char *text, size_t off)
{
    size_t line = 1;
    for (size_t i = 0; i < off; i++) line += text[i] == '\n';
    return line;
}

int ce_json_parse_strict(const char *text, size_t len, const char *what, const char *origin, cJSON **out)
{
    *out = NULL;
    const char *end = NULL;
    cJSON *doc = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!doc) {
        size_t off = end && end >= text && (size_t)(end - text) <= len ? (size_t)(end - text) : 0;
        return ce_fail(CE_ERR_INTEGRITY, "invalid %s %s: not valid JSON (near line %zu, byte %zu)", what, origin,
                       line_of(text, off), off);
    }
    size_t off = end && end >= text && (size_t)(end - text) <= len ? (size_t)(end - text) : len;
    while (off < len && (text[off] == ' ' || text[off] == '\t' || text[off] == '\n' || text[off] == '\r')) off++;
    if (off < len) {
        cJSON_Delete(doc);
        return ce_fail(CE_ERR_INTEGRITY, "invalid %s %s: data after the JSON document (line %zu, byte %zu): a "
                       "second document or trailing garbage; a %s is exactly one JSON object", what, origin,
                       line_of(text, off), off, what);
    }
    if (memmem(text, len, "\\u0000", 6)) {
        cJSON_Delete(doc);
        return ce_fail(CE_ERR_INTEGRITY, "invalid %s %s: a string contains \\u0000 (a control character); "
                       "nothing in a %s may", what, origin, what);
    }
    *out = doc;
    return CE_OK;
}

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

int ce_json_object_around(const char *t, size_t len, size_t off, size_t *start, size_t *end)
{
    size_t open[64], i = 0;
    int d = 0;
    while (i < len && i <= off) {
        if (t[i] == '"') {
            size_t s = i++;
            for (;;) {
                if (i >= len) return -1;
                i += strcspn(t + i, "\"\\");
                if (i >= len) return -1;
                if (t[i] == '"') break;
                i += 2;
            }
            if (off > s && off < i) break;   /* off is in this string */
        } else if (t[i] == '{' || t[i] == '[') {
            if (d == 64) return -1;
            open[d++] = i;
        } else if (t[i] == '}' || t[i] == ']') {
            if (d == 0) return -1;
            d--;
        }
        i++;
        i += strcspn(t + i, "\"{}[]");
    }
    while (d > 0 && t[open[d - 1]] != '{') d--;   /* inside an array: the object around it */
    if (d == 0) return 0;
    size_t e = value_end(t, len, open[d - 1]);
    if (!e) return -1;
    *start = open[d - 1];
    *end = e;
    return 1;
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

int ce_json_each_element(const char *t, size_t len, ce_json_elem_fn fn, void *ud)
{
    size_t i = skip_ws(t, len, 0);
    if (i >= len || t[i] != '[') return -1;
    i = skip_ws(t, len, i + 1);
    if (i < len && t[i] == ']') return 1;
    for (;;) {
        size_t e = value_end(t, len, i);
        if (!e) return -1;
        int r = fn(ud, t, i, e);
        if (r) return r < 0 ? -1 : 0;
        i = skip_ws(t, len, e);
        if (i < len && t[i] == ']') return 1;
        if (i >= len || t[i] != ',') return -1;
        i = skip_ws(t, len, i + 1);
    }
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return -1;
    }
    *out = v;
    return 0;
}

/* cp as UTF-8 into o (room for 4 bytes): its length */
static size_t utf8(unsigned cp, char *o)
{
    if (cp < 0x80) { o[0] = (char)cp; return 1; }
    if (cp < 0x800) { o[0] = (char)(0xC0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

int ce_json_unquote(const char *t, size_t at, size_t end, char *out, size_t n)
{
    size_t o = 0;
    if (n) out[0] = '\0';
    if (end < at + 2 || t[at] != '"' || t[end - 1] != '"') return -1;
    for (size_t i = at + 1; i < end - 1;) {
        char b[4];
        size_t bl = 1;
        unsigned char c = (unsigned char)t[i];
        if (c < 0x20) return -1;
        if (c != '\\') {   /* the common case: the byte itself */
            if (o + 1 < n) out[o++] = (char)c;
            i++;
            continue;
        } else {
            if (i + 1 >= end - 1) return -1;
            char e = t[i + 1];
            i += 2;
            switch (e) {
            case '"': case '\\': case '/': b[0] = e; break;
            case 'b': b[0] = '\b'; break;
            case 'f': b[0] = '\f'; break;
            case 'n': b[0] = '\n'; break;
            case 'r': b[0] = '\r'; break;
            case 't': b[0] = '\t'; break;
            case 'u': {
                unsigned cp, lo;
                if (i + 4 > end - 1 || hex4(t + i, &cp)) return -1;
                i += 4;
                if (cp >= 0xD800 && cp < 0xDC00) {   /* a high surrogate: its low half follows */
                    if (i + 6 > end - 1 || t[i] != '\\' || t[i + 1] != 'u' || hex4(t + i + 2, &lo) || lo < 0xDC00 ||
                        lo > 0xDFFF)
                        return -1;
                    i += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    return -1;
                }
                if (!cp) return -1;   /* a NUL cannot be kept in a C string */
                bl = utf8(cp, b);
                break;
            }
            default:
                return -1;
            }
        }
        for (size_t k = 0; k < bl; k++)
            if (n && o + 1 < n) out[o++] = b[k];
    }
    if (n) out[o] = '\0';
    return 0;
}

int ce_json_number(const char *t, size_t at, size_t end, long long *out)
{
    char buf[64], *e;
    size_t l = end - at;
    if (end <= at || l >= sizeof buf) return -1;
    memcpy(buf, t + at, l);
    buf[l] = '\0';
    /* JSON's grammar: -? digits (. digits)? ([eE] [+-]? digits)? */
    const char *p = buf + (buf[0] == '-');
    if (*p < '0' || *p > '9') return -1;
    double d = strtod(buf, &e);
    if (*e || d != d) return -1;
    *out = d >= 9.2e18 ? LLONG_MAX : d <= -9.2e18 ? LLONG_MIN : (long long)d;
    return 0;
}

static void jgrow(ce_jtext *j, size_t more)
{
    if (j->oom || j->len + more + 1 <= j->cap) return;
    size_t cap = j->cap ? j->cap : 1024;
    while (cap < j->len + more + 1) cap *= 2;
    char *p = realloc(j->p, cap);
    if (!p) {
        free(j->p);
        j->p = NULL;
        j->oom = true;
        return;
    }
    j->p = p;
    j->cap = cap;
}

void ce_jtext_add(ce_jtext *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (w < 0) { j->oom = true; return; }
    jgrow(j, (size_t)w);
    if (j->oom) return;
    va_start(ap, fmt);
    vsnprintf(j->p + j->len, j->cap - j->len, fmt, ap);
    va_end(ap);
    j->len += (size_t)w;
}

void ce_jtext_put(ce_jtext *j, const char *p, size_t n)
{
    jgrow(j, n);
    if (j->oom) return;
    memcpy(j->p + j->len, p, n);
    j->len += n;
    j->p[j->len] = '\0';
}

void ce_jtext_raw(ce_jtext *j, const char *s)
{
    ce_jtext_put(j, s, strlen(s));
}

void ce_jtext_str(ce_jtext *j, const char *s)
{
    size_t n = strlen(s);
    jgrow(j, n * 6 + 2);
    if (j->oom) return;
    char *o = j->p + j->len;
    *o++ = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\') {   /* the common case: the byte itself */
            *o++ = (char)c;
            continue;
        }
        const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\b' ? "\\b" : c == '\f' ? "\\f"
                        : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
        if (esc) { memcpy(o, esc, 2); o += 2; }
        else if (c < 0x20) o += sprintf(o, "\\u%04x", c);
        else *o++ = (char)c;
    }
    *o++ = '"';
    *o = '\0';
    j->len = (size_t)(o - j->p);
}

char *ce_jtext_take(ce_jtext *j)
{
    char *p = j->oom ? NULL : j->p;
    if (p) p[j->len] = '\0';
    else if (!j->oom && (p = malloc(1))) p[0] = '\0';
    j->p = NULL;
    j->len = j->cap = 0;
    j->oom = false;
    return p;
}
