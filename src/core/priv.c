/* The privileged-use policy: see priv.h for the design (one rule, applied
 * where every command passes: proc.c for programs, ctx.c for knobs, trees
 * held by directory fd). */
#include "priv.h"

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

#include "path.h"

bool ce_priv(void)
{
    /* no environment override: under sudo -E the caller's environment is
     * exactly what must not be able to switch the rule off */
    return geteuid() == 0;
}

const char *ce_priv_stat_reason(const struct stat *st, bool sticky_ok)
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

static bool cache_has(const ce_priv_cache *c, const char *dir)
{
    for (size_t k = 0; c && k < c->n; k++)
        if (!strcmp(c->dirs[k], dir)) return true;
    return false;
}

void ce_priv_cache_free(ce_priv_cache *c)
{
    for (size_t k = 0; k < c->n; k++) free(c->dirs[k]);
    c->n = 0;
}

int ce_priv_chain_walk(const char *real, char *cur, ce_priv_cache *c, const char **why)
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
        if ((*why = ce_priv_stat_reason(&st, i != len))) return 1;
        if (c && i != len && c->n < sizeof c->dirs / sizeof c->dirs[0] && (c->dirs[c->n] = strdup(cur))) c->n++;
    }
    return 0;
}

int ce_priv_program(const char *path, char *why, size_t whysz)
{
    if (!ce_priv()) return 0;
    char real[PATH_MAX], cur[PATH_MAX];
    const char *r;
    if (!path || !realpath(path, real)) {
        snprintf(why, whysz, "cannot resolve %s: %s", path ? path : "(no program)", strerror(errno));
        return -1;
    }
    if (!ce_priv_chain_walk(real, cur, NULL, &r)) return 0;
    if (!r) snprintf(why, whysz, "cannot inspect %s: %s", cur, strerror(errno));
    else if (strcmp(real, path))
        snprintf(why, whysz, "%s (%s) is not root's to run: %s is %s", path, real, cur, r);
    else
        snprintf(why, whysz, "%s is not root's to run: %s is %s", path, cur, r);
    errno = EPERM;
    return -1;
}

bool ce_priv_path_ok(const char *path)
{
    if (!ce_priv()) return true;
    char probe[PATH_MAX], real[PATH_MAX], cur[PATH_MAX];
    const char *why;
    if (!path || path[0] != '/' || snprintf(probe, sizeof probe, "%s", path) >= (int)sizeof probe) return false;
    for (;;) {
        if (realpath(probe, real)) return !ce_priv_chain_walk(real, cur, NULL, &why);
        if (errno != ENOENT) return false;
        char *slash = strrchr(probe, '/');
        if (!slash || slash == probe) return false;
        *slash = '\0';
    }
}

int ce_priv_tree_open(ce_priv_tree *t, const char *path, char *why, size_t whysz)
{
    t->fd = -1;
    char cur[PATH_MAX];
    const char *r;
    if (!realpath(path, t->path)) {
        int e = errno;
        snprintf(why, whysz, "cannot resolve %s: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    struct stat before, after;
    if (ce_priv()) {
        if (ce_priv_chain_walk(t->path, cur, NULL, &r)) {
            int e = r ? EPERM : errno;
            if (r) snprintf(why, whysz, "%s is %s", cur, r);
            else snprintf(why, whysz, "cannot inspect %s: %s", cur, strerror(e));
            errno = e;
            return -1;
        }
    }
    if (lstat(t->path, &before) != 0 || (t->fd = open(t->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        int e = errno;
        snprintf(why, whysz, "cannot open %s: %s", t->path, strerror(e));
        errno = e;
        return -1;
    }
    if (fstat(t->fd, &after) != 0 || after.st_dev != before.st_dev || after.st_ino != before.st_ino ||
        (ce_priv() && (r = ce_priv_stat_reason(&after, false)))) {
        snprintf(why, whysz, "%s changed while it was checked", t->path);
        ce_priv_tree_close(t);
        errno = EPERM;
        return -1;
    }
    return 0;
}

void ce_priv_tree_close(ce_priv_tree *t)
{
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
}

/* The fallback walk: every directory component opened with O_NOFOLLOW. */
static int open_walk(int dfd, const char *rel, int flags, mode_t mode)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", rel) >= (int)sizeof buf) { errno = ENAMETOOLONG; return -1; }
    int cur = dup(dfd);
    if (cur < 0) return -1;
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

int ce_priv_openat(int dfd, const char *rel, int flags, mode_t mode)
{
    flags |= O_CLOEXEC;
    if (rel[0] == '/') { errno = EXDEV; return -1; }
#ifdef SYS_openat2
    struct open_how how = { .flags = (unsigned long long)flags, .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS };
    if (flags & O_CREAT) how.mode = mode;
    int fd = (int)syscall(SYS_openat2, dfd, rel, &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return fd;   /* EPERM: a seccomp filter */
#endif
    return open_walk(dfd, rel, flags, mode);
}

/* ---- files root reads ---- */

/* why for errno e at path (a refusal of the rule is worded by the caller). */
static int fail_errno(int e, const char *path, char *why, size_t whysz)
{
    if (e == ELOOP) snprintf(why, whysz, "%s is a symlink", path);
    else snprintf(why, whysz, "cannot open %s: %s", path, strerror(e));
    errno = e;
    return -1;
}

int ce_priv_file_open(const char *path, bool follow, char *real, size_t realsz, char *why, size_t whysz)
{
    char buf[PATH_MAX];
    struct stat pre;
    /* nothing there (the usual config file): no walk to say so; what is
     * there is opened and checked below, a link swapped in meanwhile too */
    if ((follow ? stat(path, &pre) : lstat(path, &pre)) != 0 && errno == ENOENT) {
        ce_path_under(path, " does not exist", why, whysz);
        errno = ENOENT;
        return -1;
    }
    if (follow ? !realpath(path, buf) : snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return fail_errno(follow ? errno : ENAMETOOLONG, path, why, whysz);
    char *slash = strrchr(buf, '/');
    if (!slash || !slash[1] || !strcmp(slash + 1, ".") || !strcmp(slash + 1, ".."))
        return fail_errno(EINVAL, path, why, whysz);
    *slash = '\0';
    const char *name = slash + 1;
    ce_priv_tree t;
    if (ce_priv_tree_open(&t, buf[0] ? buf : "/", why, whysz)) return -1;
    snprintf(real, realsz, "%s%s%s", strcmp(t.path, "/") ? t.path : "", "/", name);
    int fd = openat(t.fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    int e = errno;
    ce_priv_tree_close(&t);
    if (fd < 0) return fail_errno(e, real, why, whysz);
    struct stat st = { 0 };
    const char *r = fstat(fd, &st) != 0 ? strerror(errno) : !S_ISREG(st.st_mode) ? "not a regular file"
                    : ce_priv() ? ce_priv_stat_reason(&st, false) : NULL;
    if (r) {
        snprintf(why, whysz, "%s is %s", real, r);
        close(fd);
        errno = S_ISREG(st.st_mode) ? EPERM : EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

/* ---- directories root writes into ---- */

/* Not privileged: mkdir -p (the user's own links followed), then held. */
static int dir_make_user(ce_priv_tree *t, const char *path, mode_t mode, char *why, size_t whysz)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return fail_errno(ENAMETOOLONG, path, why, whysz);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p) continue;
        char c = *p;
        *p = '\0';
        if (mkdir(buf, mode) != 0 && errno != EEXIST) {
            int e = errno;
            snprintf(why, whysz, "cannot create directory %s: %s", buf, strerror(e));
            errno = e;
            return -1;
        }
        *p = c;
        if (!c) break;
    }
    return ce_priv_tree_open(t, path, why, whysz);
}

/* The walk's state: cur the directory fd reached, at (PATH_MAX) its path
 * (real directories only, each checked), todo what is left to walk. */
static int walk_step(int *cur, char *at, char *todo, mode_t mode, int *hops, char *why, size_t whysz)
{
    char *p = todo;
    while (*p == '/') p++;
    char *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    char name[NAME_MAX + 1], rest[PATH_MAX];
    if (n > NAME_MAX) return fail_errno(ENAMETOOLONG, todo, why, whysz);
    memcpy(name, p, n);
    name[n] = '\0';
    snprintf(rest, sizeof rest, "%s", slash ? slash + 1 : "");
    bool last = !rest[strspn(rest, "/")];
    size_t atlen = strlen(at);
    if (!strcmp(name, ".") || !n) { snprintf(todo, PATH_MAX, "%s", rest); return 0; }
    if (!strcmp(name, "..")) {
        /* at holds only checked real directories: its parent is one too */
        char *s = strrchr(at, '/');
        if (s && s != at) *s = '\0'; else snprintf(at, PATH_MAX, "/");
        int up = open(at, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (up < 0) return fail_errno(errno, at, why, whysz);
        close(*cur);
        *cur = up;
        snprintf(todo, PATH_MAX, "%s", rest);
        return 0;
    }
    if (atlen + 1 + n >= PATH_MAX) return fail_errno(ENAMETOOLONG, at, why, whysz);
    snprintf(at + atlen, PATH_MAX - atlen, "%s%s", atlen > 1 ? "/" : "", name);
    int next = openat(*cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && mkdirat(*cur, name, mode) == 0)
        next = openat(*cur, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
        int e = errno;
        struct stat ls;
        if ((e != ELOOP && e != ENOTDIR) || fstatat(*cur, name, &ls, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(ls.st_mode))
            return fail_errno(e, at, why, whysz);
        /* a link in a directory only root can change is root's own: what it
         * names is walked the same way (a relative one from here) */
        char target[PATH_MAX];
        ssize_t k = ++*hops > 40 ? -1 : readlinkat(*cur, name, target, sizeof target - 1);
        if (k <= 0) return fail_errno(ELOOP, at, why, whysz);
        target[k] = '\0';
        at[atlen] = '\0';
        if (target[0] == '/') {
            int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (root < 0) return fail_errno(errno, "/", why, whysz);
            close(*cur);
            *cur = root;
            snprintf(at, PATH_MAX, "/");
        }
        if (snprintf(todo, PATH_MAX, "%s/%s", target, rest) >= PATH_MAX) return fail_errno(ENAMETOOLONG, at, why, whysz);
        return 0;
    }
    struct stat st;
    const char *r = fstat(next, &st) != 0 ? strerror(errno) : ce_priv_stat_reason(&st, !last);
    if (r) {
        snprintf(why, whysz, "%s is %s", at, r);
        close(next);
        errno = EPERM;
        return -1;
    }
    close(*cur);
    *cur = next;
    snprintf(todo, PATH_MAX, "%s", rest);
    return 0;
}

int ce_priv_dir_make(ce_priv_tree *t, const char *path, mode_t mode, char *why, size_t whysz)
{
    t->fd = -1;
    if (path[0] != '/') {
        snprintf(why, whysz, "%s is not an absolute path", path);
        errno = EINVAL;
        return -1;
    }
    if (!ce_priv()) return dir_make_user(t, path, mode, why, whysz);
    char todo[PATH_MAX];
    if (snprintf(todo, sizeof todo, "%s", path) >= (int)sizeof todo) return fail_errno(ENAMETOOLONG, path, why, whysz);
    snprintf(t->path, sizeof t->path, "/");
    int cur = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), hops = 0;
    struct stat st;
    const char *r = cur < 0 ? strerror(errno) : fstat(cur, &st) != 0 ? strerror(errno) : ce_priv_stat_reason(&st, true);
    if (r) {
        if (cur >= 0) close(cur);
        snprintf(why, whysz, "/ is %s", r);
        errno = EPERM;
        return -1;
    }
    while (todo[strspn(todo, "/")])
        if (walk_step(&cur, t->path, todo, mode, &hops, why, whysz)) {
            int e = errno;
            close(cur);
            errno = e;
            return -1;
        }
    /* the last one itself: never a sticky world-writable directory */
    if (fstat(cur, &st) != 0 || (r = ce_priv_stat_reason(&st, false))) {
        snprintf(why, whysz, "%s is %s", t->path, r ? r : strerror(errno));
        close(cur);
        errno = EPERM;
        return -1;
    }
    t->fd = cur;
    return 0;
}

const char *ce_priv_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    if (!t || t[0] != '/') return "/tmp";
    if (!ce_priv()) return t;
    char real[PATH_MAX], cur[PATH_MAX];
    const char *why;
    /* the directory itself may be sticky (/tmp or /var/tmp given as TMPDIR) */
    if (!realpath(t, real)) return "/tmp";
    if (!ce_priv_chain_walk(real, cur, NULL, &why)) return t;
    struct stat st;
    if (why && !strcmp(cur, real) && lstat(real, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
        (st.st_mode & S_ISVTX))
        return t;
    return "/tmp";
}
