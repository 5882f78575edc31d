/* The system switch's trust rules (issue 9): every directory from / down to
 * what root's loader will use, and the whole toolchain tree (system.h). */
#include "system_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/trust.h"
#include "core/walk.h"

#define SWITCH_FIX "Install the toolchain into a root-owned CUDAENV_ROOT instead, e.g.: " \
    "sudo CUDAENV_ROOT=/opt/cudaenv cudaenv install SPEC"

/* ---- the whole toolchain (issue 9) -------------------------------------
 * /usr/local/cuda/bin/nvcc, include/ and lib64/ are used by root and by every
 * user once the switch is made: every file and directory of the tree must be
 * root's (lstat, no group/other write), and every symlink in it must resolve
 * to a path whose every component is root's too. */

/* The links of the directory being walked found to end, through names of
 * that same directory only, at an entry that is no link: a soname chain
 * (libcudnn.so -> libcudnn.so.8 -> libcudnn.so.8.7.0) is followed once, not
 * again from each of its links (lib64 holds two links a library).  Up to
 * LINK_MEMO names a directory; links past them are followed as before. */
#define LINK_MEMO 256
typedef struct link_memo {
    char dir[PATH_MAX];   /* the directory, with its slash ("" none yet) */
    char *names[LINK_MEMO];
    size_t n;
} link_memo;

typedef struct tree_walk { ce_ctx *ctx; ce_trust_cache *cache; link_memo *memo; } tree_walk;

static void memo_clear(link_memo *m)
{
    for (size_t i = 0; i < m->n; i++) free(m->names[i]);
    m->n = 0;
    m->dir[0] = '\0';
}

/* The names remembered are those of the directory path[0..dl) from now on. */
static void memo_enter(link_memo *m, const char *path, size_t dl)
{
    if (strlen(m->dir) == dl && !memcmp(m->dir, path, dl)) return;
    memo_clear(m);
    memcpy(m->dir, path, dl);
    m->dir[dl] = '\0';
}

static bool memo_has(const link_memo *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->names[i], name)) return true;
    return false;
}

/* The resolved target of the symlink p.  The walk starts at a resolved path
 * and does not follow links, so p's directory holds no symlink: a link to a
 * name in the same directory (libcudart.so -> libcudart.so.12, the usual
 * soname chain) is followed here with one readlink + lstat per hop instead
 * of a realpath that re-reads every component from /, and stops at a name
 * already followed to its end (w->memo); *here says so (the end is an entry
 * of the tree, which the walk checks as it checks every entry; real is then
 * the last name reached).  Anything else (a slash or dot in the target, 40
 * hops) goes through realpath.  false with errno when it resolves to
 * nothing. */
static bool resolve_link(tree_walk *w, const char *p, char *real, bool *here)
{
    char cur[PATH_MAX], t[PATH_MAX], *hops[40];
    int nh = 0;
    bool ok = false;
    *here = false;
    if (snprintf(cur, sizeof cur, "%s", p) >= (int)sizeof cur) return realpath(p, real) != NULL;
    size_t dl = (size_t)(strrchr(cur, '/') - cur) + 1;
    memo_enter(w->memo, cur, dl);
    for (int hop = 0; hop < 40 && !ok; hop++) {
        if (memo_has(w->memo, cur + dl)) {
            ok = true;
            break;
        }
        ssize_t n = readlink(cur, t, sizeof t - 1);
        if (n <= 0) break;
        t[n] = '\0';
        if (strchr(t, '/') || !strcmp(t, ".") || !strcmp(t, "..") || dl + (size_t)n >= sizeof cur) break;
        if ((hops[nh] = strdup(cur + dl))) nh++;
        memcpy(cur + dl, t, (size_t)n + 1);
        struct stat st;
        if (lstat(cur, &st) != 0) {
            int e = errno;
            while (nh) free(hops[--nh]);
            errno = e;
            return false;
        }
        ok = !S_ISLNK(st.st_mode);
    }
    if (ok) {
        /* every link on the way ends where this one did */
        link_memo *m = w->memo;
        while (nh) {
            char *h = hops[--nh];
            if (m->n < LINK_MEMO) m->names[m->n++] = h;
            else free(h);
        }
        memcpy(real, cur, strlen(cur) + 1);
        *here = true;
        return true;
    }
    while (nh) free(hops[--nh]);
    return realpath(cur, real) != NULL;
}

static int walk_one(const ce_walk_entry *e, void *arg)
{
    tree_walk *w = arg;
    const char *why = NULL, *p = e->path;
    const struct stat *st = e->st;
    bool link = e->kind == CE_WALK_ENTRY && S_ISLNK(st->st_mode);
    if (e->kind == CE_WALK_DIR_POST) return 0;
    if (e->kind == CE_WALK_ERR && e->err != EACCES && e->err != ENOENT)
        return ce_fail(CE_ERR_IO, "cannot walk %s: %s", p, strerror(e->err));
    if (link) {
        /* a symlink's own mode bits mean nothing; its owner and its target do */
        if (st->st_uid != 0) why = "a symlink not owned by root";
    } else if (e->kind == CE_WALK_ERR) {
        why = "unreadable";
    } else {
        why = ce_trust_stat_reason(st, false);
    }
    if (why)
        return ce_fail(CE_ERR_PERM, "unsafe for a system switch: %s is %s; root's loader and every "
                       "user's nvcc would trust a file a user can replace. " SWITCH_FIX, p, why);
    if (link) {
        char real[PATH_MAX];
        bool here;
        if (!resolve_link(w, p, real, &here)) {
            /* dangling: whoever can create the target decides what it is */
            char t[PATH_MAX];
            ssize_t n = readlink(p, t, sizeof t - 1);
            t[n > 0 ? n : 0] = '\0';
            return ce_fail(CE_ERR_PERM, "unsafe for a system switch: %s -> %s points to nothing "
                           "(%s); remove the link or reinstall the toolchain", p, t, strerror(errno));
        }
        /* a target in the link's own directory is an entry of the tree:
         * the walk checks it as it checks every entry (and the directory,
         * before it), so its chain from / is not walked again */
        if (!here) return ce_trust_chain_cached(real, "a system switch", SWITCH_FIX, w->cache);
    }
    return 0;
}

/* Resolve prefix fully (real); lib is the resolved lib64 directory the
 * loader will be pointed at. */
int ce_sys_toolchain_resolve(const char *prefix, char *real, char *lib)
{
    char p[CE_PATH_MAX];
    /* as root the store passed its rule (ce_trust_root: no symlink from /
     * down to versions/<name>), so a plain prefix in it is its own resolved
     * path (realpath would readlink every component); the walk's chain
     * check refuses a symlink on the way all the same */
    if (ce_trust_privileged() && ce_path_plain(prefix) && strlen(prefix) < PATH_MAX)
        memcpy(real, prefix, strlen(prefix) + 1);
    else if (!realpath(prefix, real))
        return ce_fail(CE_ERR_NOTFOUND, "cannot resolve %s: %s", prefix, strerror(errno));
    int rc = ce_join(p, sizeof p, real, "lib64");
    if (rc) return rc;
    /* real is resolved: a lib64 that is a directory, not a link, is resolved too */
    struct stat ls;
    if (lstat(p, &ls) == 0 && S_ISDIR(ls.st_mode) && strlen(p) < PATH_MAX) memcpy(lib, p, strlen(p) + 1);
    else if (!realpath(p, lib))
        return ce_fail(CE_ERR_NOTFOUND, "cannot resolve %s: %s", p, strerror(errno));
    return CE_OK;
}

/* The whole tree at the resolved path real. */
int ce_sys_toolchain_walk(ce_ctx *ctx, const char *real)
{
    /* linear: the parents of real are checked once (those of the store the
     * command's own walk already passed are not lstat'ed again), and every
     * symlink's target then costs the lstats below the last directory
     * already checked */
    ce_trust_cache *cache = ce_trust_command_cache();
    int rc = ce_trust_chain_cached(real, "a system switch", SWITCH_FIX, cache);
    if (rc) return rc;
    link_memo *memo = calloc(1, sizeof *memo);
    if (!memo) return ce_fail(CE_ERR_NOMEM, "out of memory");
    tree_walk w = { ctx, cache, memo };
    rc = ce_walk(real, walk_one, &w);
    if (rc == CE_WALK_FAIL) rc = ce_fail(CE_ERR_IO, "cannot walk %s: %s", real, strerror(errno));
    memo_clear(memo);
    free(memo);
    return rc;
}

/* Is the resolved path p at or beneath the resolved directory d? */
static bool beneath(const char *p, const char *d)
{
    size_t n = strlen(d);
    return !strncmp(p, d, n) && (p[n] == '/' || p[n] == '\0');
}

int ce_sys_walk(ce_ctx *ctx, const char *real, const char *lib)
{
    int rc = real[0] ? ce_sys_toolchain_walk(ctx, real) : CE_OK;
    /* a lib64 that is a link out of the tree: its directory is walked too */
    if (rc == CE_OK && lib[0] && !(real[0] && beneath(lib, real))) rc = ce_sys_toolchain_walk(ctx, lib);
    return rc;
}

/* ---- what a rollback, a repair and a restore point the system at -------
 * A recorded path (a history entry, an intent, the machine's own link) is
 * linked as it was recorded, so it is resolved here hop by hop, every hop
 * checked: each directory from / down passes the rule (root-owned sticky
 * parents allowed), each symlink on the way is root's (the directory
 * holding it was checked before it).  A component that does not exist
 * ends the walk with *missing: nobody but root can create it in a
 * directory that passed.  real receives the end (the rest appended as
 * written when missing). */
static int unsafe_hop(const char *path, const char *at, const char *why)
{
    return ce_fail(CE_ERR_PERM, "unsafe for a system switch: %s is %s (on the way to %s); root's loader "
                   "and every user's nvcc would trust a file a user can replace. " SWITCH_FIX, at, why, path);
}

static int resolve_hops(const char *path, char *real, bool *missing)
{
    char rest[PATH_MAX * 2], t[PATH_MAX];
    struct stat st;
    *missing = false;
    if (snprintf(rest, sizeof rest, "%s", path) >= (int)sizeof rest || path[0] != '/')
        return ce_fail(CE_ERR_OTHER, "not an absolute path: %s", path);
    strcpy(real, "/");
    const char *why;
    if (lstat("/", &st) != 0 || (why = ce_trust_stat_reason(&st, true))) return unsafe_hop(path, "/", "unsafe");
    int hops = 0;
    for (char *p = rest;;) {
        while (*p == '/') p++;
        if (!*p) return CE_OK;
        char *end = strchr(p, '/');
        size_t cl = end ? (size_t)(end - p) : strlen(p), rl = strlen(real);
        char *next = end ? end : p + cl;
        if ((cl == 1 && p[0] == '.') || (cl == 2 && p[0] == '.' && p[1] == '.')) {
            if (cl == 2) { char *s = strrchr(real, '/'); s[s == real] = '\0'; }
            p = next;
            continue;
        }
        if (rl + cl + 2 >= PATH_MAX) return ce_fail(CE_ERR_OTHER, "path too long: %s", path);
        if (rl > 1) real[rl++] = '/';
        memcpy(real + rl, p, cl);
        real[rl + cl] = '\0';
        p = next;
        if (lstat(real, &st) != 0) {
            if (errno != ENOENT && errno != ENOTDIR) return ce_fail(CE_ERR_IO, "cannot inspect %s: %s", real, strerror(errno));
            *missing = true;
            if (*p) snprintf(real + strlen(real), PATH_MAX - strlen(real), "%s", p);
            return CE_OK;
        }
        while (*p == '/') p++;
        if (S_ISLNK(st.st_mode)) {
            if (st.st_uid != 0) return unsafe_hop(path, real, "a symlink not owned by root");
            ssize_t n = readlink(real, t, sizeof t - 1);
            if (n <= 0 || ++hops > 40) return ce_fail(CE_ERR_PERM, "cannot resolve %s: %s", path, strerror(n <= 0 ? errno : ELOOP));
            t[n] = '\0';
            /* the link's target, then what followed it */
            char tail[PATH_MAX * 2];
            if (snprintf(tail, sizeof tail, "%s/%s", t, p) >= (int)sizeof tail) return ce_fail(CE_ERR_OTHER, "path too long: %s", path);
            memcpy(rest, tail, strlen(tail) + 1);
            p = rest;
            if (t[0] == '/') strcpy(real, "/");
            else { char *s = strrchr(real, '/'); s[s == real] = '\0'; }
            continue;
        }
        if ((why = ce_trust_stat_reason(&st, *p != '\0'))) return unsafe_hop(path, real, why);
    }
}

void ce_sys_host(const ce_ctx *ctx, const char *inside, char *out, size_t n)
{
    /* a link's relative text is relative to /usr/local */
    if (inside[0] != '/') {
        snprintf(out, n, "%s/usr/local/%s", ctx->sysroot, inside);
        return;
    }
    snprintf(out, n, "%s%s", ctx->sysroot, inside);
    if (ctx->sysroot[0] && !ce_exists(out)) snprintf(out, n, "%s", inside);
}

int ce_sys_selection_safe(ce_ctx *ctx, const char *target, const char *lib, bool missing_ok)
{
    char host[PATH_MAX + 4200], rt[PATH_MAX], rl[PATH_MAX];
    const char *path[2] = { target, lib };
    char *out[2] = { rt, rl };
    for (int i = 0; i < 2; i++) {
        out[i][0] = '\0';
        if (!path[i][0]) continue;
        bool missing;
        ce_sys_host(ctx, path[i], host, sizeof host);
        int rc = resolve_hops(host, out[i], &missing);
        if (rc) return rc;
        if (missing) {
            if (!missing_ok)
                return ce_fail(CE_ERR_NOTFOUND, "%s does not exist any more (%s is missing); cudaenv does not point "
                               "the system at nothing: pick another with sudo cudaenv global VERSION --system", host, out[i]);
            out[i][0] = '\0';
        }
    }
    return ce_sys_walk(ctx, rt, rl);
}

int ce_sys_record_safe(ce_ctx *ctx, const ce_sys_record *r)
{
    /* a restore of a directory moved aside by --force moves that one back */
    const char *t = r->restore && r->original.kind == CE_SYS_ORIG_DIR ? r->original.target : r->target;
    return ce_sys_selection_safe(ctx, t, r->lib, r->restore);
}
