/* cache/.cudaenv-names: what each download was called (fetch.h). */
#include "fetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "digest.h"

void ce_cache_names_note(ce_ctx *ctx, const ce_fetch_item *const *items, size_t n)
{
    size_t cap = n * (65 + CE_CACHE_NAME_MAX + 2) + 1, len = 0;
    char *buf = n ? malloc(cap) : NULL, path[CE_PATH_MAX], name[CE_CACHE_NAME_MAX + 1];
    if (!buf) return;
    for (size_t i = 0; i < n; i++)
        if (ce_sha256_valid(items[i]->sha256) && items[i]->url && ce_url_file_name(items[i]->url, name, sizeof name))
            len += (size_t)snprintf(buf + len, cap - len, "%s %s\n", items[i]->sha256, name);
    int w = snprintf(path, sizeof path, "%s/cache/%s", ctx->root, CE_CACHE_NAMES);
    if (len && w > 0 && (size_t)w < sizeof path) (void)ce_file_append_bounded(path, buf, len, CE_CACHE_NAMES_MAX / 2);
    free(buf);
}
