/* cache/.cudaenv-names: what each download was called (fetch.h). */
#include "fetch.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "digest.h"

/* The URL's last path segment without its query or fragment; false when it
 * is empty, too long, or holds a byte a line cannot (a control byte, a space). */
static bool name_of(const char *url, char *out, size_t outsz)
{
    const char *end = url + strcspn(url, "?#"), *base = end;
    while (base > url && base[-1] != '/') base--;
    size_t l = (size_t)(end - base);
    if (!l || l >= outsz || l > CE_CACHE_NAME_MAX) return false;
    for (size_t i = 0; i < l; i++)
        if ((unsigned char)base[i] <= ' ' || base[i] == 0x7f) return false;
    memcpy(out, base, l);
    out[l] = 0;
    return true;
}

void ce_cache_names_note(ce_ctx *ctx, const ce_fetch_item *const *items, size_t n)
{
    size_t cap = n * (65 + CE_CACHE_NAME_MAX + 2) + 1, len = 0;
    char *buf = n ? malloc(cap) : NULL, path[CE_PATH_MAX], name[CE_CACHE_NAME_MAX + 1];
    if (!buf) return;
    for (size_t i = 0; i < n; i++)
        if (ce_sha256_valid(items[i]->sha256) && items[i]->url && name_of(items[i]->url, name, sizeof name))
            len += (size_t)snprintf(buf + len, cap - len, "%s %s\n", items[i]->sha256, name);
    int w = snprintf(path, sizeof path, "%s/cache/%s", ctx->root, CE_CACHE_NAMES);
    if (len && w > 0 && (size_t)w < sizeof path) {
        struct stat st;
        int flags = O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
        if (lstat(path, &st) == 0 && st.st_size > CE_CACHE_NAMES_MAX / 2) flags |= O_TRUNC;   /* start over */
        int fd = open(path, flags, 0644);
        if (fd >= 0) {
            ssize_t wr = write(fd, buf, len);   /* one write: whole lines under O_APPEND */
            (void)wr;
            close(fd);
        }
    }
    free(buf);
}
