/* Test double (LD_PRELOAD): rename(), renameat(), renameat2(), symlink() and
 * symlinkat() whose new path ends with $CUDAENV_TEST_SLOW_PATH sleep
 * $CUDAENV_TEST_SLOW_PATH_MS (default 1500) milliseconds before they happen,
 * so a test can look at a path while its replacement is in flight: an atomic
 * replacement (rename over it) shows the old one until the new one; a
 * delete-then-create shows nothing for that long.
 * Built at test time: cc -shared -fPIC -o slowpath.so slowpath.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void maybe_sleep(const char *newpath)
{
    const char *suffix = getenv("CUDAENV_TEST_SLOW_PATH");
    if (!suffix || !*suffix || !newpath) return;
    size_t n = strlen(newpath), s = strlen(suffix);
    if (n < s || strcmp(newpath + n - s, suffix) != 0) return;
    const char *ms = getenv("CUDAENV_TEST_SLOW_PATH_MS");
    long t = ms && *ms ? atol(ms) : 1500;
    struct timespec ts = { t / 1000, (t % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0) {}
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
