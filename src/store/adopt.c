#include "adopt.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "usage.h"
#include "compose.h"
#include "receipt.h"
#include "store.h"
#include "core/file.h"
#include "core/rmtree.h"
#include "core/header.h"
#include "core/path.h"
#include "core/priv.h"
#include "core/version.h"
#include "core/walk.h"

/* The release of a runfile's date-stamped version.json ("12.2.20230823":
 * the date, not the patch) from its cuda_cudart version, which each release
 * bumps.  Only releases whose runtime version is known; anything else is
 * named by major.minor alone (never a guessed ".0": a copy of 12.2.2 named
 * 12.2.0 would be switched to for a different release). */
static const struct { const char *cudart, *release; } cudart_release[] = {
    { "11.7.60", "11.7.0" }, { "11.7.99", "11.7.1" }, { "11.8.89", "11.8.0" },
    { "12.0.107", "12.0.0" }, { "12.0.146", "12.0.1" }, { "12.1.55", "12.1.0" }, { "12.1.105", "12.1.1" },
    { "12.2.53", "12.2.0" }, { "12.2.128", "12.2.1" }, { "12.2.140", "12.2.2" },
};

/* "12.4.1" stays; "11.8.20220929" -> the release its cudart version names,
 * else "11.8" */
static void release_of(const char *v, const char *cudart, char *out, size_t n)
{
    int a, b, c = 0;
    int k = sscanf(v, "%d.%d.%d", &a, &b, &c);
    if (k < 2) { snprintf(out, n, "%s", v); return; }
    if (c < 1000) { snprintf(out, n, "%d.%d.%d", a, b, c); return; }
    for (size_t i = 0; cudart && i < sizeof cudart_release / sizeof *cudart_release; i++)
        if (!strcmp(cudart, cudart_release[i].cudart)) {
            snprintf(out, n, "%s", cudart_release[i].release);
            return;
        }
    snprintf(out, n, "%d.%d", a, b);
}

static bool from_version_json(ce_ctx *ctx, const char *dir, char *out, size_t n)
{
    char p[CE_PATH_MAX], *data = NULL;
    size_t len = 0;
    if (ce_path_join(p, sizeof p, dir, "version.json") != CE_OK) return false;
    ce_event_fn ev = ctx->event;
    ctx->event = NULL;
    int rc = ce_exists(p) ? ce_file_read(p, 1 << 20, &data, &len) : CE_ERR_NOTFOUND;
    ctx->event = ev;
    if (rc) return false;
    cJSON *j = cJSON_ParseWithLength(data, len);
    free(data);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "cuda"), "version");
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "cuda_cudart"), "version");
    bool ok = cJSON_IsString(v) && ce_version_valid(v->valuestring);
    if (ok) release_of(v->valuestring, cJSON_IsString(rt) ? rt->valuestring : NULL, out, n);
    cJSON_Delete(j);
    return ok;
}

static bool from_version_txt(const char *dir, char *out, size_t n)
{
    char p[CE_PATH_MAX], line[256], v[64];
    if (ce_path_join(p, sizeof p, dir, "version.txt") != CE_OK) return false;
    FILE *f = fopen(p, "r");
    bool ok = f && fgets(line, sizeof line, f) && sscanf(line, "CUDA Version %63s", v) == 1 && ce_version_valid(v);
    if (f) fclose(f);
    if (ok) snprintf(out, n, "%s", v);
    return ok;
}

static bool from_header(const char *dir, char *out, size_t n)
{
    char p[CE_PATH_MAX];
    long v = ce_path_join(p, sizeof p, dir, "include/cuda.h") == CE_OK ? ce_header_define(p, "CUDA_VERSION") : -1;
    if (v < 0 && ce_path_join(p, sizeof p, dir, "include/cuda_runtime_api.h") == CE_OK)
        v = ce_header_define(p, "CUDART_VERSION");
    if (v <= 0) return false;
    snprintf(out, n, "%ld.%ld", v / 1000, (v % 1000) / 10);
    return true;
}

/* ---- as root: the tree must be root's (core/priv.h) ----------------------
 * adopt links the tree into root's store, where root's and every user's
 * exec/verify/use run its files: as root every directory from / down to it
 * and every entry in it must be root-owned and not group/other-writable,
 * every symlink root's with a target that passes the same rule. */

#define ADOPT_FIX "Adopt a root-owned copy (chown -R root:root DIR && chmod -R go-w DIR), or adopt it as the " \
    "user who owns it, into their own store"

static int tree_one(const ce_walk_entry *e, void *arg)
{
    (void)arg;
    const char *why, *p = e->path;
    if (e->kind == CE_WALK_DIR_POST) return 0;
    if (e->kind == CE_WALK_ERR && e->err != EACCES && e->err != ENOENT)
        return ce_fail(CE_ERR_IO, "cannot walk %s: %s", p, strerror(e->err));
    if (e->kind == CE_WALK_ERR)
        why = "unreadable";
    else if (S_ISLNK(e->st->st_mode))
        why = e->st->st_uid != 0 ? "a symlink not owned by root" : !ce_priv_path_ok(p) ? "a symlink to a path a user can change" : NULL;
    else
        why = ce_priv_stat_reason(e->st, false);
    if (!why) return 0;
    return ce_fail(CE_ERR_PERM, "unsafe for adopt run as root: %s is %s; a user could make root "
                   "and every user of the store run files of their choosing. " ADOPT_FIX, p, why);
}

static int tree_trusted(ce_ctx *ctx, const char *dir)
{
    if (!ce_priv()) return CE_OK;
    ce_priv_tree t;
    char why[PATH_MAX + 128];
    if (ce_priv_tree_open(&t, dir, why, sizeof why) != 0)
        return ce_fail(errno == EPERM ? CE_ERR_PERM : CE_ERR_IO, "%s%s%s", errno == EPERM ?
                       "unsafe for adopt run as root: " : "", why, errno == EPERM ? "; a user could make root and "
                       "every user of the store run files of their choosing. " ADOPT_FIX : "");
    ce_priv_tree_close(&t);
    int rc = ce_walk(dir, tree_one, ctx);
    return rc != CE_WALK_FAIL ? rc : ce_fail(CE_ERR_IO, "cannot walk %s: %s", dir, strerror(errno));
}

int ce_adopt_probe(ce_ctx *ctx, const char *dir, char *cuda, size_t cudasz, char *cudnn, size_t cudnnsz)
{
    cuda[0] = cudnn[0] = '\0';
    if (!ce_is_dir(dir)) return ce_fail(CE_ERR_NOTFOUND, "%s is not a directory", dir);
    int rc = tree_trusted(ctx, dir);
    if (rc) return rc;
    /* read, never run: nothing of the tree executes to learn its version
     * (its bin/nvcc is whoever made the tree's program) */
    if (!from_version_json(ctx, dir, cuda, cudasz) && !from_version_txt(dir, cuda, cudasz) &&
        !from_header(dir, cuda, cudasz))
        return ce_fail(CE_ERR_NOTFOUND, "%s is not a CUDA toolkit: no version.json, version.txt, "
                       "include/cuda.h or include/cuda_runtime_api.h; name the toolkit's top directory (the one "
                       "with bin/ and lib64/)", dir);
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

typedef struct receipt_walk { ce_filelist *list; size_t root_len; } receipt_walk;

static int walk_one(const ce_walk_entry *w, void *arg)
{
    if (w->kind != CE_WALK_ENTRY || !S_ISREG(w->st->st_mode)) return 0;
    receipt_walk *r = arg;
    ce_filelist *l = r->list;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        ce_file_entry *v = realloc(l->v, cap * sizeof *v);
        if (!v) return CE_ERR_NOMEM;
        l->v = v;
        l->cap = cap;
    }
    ce_file_entry *e = &l->v[l->n];
    memset(e, 0, sizeof *e);
    e->path = strdup(w->path + r->root_len + 1);
    if (!e->path) return CE_ERR_NOMEM;
    e->size = (long long)w->st->st_size;
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

/* A top-level regular file of the tree copied into the store, read through
 * the directory fd with O_NOFOLLOW (nothing renamed or re-pointed after the
 * lstat redirects the read: a swapped-in link fails, a swapped-in other
 * file is told apart by its inode). */
static int copy_entry(int dfd, const char *name, const struct stat *was, const char *from, const char *to)
{
    int fd = ce_priv_openat(dfd, name, O_RDONLY | O_NONBLOCK, 0);
    if (fd < 0) return ce_fail(CE_ERR_IO, "cannot read %s: %s", from, strerror(errno));
    struct stat st;
    char *data = NULL;
    size_t len = 0;
    int rc = CE_OK;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != was->st_ino || st.st_dev != was->st_dev)
        rc = ce_fail(CE_ERR_IO, "%s changed while it was adopted; run adopt again", from);
    else if (ce_priv() && ce_priv_stat_reason(&st, false))
        rc = ce_fail(CE_ERR_PERM, "unsafe for adopt run as root: %s is %s. " ADOPT_FIX, from,
                     ce_priv_stat_reason(&st, false));
    else if (!(data = malloc((size_t)st.st_size + 1)))
        rc = ce_fail(CE_ERR_NOMEM, "out of memory");
    while (rc == CE_OK && len < (size_t)st.st_size) {
        ssize_t n = read(fd, data + len, (size_t)st.st_size - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            rc = ce_fail(CE_ERR_IO, "cannot read %s: %s", from, n < 0 ? strerror(errno) : "cut short");
            break;
        }
        len += (size_t)n;
    }
    close(fd);
    if (rc == CE_OK) rc = ce_file_write_atomic(to, data, len, 0644);
    free(data);
    return rc;
}

/* versions/<staging>/<entry> -> dir/<entry> for every top-level entry */
static int link_entries(const char *dir, const char *staging)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        int e = errno;
        if (dfd >= 0) close(dfd);
        return ce_fail(CE_ERR_IO, "cannot read %s: %s", dir, strerror(e));
    }
    struct dirent *e;
    int rc = CE_OK;
    while (rc == CE_OK && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || !strcmp(e->d_name, CE_RECEIPT_NAME) ||
            !strcmp(e->d_name, CE_ADOPTED_NAME) || !strcmp(e->d_name, CE_USAGE_NAME))
            continue;
        char from[CE_PATH_MAX], to[CE_PATH_MAX];
        if ((rc = ce_join(from, sizeof from, dir, e->d_name)) || (rc = ce_join(to, sizeof to, staging, e->d_name)))
            break;
        /* a top-level file (version.json, EULA.txt) is copied: verify wants
         * the receipt's regular files to be regular files at their path */
        struct stat st;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_size <= (16 << 20)) {
            rc = copy_entry(dfd, e->d_name, &st, from, to);
        } else if (symlink(from, to) != 0) {
            rc = ce_fail(CE_ERR_IO, "cannot create %s: %s", to, strerror(errno));
        }
    }
    closedir(d);
    return rc;
}

int ce_adopt(ce_ctx *ctx, const char *dir_in, const char *name, char *out_name, size_t outsz)
{
    char dir[PATH_MAX], cuda[64], cudnn[64], want[96];
    if (!realpath(dir_in, dir)) return ce_fail(CE_ERR_NOTFOUND, "%s: %s", dir_in, strerror(errno));
    int rc = ce_adopt_probe(ctx, dir, cuda, sizeof cuda, cudnn, sizeof cudnn);
    if (rc) return rc;
    char versions[CE_PATH_MAX];
    if ((rc = ce_store_path(ctx, "versions", versions, sizeof versions))) return rc;
    if (strncmp(dir, versions, strlen(versions)) == 0 && dir[strlen(versions)] == '/')
        return ce_fail(CE_ERR_USAGE, "%s is already in the store", dir);
    ce_toolchain t;
    if (name) {
        const char *at = strchr(name, '@');
        if (strlen(name) >= sizeof want || strchr(name, '/') || name[0] == '.' || !ce_toolchain_parse_name(name, &t) ||
            (at && !label_ok(at + 1)))
            return ce_fail(CE_ERR_USAGE, "--name %s: a toolchain name is CUDA[+cudnnVER][@label] "
                           "(e.g. %s%s%s@system)", name, cuda, cudnn[0] ? "+cudnn" : "", cudnn);
        snprintf(want, sizeof want, "%s", name);
    } else {
        if (snprintf(want, sizeof want, "%.31s%s%.31s", cuda, cudnn[0] ? "+cudnn" : "", cudnn) >= (int)sizeof want)
            return ce_fail(CE_ERR_OTHER, "versions too long: %s, %s", cuda, cudnn);
    }
    char final[CE_PATH_MAX];
    if ((rc = ce_join(final, sizeof final, versions, want))) return rc;
    if (ce_exists(final)) {
        if (name) return ce_fail(CE_ERR_OTHER, "%s is taken (%s); choose another --name", want, final);
        snprintf(want + strlen(want), sizeof want - strlen(want), "@adopted");
        if ((rc = ce_join(final, sizeof final, versions, want))) return rc;
        if (ce_exists(final))
            return ce_fail(CE_ERR_OTHER, "%s is taken (%s); choose a name: --name %s@LABEL", want, final, cuda);
    }
    if ((rc = ce_mkdir_p(versions, 0755))) return rc;
    char staging[CE_PATH_MAX];
    if ((rc = ce_join(staging, sizeof staging, versions, ".staging-adopt-XXXXXX"))) return rc;
    if (!mkdtemp(staging)) return ce_fail(CE_ERR_IO, "cannot create %s: %s", staging, strerror(errno));
    chmod(staging, 0755);
    ce_filelist files = { 0 };
    receipt_walk rw = { &files, strlen(dir) };
    if ((rc = link_entries(dir, staging))) goto fail;
    int wr = ce_walk(dir, walk_one, &rw);
    if (wr != 0) {
        rc = wr == CE_ERR_NOMEM ? ce_fail(CE_ERR_NOMEM, "out of memory") : ce_fail(CE_ERR_IO, "cannot read %s", dir);
        goto fail;
    }
    /* the marker before the receipt: the usage record the receipt's write
     * makes (list's sizes) counts it, as a walk of the tree does */
    char marker[CE_PATH_MAX], line[PATH_MAX + 2];
    if ((rc = ce_join(marker, sizeof marker, staging, CE_ADOPTED_NAME))) goto fail;
    snprintf(line, sizeof line, "%s\n", dir);
    if ((rc = ce_file_write_atomic(marker, line, strlen(line), 0644))) goto fail;
    ce_receipt r = { .name = want, .cuda = cuda, .cudnn = cudnn, .platform = ctx->platform, .files = &files };
    if ((rc = ce_receipt_write(staging, &r))) goto fail;
    if (rename(staging, final) != 0) {
        rc = ce_fail(CE_ERR_IO, "cannot rename %s to %s: %s", staging, final, strerror(errno));
        goto fail;
    }
    ce_fsync_dir(versions);
    ce_filelist_free(&files);
    snprintf(out_name, outsz, "%s", want);
    return CE_OK;
fail:
    ce_filelist_free(&files);
    ce_rm_tree(staging);
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
            char nvcc[CE_PATH_MAX];
            if (ce_path_join(nvcc, sizeof nvcc, g.gl_pathv[k], "bin/nvcc") != CE_OK) continue;
            if (lstat(g.gl_pathv[k], &st) != 0 || !S_ISDIR(st.st_mode) || !ce_exists(nvcc)) continue;
            snprintf(dirs[n++], 4096, "%s", g.gl_pathv[k]);
        }
        globfree(&g);
    }
    return n;
}
