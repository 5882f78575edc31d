/* Whether the resolution index is current (index.h: the manifest line, the
 * where key): reading it, keying the manifest file and what located it. */
#include "index_int.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "core/file.h"
#include "core/path.h"
#include "source.h"

/* ipath: a user's own copy (index.h), NULL: the store's */
int ce_index_path(ce_ctx *ctx, const char *ipath, char *out, size_t n)
{
    if (ipath) {
        if (snprintf(out, n, "%s", ipath) >= (int)n) return ce_fail(CE_ERR_OTHER, "path too long: %s", ipath);
        return CE_OK;
    }
    if (ce_path_join(out, n, ctx->root, "versions/" CE_INDEX_NAME) != CE_OK)
        return ce_fail(CE_ERR_OTHER, "path too long: %s/versions/" CE_INDEX_NAME, ctx->root);
    return CE_OK;
}

/* v in decimal at p (at most 20 digits); the end. */
static char *put_u64(char *p, unsigned long long v)
{
    char tmp[20];
    int n = 0;
    do tmp[n++] = (char)('0' + v % 10); while ((v /= 10));
    while (n) *p++ = tmp[--n];
    return p;
}

/* "<seconds>.<nanoseconds, 9 digits>" at p. */
static char *put_time(char *p, const struct timespec *t)
{
    if (t->tv_sec < 0) *p++ = '-';
    p = put_u64(p, t->tv_sec < 0 ? 0ull - (unsigned long long)t->tv_sec : (unsigned long long)t->tv_sec);
    *p++ = '.';
    for (long d = 100000000, ns = t->tv_nsec; d; d /= 10) *p++ = (char)('0' + ns / d % 10);
    return p;
}

/* The stat key "<dev>:<inode> <size> <mtime> <ctime>" of st (what
 * "%llu:%llu %lld %lld.%09ld %lld.%09ld" prints, without stdio: it is on
 * every use/env/cd hook's path). */
bool ce_index_stat_key(const struct stat *st, char *key, size_t n)
{
    if (n < 128 || st->st_size < 0) return false;   /* 5 numbers of at most 20 digits, 2 of 9, 6 separators */
    char *p = put_u64(key, (unsigned long long)st->st_dev);
    *p++ = ':';
    p = put_u64(p, (unsigned long long)st->st_ino);
    *p++ = ' ';
    p = put_u64(p, (unsigned long long)st->st_size);
    *p++ = ' ';
    p = put_time(p, &st->st_mtim);
    *p++ = ' ';
    p = put_time(p, &st->st_ctim);
    *p = '\0';
    return true;
}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    for (const unsigned char *c = data; n--; c++) h = (h ^ *c) * 1099511628211ull;
    return h;
}

/* What decides which file ce_manifest_source names, besides that file:
 * the manifest --manifest or CUDAENV_MANIFEST gives; without one, each
 * config file's path and stat identity (or absence) and the binary's
 * directory, beside which the built-in manifest is found.  FNV-1a 64 of
 * them as 16 hex digits.  The index records it with the manifest's path;
 * the same where key and that path's stat key unchanged, the index is
 * current without locating the manifest again (no config file parsed, no
 * ownership walk as root: the file root trusted when it wrote the index is
 * the same, its ctime included). */
void ce_index_where_key(ce_ctx *ctx, char out[17])
{
    uint64_t h = 1469598103934665603ull;
    const char *given = ce_manifest_given(ctx);
    h = fnv(h, given, strlen(given) + 1);
    if (!given[0]) {
        char path[4200];
        struct stat st;
        for (int w = CE_CONF_SITE; w <= CE_CONF_USER; w++) {
            ce_config_path(ctx, (ce_conf_origin)w, path, sizeof path);
            h = fnv(h, path, strlen(path) + 1);
            if (!path[0] || lstat(path, &st) != 0) {
                h = fnv(h, "-", 1);
                continue;
            }
            unsigned long long f[] = { st.st_dev, st.st_ino, (unsigned long long)st.st_size, st.st_mode, st.st_uid,
                                       (unsigned long long)st.st_mtim.tv_sec, (unsigned long long)st.st_mtim.tv_nsec,
                                       (unsigned long long)st.st_ctim.tv_sec, (unsigned long long)st.st_ctim.tv_nsec };
            h = fnv(h, f, sizeof f);
        }
        const char *self = ce_self_dir(ctx);
        h = fnv(h, self, strlen(self) + 1);
    }
    static const char hex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--, h >>= 4) out[i] = hex[h & 15];
    out[16] = '\0';
}

/* The manifest file ctx resolves with: its path and stat key
 * "<dev>:<inode> <size> <mtime> <ctime>"; false when there is none to stat
 * (a remote manifest with no local copy yet, a missing file). */
bool ce_index_manifest_key(ce_ctx *ctx, ce_msource *src, char *key, size_t n)
{
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = ce_manifest_source(ctx, src);
    ce_quiet_end(&q);   /* a lookup miss leaves no error behind */
    struct stat st;
    if (rc || stat(src->path, &st) != 0 || strchr(src->path, '\n')) return false;
    return ce_index_stat_key(&st, key, n);
}

/* The index text split in place: *sha and *key point into the manifest
 * line (the key followed by the manifest's path), *where at the where key,
 * *rest at the records; NULL when absent or not ours. */
char *ce_index_read(ce_ctx *ctx, const char *ipath, char **sha, char **key, char **where, char **rest)
{
    char path[4200], *data = NULL;
    size_t len = 0;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = ce_index_path(ctx, ipath, path, sizeof path);
    if (rc == CE_OK) rc = ce_file_read(path, INDEX_MAX, &data, &len);
    ce_quiet_end(&q);
    if (rc) return NULL;
    char *nl1 = strchr(data, '\n'), *nl2 = nl1 ? strchr(nl1 + 1, '\n') : NULL;
    if (!nl2 || (size_t)(nl1 - data) != strlen(INDEX_MAGIC) || strncmp(data, INDEX_MAGIC, strlen(INDEX_MAGIC)) ||
        strncmp(nl1 + 1, "manifest ", 9) || nl2 - (nl1 + 10) < 66 || nl1[10 + 64] != ' ') {
        free(data);
        return NULL;
    }
    bool hex = !strncmp(nl2 + 1, "where ", 6);
    for (int i = 0; hex && i < 16; i++) hex = (nl2[7 + i] >= '0' && nl2[7 + i] <= '9') || (nl2[7 + i] >= 'a' && nl2[7 + i] <= 'f');
    if (!hex || nl2[7 + 16] != '\n') {
        free(data);
        return NULL;
    }
    *nl1 = *nl2 = nl2[7 + 16] = '\0';
    *sha = nl1 + 10;
    (*sha)[64] = '\0';
    *key = *sha + 65;
    *where = nl2 + 7;
    *rest = nl2 + 7 + 17;
    return data;
}

/* The index's key names the same file state as key (the path after it is for people). */
bool ce_index_same_key(const char *line, const char *key)
{
    size_t n = strlen(key);
    return strncmp(line, key, n) == 0 && (line[n] == ' ' || line[n] == '\0');
}

/* The index's manifest, by the path it records, is the one ctx would
 * locate (where_key) and unchanged since. */
static bool still_current(ce_ctx *ctx, const char *ikey, const char *iwhere)
{
    char where[17], key[256];
    ce_index_where_key(ctx, where);
    if (strcmp(where, iwhere)) return false;
    const char *path = ikey;
    for (int i = 0; i < 4 && path; i++)
        if ((path = strchr(path, ' '))) path++;
    struct stat st;
    return path && *path == '/' && stat(path, &st) == 0 && ce_index_stat_key(&st, key, sizeof key) && ce_index_same_key(ikey, key);
}

static _Thread_local bool where_missed;

bool ce_index_where_stale(void)
{
    return where_missed;
}

/* The index's records when its key names the manifest as it is now; NULL
 * (nothing to answer from) without a manifest file, an index or a current key. */
char *ce_index_current(ce_ctx *ctx, const char *ipath, char **rest)
{
    char key[256], *sha, *ikey, *iwhere;
    ce_msource src;
    where_missed = false;
    char *data = ce_index_read(ctx, ipath, &sha, &ikey, &iwhere, rest);
    if (!data || still_current(ctx, ikey, iwhere)) return data;
    if (!ce_index_manifest_key(ctx, &src, key, sizeof key) || !ce_index_same_key(ikey, key)) {
        free(data);
        return NULL;
    }
    where_missed = true;   /* current, found the long way */
    return data;
}
