/* The mirror directory through directory fds (mirror_dir.h). */
#include "mirror_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/file.h"
#include "core/trust.h"
#include "fetch/digest.h"

#define MDIR_FIX "Mirror into a root-owned directory that only root can write (e.g. /srv/cudaenv-mirror), or " \
    "run the mirror as the user who owns it"
#define MDIR_MAX_UNSIZED (64ll << 30)

static int unsafe(const ce_mdir *m, const char *rel, const char *why)
{
    return ce_fail(CE_ERR_PERM, "unsafe for cudaenv mirror: %s/%s is %s; a symlink or another user's "
                   "directory inside the mirror is never followed or written through. Remove it. %s",
                   m->path, rel, why, m->strict ? MDIR_FIX : "");
}

/* Strict (root writing): fstat(fd) must pass the rule (the chain above
 * was checked). */
static const char *fd_reason(const ce_mdir *m, int fd)
{
    struct stat st;
    if (!m->strict) return NULL;
    if (fstat(fd, &st) != 0) return "not inspectable";
    return ce_trust_stat_reason(&st, false);
}

int ce_mdir_open(const char *dir, bool create, ce_mdir *out)
{
    out->fd = -1;
    out->strict = create && ce_trust_privileged();
    if (strlen(dir) >= sizeof out->path) return ce_fail(CE_ERR_USAGE, "mirror directory path too long: %s", dir);
    snprintf(out->path, sizeof out->path, "%s", dir);
    bool priv = out->strict;
    if (priv) {
        char real[PATH_MAX], probe[PATH_MAX];
        if (!realpath(dir, real)) {
            if (errno != ENOENT) return ce_fail(CE_ERR_IO, "cannot resolve %s: %s", dir, strerror(errno));
            if (!create) return ce_fail(CE_ERR_NOTFOUND, "%s does not exist", dir);
            /* root creates it: its nearest existing parent must be safe first */
            snprintf(probe, sizeof probe, "%s", dir);
            for (;;) {
                char *slash = strrchr(probe, '/');
                if (!slash || slash == probe) { snprintf(probe, sizeof probe, "%s", slash ? "/" : "."); break; }
                *slash = '\0';
                if (realpath(probe, real)) break;
            }
            if (!realpath(probe, real)) return ce_fail(CE_ERR_IO, "cannot resolve %s: %s", probe, strerror(errno));
            int rc = ce_trust_chain(real, "cudaenv mirror", MDIR_FIX);
            if (rc) return rc;
            if ((rc = ce_mkdir_p(dir, 0755))) return rc;
            if (!realpath(dir, real)) return ce_fail(CE_ERR_IO, "cannot resolve %s: %s", dir, strerror(errno));
        }
        int rc = ce_trust_chain(real, "cudaenv mirror", MDIR_FIX);
        if (rc) return rc;
        snprintf(out->path, sizeof out->path, "%s", real);
    } else if (create) {
        int rc = ce_mkdir_p(dir, 0755);
        if (rc) return rc;
    }
    out->fd = open(out->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (priv ? O_NOFOLLOW : 0));
    if (out->fd < 0)
        return ce_fail(errno == ENOENT ? CE_ERR_NOTFOUND : errno == ELOOP ? CE_ERR_PERM : CE_ERR_IO,
                       "cannot open the mirror directory %s: %s", out->path, strerror(errno));
    const char *why = fd_reason(out, out->fd);
    if (why) {
        close(out->fd);
        out->fd = -1;
        return ce_fail(CE_ERR_PERM, "unsafe for cudaenv mirror run as root: %s is %s. %s", out->path, why,
                       MDIR_FIX);
    }
    return CE_OK;
}

void ce_mdir_close(ce_mdir *m)
{
    if (m->fd >= 0) close(m->fd);
    m->fd = -1;
}

/* One component per openat, never following a symlink (the core's dirfd
 * policy can take this over). */
static int md_walk(const ce_mdir *m, const char *rel, size_t len, bool create)
{
    char buf[4096], shown[4096];
    if (len >= sizeof buf) return ce_fail(CE_ERR_USAGE, "path too long under %s", m->path);
    memcpy(buf, rel, len);
    buf[len] = '\0';
    int cur = dup(m->fd);
    if (cur < 0) return ce_fail(CE_ERR_IO, "dup: %s", strerror(errno));
    char *p = buf;
    while (*p) {
        char *slash = strchr(p, '/');
        if (slash) *slash = '\0';
        snprintf(shown, sizeof shown, "%.*s", (int)(p - buf) + (int)strlen(p), rel);
        if (!strcmp(p, ".") || !strcmp(p, "..") || !*p) {
            close(cur);
            return unsafe(m, shown, "a '.', '..' or empty path segment");
        }
        int next = openat(cur, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && create) {
            if (mkdirat(cur, p, 0755) != 0 && errno != EEXIST) {
                int e = errno;
                close(cur);
                return ce_fail(CE_ERR_IO, "cannot create %s/%s: %s", m->path, shown, strerror(e));
            }
            next = openat(cur, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        int e = errno;
        close(cur);
        if (next < 0) {
            if (e == ELOOP || e == ENOTDIR) return unsafe(m, shown, "a symlink or not a directory");
            return ce_fail(e == ENOENT ? CE_ERR_NOTFOUND : CE_ERR_IO, "cannot open %s/%s: %s", m->path, shown,
                           strerror(e));
        }
        const char *why = fd_reason(m, next);
        if (why) {
            close(next);
            return unsafe(m, shown, why);
        }
        cur = next;
        if (!slash) break;
        p = slash + 1;
    }
    return cur;
}

int ce_mdir_subdir(const ce_mdir *m, const char *rel, bool create)
{
    return md_walk(m, rel, strlen(rel), create);
}

/* The directory of rel (opened) and its last component. */
static int parent_of(const ce_mdir *m, const char *rel, bool create, const char **base)
{
    const char *slash = strrchr(rel, '/');
    *base = slash ? slash + 1 : rel;
    if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
        return unsafe(m, rel, "not a file name");
    return md_walk(m, rel, slash ? (size_t)(slash - rel) : 0, create);
}

int ce_mdir_open_file(const ce_mdir *m, const char *rel, struct stat *st)
{
    const char *base;
    int dfd = parent_of(m, rel, false, &base);
    if (dfd < 0) return dfd;
    int fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    int e = errno;
    close(dfd);
    if (fd < 0) {
        if (e == ELOOP) return unsafe(m, rel, "a symlink");
        return ce_fail(e == ENOENT ? CE_ERR_NOTFOUND : CE_ERR_IO, "cannot open %s/%s: %s", m->path, rel,
                       strerror(e));
    }
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return unsafe(m, rel, "not a regular file");
    }
    return fd;
}

int ce_mdir_verified(const ce_mdir *m, const char *rel, long long size, const char *sha256)
{
    struct stat st;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    int fd = ce_mdir_open_file(m, rel, &st);
    if (fd == CE_ERR_PERM) {   /* a symlink or worse on the way: the caller's error */
        ce_quiet_keep(&q);
        return fd;
    }
    ce_quiet_end(&q);
    if (fd < 0) return 0;
    bool ok = size >= 0 ? st.st_size == size : st.st_size <= MDIR_MAX_UNSIZED;
    ce_sha256 *h = ok ? ce_sha256_new() : NULL;
    if (h) {
        char hex[CE_SHA256_HEX];
        ce_quiet_begin(&q, true);
        ok = ce_sha256_fd(h, fd, (long long)st.st_size, rel) == CE_OK;
        ce_quiet_end(&q);
        if (ok) {
            ce_sha256_final(h, hex);
            ok = strcmp(hex, sha256) == 0;
        }
        ce_sha256_free(h);
    } else {
        ok = false;
    }
    close(fd);
    return ok;
}

/* A name no one can have planted: O_EXCL fails on anything already there. */
static int excl_temp(const ce_mdir *m, int dfd, const char *base, char *tmp, size_t tmpsz, int from)
{
    for (int tries = 0; tries < 64; tries++) {
        unsigned r = 0;
        if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r) r = (unsigned)rand() ^ (unsigned)tries;
        snprintf(tmp, tmpsz, ".%.200s.tmp-%08x", base, r);
        if (from < 0) return CE_OK;
        int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) return fd;
        if (errno != EEXIST) break;
    }
    return ce_fail(CE_ERR_IO, "cannot create a temporary file in %s for %s: %s", m->path, base, strerror(errno));
}

static int copy_fd(int in, int out)
{
    static char buf[1 << 20];
    for (;;) {
        ssize_t r = read(in, buf, sizeof buf);
        if (r == 0) return 0;
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        for (ssize_t off = 0; off < r;) {
            ssize_t w = write(out, buf + off, (size_t)(r - off));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) return -1;
            off += w;
        }
    }
}

int ce_mdir_place(const ce_mdir *m, const char *rel, const char *from, bool move)
{
    const char *base;
    int dfd = parent_of(m, rel, true, &base);
    if (dfd < 0) return dfd;
    if (move && renameat(AT_FDCWD, from, dfd, base) == 0) {
        close(dfd);
        return CE_OK;
    }
    char tmp[300];
    int rc = CE_OK, e = 0;
    /* a hard link first (no second copy of the bytes), under a fresh name */
    for (int tries = 0; tries < 64; tries++) {
        if ((rc = excl_temp(m, dfd, base, tmp, sizeof tmp, -1))) break;
        if (linkat(AT_FDCWD, from, dfd, tmp, 0) == 0) goto rename;
        if (errno != EEXIST) break;
    }
    int in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    int out = in >= 0 ? excl_temp(m, dfd, base, tmp, sizeof tmp, in) : -1;
    if (in < 0 || out < 0 || copy_fd(in, out) != 0 || fdatasync(out) != 0) {
        e = errno;
        rc = CE_ERR_IO;
    }
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    if (rc) {
        if (out >= 0) unlinkat(dfd, tmp, 0);
        close(dfd);
        return ce_fail(CE_ERR_IO, "cannot copy %s to %s/%s: %s", from, m->path, rel, strerror(e));
    }
rename:
    if (renameat(dfd, tmp, dfd, base) != 0) {
        e = errno;
        unlinkat(dfd, tmp, 0);
        close(dfd);
        return ce_fail(CE_ERR_IO, "cannot rename into %s/%s: %s", m->path, rel, strerror(e));
    }
    close(dfd);
    return CE_OK;
}
