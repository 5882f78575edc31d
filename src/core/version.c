#include "version.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ce_version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        if (!*a) return -1;
        if (!*b) return 1;
        char *ea, *eb;
        unsigned long long x = strtoull(a, &ea, 10), y = strtoull(b, &eb, 10);
        if (x != y) return x < y ? -1 : 1;
        a = ea;
        b = eb;
        if (*a == '.') a++; else if (*a) return strcmp(a, b) < 0 ? -1 : (strcmp(a, b) > 0);
        if (*b == '.') b++; else if (*b) return strcmp(a, b) < 0 ? -1 : (strcmp(a, b) > 0);
    }
    return 0;
}

bool ce_version_matches(const char *want, const char *full)
{
    size_t n = strlen(want);
    if (strncmp(want, full, n) != 0) return false;
    return full[n] == '\0' || full[n] == '.';
}

bool ce_version_valid(const char *s)
{
    if (!s || !isdigit((unsigned char)*s)) return false;
    for (const char *p = s; *p; p++) {
        if (*p == '.') {
            if (!isdigit((unsigned char)p[1])) return false;
        } else if (!isdigit((unsigned char)*p)) {
            return false;
        }
    }
    return true;
}

int ce_version_major(const char *s)
{
    if (!s || !isdigit((unsigned char)*s)) return -1;
    return atoi(s);
}

void ce_version_prefix(const char *s, int n, char *out, unsigned outsz)
{
    unsigned i = 0;
    int dots = 0;
    for (; s[i] && i + 1 < outsz; i++) {
        if (s[i] == '.' && ++dots == n) break;
        out[i] = s[i];
    }
    out[i] = '\0';
}
