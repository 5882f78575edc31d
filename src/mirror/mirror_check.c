/* cudaenv mirror --check DIR: re-hash every file DIR/cudaenv.json names,
 * confined to the bundle (issue 21): every path is relative and stays in
 * DIR (ce_mirror_rel_path's rule), is opened through DIR's fd one component
 * at a time with O_NOFOLLOW|O_NONBLOCK and must be a regular file; an entry
 * without a size is hashed to its end (a regular file ends; a FIFO or a
 * device is never opened for reading).  The components a redist JSON names
 * are checked for the platforms and names the mirror lists as held. */
#include "mirror.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/file.h"
#include "fetch/digest.h"
#include "mirror_dir.h"
#include "install/redist.h"

static bool is_cudnn_key(const char *k) { return !strncmp(k, "cuda", 4) && k[4] >= '0' && k[4] <= '9'; }

static void bad(ce_ctx *ctx, ce_mirror_stats *st, const char *fmt, const char *a, const char *b, const char *c)
{
    ce_emit(ctx, CE_EV_WARN, NULL, fmt, a, b, c);
    st->bad++;
}

/* One file: rel (as the manifest wrote it), its sha256, its size (< 0: none). */
static void check_file(ce_ctx *ctx, const ce_mdir *md, const char *url, const char *sha, long long size,
                       ce_mirror_stats *st)
{
    char rel[1024], got[CE_SHA256_HEX], num[64];
    st->files++;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    int rc = ce_mirror_rel_path(url, rel, sizeof rel);
    ce_quiet_end(&q);
    if (rc || strstr(url, "://")) {
        bad(ctx, st, "refused: '%s' is not a path inside the mirror %s%s (cudaenv.json may only name files of "
            "the bundle, without '..' or an absolute path)", url, md->path, "");
        return;
    }
    struct stat sb;
    char why[1200];
    ce_quiet_begin(&q, true);
    int fd = ce_mdir_open_file(md, rel, &sb);
    snprintf(why, sizeof why, "%s", fd < 0 ? ce_errmsg() : "");
    ce_quiet_end(&q);
    if (fd == CE_ERR_NOTFOUND) {
        bad(ctx, st, "missing: %s/%s (run cudaenv mirror again to fetch it)%s", md->path, rel, "");
        return;
    }
    if (fd < 0) {
        bad(ctx, st, "refused: %s%s%s", why, "", "");
        return;
    }
    if (size >= 0 && (long long)sb.st_size != size) {
        snprintf(num, sizeof num, "%lld bytes, the manifest says %lld", (long long)sb.st_size, size);
        bad(ctx, st, "wrong size: %s/%s has %s; delete it and run cudaenv mirror again", md->path, rel, num);
        close(fd);
        return;
    }
    ce_sha256 *h = ce_sha256_new();
    ce_quiet_begin(&q, true);
    rc = h ? ce_sha256_fd(h, fd, (long long)sb.st_size, rel) : CE_ERR_NOMEM;
    snprintf(why, sizeof why, "%s", rc ? ce_errmsg() : "");
    ce_quiet_end(&q);
    close(fd);
    if (rc == CE_OK) ce_sha256_final(h, got);
    if (h) ce_sha256_free(h);
    if (rc) {
        bad(ctx, st, "cannot read %s/%s: %s", md->path, rel, why);
    } else if (strcmp(got, sha) != 0) {
        char what[200];
        snprintf(what, sizeof what, "%s, the manifest says %.64s", got, sha);
        bad(ctx, st, "sha256 mismatch: %s/%s is %s; delete it and run cudaenv mirror again", md->path, rel, what);
    } else {
        ce_emit(ctx, CE_EV_INFO, NULL, "ok: %s", rel);
    }
}

static void check_art(ce_ctx *ctx, const ce_mdir *md, const cJSON *art, ce_mirror_stats *st)
{
    const cJSON *url = cJSON_GetObjectItemCaseSensitive(art, "url");
    const cJSON *sha = cJSON_GetObjectItemCaseSensitive(art, "sha256");
    const cJSON *size = cJSON_GetObjectItemCaseSensitive(art, "size");
    if (!cJSON_IsString(url) || !cJSON_IsString(sha)) return;
    check_file(ctx, md, url->valuestring, sha->valuestring, cJSON_IsNumber(size) ? (long long)size->valuedouble : -1,
               st);
}

/* The JSON is checked first; its components only when it is the pinned file. */
static void check_redist(ce_ctx *ctx, const ce_mdir *md, const cJSON *rd, ce_mirror_stats *st)
{
    size_t before = st->bad;
    check_art(ctx, md, rd, st);
    const cJSON *url = cJSON_GetObjectItemCaseSensitive(rd, "url"), *plats = cJSON_GetObjectItemCaseSensitive(rd,
                                                                                               "mirror_components");
    if (!cJSON_IsString(url) || !cJSON_IsObject(plats)) return;
    if (st->bad != before) {   /* the components it names cannot be checked */
        const cJSON *p;
        cJSON_ArrayForEach(p, plats) st->files += (size_t)cJSON_GetArraySize(p);
        return;
    }
    char rel[1024], *text = NULL;
    struct stat sb;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    int fd = ce_mirror_rel_path(url->valuestring, rel, sizeof rel) ? -1 : ce_mdir_open_file(md, rel, &sb);
    ce_quiet_end(&q);
    ssize_t len = -1;
    if (fd >= 0 && sb.st_size <= (off_t)CE_REDIST_MAX && (text = malloc((size_t)sb.st_size + 1)))
        len = pread(fd, text, (size_t)sb.st_size, 0);
    if (fd >= 0) close(fd);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", rel);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = '\0'; else dir[0] = '\0';
    const cJSON *p;
    cJSON_ArrayForEach(p, plats) {
        ce_redist *red = NULL;
        ce_quiet_begin(&q, true);
        int rc = len == sb.st_size ? ce_redist_parse(text, (size_t)len, rel, p->string, &red) : CE_ERR_IO;
        ce_quiet_end(&q);
        const cJSON *name;
        cJSON_ArrayForEach(name, p) {
            const ce_component *c = NULL;
            for (size_t i = 0; !rc && cJSON_IsString(name) && i < red->n && !c; i++)
                if (!strcmp(red->comps[i].name, name->valuestring)) c = &red->comps[i];
            if (!c) {
                st->files++;
                bad(ctx, st, "the mirror lists component %s for %s, but %s does not name it",
                    cJSON_IsString(name) ? name->valuestring : "?", p->string, rel);
                continue;
            }
            char path[2200];
            snprintf(path, sizeof path, "%s%s", dir, c->relative_path);
            check_file(ctx, md, path, c->sha256, c->size, st);
        }
        ce_redist_free(red);
    }
    free(text);
}

int ce_mirror_check(ce_ctx *ctx, const char *dir, ce_mirror_stats *st)
{
    memset(st, 0, sizeof *st);
    ce_mdir md;
    int rc = ce_mdir_open(dir, false, &md);
    if (rc) return rc;
    struct stat sb;
    int fd = ce_mdir_open_file(&md, CE_MIRROR_MANIFEST, &sb);
    char *text = NULL;
    if (fd < 0) {
        ce_mdir_close(&md);
        return fd;
    }
    ssize_t len = -1;
    if (sb.st_size <= CE_MANIFEST_MAX && (text = malloc((size_t)sb.st_size + 1)))
        len = pread(fd, text, (size_t)sb.st_size, 0);
    close(fd);
    char path[CE_PATH_MAX];
    ce_manifest *m = NULL;
    rc = ce_join(path, sizeof path, md.path, CE_MIRROR_MANIFEST);
    if (rc == CE_OK && len != sb.st_size)
        rc = ce_fail(CE_ERR_INTEGRITY, "%s: cannot read it, or over %d bytes", path, CE_MANIFEST_MAX);
    else if (rc == CE_OK) rc = ce_manifest_parse(ctx, text, (size_t)len, path, true, &m);
    ce_manifest_free(m);
    cJSON *j = rc ? NULL : cJSON_ParseWithLength(text, (size_t)len), *rel, *map, *art;
    free(text);
    cJSON_ArrayForEach(rel, cJSON_GetObjectItemCaseSensitive(j, "cuda")) {
        cJSON_ArrayForEach(art, cJSON_GetObjectItemCaseSensitive(rel, "runfile")) check_art(ctx, &md, art, st);
        const cJSON *rd = cJSON_GetObjectItemCaseSensitive(rel, "redist");
        if (cJSON_IsObject(rd)) check_redist(ctx, &md, rd, st);
    }
    for (int sec = 0; sec < 2; sec++)   /* cuDNN tarballs and NCCL wheels, one shape */
        cJSON_ArrayForEach(rel, cJSON_GetObjectItemCaseSensitive(j, sec ? "nccl" : "cudnn"))
            cJSON_ArrayForEach(map, rel)
                if (is_cudnn_key(map->string) && cJSON_IsObject(map))
                    cJSON_ArrayForEach(art, map) check_art(ctx, &md, art, st);
    cJSON_Delete(j);
    ce_mdir_close(&md);
    if (rc) return rc;
    if (st->bad)
        return ce_fail(CE_ERR_INTEGRITY, "%zu of %zu files in the mirror %s are missing or wrong (listed "
                       "above)", st->bad, st->files, dir);
    return CE_OK;
}
