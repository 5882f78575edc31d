#include "bytes.h"

#include <stdio.h>

void ce_bytes_text(char *out, size_t n, double bytes)
{
    const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int i = 0;
    /* 1023.96 KiB would print as "1024.0 KiB": that is 1.0 MiB */
    while ((i ? bytes >= 1023.95 : bytes >= 1024) && i < 4) { bytes /= 1024; i++; }
    snprintf(out, n, i ? "%.1f %s" : "%.0f %s", bytes, u[i]);
}
