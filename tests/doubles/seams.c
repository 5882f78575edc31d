/* Test double: the fault points of src/core/fault.h, and statvfs.  The
 * product reads no test variable; this double does, loaded with LD_PRELOAD
 * (tests/lib/common.bash: seams, seams_on; built by `make units` as
 * $BUILD/tests/seams.so) or linked into the unit tests.
 *
 *   CUDAENV_TEST_CRASH_AT=trust|intent|link|conf|ldconfig
 *       SIGKILL right after that step of a system switch (switch-*)
 *   CUDAENV_TEST_FAULT=during-download|after-unpack|before-commit
 *       SIGKILL at that point of an install;
 *   CUDAENV_TEST_FAULT=vanish-after-verify
 *       no parts unpacker starts, and each verified archive is deleted from
 *       the cache before it would (another process cleaning the cache)
 *   CUDAENV_TEST_FREE_BYTES=N  statvfs/fstatvfs say N bytes are free
 *   CUDAENV_TEST_HASH_LOG=FILE  one line per sha256 finished: its bytes
 *   CUDAENV_TEST_XZ_THREADS=FILE  per archive, the threads that decoded it
 *       (the decoder's count, or the threads that appeared while it ran);
 *       FILE.files: the blocks decoded straight into a file
 *   CUDAENV_TEST_LIBDIR=DIR  the driver libraries are dlopened from DIR
 *   CUDAENV_TEST_LIBCUDA=PATH  verify loads this libcuda
 *   CUDAENV_TEST_REPACK_FLIP=N  a site repack's output byte N is changed
 *       before it is hashed and written (a compressor's or memory's fault)
 *
 * Built: cc -shared -fPIC -o seams.so seams.c -ldl */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static const char *var(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int is(const char *name, const char *want)
{
    const char *v = var(name);
    return v && want && strcmp(v, want) == 0;
}

static void append(const char *path, const char *fmt, long long x)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char line[32];
    int n = snprintf(line, sizeof line, fmt, x);
    if (write(fd, line, (size_t)n) < 0) {}
    close(fd);
}

/* the threads of this process, for xz-start/xz-done: per decoding thread */
static __thread int xz_tids[64];
static __thread size_t xz_ntids;

static size_t list_tasks(int *out, size_t max)
{
    size_t n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max)
        if (e->d_name[0] != '.') out[n++] = atoi(e->d_name);
    closedir(d);
    return n;
}

static void xz_done(const char *path, const long long *r)
{
    long long fresh = r[0];
    if (fresh < 0) {
        int now[64];
        size_t n = list_tasks(now, 64);
        fresh = 0;
        for (size_t i = 0; i < n; i++) {
            int old = 0;
            for (size_t j = 0; j < xz_ntids && !old; j++) old = now[i] == xz_tids[j];
            fresh += !old;
        }
    }
    append(path, "%lld\n", fresh);
    char files[4096];
    if (snprintf(files, sizeof files, "%s.files", path) < (int)sizeof files) append(files, "%lld\n", r[1]);
}

typedef struct ce_fault_bytes {   /* src/core/fault.h's */
    unsigned char *p;
    size_t len;
    long long off;
} ce_fault_bytes;

static void flip(ce_fault_bytes *b, long long at)
{
    if (at >= b->off && at < b->off + (long long)b->len) b->p[at - b->off] ^= 0x5a;
}

int ce_test_point(const char *name, void *arg)
{
    const char *v;
    if (!strncmp(name, "switch-", 7)) {
        if (is("CUDAENV_TEST_CRASH_AT", name + 7)) raise(SIGKILL);
    } else if (!strcmp(name, "unpack-start")) {
        if (!is("CUDAENV_TEST_FAULT", "vanish-after-verify")) return 0;
        unlink((const char *)arg);   /* there only once verified */
        return 1;
    } else if (!strcmp(name, "digest")) {
        if ((v = var("CUDAENV_TEST_HASH_LOG"))) append(v, "%lld\n", *(const long long *)arg);
    } else if (!strcmp(name, "xz-start")) {
        if (var("CUDAENV_TEST_XZ_THREADS")) xz_ntids = list_tasks(xz_tids, 64);
    } else if (!strcmp(name, "xz-done")) {
        if ((v = var("CUDAENV_TEST_XZ_THREADS"))) xz_done(v, (const long long *)arg);
    } else if (!strcmp(name, "machine-libdir")) {
        if ((v = var("CUDAENV_TEST_LIBDIR"))) *(const char **)arg = v;
    } else if (!strcmp(name, "verify-libcuda")) {
        if ((v = var("CUDAENV_TEST_LIBCUDA"))) *(const char **)arg = v;
    } else if (!strcmp(name, "repack-out")) {
        if ((v = var("CUDAENV_TEST_REPACK_FLIP"))) flip(arg, atoll(v));
    } else if (is("CUDAENV_TEST_FAULT", name)) {   /* during-download, after-unpack, before-commit */
        raise(SIGKILL);
    }
    return 0;
}

/* CUDAENV_TEST_FREE_BYTES=N: N bytes free (and available), wherever asked
 * (the store may not exist yet) */
static int fake_free(int rc, struct statvfs *vs)
{
    const char *v = var("CUDAENV_TEST_FREE_BYTES");
    if (!v) return rc;
    double n = strtod(v, NULL);
    if (rc != 0) memset(vs, 0, sizeof *vs);
    vs->f_bsize = 4096;
    vs->f_frsize = 1;
    vs->f_bavail = vs->f_bfree = n > 0 ? (fsblkcnt_t)n : 0;
    return 0;
}

int statvfs(const char *path, struct statvfs *vs)
{
    static int (*real)(const char *, struct statvfs *);
    if (!real) real = (int (*)(const char *, struct statvfs *))dlsym(RTLD_NEXT, "statvfs");
    return fake_free(real(path, vs), vs);
}

int fstatvfs(int fd, struct statvfs *vs)
{
    static int (*real)(int, struct statvfs *);
    if (!real) real = (int (*)(int, struct statvfs *))dlsym(RTLD_NEXT, "fstatvfs");
    return fake_free(real(fd, vs), vs);
}
