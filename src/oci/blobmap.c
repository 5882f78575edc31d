/* The store's record of where blobs are (blobmap.h). */
#include "blobmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "store/store.h"

#define BLOBMAP_MAX (256 << 10)

static int map_path(ce_ctx *ctx, char *out, size_t n)
{
    char cache[4200];
    int rc = ce_store_path(ctx, "cache", cache, sizeof cache);
    if (rc) return rc;
    return ce_path_join(out, n, cache, "oci-blobs");
}

void ce_oci_blob_seen(ce_ctx *ctx, const char *digest, const char *host, const char *repo)
{
    char path[4300], line[1200];
    ce_quiet q;
    ce_quiet_begin(&q, true);
    int len = snprintf(line, sizeof line, "%s %s %s\n", digest, host, repo);
    if (len > 0 && (size_t)len < sizeof line && !strpbrk(host, " \n") && !strpbrk(repo, " \n") &&
        map_path(ctx, path, sizeof path) == CE_OK)
        (void)ce_file_append_bounded(path, line, (size_t)len, BLOBMAP_MAX);
    ce_quiet_end(&q);
}

int ce_oci_blob_source(ce_ctx *ctx, const char *digest, const char *host, const char *not_repo, char *out, size_t n)
{
    char path[4300], *text = NULL;
    size_t len = 0;
    int found = 0;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    if (map_path(ctx, path, sizeof path) == CE_OK && ce_file_read(path, BLOBMAP_MAX * 2, &text, &len) == CE_OK) {
        size_t dl = strlen(digest), hl = strlen(host);
        for (char *s, *l = strtok_r(text, "\n", &s); l; l = strtok_r(NULL, "\n", &s)) {
            if (strncmp(l, digest, dl) || l[dl] != ' ' || strncmp(l + dl + 1, host, hl) || l[dl + 1 + hl] != ' ')
                continue;
            const char *repo = l + dl + hl + 2;
            if (!*repo || !strcmp(repo, not_repo) || strlen(repo) >= n) continue;
            memcpy(out, repo, strlen(repo) + 1);   /* the newest line wins */
            found = 1;
        }
    }
    free(text);
    ce_quiet_end(&q);
    return found;
}
