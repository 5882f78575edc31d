/* The system switch's trust rules (issue 9): every directory from / down to
 * what root's loader will use, and the whole toolchain tree (system.h). */
#include "system_int.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/trust.h"

#define SWITCH_FIX "Install the toolchain into a root-owned CUDAENV_ROOT instead, e.g.: " \
    "sudo CUDAENV_ROOT=/opt/cudaenv cudaenv install SPEC"

int ce_system_path_safe(ce_ctx *ctx, const char *path)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return ce_fail(ctx, CE_ERR_NOTFOUND, "cannot resolve %s: %s", path, strerror(errno));
    /* every directory from / down: a user who can write any of them can
     * swap the libraries root's loader will trust */
    return ce_trust_chain(ctx, real, "a system switch", SWITCH_FIX);
}

/* ---- the whole toolchain (issue 9) -------------------------------------
 * /usr/local/cuda/bin/nvcc, include/ and lib64/ are used by root and by every
 * user once the switch is made: every file and directory of the tree must be
 * root's (lstat, no group/other write), and every symlink in it must resolve
 * to a path whose every component is root's too. */

static __thread ce_ctx *walk_ctx;
static __thread int walk_rc;
static __thread ce_trust_cache *walk_cache;

/* The resolved target of the symlink p.  The walk starts at a resolved path
 * and does not follow links, so p's directory holds no symlink: a link to a
 * name in the same directory (libcudart.so -> libcudart.so.12, the usual
 * soname chain) is followed here with one readlink + lstat per hop instead
 * of a realpath that re-reads every component from /; *here says so (the
 * end is an entry of the tree).  Anything else (a slash or dot in the
 * target, 40 hops) goes through realpath.  false with errno when it
 * resolves to nothing. */
static bool resolve_link(const char *p, char *real, bool *here)
{
    char cur[PATH_MAX], t[PATH_MAX];
    *here = false;
    if (snprintf(cur, sizeof cur, "%s", p) >= (int)sizeof cur) return realpath(p, real) != NULL;
    for (int hop = 0; hop < 40; hop++) {
        ssize_t n = readlink(cur, t, sizeof t - 1);
        if (n <= 0) break;
        t[n] = '\0';
        char *slash = strrchr(cur, '/');
        size_t dl = (size_t)(slash - cur) + 1;
        if (strchr(t, '/') || !strcmp(t, ".") || !strcmp(t, "..") || dl + (size_t)n >= sizeof cur) break;
        memcpy(cur + dl, t, (size_t)n + 1);
        struct stat st;
        if (lstat(cur, &st) != 0) return false;
        if (!S_ISLNK(st.st_mode)) {
            memcpy(real, cur, strlen(cur) + 1);
            *here = true;
            return true;
        }
    }
    return realpath(cur, real) != NULL;
}

static int walk_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)ftw;
    const char *why = NULL;
    if (flag == FTW_SL || flag == FTW_SLN) {
        /* a symlink's own mode bits mean nothing; its owner and its target do */
        if (st->st_uid != 0) why = "a symlink not owned by root";
    } else if (flag == FTW_DNR || flag == FTW_NS) {
        why = "unreadable";
    } else {
        why = ce_trust_stat_reason(st, false);
    }
    if (why) {
        walk_rc = ce_fail(walk_ctx, CE_ERR_PERM, "unsafe for a system switch: %s is %s; root's loader and every "
                          "user's nvcc would trust a file a user can replace. " SWITCH_FIX, p, why);
        return 1;
    }
    if (flag == FTW_SL || flag == FTW_SLN) {
        char real[PATH_MAX];
        bool here;
        if (!resolve_link(p, real, &here)) {
            /* dangling: whoever can create the target decides what it is */
            char t[PATH_MAX];
            ssize_t n = readlink(p, t, sizeof t - 1);
            t[n > 0 ? n : 0] = '\0';
            walk_rc = ce_fail(walk_ctx, CE_ERR_PERM, "unsafe for a system switch: %s -> %s points to nothing "
                              "(%s); remove the link or reinstall the toolchain", p, t, strerror(errno));
            return 1;
        }
        /* a target in the link's own directory is an entry of the tree:
         * the walk checks it as it checks every entry (and the directory,
         * before it), so its chain from / is not walked again */
        if (!here && (walk_rc = ce_trust_chain_cached(walk_ctx, real, "a system switch", SWITCH_FIX, walk_cache)) != CE_OK)
            return 1;
    }
    return 0;
}

/* Resolve prefix fully (real); lib is the resolved lib64 directory the
 * loader will be pointed at. */
int ce_sys_toolchain_resolve(ce_ctx *ctx, const char *prefix, char *real, char *lib)
{
    char p[PATH_MAX + 8];
    if (!realpath(prefix, real))
        return ce_fail(ctx, CE_ERR_NOTFOUND, "cannot resolve %s: %s", prefix, strerror(errno));
    snprintf(p, sizeof p, "%s/lib64", real);
    /* real is resolved: a lib64 that is a directory, not a link, is resolved too */
    struct stat ls;
    if (lstat(p, &ls) == 0 && S_ISDIR(ls.st_mode) && strlen(p) < PATH_MAX) memcpy(lib, p, strlen(p) + 1);
    else if (!realpath(p, lib))
        return ce_fail(ctx, CE_ERR_NOTFOUND, "cannot resolve %s: %s", p, strerror(errno));
    return CE_OK;
}

/* The whole tree at the resolved path real. */
int ce_sys_toolchain_walk(ce_ctx *ctx, const char *real)
{
    /* linear: the parents of real are checked once here, and every symlink's
     * target then costs the lstats below the last directory already checked */
    static ce_trust_cache cache;
    int rc = ce_trust_chain_cached(ctx, real, "a system switch", SWITCH_FIX, &cache);
    if (rc) {
        ce_trust_cache_free(&cache);
        return rc;
    }
    walk_ctx = ctx;
    walk_cache = &cache;
    walk_rc = CE_OK;
    if (nftw(real, walk_one, 32, FTW_PHYS) != 0 && walk_rc == CE_OK)
        walk_rc = ce_fail(ctx, CE_ERR_IO, "cannot walk %s: %s", real, strerror(errno));
    walk_cache = NULL;
    ce_trust_cache_free(&cache);
    return walk_rc;
}

int ce_sys_toolchain_safe(ce_ctx *ctx, const char *prefix, char *real, char *lib)
{
    int rc = ce_sys_toolchain_resolve(ctx, prefix, real, lib);
    return rc ? rc : ce_sys_toolchain_walk(ctx, real);
}
