/* The one process runner: every program cudaenv starts (gcc -dumpversion,
 * python3, nvcc and the program it built, ldconfig, update-alternatives,
 * the CUDA runfile) goes through here.  No shell ever parses an argument.
 *
 *  - posix_spawn (vfork + exec: no copy of this process's page tables);
 *    stdin is /dev/null; argv, the environment (whole, or "K=V" put over
 *    ours) and the working directory are the caller's.
 *  - Output: stdout (and stderr with it, unless keep_stderr) captured with
 *    a cap -- the first cap_head and the last cap_tail bytes are kept, with
 *    a line saying how much was left out between them -- into memory or
 *    into an fd (the head written as it comes); or sent to an fd, to our
 *    stderr, to /dev/null, or left as ours.
 *  - A deadline: past it the child gets SIGKILL (its whole group when
 *    group is set) and timed_out is true.
 *  - group: its own process group, killed whole on the deadline and when
 *    the program ends (nothing it started is left running).  supervise: the
 *    group is led by a small supervisor that dies with this process (even
 *    of kill -9: parent-death signal) and takes the group along.
 *  - As root, the program's resolved path must pass the privileged-use rule
 *    (core/priv.h: root-owned, not group/other-writable, and so every
 *    directory above it) or it is not started (CE_ERR_PERM naming the path):
 *    checked here, in the one spawning function, so every program cudaenv
 *    runs (and any a future command adds) gets the rule.
 *  - Failures to start (a missing program, a bad cwd) are errors naming the
 *    path; what the program did is in the result.  ctx may be NULL (no
 *    message is recorded then; the return code still says it).
 * Linked into both binaries (the light one runs gcc, python3, ldconfig). */
#ifndef CE_PROC_H
#define CE_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ctx.h"

typedef enum ce_proc_sink {
    CE_PROC_CAPTURE = 0, /* into the result's out (head + tail) */
    CE_PROC_CAPTURE_FD,  /* head + tail written to fd (head as it comes) */
    CE_PROC_FD,          /* straight to fd, uncapped */
    CE_PROC_TO_STDERR,   /* to our stderr (our stdout stays results only) */
    CE_PROC_NULL,        /* /dev/null */
    CE_PROC_INHERIT,     /* our stdout */
} ce_proc_sink;

typedef struct ce_proc {
    const char *path;           /* the program (no PATH search: ce_proc_which) */
    char *const *argv;          /* argv[0] included */
    char *const *env;           /* the whole environment; NULL: ours */
    const char *const *env_add; /* "K=V" put over it; may be NULL */
    const char *cwd;            /* NULL: ours */
    double timeout_s;           /* <= 0: none */
    ce_proc_sink out;           /* where stdout goes */
    bool keep_stderr;           /* stderr stays ours (default: it goes with stdout) */
    int fd;                     /* for CE_PROC_CAPTURE_FD and CE_PROC_FD */
    size_t cap_head, cap_tail;  /* capture: bytes kept at each end (both 0: 64 KiB head) */
    bool group;                 /* its own process group, killed whole (off: ours, so a
                                 * Ctrl-C at the terminal reaches it too) */
    bool supervise;             /* the group dies with this process (implies group) */
    const char *label;          /* with ctx->event: CE_EV_ELAPSED about once a second */
    const int *cancel;          /* set nonzero (another thread: the install failed):
                                 * stopped as at the deadline, within 0.2 s; may be NULL */
} ce_proc;

#define CE_PROC_WHY 1024

typedef struct ce_proc_result {
    int code;                /* exit status; -N when killed by signal N */
    int sig;                 /* the signal that killed it (SIGKILL at the deadline), 0 when it exited;
                              * supervised: an exit status 128+N reads as signal N, as a shell's */
    bool timed_out;
    bool cancelled;          /* stopped because p->cancel was set (sig: SIGKILL) */
    char *out;               /* CE_PROC_CAPTURE: NUL-terminated, out_len bytes; ce_proc_result_free */
    size_t out_len;
    unsigned long long out_total; /* bytes the program wrote, kept or not */
    char why[CE_PROC_WHY];   /* when it could not be run: why, naming the path (as recorded in ctx) */
} ce_proc_result;

/* A started program (ce_proc_start .. ce_proc_wait). */
typedef struct ce_proc_child {
    pid_t pid;               /* <= 0: none */
    int pipe;                /* capture end, -1 when none */
    bool group, supervised, tick;
    double t0, deadline;     /* ce_mono_s(); deadline 0: none */
    const int *cancel;       /* ce_proc's */
    const char *label;
    char why[CE_PROC_WHY];   /* ce_proc_start's failure */
    struct ce_proc_cap {
        int fd;              /* -1: memory */
        size_t head, tail;
        unsigned long long total;
        unsigned char *headbuf, *ring;
        size_t head_len, ring_len, ring_pos;
        bool write_failed;
    } cap;
} ce_proc_child;

/* Run p and wait for it.  CE_OK with *r filled (whatever the program's
 * status), or CE_ERR_OTHER (no such program, not executable, a bad cwd,
 * pipe/spawn: the message names the path), CE_ERR_PERM (as root, a program
 * that fails the privileged-use rule), CE_ERR_NOMEM. */
int ce_proc_run(ce_ctx *ctx, const ce_proc *p, ce_proc_result *r);
/* The same in two halves: start it now, wait later (nvcc compiling while
 * verify does other things).  The deadline counts from the start; a
 * captured pipe is read only while waiting. */
int ce_proc_start(ce_ctx *ctx, const ce_proc *p, ce_proc_child *c);
int ce_proc_wait(ce_ctx *ctx, ce_proc_child *c, ce_proc_result *r);
/* Stop a started program (its group) and reap it. */
void ce_proc_abandon(ce_proc_child *c);
void ce_proc_result_free(ce_proc_result *r);

/* Capture into a caller's buffer (outsz >= 1): run argv[0], stdout+stderr,
 * the first outsz - 1 bytes kept.  As ce_proc_run (the result's out is not
 * kept); when it cannot be run, out says why.  In our process group: a
 * Ctrl-C of cudaenv reaches it too (verify's python3, nvcc --version). */
int ce_proc_output(ce_ctx *ctx, char *const argv[], const char *cwd, double timeout_s, char *out, size_t outsz,
                   ce_proc_result *r);

/* prog as run: itself when it holds a '/' (false when not executable),
 * else the first executable one on PATH (unset or empty: /usr/bin:/bin),
 * as execvp finds it, but only in absolute PATH entries (a relative one would
 * depend on the working directory).  false (out "") when none. */
bool ce_proc_which(const char *prog, char *out, size_t outsz);

/* The cores this process may run on (its affinity mask: taskset, cgroup
 * cpusets), at least 1. */
long ce_cpu_count(void);

/* Run prog (PATH searched, see ce_proc_which) with argv, stdout and stderr
 * captured; the first line of the output in out.  where (may be NULL) gets
 * the path that was run ("" when none was found).  true when it exited 0
 * and printed something.  Tests put fake gcc/python3 first in PATH. */
bool ce_run_line(const char *prog, char *const argv[], char *out, size_t outsz, char *where, size_t wsz);

#endif
