#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <pthread.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ce_open_regular, with the fstat it made into *st (its size for the read). */
static int open_regular(const char *path, struct stat *st)
{
    /* O_NONBLOCK: opening a FIFO with no writer must not hang; the check is
     * on what was opened (the resolved target), so no race with a swap */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return ce_fail(errno == ENOENT ? CE_ERR_NOTFOUND : CE_ERR_IO,
                       "cannot open %s: %s", path, strerror(errno));
    if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
        close(fd);
        return ce_fail(CE_ERR_IO, "%s is not a regular file (a FIFO, device or directory); cudaenv "
                       "reads its state only from regular files: remove or replace it", path);
    }
    /* O_NONBLOCK stays: reads of a regular file never block on it (Linux
     * ignores the flag for them; mandatory locks, the one exception, are
     * gone since 5.15 and needed a "mand" mount before) */
    return fd;
}

int ce_open_regular(const char *path)
{
    struct stat st;
    return open_regular(path, &st);
}

int ce_file_head(const char *path, char *buf, size_t cap, size_t *len)
{
    int fd = ce_open_regular(path);
    if (fd < 0) return fd;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return ce_fail(CE_ERR_IO, "cannot read %s: %s", path, strerror(e));
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    if (len) *len = n;
    return CE_OK;
}

static int read_sized(int fd, const char *path, size_t max, const struct stat *st, char **data, size_t *len);

int ce_file_read(const char *path, size_t max, char **data, size_t *len)
{
    *data = NULL;
    struct stat st;
    int fd = open_regular(path, &st);   /* its fstat gives the size: one, not two */
    if (fd < 0) return fd;
    return read_sized(fd, path, max, &st, data, len);
}

int ce_file_read_fd(int fd, const char *path, size_t max, char **data, size_t *len)
{
    *data = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return ce_fail(CE_ERR_IO, "cannot inspect %s: %s", path, strerror(errno));
    }
    return read_sized(fd, path, max, &st, data, len);
}

/* The whole of fd (st: its fstat) into a NUL-terminated buffer; fd closed. */
static int read_sized(int fd, const char *path, size_t max, const struct stat *st, char **data, size_t *len)
{
    if ((size_t)st->st_size > max) {
        close(fd);
        return ce_fail(CE_ERR_INTEGRITY, "%s is larger than %zu bytes", path, max);
    }
    size_t cap = (size_t)st->st_size + 2, n = 0;   /* + the NUL and a byte for the read that sees EOF (no grow, no copy) */
    char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return ce_fail(CE_ERR_NOMEM, "out of memory reading %s", path);
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap > max + 1) {
                free(buf);
                close(fd);
                return ce_fail(CE_ERR_INTEGRITY, "%s is larger than %zu bytes", path, max);
            }
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) { free(buf); close(fd); return ce_fail(CE_ERR_NOMEM, "out of memory"); }
            buf = nb;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return ce_fail(CE_ERR_IO, "cannot read %s: %s", path, strerror(e));
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    *data = buf;
    if (len) *len = n;
    return CE_OK;
}

int ce_file_write_atomic_at(int dfd, const char *dir, const char *name, const void *data, size_t len,
                            int mode)
{
    char tmp[NAME_MAX + 1];
    int fd = -1, e = 0;
    if (strchr(name, '/') || strlen(name) + 16 > NAME_MAX)
        return ce_fail(CE_ERR_OTHER, "cannot write %s/%s: not a plain file name", dir, name);
    /* a fresh name, created O_EXCL|O_NOFOLLOW beneath dfd: nothing planted
     * there (a link) is followed */
    unsigned seed = (unsigned)getpid() * 2654435761u ^ (unsigned)(uintptr_t)&tmp ^ (unsigned)time(NULL);
    for (int i = 0; i < 64 && fd < 0; i++) {
        seed = seed * 1103515245u + 12345u;
        snprintf(tmp, sizeof tmp, "%s.tmp-%08x", name, seed);
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && (e = errno) != EEXIST) break;
    }
    if (fd < 0)
        return ce_fail(e == EACCES ? CE_ERR_PERM : CE_ERR_IO, "cannot create %s/%s.tmp-XXXXXXXX: %s", dir, name,
                       strerror(e));
    e = ce_pwrite_all(fd, data, len, 0);
    if (!e && fchmod(fd, (mode_t)mode) != 0) e = errno;
    if (!e && fsync(fd) != 0) e = errno;
    if (close(fd) != 0 && !e) e = errno;
    if (!e && renameat(dfd, tmp, dfd, name) != 0) e = errno;
    if (e) {
        unlinkat(dfd, tmp, 0);
        return ce_fail(e == ENOSPC ? CE_ERR_SPACE : CE_ERR_IO, "cannot write %s/%s: %s", dir, name, strerror(e));
    }
    fsync(dfd);
    return CE_OK;
}

int ce_pwrite_all(int fd, const void *buf, size_t n, long long off)
{
    const unsigned char *p = buf;
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : ENOSPC;
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

int ce_pread_all(int fd, void *buf, size_t n, long long off)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = pread(fd, p, n, (off_t)off);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return r < 0 ? errno : EIO;
        p += r;
        n -= (size_t)r;
        off += r;
    }
    return 0;
}

int ce_fsync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int r = fsync(fd);
    close(fd);
    return r;
}

typedef struct fsync_job {
    int fd, err;
} fsync_job;

static void *fsync_one(void *arg)
{
    fsync_job *j = arg;
    j->err = fsync(j->fd) == 0 ? 0 : errno;
    return NULL;
}

int ce_fsync_fds(const int *fds, size_t n)
{
    fsync_job jobs[8];
    pthread_t th[8];
    bool started[8] = { false };
    if (n > 8) return EINVAL;
    for (size_t i = 0; i < n; i++) jobs[i] = (fsync_job){ .fd = fds[i] };
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 64 * 1024);
    for (size_t i = 1; i < n; i++) started[i] = pthread_create(&th[i], &at, fsync_one, &jobs[i]) == 0;
    pthread_attr_destroy(&at);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || !started[i]) fsync_one(&jobs[i]);   /* ours, and any thread that could not start */
    int err = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && started[i]) pthread_join(th[i], NULL);
        if (!err) err = jobs[i].err;
    }
    return err;
}

int ce_file_append_bounded(const char *path, const void *text, size_t len, size_t max)
{
    struct stat st;
    /* O_NONBLOCK: a FIFO there fails (no reader) instead of hanging the open */
    int flags = O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    if (lstat(path, &st) == 0 && (size_t)st.st_size > max) flags |= O_TRUNC;   /* start over */
    int fd = open(path, flags, 0644);
    if (fd < 0) return errno;
    int e = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : 0;
    ssize_t w = e ? 0 : write(fd, text, len);   /* one write: whole lines */
    if (!e && w != (ssize_t)len) e = w < 0 ? errno : EIO;
    close(fd);
    return e;
}

int ce_file_write_atomic(const char *path, const void *data, size_t len, int mode)
{
    return ce_file_write_atomic_ex(path, data, len, mode, true);
}

int ce_file_write_atomic_ex(const char *path, const void *data, size_t len, int mode, bool sync_dir)
{
    ce_staged st;
    int rc;
    if ((rc = ce_file_stage(path, data, len, mode, &st)) || (rc = ce_file_stage_sync(&st, 1)) ||
        (rc = ce_file_stage_commit(&st)))
        return rc;
    if (!sync_dir) return CE_OK;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) {
        if (slash == dir) slash[1] = '\0'; else *slash = '\0';
        ce_fsync_dir(dir);
    }
    return CE_OK;
}

int ce_file_stage(const char *path, const void *data, size_t len, int mode, ce_staged *st)
{
    st->fd = -1;
    st->tmp[0] = '\0';
    /* mkstemp-style: a fresh random name created with O_EXCL|O_NOFOLLOW, so
     * a name planted in a shared directory (a cloned repository for
     * `cudaenv local`) can never redirect the write */
    if (snprintf(st->path, sizeof st->path, "%s", path) >= (int)sizeof st->path ||
        snprintf(st->tmp, sizeof st->tmp, "%s.tmp-XXXXXX", path) >= (int)sizeof st->tmp) {
        st->tmp[0] = '\0';
        return ce_fail(CE_ERR_OTHER, "path too long: %s", path);
    }
    int fd = mkostemp(st->tmp, O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        st->tmp[0] = '\0';
        return ce_fail(e == EACCES ? CE_ERR_PERM : CE_ERR_IO, "cannot create %s.tmp-XXXXXX: %s", path, strerror(e));
    }
    st->fd = fd;
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
            int e = errno;
            ce_file_stage_drop(st);
            return ce_fail(e == ENOSPC ? CE_ERR_SPACE : CE_ERR_IO, "cannot write %s: %s", path, strerror(e));
        }
        p += w;
        left -= (size_t)w;
    }
    if (fchmod(fd, (mode_t)mode) != 0) {
        int e = errno;
        ce_file_stage_drop(st);
        return ce_fail(CE_ERR_IO, "cannot finish %s: %s", path, strerror(e));
    }
    /* start the writeback now: the fsyncs of several staged files then share
     * one journal commit instead of one each */
    sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    return CE_OK;
}

int ce_file_stage_sync(ce_staged *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (st[i].fd < 0) continue;
        int r = fsync(st[i].fd), e = errno;
        if (close(st[i].fd) != 0 && r == 0) { r = -1; e = errno; }
        st[i].fd = -1;
        if (r != 0) {
            for (size_t k = 0; k < n; k++) ce_file_stage_drop(&st[k]);
            return ce_fail(CE_ERR_IO, "cannot finish %s: %s", st[i].path, strerror(e));
        }
    }
    return CE_OK;
}

int ce_file_stage_commit(ce_staged *st)
{
    if (rename(st->tmp, st->path) != 0) {
        int e = errno;
        ce_file_stage_drop(st);
        return ce_fail(CE_ERR_IO, "cannot rename %s to %s: %s", st->tmp, st->path, strerror(e));
    }
    st->tmp[0] = '\0';
    return CE_OK;
}

void ce_file_stage_drop(ce_staged *st)
{
    if (st->fd >= 0) close(st->fd);
    st->fd = -1;
    if (st->tmp[0]) unlink(st->tmp);
    st->tmp[0] = '\0';
}

int ce_mkdir_p(const char *path, int mode)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
        return ce_fail(CE_ERR_OTHER, "path too long: %s", path);
    if (ce_is_dir(path)) return CE_OK;   /* the usual case: one stat, not a mkdir per component */
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, (mode_t)mode) != 0 && errno != EEXIST)
                return ce_fail(errno == EACCES ? CE_ERR_PERM : CE_ERR_IO,
                               "cannot create directory %s: %s", buf, strerror(errno));
            *p = c;
            if (c == '\0') break;
        }
    }
    if (!ce_is_dir(path))
        return ce_fail(CE_ERR_IO, "%s exists and is not a directory", path);
    return CE_OK;
}

bool ce_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

bool ce_exists(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0;
}

int ce_join(char *out, size_t outsz, const char *a, const char *b)
{
    if (ce_path_join(out, outsz, a, b) == CE_OK) return CE_OK;
    return ce_fail(CE_ERR_OTHER, "a path longer than %zu bytes: %s under %s (use a shorter directory)",
                   outsz - 1, b, a);
}
