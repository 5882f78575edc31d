#include "runproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"

/* ---- the supervisor: leads the group, dies with cudaenv, takes the group along ---- */

static void supervisor_die(int sig)
{
    (void)sig;
    kill(0, SIGKILL); /* the whole group, this process included */
    _exit(137);
}

static void supervise(const ce_runproc *p, pid_t cudaenv, int out)
{
    setpgid(0, 0);
    struct sigaction sa = { .sa_handler = supervisor_die };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != cudaenv) _exit(125); /* cudaenv died before the line above */
    pid_t pid = fork();
    if (pid < 0) _exit(126);
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, 0);
        dup2(out, 1);
        dup2(out, 2);
        if (p->cwd && chdir(p->cwd) != 0) _exit(126);
        execve(p->path, p->argv, p->env);
        _exit(127);
    }
    close(out);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) _exit(126);
    if (WIFEXITED(st)) _exit(WEXITSTATUS(st));
    _exit(128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0));
}

/* ---- the log: head written as it comes, tail kept in a ring ---- */

typedef struct caplog {
    int fd;
    size_t head, tail_cap;
    unsigned long long total;
    unsigned char *ring;
    size_t ring_len, ring_pos;
    bool write_failed;
} caplog;

static void write_all(caplog *l, const void *buf, size_t n)
{
    const unsigned char *b = buf;
    while (n) {
        ssize_t w = write(l->fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            l->write_failed = true;
            return;
        }
        b += w;
        n -= (size_t)w;
    }
}

static void caplog_feed(caplog *l, const unsigned char *b, size_t n)
{
    if (l->total < l->head) {
        size_t k = l->head - l->total < n ? (size_t)(l->head - l->total) : n;
        write_all(l, b, k);
        l->total += k;
        b += k;
        n -= k;
    }
    l->total += n;
    for (size_t i = 0; i < n && l->tail_cap; i++) {
        l->ring[l->ring_pos] = b[i];
        l->ring_pos = (l->ring_pos + 1) % l->tail_cap;
        if (l->ring_len < l->tail_cap) l->ring_len++;
    }
}

static void caplog_finish(caplog *l)
{
    unsigned long long left_out = l->total - (l->total < l->head ? l->total : l->head) - l->ring_len;
    if (left_out) {
        char line[200];
        int n = snprintf(line, sizeof line, "\n[cudaenv: %llu bytes of output left out here; the first %zu "
                         "and the last %zu are kept]\n", left_out, l->head, l->ring_len);
        write_all(l, line, (size_t)n);
    }
    if (l->ring_len < l->tail_cap) {
        write_all(l, l->ring, l->ring_len); /* never wrapped: ring_pos == ring_len */
    } else {
        write_all(l, l->ring + l->ring_pos, l->tail_cap - l->ring_pos);
        write_all(l, l->ring, l->ring_pos);
    }
}

static bool drain(int fd, caplog *l)
{
    unsigned char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return false;
        if (n <= 0) return true; /* EOF (or an error: treat as the end) */
        caplog_feed(l, buf, (size_t)n);
    }
}

int ce_runproc_run(ce_ctx *ctx, const ce_runproc *p, int *status, bool *timed_out)
{
    *timed_out = false;
    *status = 0;
    caplog l = { .head = p->log_head, .tail_cap = p->log_tail };
    l.fd = open(p->log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (l.fd < 0) return ce_fail(ctx, CE_ERR_IO, "cannot create %s: %s", p->log, strerror(errno));
    if (l.tail_cap && !(l.ring = malloc(l.tail_cap))) {
        close(l.fd);
        return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    }
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        int e = errno;
        close(l.fd);
        free(l.ring);
        return ce_fail(ctx, CE_ERR_OTHER, "cannot start %s: %s", p->path, strerror(e));
    }
    pid_t me = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pfd[0]);
        close(pfd[1]);
        close(l.fd);
        free(l.ring);
        return ce_fail(ctx, CE_ERR_OTHER, "cannot start %s: %s", p->path, strerror(e));
    }
    if (pid == 0) {
        close(pfd[0]);
        int out = dup(pfd[1]); /* without O_CLOEXEC: the installer writes to it */
        supervise(p, me, out < 0 ? pfd[1] : out);
    }
    setpgid(pid, pid); /* also here: no window where the group does not exist yet */
    close(pfd[1]);
    fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    double t0 = ce_mono_s(), deadline = p->timeout_s > 0 ? t0 + p->timeout_s : 0, tick = t0 + 1;
    bool eof = false, exited = false;
    while (!exited) {
        /* the installer runs for minutes: report the elapsed time once a second */
        if (ce_mono_s() >= tick) {
            tick += 1;
            ce_event ev = { .kind = CE_EV_ELAPSED, .item = p->label, .total = -1,
                            .done = (int64_t)((ce_mono_s() - t0) * 1000) };
            if (ctx->event) ctx->event(ctx->event_ud, &ev);
        }
        struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
        if (!eof && poll(&pf, 1, 200) > 0) eof = drain(pfd[0], &l);
        if (eof) usleep(20000);
        siginfo_t si = { 0 };
        /* WNOWAIT: the supervisor stays a zombie, so its pid (the group id)
         * cannot be reused before the group is killed below */
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) exited = true;
        if (!exited && deadline && ce_mono_s() > deadline) {
            *timed_out = true;
            kill(-pid, SIGKILL);
            deadline = 0;
        }
    }
    kill(-pid, SIGKILL); /* whatever the installer left running in its group */
    for (int i = 0; i < 100 && !eof; i++) {
        struct pollfd pf = { .fd = pfd[0], .events = POLLIN };
        if (poll(&pf, 1, 50) > 0) eof = drain(pfd[0], &l);
    }
    close(pfd[0]);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
    caplog_finish(&l);
    close(l.fd);
    free(l.ring);
    if (*timed_out) *status = SIGKILL; /* as if killed by SIGKILL: WIFSIGNALED */
    return CE_OK;
}
