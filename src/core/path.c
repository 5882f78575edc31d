#include "path.h"

#include <stdio.h>
#include <string.h>

#include "error.h"

void ce_path_strip_trailing(char *p)
{
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        p[--n] = '\0';
}

int ce_path_join(char *out, size_t outsz, const char *a, const char *b)
{
    int n;
    if (!a || !*a)
        n = snprintf(out, outsz, "%s", b);
    else if (a[strlen(a) - 1] == '/')
        n = snprintf(out, outsz, "%s%s", a, b);
    else
        n = snprintf(out, outsz, "%s/%s", a, b);
    return (n < 0 || (size_t)n >= outsz) ? CE_ERR_OTHER : CE_OK;
}

void ce_path_under(const char *root, const char *abs, char *out, size_t outsz)
{
    /* snprintf(out, outsz, "%s%s", root, abs) by hand: on every use/env's path */
    size_t a = strlen(root), b = strlen(abs);
    if (!outsz) return;
    if (a >= outsz) a = outsz - 1;
    if (b >= outsz - a) b = outsz - 1 - a;
    memmove(out, root, a);
    memmove(out + a, abs, b);
    out[a + b] = '\0';
}

bool ce_path_plain(const char *p)
{
    for (const char *s = p; *s; s++) {
        if (*s != '/') continue;
        if (s[1] == '/' || (s[1] == '\0' && s != p)) return false;   /* "//", or a trailing slash */
        if (s[1] == '.' && (!s[2] || s[2] == '/' || (s[2] == '.' && (!s[3] || s[3] == '/')))) return false;
    }
    return p[0] == '/';
}

bool ce_url_file_name(const char *url, char *out, size_t outsz)
{
    const char *end = url + strcspn(url, "?#"), *base = end;
    while (base > url && base[-1] != '/') base--;
    size_t l = (size_t)(end - base);
    if (!l || l >= outsz) return false;
    for (size_t i = 0; i < l; i++)
        if ((unsigned char)base[i] < ' ' || base[i] == 0x7f) return false;
    memcpy(out, base, l);
    out[l] = '\0';
    return true;
}
