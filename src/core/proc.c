#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "path.h"
#include "priv.h"

extern char **environ;

/* The message goes to ctx (when there is one) and to why (when not NULL). */
static int __attribute__((format(printf, 4, 5))) fail(ce_ctx *ctx, char *why, int code, const char *fmt, ...)
{
    char m[CE_PROC_WHY];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    if (why) snprintf(why, CE_PROC_WHY, "%s", m);
    return ctx ? ce_fail(code, "%s", m) : code;
}

/* ---- capture: the head as it comes, the tail in a ring ---- */

static void cap_write(struct ce_proc_cap *k, const void *buf, size_t n)
{
    const unsigned char *b = buf;
    while (n) {
        ssize_t w = write(k->fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            k->write_failed = true;
            return;
        }
        b += w;
        n -= (size_t)w;
    }
}

static void cap_feed(struct ce_proc_cap *k, const unsigned char *b, size_t n)
{
    if (k->total < k->head) {
        size_t take = k->head - k->total < n ? (size_t)(k->head - k->total) : n;
        if (k->fd >= 0) cap_write(k, b, take);
        else memcpy(k->headbuf + k->head_len, b, take);
        k->head_len += take;
        k->total += take;
        b += take;
        n -= take;
    }
    k->total += n;
    for (size_t i = 0; i < n && k->tail; i++) {
        k->ring[k->ring_pos] = b[i];
        k->ring_pos = (k->ring_pos + 1) % k->tail;
        if (k->ring_len < k->tail) k->ring_len++;
    }
}

/* The kept bytes in order: head, a line saying what was left out, tail. */
static int cap_finish(struct ce_proc_cap *k, ce_proc_result *r)
{
    char line[200] = "";
    unsigned long long left_out = k->total - k->head_len - k->ring_len;
    if (left_out)
        snprintf(line, sizeof line, "\n[cudaenv: %llu bytes of output left out here; the first %zu and the last "
                 "%zu are kept]\n", left_out, k->head_len, k->ring_len);
    size_t ll = strlen(line);
    /* never wrapped: ring_pos == ring_len; else the oldest byte is at ring_pos */
    size_t a = k->ring_len < k->tail ? 0 : k->ring_pos, alen = k->ring_len - (k->ring_len < k->tail ? 0 : k->ring_pos);
    r->out_total = k->total;
    if (k->fd >= 0) {
        cap_write(k, line, ll);
        if (k->ring_len) {   /* no ring at all when the output fit the head */
            cap_write(k, k->ring + a, alen);
            cap_write(k, k->ring, k->ring_len - alen);
        }
        return CE_OK;
    }
    size_t n = k->head_len + ll + k->ring_len;
    if (!(r->out = malloc(n + 1))) return CE_ERR_NOMEM;
    if (k->head_len) memcpy(r->out, k->headbuf, k->head_len);
    memcpy(r->out + k->head_len, line, ll);
    if (k->ring_len) {   /* memcpy from a NULL ring is undefined even for 0 bytes */
        memcpy(r->out + k->head_len + ll, k->ring + a, alen);
        memcpy(r->out + k->head_len + ll + alen, k->ring, k->ring_len - alen);
    }
    r->out[n] = '\0';
    r->out_len = n;
    return CE_OK;
}

static void cap_free(struct ce_proc_cap *k)
{
    free(k->headbuf);
    free(k->ring);
    k->headbuf = k->ring = NULL;
}

/* Read what is there; true at EOF (or an error: the end too). */
static bool drain(int fd, struct ce_proc_cap *k)
{
    unsigned char buf[65536];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return false;
        if (n <= 0) return true;
        cap_feed(k, buf, (size_t)n);
    }
}

/* ---- starting ---- */

/* env with each "K=V" of add put over it (a new array; the strings are shared). */
static char **env_merge(char *const *env, const char *const *add)
{
    size_t n = 0, m = 0;
    while (env[n]) n++;
    while (add[m]) m++;
    char **e = malloc((n + m + 1) * sizeof *e);
    if (!e) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool over = false;
        for (size_t j = 0; j < m && !over; j++) {
            size_t kl = strcspn(add[j], "=");
            over = !strncmp(env[i], add[j], kl) && env[i][kl] == '=';
        }
        if (!over) e[k++] = env[i];
    }
    for (size_t j = 0; j < m; j++) e[k++] = (char *)add[j];
    e[k] = NULL;
    return e;
}

static void supervisor_die(int sig)
{
    (void)sig;
    kill(0, SIGKILL); /* the whole group, this process included */
    _exit(137);
}

/* The supervisor (a forked child): leads the group, dies with cudaenv and
 * takes the group along; exits with the program's status (128+N: signal N). */
static void __attribute__((noreturn))
supervise(pid_t cudaenv, const ce_proc *p, const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *at,
          char *const *env, int keep_open)
{
    setpgid(0, 0);
    struct sigaction sa = { .sa_handler = supervisor_die };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != cudaenv) _exit(125); /* cudaenv died before the line above */
    pid_t pid;
    if (posix_spawn(&pid, p->path, fa, at, p->argv, env) != 0) _exit(127);
    if (keep_open >= 0) close(keep_open); /* the pipe's write end: EOF when the program's side closes */
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) _exit(126);
    if (WIFEXITED(st)) _exit(WEXITSTATUS(st));
    _exit(128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0));
}

int ce_proc_start(ce_ctx *ctx, const ce_proc *p, ce_proc_child *c)
{
    memset(c, 0, sizeof *c);
    c->pid = -1;
    c->pipe = -1;
    c->cap.fd = -1;
    if (!p->path || !p->path[0] || access(p->path, X_OK) != 0)
        return fail(ctx, c->why, CE_ERR_OTHER, "cannot run %s: %s", p->path ? p->path : "(no program)",
                    strerror(p->path && p->path[0] ? errno : ENOENT));
    /* the privileged-use rule (priv.h), here so no caller can forget it: as
     * root, the program's resolved path and every directory above it must be
     * root's and not writable by group or others */
    char pwhy[CE_PROC_WHY - 200];
    if (ce_priv_program(p->path, pwhy, sizeof pwhy) != 0)
        return fail(ctx, c->why, CE_ERR_PERM, "unsafe for cudaenv run as root: %s; a user could make root run "
                    "a program of their choosing. Use a root-owned program (chown root:root, chmod go-w it and "
                    "each directory above it)", pwhy);
    bool capture = p->out == CE_PROC_CAPTURE || p->out == CE_PROC_CAPTURE_FD;
    int pfd[2] = { -1, -1 };
    char **merged = NULL;
    char *const *env = p->env ? p->env : environ;
    if (p->env_add && !(env = merged = env_merge(env, p->env_add))) return fail(ctx, c->why, CE_ERR_NOMEM, "out of memory");
    if (capture) {
        struct ce_proc_cap *k = &c->cap;
        k->head = p->cap_head || p->cap_tail ? p->cap_head : 65536;
        k->tail = p->cap_tail;
        k->fd = p->out == CE_PROC_CAPTURE_FD ? p->fd : -1;
        if ((k->fd < 0 && k->head && !(k->headbuf = malloc(k->head))) || (k->tail && !(k->ring = malloc(k->tail)))) {
            cap_free(k);
            free(merged);
            return fail(ctx, c->why, CE_ERR_NOMEM, "out of memory");
        }
        if (pipe2(pfd, O_CLOEXEC) != 0) {
            int e = errno;
            cap_free(k);
            free(merged);
            return fail(ctx, c->why, CE_ERR_OTHER, "cannot start %s: %s", p->path, strerror(e));
        }
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    switch (p->out) {
    case CE_PROC_CAPTURE:
    case CE_PROC_CAPTURE_FD: posix_spawn_file_actions_adddup2(&fa, pfd[1], 1); break;
    case CE_PROC_FD: posix_spawn_file_actions_adddup2(&fa, p->fd, 1); break;
    case CE_PROC_TO_STDERR: posix_spawn_file_actions_adddup2(&fa, 2, 1); break;
    case CE_PROC_NULL: posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0); break;
    case CE_PROC_INHERIT: break;
    }
    if (!p->keep_stderr) posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (p->cwd) posix_spawn_file_actions_addchdir_np(&fa, p->cwd);
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    sigset_t none, def;
    sigemptyset(&none);
    sigemptyset(&def);
    sigaddset(&def, SIGPIPE);
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &def);
    c->group = p->group || p->supervise;
    c->supervised = p->supervise;
    if (c->group && !p->supervise) {
        flags |= POSIX_SPAWN_SETPGROUP;
        posix_spawnattr_setpgroup(&at, 0);
    }
    posix_spawnattr_setflags(&at, flags);
    int e = 0;
    if (p->supervise) {
        pid_t me = getpid();
        c->pid = fork();
        if (c->pid == 0) {
            if (pfd[0] >= 0) close(pfd[0]);
            supervise(me, p, &fa, &at, env, pfd[1]);
        }
        if (c->pid < 0) e = errno;
        else setpgid(c->pid, c->pid); /* also here: no window where the group does not exist yet */
    } else {
        e = posix_spawn(&c->pid, p->path, &fa, &at, p->argv, env);
        if (e) c->pid = -1;
    }
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(merged);
    if (pfd[1] >= 0) close(pfd[1]);
    if (e) {
        if (pfd[0] >= 0) close(pfd[0]);
        cap_free(&c->cap);
        if (p->cwd && e == ENOENT && access(p->cwd, X_OK) != 0)
            return fail(ctx, c->why, CE_ERR_OTHER, "cannot run %s in %s: %s", p->path, p->cwd, strerror(errno));
        return fail(ctx, c->why, CE_ERR_OTHER, "cannot run %s: %s", p->path, strerror(e));
    }
    if (pfd[0] >= 0) fcntl(pfd[0], F_SETFL, O_NONBLOCK);
    c->pipe = pfd[0];
    c->t0 = ce_mono_s();
    c->deadline = p->timeout_s > 0 ? c->t0 + p->timeout_s : 0;
    c->cancel = p->cancel;
    c->label = p->label;
    c->tick = p->label != NULL;
    return CE_OK;
}

/* ---- waiting ---- */

static bool exited(pid_t pid)
{
    siginfo_t si = { 0 };
    /* WNOWAIT: it stays a zombie, so its pid (the group id) cannot be
     * reused before the group is killed */
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

static void stop(ce_proc_child *c)
{
    kill(c->group ? -c->pid : c->pid, SIGKILL);
}

int ce_proc_wait(ce_ctx *ctx, ce_proc_child *c, ce_proc_result *r)
{
    memset(r, 0, sizeof *r);
    if (c->pid <= 0) return fail(ctx, r->why, CE_ERR_OTHER, "no program was started");
    bool eof = c->pipe < 0, done = false;
    double tick = c->t0 + 1, nap = 0.001;
    bool tick_on = c->tick && ctx && ctx->event;
    while (!done) {
        double now = ce_mono_s(), until = now + 0.2;
        if (c->deadline && c->deadline < until) until = c->deadline;
        if (tick_on && tick < until) until = tick;
        if (!eof) {
            struct pollfd pf = { .fd = c->pipe, .events = POLLIN };
            int ms = (int)((until - now) * 1000) + 1;
            if (poll(&pf, 1, ms > 0 ? ms : 0) > 0) eof = drain(c->pipe, &c->cap);
        }
        if (exited(c->pid)) {
            done = true;
        } else if (c->deadline && ce_mono_s() > c->deadline) {
            r->timed_out = true;
            stop(c);
            c->deadline = 0;
        } else if (c->cancel && __atomic_load_n(c->cancel, __ATOMIC_ACQUIRE)) {
            r->cancelled = true;
            stop(c);
            c->cancel = NULL;
        } else if (eof && !c->deadline && !c->cancel && !tick_on) {
            siginfo_t si = { 0 };
            while (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR) {}
            done = true;
        } else if (eof) {
            struct timespec ts = { 0, (long)(nap * 1e9) };
            nanosleep(&ts, NULL);
            if (nap < 0.004) nap *= 2; /* at most 8 ms late; verify times its nvcc build */
        }
        if (tick_on && ce_mono_s() >= tick) {
            tick += 1;
            ce_event ev = { .kind = CE_EV_ELAPSED, .item = c->label, .total = -1,
                            .done = (int64_t)((ce_mono_s() - c->t0) * 1000) };
            ctx->event(ctx->event_ud, &ev);
        }
    }
    if (c->group) kill(-c->pid, SIGKILL); /* whatever it left running in its group */
    for (double end = ce_mono_s() + 5; !eof && ce_mono_s() < end;) {
        struct pollfd pf = { .fd = c->pipe, .events = POLLIN };
        if (poll(&pf, 1, 50) > 0) eof = drain(c->pipe, &c->cap);
    }
    if (c->pipe >= 0) close(c->pipe);
    c->pipe = -1;
    int st = 0;
    while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(st)) {
        r->code = WEXITSTATUS(st);
        if (c->supervised && r->code > 128) {
            r->sig = r->code - 128;
            r->code = -r->sig;
        }
    } else if (WIFSIGNALED(st)) {
        r->sig = WTERMSIG(st);
        r->code = -r->sig;
    }
    c->pid = -1;
    int rc = c->cap.head || c->cap.tail ? cap_finish(&c->cap, r) : CE_OK;
    cap_free(&c->cap);
    if (r->timed_out || r->cancelled) {
        r->sig = SIGKILL;
        r->code = -SIGKILL;
    }
    return rc == CE_OK ? CE_OK : fail(ctx, r->why, rc, "out of memory");
}

void ce_proc_abandon(ce_proc_child *c)
{
    if (c->pid <= 0) return;
    stop(c);
    ce_proc_result r;
    c->deadline = 0;
    c->cancel = NULL;
    c->tick = false;
    ce_proc_wait(NULL, c, &r);
    ce_proc_result_free(&r);
}

void ce_proc_result_free(ce_proc_result *r)
{
    free(r->out);
    r->out = NULL;
    r->out_len = 0;
}

int ce_proc_run(ce_ctx *ctx, const ce_proc *p, ce_proc_result *r)
{
    memset(r, 0, sizeof *r);
    ce_proc_child c;
    int rc = ce_proc_start(ctx, p, &c);
    if (rc) {
        memcpy(r->why, c.why, sizeof r->why);
        return rc;
    }
    return ce_proc_wait(ctx, &c, r);
}

/* ---- conveniences ---- */

int ce_proc_output(ce_ctx *ctx, char *const argv[], const char *cwd, double timeout_s, char *out, size_t outsz,
                   ce_proc_result *r)
{
    if (outsz) out[0] = '\0';
    ce_proc p = { .path = argv[0], .argv = argv, .cwd = cwd, .timeout_s = timeout_s, .cap_head = outsz - 1 };
    int rc = ce_proc_run(ctx, &p, r);
    size_t n = rc == CE_OK ? (r->out_len < outsz - 1 ? r->out_len : outsz - 1) : 0;
    memcpy(out, r->out ? r->out : "", n);
    out[n] = '\0';
    if (rc != CE_OK) snprintf(out, outsz, "%s", r->why);
    ce_proc_result_free(r);
    return rc;
}

long ce_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) n = CPU_COUNT(&set);
    return n < 1 ? 1 : n;
}

bool ce_proc_which(const char *prog, char *out, size_t outsz)
{
    out[0] = '\0';
    if (strchr(prog, '/')) {
        int n = snprintf(out, outsz, "%s", prog);
        return n > 0 && (size_t)n < outsz && access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    char *copy = strdup(path && *path ? path : "/usr/bin:/bin"), *save = NULL;
    bool found = false;
    for (char *t = copy ? strtok_r(copy, ":", &save) : NULL; t && !found; t = strtok_r(NULL, ":", &save))
        found = t[0] == '/' && ce_path_join(out, outsz, t, prog) == CE_OK && access(out, X_OK) == 0;
    free(copy);
    if (!found) out[0] = '\0';
    return found;
}

bool ce_run_line(const char *prog, char *const argv[], char *out, size_t outsz, char *where, size_t wsz)
{
    char full[4096];
    bool found = ce_proc_which(prog, full, sizeof full);
    if (where) snprintf(where, wsz, "%s", full);
    out[0] = '\0';
    if (!found) return false;
    ce_proc p = { .path = full, .argv = argv, .cap_head = outsz - 1 };
    ce_proc_result r;
    if (ce_proc_run(NULL, &p, &r) != CE_OK) return false;
    size_t n = r.out_len < outsz - 1 ? r.out_len : outsz - 1;
    memcpy(out, r.out ? r.out : "", n);
    out[n] = '\0';
    ce_proc_result_free(&r);
    out[strcspn(out, "\r\n")] = '\0';
    return r.code == 0 && n > 0;
}
