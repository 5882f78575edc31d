#include "trust.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dirscan.h"
#include "priv.h"
#include "path.h"

bool ce_trust_privileged(void)
{
    return ce_priv();
}

const char *ce_trust_stat_reason(const struct stat *st, bool sticky_ok)
{
    return ce_priv_stat_reason(st, sticky_ok);
}

int ce_trust_chain(const char *real, const char *what, const char *fix)
{
    return ce_trust_chain_cached(real, what, fix, NULL);
}

void ce_trust_cache_free(ce_trust_cache *c)
{
    ce_priv_cache_free(c);
}

#define chain_walk ce_priv_chain_walk

/* The parents this command's chain walks found safe (the store's, the
 * sysroot's, a system switch's toolchain and its links' targets): each of
 * /, /opt... is lstat'ed once per command, not once per walk.  Only root can
 * change a directory that passed, so the verdict holds for the command's
 * life.  Used from the main thread only (the walks run before any thread
 * starts, the system switch has none). */
static ce_trust_cache command_cache;

ce_trust_cache *ce_trust_command_cache(void)
{
    return &command_cache;
}

int ce_trust_chain_cached(const char *real, const char *what, const char *fix, ce_trust_cache *c)
{
    char cur[PATH_MAX];
    const char *why;
    if (strlen(real) >= sizeof cur || real[0] != '/')
        return ce_fail(CE_ERR_PERM, "%s is not an absolute resolved path", real);
    if (!chain_walk(real, cur, c, &why)) return CE_OK;
    if (!why) return ce_fail(CE_ERR_IO, "cannot inspect %s: %s", cur, strerror(errno));
    return ce_fail(CE_ERR_PERM, "unsafe for %s run as root: %s is %s; a user could make root "
                   "write, delete or run files of their choosing. %s", what, cur, why, fix);
}


#define STORE_FIX_FMT "Use a root-owned store (sudo CUDAENV_ROOT=/opt/cudaenv cudaenv ...), or if %s is " \
    "meant to be root's: chown -R root:root %s && chmod -R go-w %s"

/* The store's fix, made only for a refusal (12 KiB: not on the stack of
 * every command that passes). */
static int __attribute__((noinline)) store_unsafe(ce_ctx *ctx, const char *dir, const char *name, const char *why)
{
    char fix[PATH_MAX * 3 + 256];
    snprintf(fix, sizeof fix, STORE_FIX_FMT, ctx->root, ctx->root, ctx->root);
    return ce_fail(CE_ERR_PERM, "unsafe for cudaenv run as root: %s/%s is %s; a user could make "
                   "root write, delete or run files of their choosing. %s", dir, name, why, fix);
}

static int __attribute__((noinline)) store_chain(ce_ctx *ctx, const char *real)
{
    char fix[PATH_MAX * 3 + 256];
    snprintf(fix, sizeof fix, STORE_FIX_FMT, ctx->root, ctx->root, ctx->root);
    return ce_trust_chain_cached(real, "a store used by cudaenv", fix, &command_cache);
}

/* The entries cudaenv opens directly inside the store, and those one level
 * further down (cache/<sha>, logs/<file>, pkgs/<tree>, versions/<name>,
 * init/cudaenv.<shell>). */
static int check_entries(ce_ctx *ctx, const char *dir, int depth)
{
    static const char *const top[] = { ".lock", "global", "cache", "logs", "pkgs", "versions", "init" };
    ce_dirscan d;
    if (ce_dirscan_open(&d, AT_FDCWD, dir) != 0)
        return errno == ENOENT ? CE_OK : ce_fail(CE_ERR_IO, "cannot read %s: %s", dir, strerror(errno));
    const char *name;
    int rc = CE_OK;
    while (rc == CE_OK && (name = ce_dirscan_next(&d, NULL))) {
        if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
        bool known = depth > 0;
        for (size_t i = 0; !known && i < sizeof top / sizeof *top; i++) known = !strcmp(name, top[i]);
        if (!known) continue;
        struct stat st;
        if (fstatat(d.fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        const char *why = ce_trust_stat_reason(&st, false);
        if (why) {
            rc = store_unsafe(ctx, dir, name, why);
        } else if (depth == 0 && S_ISDIR(st.st_mode)) {
            char sub[PATH_MAX];
            if (ce_path_join(sub, sizeof sub, dir, name) == CE_OK)
                rc = check_entries(ctx, sub, 1);
        }
    }
    ce_dirscan_close(&d);
    return rc;
}

/* A store path that is not plain, has a symlink on the way, does not exist
 * yet or fails the rule: resolved with realpath first (the refusal's words). */
static int __attribute__((noinline)) trust_root_resolved(ce_ctx *ctx)
{
    char real[PATH_MAX], probe[PATH_MAX];
    if (realpath(ctx->root, real)) {
        int rc = store_chain(ctx, real);
        if (rc) return rc;
        /* from now on the resolved path: a symlink on the way cannot be re-pointed */
        snprintf(ctx->root, sizeof ctx->root, "%s", real);
        return check_entries(ctx, ctx->root, 0);
    }
    if (errno != ENOENT)
        return ce_fail(CE_ERR_IO, "cannot resolve CUDAENV_ROOT %s: %s", ctx->root, strerror(errno));
    /* not created yet: root will create it; its nearest existing parent must be safe */
    snprintf(probe, sizeof probe, "%s", ctx->root);
    for (;;) {
        char *slash = strrchr(probe, '/');
        if (!slash) break;
        if (slash == probe) slash[1] = '\0'; else *slash = '\0';
        if (realpath(probe, real)) return store_chain(ctx, real);
        if (!strcmp(probe, "/")) break;
    }
    return CE_OK;
}

int ce_trust_root(ce_ctx *ctx)
{
    if (ctx->root[0] != '/') {
        bool tilde = ctx->root[0] == '~';
        return ce_fail(CE_ERR_USAGE, "CUDAENV_ROOT='%s' is not an absolute path%s; cudaenv would use a "
                       "store relative to the working directory (a repository could ship one). Set it to an "
                       "absolute path, e.g.: export CUDAENV_ROOT=\"$HOME/.cudaenv\"", ctx->root,
                       tilde ? " (a quoted ~ is not expanded by the shell)" : "");
    }
    if (!ce_trust_privileged()) return CE_OK;
    /* the common case: a plain path with no symlink on the way is its own
     * resolved path, so one lstat per component is the whole check (realpath
     * would readlink each first); anything else takes the full way, which
     * also words the refusal */
    char cur[PATH_MAX];
    const char *why;
    if (ce_path_plain(ctx->root) && strlen(ctx->root) < sizeof cur && !chain_walk(ctx->root, cur, &command_cache, &why))
        return check_entries(ctx, ctx->root, 0);
    return trust_root_resolved(ctx);
}

int ce_store_open(ce_ctx *ctx, const char *rel, int flags, mode_t mode)
{
    int root = open(ctx->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (ce_trust_privileged() ? O_NOFOLLOW : 0));
    if (root < 0)
        return ce_fail(errno == EACCES ? CE_ERR_PERM : CE_ERR_IO, "cannot open the store %s: %s",
                       ctx->root, strerror(errno));
    int fd = ce_priv_openat(root, rel, flags, mode);
    int e = errno;
    close(root);
    if (fd < 0) {
        bool link = e == ELOOP || e == EXDEV || (e == ENOTDIR && !(flags & O_DIRECTORY));
        return ce_fail(e == ENOENT ? CE_ERR_NOTFOUND : link ? CE_ERR_PERM : e == EACCES ? CE_ERR_PERM : CE_ERR_IO,
                       "cannot open %s/%s: %s%s", ctx->root, rel, strerror(e),
                       link ? " (a symlink inside the store is never followed; remove it)" : "");
    }
    struct stat st;
    if (ce_trust_privileged() && fstat(fd, &st) == 0) {
        const char *why = ce_trust_stat_reason(&st, false);
        if (why) {
            close(fd);
            return ce_fail(CE_ERR_PERM, "unsafe for cudaenv run as root: %s/%s is %s; remove it or "
                           "chown root:root and chmod go-w it", ctx->root, rel, why);
        }
    }
    return fd;
}

/* ---- a toolchain root runs ---- */

static int toolchain_unsafe(const char *prefix, const char *path, const char *why)
{
    return ce_fail(CE_ERR_PERM, "unsafe for cudaenv run as root: %s is %s; root would run or load files of "
                   "a user's choosing from the toolchain %s. Use a toolchain only root can change (install it into "
                   "a root-owned CUDAENV_ROOT, or chown -R root:root and chmod -R go-w it)", path, why, prefix);
}

/* The resolved dir (prefix/sub) and its chain; with entries, every entry
 * in it too (a symlink: root's, with a target that passes the rule). */
static int toolchain_dir(const char *prefix, const char *sub, bool entries)
{
    char p[PATH_MAX + 64], real[PATH_MAX], cur[PATH_MAX + 256];
    const char *why;
    if (snprintf(p, sizeof p, "%s%s%s", prefix, sub[0] ? "/" : "", sub) >= (int)sizeof p) return CE_OK;
    if (!realpath(p, real)) return errno == ENOENT ? CE_OK : ce_fail(CE_ERR_IO, "cannot resolve %s: %s", p, strerror(errno));
    if (ce_priv_chain_walk(real, cur, NULL, &why))
        return why ? toolchain_unsafe(prefix, cur, why) : ce_fail(CE_ERR_IO, "cannot inspect %s: %s", cur, strerror(errno));
    if (!entries) return CE_OK;
    ce_dirscan d;
    if (ce_dirscan_open(&d, AT_FDCWD, real) != 0) return CE_OK;   /* not a directory: nothing listed in it */
    const char *name;
    int rc = CE_OK;
    while (rc == CE_OK && (name = ce_dirscan_next(&d, NULL))) {
        if (!strcmp(name, ".") || !strcmp(name, "..")) continue;
        struct stat st;
        if (fstatat(d.fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (ce_path_join(cur, sizeof cur, real, name) != CE_OK) {
            rc = ce_fail(CE_ERR_OTHER, "a path longer than %zu bytes: %s under %s", sizeof cur - 1, name, real);
            break;
        }
        if (S_ISLNK(st.st_mode))
            why = st.st_uid != 0 ? "a symlink not owned by root" : !ce_priv_path_ok(cur) ? "a symlink to a path a user can change" : NULL;
        else
            why = ce_priv_stat_reason(&st, false);
        if (why) rc = toolchain_unsafe(prefix, cur, why);
    }
    ce_dirscan_close(&d);
    return rc;
}

int ce_trust_toolchain(const char *prefix)
{
    if (!ce_priv()) return CE_OK;
    /* what PATH, LD_LIBRARY_PATH and verify's loads find first: the prefix,
     * and every entry of bin/, lib64/, lib/ and nvvm/bin/ */
    static const char *const subs[] = { "bin", "lib64", "lib", "nvvm/bin" };
    int rc = toolchain_dir(prefix, "", true);
    for (size_t i = 0; rc == CE_OK && i < sizeof subs / sizeof *subs; i++) rc = toolchain_dir(prefix, subs[i], true);
    return rc;
}

/* ---- the sysroot ---- */

int ce_trust_sysroot(ce_ctx *ctx)
{
    if (!ctx->sysroot[0] || !ce_priv()) return CE_OK;
    static const char *const fix = "Use a root-owned CUDAENV_SYSROOT whose directories are real ones, not symlinks "
                                   "(chown -R root:root it, chmod -R go-w it), or unset it to switch / itself";
    char real[PATH_MAX], cur[PATH_MAX + 64];
    const char *why0;
    int rc = CE_OK;
    /* as for the store: a plain path whose every component passes (no
     * symlink among them) is its own resolved path; anything else is
     * resolved first, which also words the refusal */
    if (ce_path_plain(ctx->sysroot) && strlen(ctx->sysroot) < sizeof real &&
        !chain_walk(ctx->sysroot, cur, &command_cache, &why0)) {
        memcpy(real, ctx->sysroot, strlen(ctx->sysroot) + 1);
    } else {
        if (!realpath(ctx->sysroot, real))
            return ce_fail(errno == ENOENT ? CE_ERR_NOTFOUND : CE_ERR_IO, "cannot resolve CUDAENV_SYSROOT %s: %s",
                           ctx->sysroot, strerror(errno));
        if ((rc = ce_trust_chain_cached(real, "a CUDAENV_SYSROOT used by cudaenv", fix, &command_cache))) return rc;
    }
    /* from now on the resolved path */
    snprintf(ctx->sysroot, sizeof ctx->sysroot, "%s", real);
    /* the directories root writes under (the switch's link, ld.so.conf.d,
     * its record, update-alternatives' admin files) and what adopt --scan
     * reads: each that exists a real directory passing the rule, looked at
     * from the sysroot down without following a link (img/etc -> /etc would
     * make the switch write the host's files) */
    static const char *const sub[] = { "etc", "etc/ld.so.conf.d", "etc/cudaenv", "etc/alternatives", "usr",
                                       "usr/local", "usr/lib", "opt", "var", "var/lib", "var/lib/dpkg",
                                       "var/lib/dpkg/alternatives" };
    int dfd = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0) return ce_fail(CE_ERR_IO, "cannot open CUDAENV_SYSROOT %s: %s", real, strerror(errno));
    for (size_t i = 0; i < sizeof sub / sizeof *sub && rc == CE_OK; i++) {
        struct stat st;
        const char *why = NULL;
        if (fstatat(dfd, sub[i], &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) continue;
            /* ENOTDIR: a parent is no directory (or a symlink, reported above) */
            why = strerror(errno);
        } else if (!(why = ce_priv_stat_reason(&st, false)) && !S_ISDIR(st.st_mode)) {
            why = "not a directory";
        }
        if (why) {
            if (ce_path_join(cur, sizeof cur, real, sub[i]) != CE_OK) snprintf(cur, sizeof cur, "%s", real);
            rc = ce_fail(CE_ERR_PERM, "unsafe for a CUDAENV_SYSROOT used by cudaenv run as root: %s is %s; "
                         "a user could make root write, delete or run files of their choosing. %s", cur, why, fix);
        }
    }
    close(dfd);
    return rc;
}

/* ---- escaping ---- */

/* Bytes at s that form one control character: 0 when s is not one. */
static size_t control_len(const unsigned char *s)
{
    if (*s == '\t' || *s == '\n') return 0;
    if (*s < 0x20 || *s == 0x7f) return 1;
    if (*s == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f) return 2;
    return 0;
}

void ce_escape_into(char *out, size_t outsz, const char *s)
{
    size_t o = 0;
    if (!outsz) return;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 1 < outsz;) {
        size_t n = control_len(p);
        if (!n) {
            out[o++] = (char)*p++;
            continue;
        }
        for (size_t k = 0; k < n; k++, p++) {
            if (o + 5 > outsz) { out[o] = '\0'; return; }
            o += (size_t)snprintf(out + o, outsz - o, "\\x%02x", *p);
        }
    }
    out[o] = '\0';
}

char *ce_escape_dup(const char *s)
{
    size_t need = strlen(s) * 4 + 1;
    char *d = malloc(need);
    if (d) ce_escape_into(d, need, s);
    return d;
}
