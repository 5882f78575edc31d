#include "store.h"
#include "receipt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/dirscan.h"
#include "core/rmtree.h"
#include "core/file.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"
#include "manifest/source.h"
#include "core/trust.h"
#include "core/version.h"

int ce_store_path(ce_ctx *ctx, const char *sub, char *out, size_t outsz)
{
    if (ce_path_join(out, outsz, ctx->root, sub) != CE_OK)
        return ce_fail(CE_ERR_OTHER, "path too long: %s/%s", ctx->root, sub);
    return CE_OK;
}

int ce_toolchain_parse_name(const char *name, ce_toolchain *out)
{
    /* prefix is left to the caller: clearing its 4 KiB touched a page more per entry */
    memset(out, 0, offsetof(ce_toolchain, prefix) + 1);
    size_t len = strlen(name);
    if (len >= sizeof out->name) return 0;
    memcpy(out->name, name, len + 1);
    /* "12.4.1@system": an adopted toolkit beside cudaenv's own 12.4.1 */
    const char *at = strchr(name, '@');
    size_t base = at ? (size_t)(at - name) : len;
    if (at && !at[1]) return 0;
    const char *plus = strstr(name, "+cudnn");
    if (plus && plus > name + base) plus = NULL;
    size_t cl = plus ? (size_t)(plus - name) : base;
    if (cl >= sizeof out->cuda) return 0;
    memcpy(out->cuda, name, cl);
    out->cuda[cl] = '\0';
    if (plus) {
        size_t dl = base - (size_t)(plus + 6 - name);
        if (dl >= sizeof out->cudnn) return 0;
        memcpy(out->cudnn, plus + 6, dl);
        out->cudnn[dl] = '\0';
    }
    if (!ce_version_valid(out->cuda)) return 0;
    if (plus && !ce_version_valid(out->cudnn)) return 0;
    return 1;
}

static int tc_cmp(const ce_toolchain *x, const ce_toolchain *y)
{
    int c = ce_version_cmp(x->cuda, y->cuda);
    if (c) return c;
    if (!x->cudnn[0] || !y->cudnn[0]) return x->cudnn[0] ? 1 : (y->cudnn[0] ? -1 : 0);
    return ce_version_cmp(x->cudnn, y->cudnn);
}

static int idx_cmp(const void *a, const void *b, void *v)
{
    return tc_cmp((const ce_toolchain *)v + *(const size_t *)a, (const ce_toolchain *)v + *(const size_t *)b);
}

/* Sort v through its indexes: qsort of the 4 KiB entries themselves made a
 * copy of them all (a malloc, and a sysinfo call to size it) on the path of
 * every env/use. */
static int tc_sort(ce_toolchain *v, size_t n)
{
    size_t few[64], *idx = n <= 64 ? few : malloc(n * sizeof *idx);
    if (!idx) return -1;
    for (size_t i = 0; i < n; i++) idx[i] = i;
    qsort_r(idx, n, sizeof *idx, idx_cmp, v);
    /* v[i] = old v[idx[i]], one cycle of the permutation at a time */
    for (size_t i = 0; i < n; i++) {
        if (idx[i] == i) continue;
        ce_toolchain tmp = v[i];
        size_t j = i;
        while (idx[j] != i) {
            size_t k = idx[j];
            v[j] = v[k];
            idx[j] = j;
            j = k;
        }
        v[j] = tmp;
        idx[j] = j;
    }
    if (idx != few) free(idx);
    return 0;
}

int ce_store_list(ce_ctx *ctx, ce_toolchain **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char dir[4200];
    int rc = ce_store_path(ctx, "versions", dir, sizeof dir);
    if (rc) return rc;
    ce_dirscan d;
    if (ce_dirscan_open(&d, AT_FDCWD, dir) != 0) return CE_OK;
    size_t cap = 0;
    ce_toolchain *v = NULL;
    const char *name;
    unsigned char type;
    while ((name = ce_dirscan_next(&d, &type))) {
        if (name[0] == '.') continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            ce_toolchain *nv = realloc(v, cap * sizeof *v);
            if (!nv) { free(v); ce_dirscan_close(&d); return ce_fail(CE_ERR_NOMEM, "out of memory"); }
            v = nv;
        }
        /* parsed in place: a 4 KiB entry on the stack is a page fault more per env/use */
        ce_toolchain *t = &v[*n];
        if (!ce_toolchain_parse_name(name, t)) continue;
        if (ce_path_join(t->prefix, sizeof t->prefix, dir, name) != CE_OK) continue;
        /* a directory, or a link to one (as stat(t->prefix) would say); the
         * type readdir reports spares the stat of a plain directory */
        struct stat st;
        if (type != DT_DIR && (fstatat(d.fd, name, &st, 0) != 0 || !S_ISDIR(st.st_mode))) continue;
        (*n)++;
    }
    ce_dirscan_close(&d);
    if (*n && tc_sort(v, *n)) { free(v); *n = 0; return ce_fail(CE_ERR_NOMEM, "out of memory"); }
    *out = v;
    return CE_OK;
}

/* What to run next for a spec that is not installed: install it when the
 * (local) manifest can, else point at list-remote.  Never suggest
 * "install 99.9" for something the manifest does not have. */
static void install_hint(ce_ctx *ctx, const char *spec_text, char *out, size_t outsz)
{
    ce_msource src;
    ce_manifest *m = NULL;
    ce_spec spec;
    ce_resolved r;
    ce_event_fn ev = ctx->event;
    ctx->event = NULL;   /* a probe: no warnings from resolve */
    int src_rc = CE_OK;
    bool ok = ce_spec_parse(spec_text, &spec) == CE_OK && spec.kind != CE_SPEC_SYSTEM &&
              (src_rc = ce_manifest_source(ctx, &src)) == CE_OK && ce_manifest_load_source(ctx, &src, &m) == CE_OK &&
              ce_resolve(ctx, m, &spec, NULL, false, &r) == CE_OK;
    ctx->event = ev;
    ce_manifest_free(m);
    if (ok) snprintf(out, outsz, "run: cudaenv install %s", spec_text);
    else if (src_rc == CE_ERR_PERM)   /* as root, a manifest a user can change (source.h) */
        snprintf(out, outsz, "the manifest is not consulted: it is not root's (cudaenv list-remote says why)");
    else snprintf(out, outsz, "the manifest has no installable %s either; see: cudaenv list-remote", spec_text);
}

static int not_installed(ce_ctx *ctx, const char *spec, const ce_toolchain *v, size_t n)
{
    char have[1024] = "", hint[512], where[4300];
    size_t used = 0;
    for (size_t i = 0; i < n && used + 100 < sizeof have; i++)
        used += (size_t)snprintf(have + used, sizeof have - used, "%s%s", i ? ", " : "", v[i].name);
    install_hint(ctx, spec, hint, sizeof hint);
    snprintf(where, sizeof where, "%s/versions", ctx->root);
    /* sudo keeps the user's environment out: say which store root looked in */
    const char *sudo_user = getenv("SUDO_USER");
    char sudo_note[256] = "";
    if (sudo_user && *sudo_user && geteuid() == 0 && !ctx->set.root)
        snprintf(sudo_note, sizeof sudo_note, " (running under sudo: %s's toolchains need "
                 "sudo CUDAENV_ROOT=~%s/.cudaenv, or install into /opt/cudaenv)", sudo_user, sudo_user);
    if (n == 0)
        return ce_fail(CE_ERR_NOTFOUND, "%s is not installed in %s (no toolchains there)%s; %s",
                       spec, where, sudo_note, hint);
    return ce_fail(CE_ERR_NOTFOUND, "%s is not installed in %s (installed: %s)%s; %s",
                   spec, where, have, sudo_note, hint);
}

int ce_store_find(ce_ctx *ctx, const char *spec_text, ce_toolchain *out)
{
    ce_toolchain *v;
    size_t n;
    int rc = ce_store_list(ctx, &v, &n);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].name, spec_text) == 0) {
            *out = v[i];
            free(v);
            return CE_OK;
        }
    }
    ce_spec spec;
    if ((rc = ce_spec_parse(spec_text, &spec)) != CE_OK) {
        free(v);
        return rc;
    }
    char want_cuda[32], want_cudnn[32];
    snprintf(want_cuda, sizeof want_cuda, "%s", spec.version);
    snprintf(want_cudnn, sizeof want_cudnn, "%s", spec.cudnn);
    if (spec.kind == CE_SPEC_SYSTEM) {
        free(v);
        return ce_fail(CE_ERR_NOTFOUND, "'system' is the machine's own CUDA, not an installed toolchain");
    }
    if (spec.kind == CE_SPEC_CUDA && !strcmp(spec.version, "latest")) {
        /* the release install latest picks: the newest the driver runs */
        ce_msource src;
        ce_manifest *m = NULL;
        char drv[64];
        if ((rc = ce_manifest_source(ctx, &src)) || (rc = ce_manifest_load_source(ctx, &src, &m))) {
            free(v);
            return rc;
        }
        const ce_cuda *c = ce_manifest_cuda_latest(m, ctx->platform, ce_driver_version(ctx, drv, sizeof drv) ? drv : NULL);
        snprintf(want_cuda, sizeof want_cuda, "%s", c ? c->version : "none");
        ce_manifest_free(m);
    }
    const char *fw = ce_spec_fw_name(spec.kind);
    if (spec.kind == CE_SPEC_TF || fw) {
        ce_msource src;
        ce_manifest *m = NULL;
        if ((rc = ce_manifest_source(ctx, &src)) || (rc = ce_manifest_load_source(ctx, &src, &m))) {
            free(v);
            return rc;
        }
        const ce_tf *tf = fw ? NULL : ce_manifest_tf_pick(m, spec.version);
        const ce_fw_build *b = ce_fw_build_for(ce_manifest_fw_pick(m, fw, spec.version, spec.build), spec.build);
        const char *cu = tf ? tf->cuda : b ? b->cuda : NULL, *dn = tf ? tf->cudnn : b ? b->cudnn : NULL;
        if (!cu) {
            ce_manifest_free(m);
            free(v);
            return ce_fail(CE_ERR_NOTFOUND, "%s %s%s%s is not in the manifest %s; see: cudaenv list-remote %s",
                           ce_spec_kind_label(spec.kind), spec.version, spec.build[0] ? "+" : "", spec.build,
                           src.origin, fw ? fw : "tf");
        }
        snprintf(want_cuda, sizeof want_cuda, "%s", cu);
        if (!want_cudnn[0] && dn) snprintf(want_cudnn, sizeof want_cudnn, "%s", dn);
        ce_manifest_free(m);
    }
    /* newest match wins: the list is sorted oldest first */
    for (size_t i = n; i-- > 0;) {
        if (!ce_version_matches(want_cuda, v[i].cuda)) continue;
        if (want_cudnn[0] && !(v[i].cudnn[0] && ce_version_matches(want_cudnn, v[i].cudnn))) continue;
        *out = v[i];
        free(v);
        return CE_OK;
    }
    rc = not_installed(ctx, spec_text, v, n);
    free(v);
    return rc;
}

/* ---- writing the store ---- */

int ce_store_try_begin(ce_ctx *ctx, ce_store_txn *t)
{
    int *fd = &t->lock;
    *fd = -1;
    int f = ce_store_open(ctx, ".lock", O_RDWR | O_CREAT, 0644);
    if (f < 0) return f;
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
    if (fcntl(f, F_OFD_SETLK, &fl) < 0) {
        close(f);
        return ce_fail(CE_ERR_OTHER, "the store %s is locked by another cudaenv", ctx->root);
    }
    *fd = f;
    return CE_OK;
}

static int store_lock(ce_ctx *ctx, int *fd)
{
    char path[4200];
    *fd = -1;
    int rc = ce_mkdir_p(ctx->root, 0755);
    if (rc) return rc;
    if ((rc = ce_store_path(ctx, ".lock", path, sizeof path))) return rc;
    /* never through a symlink: .lock -> /anything must not create files as root */
    int f = ce_store_open(ctx, ".lock", O_RDWR | O_CREAT, 0644);
    struct stat rst;
    if (f == CE_ERR_PERM && stat(ctx->root, &rst) == 0 && rst.st_uid != geteuid()) {
        /* a shared store: changing it is its owner's job */
        struct passwd *pw = getpwuid(rst.st_uid);
        return ce_fail(CE_ERR_PERM, "the store %s belongs to %s and is read-only to you: ask its owner "
                       "(sudo CUDAENV_ROOT=%s cudaenv ...), or use a store of your own: CUDAENV_ROOT=~/.cudaenv",
                       ctx->root, pw ? pw->pw_name : "another user", ctx->root);
    }
    if (f < 0) return f;
    /* An open file description lock (fcntl F_OFD_SETLKW), not flock: NFS
     * carries fcntl locks between nodes (lockd / NFSv4), so installs on a
     * shared store serialise across machines too.  It belongs to this open
     * file and is dropped by the close in ce_store_end (or at exit). */
    struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
    if (fcntl(f, F_OFD_SETLK, &fl) != 0) {
        if (errno != EAGAIN && errno != EACCES && errno != EINTR) {
            int e = errno;
            close(f);
            return ce_fail(CE_ERR_IO, "cannot lock %s: %s (the filesystem must support fcntl locks; "
                           "on NFS run lockd / use NFSv4)", path, strerror(e));
        }
        ce_emit(ctx, CE_EV_NOTE, NULL, "waiting for another cudaenv install/uninstall (%s)", path);
        while (fcntl(f, F_OFD_SETLKW, &fl) != 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(f);
            return ce_fail(CE_ERR_IO, "cannot lock %s: %s", path, strerror(e));
        }
    }
    *fd = f;
    return CE_OK;
}

int ce_store_clean_staging(ce_ctx *ctx)
{
    static const char *subs[] = { "versions", "pkgs" };
    int removed = 0;
    for (size_t i = 0; i < 2; i++) {
        char dir[4200], p[8400];
        int rc = ce_store_path(ctx, subs[i], dir, sizeof dir);
        if (rc) return rc;
        DIR *d = opendir(dir);
        if (!d) continue;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strncmp(e->d_name, ".staging-", 9) != 0) continue;
            if (ce_path_join(p, sizeof p, dir, e->d_name) != CE_OK) continue;
            if ((rc = ce_rm_tree(p))) { closedir(d); return rc; }
            ce_emit(ctx, CE_EV_INFO, NULL, "removed %s, left by an interrupted run", p);
            removed++;
        }
        closedir(d);
    }
    return removed;
}

int ce_store_begin(ce_ctx *ctx, ce_store_txn *t)
{
    int rc = store_lock(ctx, &t->lock);
    if (rc == CE_OK && (rc = ce_store_clean_staging(ctx)) > 0) rc = CE_OK;
    return rc;
}

void ce_store_end(ce_store_txn *t)
{
    if (t->lock >= 0) close(t->lock);   /* closing drops the lock */
    t->lock = -1;
}

int ce_store_staging(ce_ctx *ctx, const char *sub, char *out, size_t outsz)
{
    char dir[4200];
    int rc = ce_store_path(ctx, sub, dir, sizeof dir);
    if (rc || (rc = ce_mkdir_p(dir, 0755))) return rc;
    if (snprintf(out, outsz, "%s/.staging-XXXXXX", dir) >= (int)outsz)
        return ce_fail(CE_ERR_OTHER, "path too long: %s", dir);
    if (!mkdtemp(out))
        return ce_fail(errno == ENOSPC ? CE_ERR_SPACE : CE_ERR_IO, "cannot create a staging directory in %s: %s",
                       dir, strerror(errno));
    chmod(out, 0755); /* mkdtemp makes 0700; toolchains are readable like /usr/local/cuda */
    return CE_OK;
}

static void parent_of(const char *path, char *out, size_t outsz)
{
    snprintf(out, outsz, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash && slash != out) *slash = '\0';
}

int ce_store_commit(const char *staging, const char *final)
{
    char parent[4200];
    parent_of(final, parent, sizeof parent);
    if (renameat2(AT_FDCWD, staging, AT_FDCWD, final, RENAME_NOREPLACE) == 0) {
        ce_fsync_dir(parent);
        return CE_OK;
    }
    if (errno != EEXIST && errno != ENOTEMPTY)
        return ce_fail(CE_ERR_IO, "cannot rename %s to %s: %s", staging, final, strerror(errno));
    /* a reinstall: swap in one step; the old tree now sits at the staging name */
    if (renameat2(AT_FDCWD, staging, AT_FDCWD, final, RENAME_EXCHANGE) != 0)
        return ce_fail(CE_ERR_IO, "cannot replace %s with %s: %s", final, staging, strerror(errno));
    ce_fsync_dir(parent);
    return ce_rm_tree(staging);
}

int ce_store_remove(const char *dir)
{
    char parent[4200], tmp[4300];
    parent_of(dir, parent, sizeof parent);
    snprintf(tmp, sizeof tmp, "%s/.staging-rm-XXXXXX", parent);
    if (!mkdtemp(tmp))
        return ce_fail(CE_ERR_IO, "cannot create a directory in %s: %s", parent, strerror(errno));
    /* rename over the empty directory we just made: atomic, and the name is ours */
    if (rename(dir, tmp) != 0) {
        int e = errno;
        rmdir(tmp);
        return ce_fail(e == ENOENT ? CE_ERR_NOTFOUND : CE_ERR_IO, "cannot remove %s: %s", dir, strerror(e));
    }
    ce_fsync_dir(parent);
    return ce_rm_tree(tmp);
}

void ce_store_pkg_names(const char *cuda, const char *cudnn, char *cuda_pkg, size_t cn,
                        char *cudnn_pkg, size_t dn)
{
    snprintf(cuda_pkg, cn, "cuda-%s", cuda);
    if (cudnn && *cudnn)
        snprintf(cudnn_pkg, dn, "cudnn-%s-cuda%d", cudnn, ce_version_major(cuda));
    else if (dn)
        cudnn_pkg[0] = '\0';
}

int ce_store_gc_pkgs(ce_ctx *ctx)
{
    ce_toolchain *v;
    size_t n;
    char dir[4200], p[8400];
    int rc = ce_store_list(ctx, &v, &n);
    if (rc || (rc = ce_store_path(ctx, "pkgs", dir, sizeof dir))) { if (!rc) free(v); return rc; }
    DIR *d = opendir(dir);
    if (!d) { free(v); return 0; }
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        /* <tree>.sha256.json (install's per-file hash index) lives and dies with <tree> */
        char base[256];
        snprintf(base, sizeof base, "%s", e->d_name);
        size_t bl = strlen(base), sl = strlen(".sha256.json");
        bool is_index = bl > sl && strcmp(base + bl - sl, ".sha256.json") == 0;
        if (is_index) base[bl - sl] = '\0';
        bool used = false;
        for (size_t i = 0; i < n && !used; i++) {
            char a[128], b[128];
            ce_store_pkg_names(v[i].cuda, v[i].cudnn, a, sizeof a, b, sizeof b);
            used = !strcmp(base, a) || !strcmp(base, b) || ce_receipt_uses_pkg(v[i].prefix, base);
        }
        if (used || ce_path_join(p, sizeof p, dir, e->d_name) != CE_OK) continue;
        if (is_index) {
            unlink(p);
            continue;
        }
        struct stat st;
        if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode)) continue; /* a stray file: not a package */
        /* one package that cannot go does not keep the others */
        int r1 = ce_store_remove(p);
        if (r1 && !rc) rc = r1;
        removed += r1 == CE_OK;
    }
    closedir(d);
    free(v);
    return rc ? rc : removed;
}

/* Resolve $CUDAENV_SYSROOT/usr/local/cuda as the image sees it: an
 * absolute symlink target (/opt/cudaenv/..., /etc/alternatives/cuda) names a
 * path inside the sysroot, not on the host (a host path when nothing is
 * there: a toolchain outside the image).  false when it resolves to
 * nothing. */
static bool sys_resolve(const ce_ctx *ctx, const char *abs, char *out)
{
    char cur[PATH_MAX * 2], t[PATH_MAX], next[PATH_MAX * 4];
    if (snprintf(cur, sizeof cur, "%s%s", ctx->sysroot, abs) >= (int)sizeof cur) return false;
    for (int hop = 0; hop < 40; hop++) {
        ssize_t n = readlink(cur, t, sizeof t - 1);
        if (n < 0) break;   /* not a link: the rest resolves on the host as is */
        t[n] = '\0';
        struct stat st;
        if (t[0] == '/') {
            /* as the system switch records it: inside the image, or a host
             * path when the toolchain lives outside it */
            snprintf(next, sizeof next, "%s%s", ctx->sysroot, t);
            if (ctx->sysroot[0] && lstat(next, &st) != 0) snprintf(next, sizeof next, "%s", t);
        } else {
            char *slash = strrchr(cur, '/');
            if (slash) *slash = '\0';
            snprintf(next, sizeof next, "%s/%s", cur, t);
        }
        if (strlen(next) >= sizeof cur) return false;
        memcpy(cur, next, strlen(next) + 1);
    }
    return realpath(cur, out) != NULL;
}

/* Does $CUDAENV_SYSROOT/usr/local/cuda resolve into prefix? */
static bool system_points_into(const ce_ctx *ctx, const char *prefix)
{
    char a[PATH_MAX], b[PATH_MAX];
    if (!sys_resolve(ctx, "/usr/local/cuda", a) || !realpath(prefix, b)) return false;
    size_t n = strlen(b);
    return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

int ce_store_uninstall(ce_ctx *ctx, const char *name, bool force)
{
    char dir[4200], p[8400];
    int rc = ce_store_path(ctx, "versions", dir, sizeof dir);
    if (rc) return rc;
    ce_toolchain t;
    if (ce_path_join(p, sizeof p, dir, name) != CE_OK || name[0] == '.' || strchr(name, '/') ||
        !ce_toolchain_parse_name(name, &t) || !ce_is_dir(p))
        return ce_fail(CE_ERR_NOTFOUND, "%s is not installed; see: cudaenv list", name);
    if (system_points_into(ctx, p) && !force) {
        char link[4200];
        ce_sys_path(ctx, "/usr/local/cuda", link, sizeof link);
        return ce_fail(CE_ERR_OTHER, "%s is the system-wide toolchain (%s points into it); "
                       "switch first (cudaenv global VERSION --system) or pass --force", name, link);
    }
    return ce_store_remove(p);
}
