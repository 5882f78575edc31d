#include "adopt.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compose.h"
#include "receipt.h"
#include "store.h"
#include "core/file.h"
#include "core/header.h"
#include "core/path.h"
#include "core/proc.h"
#include "core/version.h"

/* "11.8.20220929" (version.json of 11.x) -> "11.8.0"; "12.4.1" stays */
static void release_of(const char *v, char *out, size_t n)
{
    int a, b, c = 0;
    int k = sscanf(v, "%d.%d.%d", &a, &b, &c);
    if (k < 2) { snprintf(out, n, "%s", v); return; }
    if (c >= 1000) c = 0;
    snprintf(out, n, "%d.%d.%d", a, b, c);
}

static bool from_version_json(ce_ctx *ctx, const char *dir, char *out, size_t n)
{
    char p[PATH_MAX + 32], *data = NULL;
    size_t len = 0;
    snprintf(p, sizeof p, "%s/version.json", dir);
    ce_event_fn ev = ctx->event;
    ctx->event = NULL;
    int rc = ce_exists(p) ? ce_file_read(ctx, p, 1 << 20, &data, &len) : CE_ERR_NOTFOUND;
    ctx->event = ev;
    if (rc) return false;
    cJSON *j = cJSON_ParseWithLength(data, len);
    free(data);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "cuda"), "version");
    bool ok = cJSON_IsString(v) && ce_version_valid(v->valuestring);
    if (ok) release_of(v->valuestring, out, n);
    cJSON_Delete(j);
    return ok;
}

static bool from_version_txt(const char *dir, char *out, size_t n)
{
    char p[PATH_MAX + 32], line[256], v[64];
    snprintf(p, sizeof p, "%s/version.txt", dir);
    FILE *f = fopen(p, "r");
    bool ok = f && fgets(line, sizeof line, f) && sscanf(line, "CUDA Version %63s", v) == 1 && ce_version_valid(v);
    if (f) fclose(f);
    if (ok) snprintf(out, n, "%s", v);
    return ok;
}

/* "Cuda compilation tools, release 12.4, V12.4.131" -> 12.4 */
static bool from_nvcc(const char *dir, char *out, size_t n)
{
    char nvcc[PATH_MAX + 32], text[4096];
    if (ce_path_join(nvcc, sizeof nvcc, dir, "bin/nvcc") != CE_OK) return false;
    char *argv[] = { nvcc, "--version", NULL };
    ce_proc_result r;
    if (ce_proc_output(NULL, argv, NULL, 60, text, sizeof text, &r) != CE_OK || r.code != 0) return false;
    const char *rel = strstr(text, "release ");
    int a, b;
    if (!rel || sscanf(rel, "release %d.%d", &a, &b) != 2) return false;
    snprintf(out, n, "%d.%d", a, b);
    return true;
}

static bool from_header(const char *dir, char *out, size_t n)
{
    char p[PATH_MAX + 32];
    snprintf(p, sizeof p, "%s/include/cuda.h", dir);
    long v = ce_header_define(p, "CUDA_VERSION");
    if (v < 0) {
        snprintf(p, sizeof p, "%s/include/cuda_runtime_api.h", dir);
        v = ce_header_define(p, "CUDART_VERSION");
    }
    if (v <= 0) return false;
    snprintf(out, n, "%ld.%ld", v / 1000, (v % 1000) / 10);
    return true;
}

int ce_adopt_probe(ce_ctx *ctx, const char *dir, char *cuda, size_t cudasz, char *cudnn, size_t cudnnsz)
{
    cuda[0] = cudnn[0] = '\0';
    if (!ce_is_dir(dir)) return ce_fail(ctx, CE_ERR_NOTFOUND, "%s is not a directory", dir);
    if (!from_version_json(ctx, dir, cuda, cudasz) && !from_version_txt(dir, cuda, cudasz) &&
        !from_nvcc(dir, cuda, cudasz) && !from_header(dir, cuda, cudasz))
        return ce_fail(ctx, CE_ERR_NOTFOUND, "%s is not a CUDA toolkit: no version.json, version.txt, "
                       "bin/nvcc or include/cuda.h; name the toolkit's top directory (the one with bin/ and lib64/)", dir);
    static const char *const hdrs[] = { "include/cudnn_version.h", "include/cudnn.h", NULL };
    for (int i = 0; hdrs[i]; i++) {
        char p[CE_PATH_MAX];
        if (ce_path_join(p, sizeof p, dir, hdrs[i]) != CE_OK) continue;
        long ma = ce_header_define(p, "CUDNN_MAJOR"), mi = ce_header_define(p, "CUDNN_MINOR"),
             pa = ce_header_define(p, "CUDNN_PATCHLEVEL");
        if (ma >= 0 && mi >= 0) {
            snprintf(cudnn, cudnnsz, "%ld.%ld.%ld", ma, mi, pa < 0 ? 0 : pa);
            break;
        }
    }
    return CE_OK;
}

/* ---- the receipt: every regular file of dir with its size --------------- */

static ce_filelist *walk_list;
static size_t walk_root_len;
static bool walk_oom;

static int walk_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag != FTW_F || !S_ISREG(st->st_mode)) return 0;
    ce_filelist *l = walk_list;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        ce_file_entry *v = realloc(l->v, cap * sizeof *v);
        if (!v) { walk_oom = true; return 1; }
        l->v = v;
        l->cap = cap;
    }
    ce_file_entry *e = &l->v[l->n];
    memset(e, 0, sizeof *e);
    e->path = strdup(p + walk_root_len + 1);
    if (!e->path) { walk_oom = true; return 1; }
    e->size = (long long)st->st_size;
    l->n++;
    return 0;
}

static bool label_ok(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '.' || *s == '_' || *s == '-'))
            return false;
    return true;
}

/* versions/<staging>/<entry> -> dir/<entry> for every top-level entry */
static int link_entries(ce_ctx *ctx, const char *dir, const char *staging)
{
    DIR *d = opendir(dir);
    if (!d) return ce_fail(ctx, CE_ERR_IO, "cannot read %s: %s", dir, strerror(errno));
    struct dirent *e;
    int rc = CE_OK;
    while (rc == CE_OK && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, CE_RECEIPT_NAME) ||
            !strcmp(e->d_name, CE_ADOPTED_NAME))
            continue;
        char from[CE_PATH_MAX], to[CE_PATH_MAX];
        if ((rc = ce_join(ctx, from, sizeof from, dir, e->d_name)) || (rc = ce_join(ctx, to, sizeof to, staging, e->d_name)))
            break;
        /* a top-level file (version.json, EULA.txt) is copied: verify wants
         * the receipt's regular files to be regular files at their path */
        struct stat st;
        if (lstat(from, &st) == 0 && S_ISREG(st.st_mode) && st.st_size <= (16 << 20)) {
            char *data = NULL;
            size_t len = 0;
            if ((rc = ce_file_read(ctx, from, 16 << 20, &data, &len)) == CE_OK)
                rc = ce_file_write_atomic(ctx, to, data, len, 0644);
            free(data);
        } else if (symlink(from, to) != 0) {
            rc = ce_fail(ctx, CE_ERR_IO, "cannot create %s: %s", to, strerror(errno));
        }
    }
    closedir(d);
    return rc;
}

int ce_adopt(ce_ctx *ctx, const char *dir_in, const char *name, char *out_name, size_t outsz)
{
    char dir[PATH_MAX], cuda[64], cudnn[64], want[96];
    if (!realpath(dir_in, dir)) return ce_fail(ctx, CE_ERR_NOTFOUND, "%s: %s", dir_in, strerror(errno));
    int rc = ce_adopt_probe(ctx, dir, cuda, sizeof cuda, cudnn, sizeof cudnn);
    if (rc) return rc;
    char versions[CE_PATH_MAX];
    if ((rc = ce_store_path(ctx, "versions", versions, sizeof versions))) return rc;
    if (strncmp(dir, versions, strlen(versions)) == 0 && dir[strlen(versions)] == '/')
        return ce_fail(ctx, CE_ERR_USAGE, "%s is already in the store", dir);
    ce_toolchain t;
    if (name) {
        const char *at = strchr(name, '@');
        if (strlen(name) >= sizeof want || strchr(name, '/') || name[0] == '.' || !ce_toolchain_parse_name(name, &t) ||
            (at && !label_ok(at + 1)))
            return ce_fail(ctx, CE_ERR_USAGE, "--name %s: a toolchain name is CUDA[+cudnnVER][@label] "
                           "(e.g. %s%s%s@system)", name, cuda, cudnn[0] ? "+cudnn" : "", cudnn);
        snprintf(want, sizeof want, "%s", name);
    } else {
        if (snprintf(want, sizeof want, "%.31s%s%.31s", cuda, cudnn[0] ? "+cudnn" : "", cudnn) >= (int)sizeof want)
            return ce_fail(ctx, CE_ERR_OTHER, "versions too long: %s, %s", cuda, cudnn);
    }
    char final[CE_PATH_MAX];
    if ((rc = ce_join(ctx, final, sizeof final, versions, want))) return rc;
    if (ce_exists(final)) {
        if (name) return ce_fail(ctx, CE_ERR_OTHER, "%s is taken (%s); choose another --name", want, final);
        snprintf(want + strlen(want), sizeof want - strlen(want), "@adopted");
        if ((rc = ce_join(ctx, final, sizeof final, versions, want))) return rc;
        if (ce_exists(final))
            return ce_fail(ctx, CE_ERR_OTHER, "%s is taken (%s); choose a name: --name %s@LABEL", want, final, cuda);
    }
    if ((rc = ce_mkdir_p(ctx, versions, 0755))) return rc;
    char staging[4400];
    snprintf(staging, sizeof staging, "%s/.staging-adopt-XXXXXX", versions);
    if (!mkdtemp(staging)) return ce_fail(ctx, CE_ERR_IO, "cannot create %s: %s", staging, strerror(errno));
    chmod(staging, 0755);
    ce_filelist files = { 0 };
    walk_list = &files;
    walk_root_len = strlen(dir);
    walk_oom = false;
    if ((rc = link_entries(ctx, dir, staging))) goto fail;
    if (nftw(dir, walk_one, 64, FTW_PHYS) != 0) {
        rc = walk_oom ? ce_fail(ctx, CE_ERR_NOMEM, "out of memory") : ce_fail(ctx, CE_ERR_IO, "cannot read %s", dir);
        goto fail;
    }
    ce_receipt r = { .name = want, .cuda = cuda, .cudnn = cudnn, .platform = ctx->platform, .files = &files };
    if ((rc = ce_receipt_write(ctx, staging, &r))) goto fail;
    char marker[CE_PATH_MAX], line[PATH_MAX + 2];
    if ((rc = ce_join(ctx, marker, sizeof marker, staging, CE_ADOPTED_NAME))) goto fail;
    snprintf(line, sizeof line, "%s\n", dir);
    if ((rc = ce_file_write_atomic(ctx, marker, line, strlen(line), 0644))) goto fail;
    if (rename(staging, final) != 0) {
        rc = ce_fail(ctx, CE_ERR_IO, "cannot rename %s to %s: %s", staging, final, strerror(errno));
        goto fail;
    }
    ce_fsync_dir(versions);
    ce_filelist_free(&files);
    snprintf(out_name, outsz, "%s", want);
    return CE_OK;
fail:
    ce_filelist_free(&files);
    ce_rm_rf(ctx, staging);
    return rc;
}

int ce_adopted_from(const char *prefix, char *from, size_t fromsz)
{
    char p[CE_PATH_MAX];
    if (ce_path_join(p, sizeof p, prefix, CE_ADOPTED_NAME) != CE_OK) return 0;
    FILE *f = fopen(p, "r");
    if (!f) return 0;
    from[0] = '\0';
    if (fgets(from, (int)fromsz, f)) from[strcspn(from, "\n")] = '\0';
    fclose(f);
    return 1;
}

size_t ce_adopt_scan(ce_ctx *ctx, char (*dirs)[4096], size_t max)
{
    static const char *const pats[] = { "/usr/local/cuda-*", "/opt/cuda*", "/usr/lib/cuda", NULL };
    size_t n = 0;
    for (int i = 0; pats[i] && n < max; i++) {
        char pat[4200];
        ce_sys_path(ctx, pats[i], pat, sizeof pat);
        glob_t g;
        if (glob(pat, 0, NULL, &g) != 0) continue;
        for (size_t k = 0; k < g.gl_pathc && n < max; k++) {
            struct stat st;
            char nvcc[4300];
            snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", g.gl_pathv[k]);
            if (lstat(g.gl_pathv[k], &st) != 0 || !S_ISDIR(st.st_mode) || !ce_exists(nvcc)) continue;
            snprintf(dirs[n++], 4096, "%s", g.gl_pathv[k]);
        }
        globfree(&g);
    }
    return n;
}
