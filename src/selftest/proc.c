/* Running the programs the steps need (nvcc, the program it built, python3,
 * ldd-like probes): no shell, a timeout, output captured. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "st_int.h"

void st_child_exec(char *const argv[], const char *const env_add[], const char *cwd, int outfd)
{
    dup2(outfd, 1);
    dup2(outfd, 2);
    if (outfd > 2) close(outfd);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    if (cwd && chdir(cwd) != 0) _exit(126);
    for (size_t i = 0; env_add && env_add[i]; i++) putenv((char *)env_add[i]);
    execv(argv[0], argv);
    dprintf(1, "cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

int st_wait_child(pid_t pid, int timeout_s, int *status)
{
    double end = ce_mono_ms() + timeout_s * 1000.0;
    for (;;) {
        int ws = 0;
        pid_t r = waitpid(pid, &ws, WNOHANG);
        if (r == pid) {
            *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -WTERMSIG(ws);
            return 0;
        }
        if (r < 0 && errno != EINTR) return -1;
        if (ce_mono_ms() > end) {
            kill(pid, SIGKILL);
            waitpid(pid, &ws, 0);
            *status = -SIGKILL;
            return 0;
        }
        struct timespec ts = { 0, 2 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

int st_run_capture(char *const argv[], const char *const env_add[], const char *cwd, char *out, size_t outsz,
                   int timeout_s, int *status)
{
    int p[2];
    out[0] = '\0';
    if (pipe2(p, O_CLOEXEC) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) st_child_exec(argv, env_add, cwd, p[1]);
    close(p[1]);
    size_t used = 0;
    double end = ce_mono_ms() + timeout_s * 1000.0;
    for (;;) {
        struct pollfd pf = { p[0], POLLIN, 0 };
        int left = (int)(end - ce_mono_ms());
        if (left <= 0) break;
        if (poll(&pf, 1, left) <= 0) break;
        char buf[4096];
        ssize_t n = read(p[0], buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        size_t take = (size_t)n < outsz - 1 - used ? (size_t)n : outsz - 1 - used;
        memcpy(out + used, buf, take);
        used += take;
        out[used] = '\0';
    }
    close(p[0]);
    double rest = (end - ce_mono_ms()) / 1000.0;
    return st_wait_child(pid, rest > 1 ? (int)rest : 1, status);
}
