#include "trust.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "dirscan.h"
#include "path.h"

bool ce_trust_privileged(void)
{
    /* no environment override: under sudo -E the caller's environment is
     * exactly what must not be able to switch the rule off */
    return geteuid() == 0;
}

const char *ce_trust_stat_reason(const struct stat *st, bool sticky_ok)
{
    static __thread char buf[64];
    if (S_ISLNK(st->st_mode)) return "a symlink";
    if (st->st_uid != 0) {
        snprintf(buf, sizeof buf, "owned by uid %u, not root", (unsigned)st->st_uid);
        return buf;
    }
    bool sticky = S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX) && sticky_ok;
    if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !sticky) return "writable by group or others";
    return NULL;
}

int ce_trust_chain(ce_ctx *ctx, const char *real, const char *what, const char *fix)
{
    return ce_trust_chain_cached(ctx, real, what, fix, NULL);
}

static bool cache_has(const ce_trust_cache *c, const char *dir)
{
    for (size_t k = 0; c && k < c->n; k++)
        if (!strcmp(c->dirs[k], dir)) return true;
    return false;
}

void ce_trust_cache_free(ce_trust_cache *c)
{
    for (size_t k = 0; k < c->n; k++) free(c->dirs[k]);
    c->n = 0;
}

/* lstat every prefix of the absolute path real, from / down (parents in c
 * skipped, the safe ones added): 0 when all are safe, else 1 with cur the
 * first prefix that failed and *why its reason (NULL: lstat failed, errno). */
static int chain_walk(const char *real, char *cur, ce_trust_cache *c, const char **why)
{
    size_t len = strlen(real);
    for (size_t i = 0; i <= len; i++) {
        if (i != len && real[i] != '/') continue;
        size_t n = i ? i : 1;
        memcpy(cur, real, n);
        cur[n] = '\0';
        if (i != len && cache_has(c, cur)) continue;   /* a parent already checked */
        struct stat st;
        *why = NULL;
        if (lstat(cur, &st) != 0) return 1;
        /* /tmp-like parents are fine: the sticky bit keeps others from
         * renaming what root put there; the last component never is */
        if ((*why = ce_trust_stat_reason(&st, i != len))) return 1;
        if (c && i != len && c->n < sizeof c->dirs / sizeof c->dirs[0] && (c->dirs[c->n] = strdup(cur))) c->n++;
    }
    return 0;
}

int ce_trust_chain_cached(ce_ctx *ctx, const char *real, const char *what, const char *fix, ce_trust_cache *c)
{
    char cur[PATH_MAX];
    const char *why;
    if (strlen(real) >= sizeof cur || real[0] != '/')
        return ce_fail(ctx, CE_ERR_PERM, "%s is not an absolute resolved path", real);
    if (!chain_walk(real, cur, c, &why)) return CE_OK;
    if (!why) return ce_fail(ctx, CE_ERR_IO, "cannot inspect %s: %s", cur, strerror(errno));
    return ce_fail(ctx, CE_ERR_PERM, "unsafe for %s run as root: %s is %s; a user could make root "
                   "write, delete or run files of their choosing. %s", what, cur, why, fix);
}

/* No "." or ".." component and no "//": with no symlink on the way either,
 * such an absolute path is already what realpath would return. */
static bool plain_path(const char *p)
{
    for (const char *s = p; *s; s++) {
        if (*s != '/') continue;
        if (s[1] == '/') return false;
        if (s[1] == '.' && (!s[2] || s[2] == '/' || (s[2] == '.' && (!s[3] || s[3] == '/')))) return false;
    }
    return p[0] == '/';
}

#define STORE_FIX_FMT "Use a root-owned store (sudo CUDAENV_ROOT=/opt/cudaenv cudaenv ...), or if %s is " \
    "meant to be root's: chown -R root:root %s && chmod -R go-w %s"

/* The store's fix, made only for a refusal (12 KiB: not on the stack of
 * every command that passes). */
static int __attribute__((noinline)) store_unsafe(ce_ctx *ctx, const char *dir, const char *name, const char *why)
{
    char fix[PATH_MAX * 3 + 256];
    snprintf(fix, sizeof fix, STORE_FIX_FMT, ctx->root, ctx->root, ctx->root);
    return ce_fail(ctx, CE_ERR_PERM, "unsafe for cudaenv run as root: %s/%s is %s; a user could make "
                   "root write, delete or run files of their choosing. %s", dir, name, why, fix);
}

static int __attribute__((noinline)) store_chain(ce_ctx *ctx, const char *real)
{
    char fix[PATH_MAX * 3 + 256];
    snprintf(fix, sizeof fix, STORE_FIX_FMT, ctx->root, ctx->root, ctx->root);
    return ce_trust_chain(ctx, real, "a store used by cudaenv", fix);
}

/* The entries cudaenv opens directly inside the store, and those one level
 * further down (cache/<sha>, logs/<file>, pkgs/<tree>, versions/<name>). */
static int check_entries(ce_ctx *ctx, const char *dir, int depth)
{
    static const char *const top[] = { ".lock", "global", "cache", "logs", "pkgs", "versions" };
    ce_dirscan d;
    if (ce_dirscan_open(&d, AT_FDCWD, dir) != 0)
        return errno == ENOENT ? CE_OK : ce_fail(ctx, CE_ERR_IO, "cannot read %s: %s", dir, strerror(errno));
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
        return ce_fail(ctx, CE_ERR_IO, "cannot resolve CUDAENV_ROOT %s: %s", ctx->root, strerror(errno));
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
        return ce_fail(ctx, CE_ERR_USAGE, "CUDAENV_ROOT='%s' is not an absolute path%s; cudaenv would use a "
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
    if (plain_path(ctx->root) && strlen(ctx->root) < sizeof cur && !chain_walk(ctx->root, cur, NULL, &why))
        return check_entries(ctx, ctx->root, 0);
    return trust_root_resolved(ctx);
}

/* The fallback walk: every directory component opened with O_NOFOLLOW. */
static int open_walk(int dfd, const char *rel, int flags, mode_t mode)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", rel) >= (int)sizeof buf) { errno = ENAMETOOLONG; return -1; }
    int cur = dup(dfd);
    char *p = buf;
    for (;;) {
        char *slash = strchr(p, '/');
        if (!slash) break;
        *slash = '\0';
        if (!*p || !strcmp(p, "..")) { close(cur); errno = EXDEV; return -1; }
        int next = openat(cur, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(cur);
        if (next < 0) { errno = e; return -1; }
        cur = next;
        p = slash + 1;
    }
    if (!strcmp(p, "..")) { close(cur); errno = EXDEV; return -1; }
    int fd = openat(cur, p, flags | O_NOFOLLOW, mode);
    int e = errno;
    close(cur);
    errno = e;
    return fd;
}

int ce_store_open(ce_ctx *ctx, const char *rel, int flags, mode_t mode)
{
    int root = open(ctx->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (ce_trust_privileged() ? O_NOFOLLOW : 0));
    if (root < 0)
        return ce_fail(ctx, errno == EACCES ? CE_ERR_PERM : CE_ERR_IO, "cannot open the store %s: %s",
                       ctx->root, strerror(errno));
    flags |= O_CLOEXEC;
    int fd = -1;
#ifdef SYS_openat2
    struct open_how how = { .flags = (unsigned long long)flags, .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
    if (flags & O_CREAT) how.mode = mode;
    fd = (int)syscall(SYS_openat2, root, rel, &how, sizeof how);
    if (fd < 0 && (errno == ENOSYS || errno == EPERM))   /* old kernel, or a seccomp filter */
        fd = open_walk(root, rel, flags, mode);
#else
    fd = open_walk(root, rel, flags, mode);
#endif
    int e = errno;
    close(root);
    if (fd < 0) {
        bool link = e == ELOOP || e == EXDEV || (e == ENOTDIR && !(flags & O_DIRECTORY));
        return ce_fail(ctx, e == ENOENT ? CE_ERR_NOTFOUND : link ? CE_ERR_PERM : e == EACCES ? CE_ERR_PERM : CE_ERR_IO,
                       "cannot open %s/%s: %s%s", ctx->root, rel, strerror(e),
                       link ? " (a symlink inside the store is never followed; remove it)" : "");
    }
    struct stat st;
    if (ce_trust_privileged() && fstat(fd, &st) == 0) {
        const char *why = ce_trust_stat_reason(&st, false);
        if (why) {
            close(fd);
            return ce_fail(ctx, CE_ERR_PERM, "unsafe for cudaenv run as root: %s/%s is %s; remove it or "
                           "chown root:root and chmod go-w it", ctx->root, rel, why);
        }
    }
    return fd;
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
