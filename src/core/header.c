#include "header.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long ce_header_define(const char *path, const char *name)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char line[1024];
    long v = -1;
    size_t nl = strlen(name);
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p != '#') continue;
        p++;
        while (*p == ' ' || *p == '\t') p++;
        if (strncmp(p, "define", 6) != 0) continue;
        p += 6;
        while (*p == ' ' || *p == '\t') p++;
        if (strncmp(p, name, nl) != 0 || (p[nl] != ' ' && p[nl] != '\t')) continue;
        char *end;
        long x = strtol(p + nl, &end, 10);
        if (end != p + nl) { v = x; break; }
    }
    fclose(f);
    return v;
}
