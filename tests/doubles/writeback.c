/* Test double (LD_PRELOAD): sync_file_range() and fdatasync() append what
 * they were asked, once they returned, to $CUDAENV_TEST_WRITEBACK_LOG:
 *   "range OFFSET NBYTES PATH"   sync_file_range (SYNC_FILE_RANGE_WRITE only)
 *   "datasync PATH"              fdatasync
 * (PATH: what /proc/self/fd/N names), so a test can see that a download's
 * writeback started while it was written, and what its fdatasync had left.
 * Built at test time: cc -shared -fPIC -o writeback.so writeback.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* one line: what, then the path of fd */
static void note(const char *what, int fd)
{
    const char *log = getenv("CUDAENV_TEST_WRITEBACK_LOG");
    if (!log || !*log) return;
    char link[64], path[4096], line[4300];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    path[n > 0 ? n : 0] = '\0';
    int len = snprintf(line, sizeof line, "%s %s\n", what, path);
    int out = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (out < 0) return;
    if (write(out, line, (size_t)len) < 0) {}   /* one write: lines of two threads never mix */
    close(out);
}

int sync_file_range(int fd, off64_t off, off64_t nbytes, unsigned int flags)
{
    int (*real)(int, off64_t, off64_t, unsigned int) =
        (int (*)(int, off64_t, off64_t, unsigned int))dlsym(RTLD_NEXT, "sync_file_range");
    int r = real(fd, off, nbytes, flags);
    char what[64];
    snprintf(what, sizeof what, "range %lld %lld", (long long)off, (long long)nbytes);
    if (flags == SYNC_FILE_RANGE_WRITE) note(what, fd);
    return r;
}

int fdatasync(int fd)
{
    int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    int r = real(fd);
    note("datasync", fd);
    return r;
}
