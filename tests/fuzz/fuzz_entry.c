/* libFuzzer target: the archive entry policy.  Input: mode (4 bytes), then
 * path NUL symlink NUL hardlink.  Besides not crashing, an accepted entry
 * must never be absolute or contain a ".." component: checked here again,
 * independently of the policy's own code. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "archive/unpack.h"

static int has_dotdot(const char *p)
{
    for (const char *c = p; (c = strstr(c, "..")); c += 2)
        if ((c == p || c[-1] == '/') && (c[2] == '\0' || c[2] == '/')) return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5) return 0;
    unsigned mode;
    memcpy(&mode, data, 4);
    char buf[512];
    size_t n = size - 4 < sizeof buf - 3 ? size - 4 : sizeof buf - 3;
    memcpy(buf, data + 4, n);
    buf[n] = buf[n + 1] = buf[n + 2] = '\0';
    const char *path = buf;
    const char *sym = path + strlen(path) + 1;
    const char *hard = sym + strlen(sym) + 1;
    ce_entry e = { .path = path, .mode = mode, .symlink = *sym ? sym : NULL, .hardlink = *hard ? hard : NULL };
    if (ce_entry_refusal(&e) == NULL) {
        if (path[0] == '/' || has_dotdot(path)) abort();
        if (e.hardlink && (e.hardlink[0] == '/' || has_dotdot(e.hardlink))) abort();
        if (e.symlink && e.symlink[0] == '/') abort();
        if (mode & 06000) abort();
    }
    char top[256] = "";
    const char *rest;
    ce_strip_top(path, top, sizeof top, &rest);
    return 0;
}
