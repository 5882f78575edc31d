/* Test double (LD_PRELOAD): rename(), renameat(), renameat2(), symlink() and
 * symlinkat() whose new path ends with $CUDAENV_TEST_SLOW_PATH sleep
 * $CUDAENV_TEST_SLOW_PATH_MS (default 1500) milliseconds before they happen,
 * so a test can look at a path while its replacement is in flight: an atomic
 * replacement (rename over it) shows the old one until the new one; a
 * delete-then-create shows nothing for that long.
 *
 * open(), openat() (and their 64 and fortified variants) of a path ending
 * with $CUDAENV_TEST_SLOW_OPEN sleep $CUDAENV_TEST_SLOW_OPEN_MS (default 1500)
 * milliseconds before they happen, so a test can lose a race between two
 * threads on purpose; $CUDAENV_TEST_SLOW_OPEN_FLAGS picks whose opens:
 * "create" only those with O_CREAT (the writer making the file), "read" only
 * O_RDONLY ones without O_CREAT (a reader), unset both.  With
 * $CUDAENV_TEST_SLOW_OPEN_LOG=FILE every open of a matching path appends a
 * line once it returned: "create|read|write ok|ENOENT|E<errno> slow|- PATH"
 * (slow: this one was delayed), so the test can check the race was taken.
 * Built at test time: cc -shared -fPIC -o slowpath.so slowpath.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* path ends with the value of the variable named suffix_var (set, not empty) */
static int ends_with(const char *path, const char *suffix_var)
{
    const char *suffix = getenv(suffix_var);
    if (!suffix || !*suffix || !path) return 0;
    size_t n = strlen(path), s = strlen(suffix);
    return n >= s && strcmp(path + n - s, suffix) == 0;
}

/* sleep the milliseconds the variable named ms_var says (default 1500) */
static void sleep_ms(const char *ms_var)
{
    const char *ms = getenv(ms_var);
    long t = ms && *ms ? atol(ms) : 1500;
    struct timespec ts = { t / 1000, (t % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {}
}

static void maybe_sleep(const char *newpath)
{
    if (ends_with(newpath, "CUDAENV_TEST_SLOW_PATH")) sleep_ms("CUDAENV_TEST_SLOW_PATH_MS");
}

int rename(const char *a, const char *b)
{
    static int (*real)(const char *, const char *);
    if (!real) real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    maybe_sleep(b);
    return real(a, b);
}

int renameat(int fa, const char *a, int fb, const char *b)
{
    static int (*real)(int, const char *, int, const char *);
    if (!real) real = (int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
    maybe_sleep(b);
    return real(fa, a, fb, b);
}

int renameat2(int fa, const char *a, int fb, const char *b, unsigned flags)
{
    static int (*real)(int, const char *, int, const char *, unsigned);
    if (!real) real = (int (*)(int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT, "renameat2");
    maybe_sleep(b);
    return real(fa, a, fb, b, flags);
}

int symlink(const char *target, const char *b)
{
    static int (*real)(const char *, const char *);
    if (!real) real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "symlink");
    maybe_sleep(b);
    return real(target, b);
}

int symlinkat(const char *target, int fb, const char *b)
{
    static int (*real)(const char *, int, const char *);
    if (!real) real = (int (*)(const char *, int, const char *))dlsym(RTLD_NEXT, "symlinkat");
    maybe_sleep(b);
    return real(target, fb, b);
}

/* ---- open: CUDAENV_TEST_SLOW_OPEN ---- */

static int (*real_openat)(int, const char *, int, ...);

static const char *open_kind(int flags)
{
    if (flags & O_CREAT) return "create";
    return (flags & O_ACCMODE) == O_RDONLY ? "read" : "write";
}

/* 1: path ends with the suffix; *slow: and its kind is the one delayed */
static int open_match(const char *path, int flags, int *slow)
{
    *slow = 0;
    if (!ends_with(path, "CUDAENV_TEST_SLOW_OPEN")) return 0;
    const char *which = getenv("CUDAENV_TEST_SLOW_OPEN_FLAGS");
    *slow = !which || !*which || strcmp(which, open_kind(flags)) == 0;
    return 1;
}

static void open_log(const char *path, int flags, int slow, int rc, int err)
{
    const char *log = getenv("CUDAENV_TEST_SLOW_OPEN_LOG");
    if (!log || !*log) return;
    char line[4400], res[32];
    if (rc >= 0) snprintf(res, sizeof res, "ok");
    else if (err == ENOENT) snprintf(res, sizeof res, "ENOENT");
    else snprintf(res, sizeof res, "E%d", err);
    int n = snprintf(line, sizeof line, "%s %s %s %s\n", open_kind(flags), res, slow ? "slow" : "-", path);
    if (n < 0 || (size_t)n >= sizeof line) return;
    int fd = real_openat(AT_FDCWD, log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    if (write(fd, line, (size_t)n) < 0) {}   /* one write: lines of two threads never mix */
    close(fd);
}

static int do_openat(int dfd, const char *path, int flags, mode_t mode)
{
    if (!real_openat) real_openat = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
    int slow, match = open_match(path, flags, &slow);
    if (slow) sleep_ms("CUDAENV_TEST_SLOW_OPEN_MS");
    int rc = real_openat(dfd, path, flags, mode);
    if (match) {
        int err = errno;
        open_log(path, flags, slow, rc, err);
        errno = err;
    }
    return rc;
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(AT_FDCWD, path, flags, mode);
}

int openat(int dfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(dfd, path, flags, mode);
}

int openat64(int dfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    return do_openat(dfd, path, flags, mode);
}

int __open_2(const char *path, int flags) { return do_openat(AT_FDCWD, path, flags, 0); }
int __open64_2(const char *path, int flags) { return do_openat(AT_FDCWD, path, flags, 0); }
int __openat_2(int dfd, const char *path, int flags) { return do_openat(dfd, path, flags, 0); }
int __openat64_2(int dfd, const char *path, int flags) { return do_openat(dfd, path, flags, 0); }
