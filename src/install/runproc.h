/* Running an installer under control (the CUDA runfile).  Full binary only.
 *
 *  - Its own process group, led by a small supervisor process: when
 *    cudaenv dies, even of kill -9, the supervisor gets SIGTERM (parent
 *    death signal) and kills the whole group, so nothing the installer
 *    started survives.  When the installer ends, whatever it left running
 *    in its group is killed too.
 *  - A deadline: past it the group is killed and *timed_out is set.
 *  - The log is opened with O_NOFOLLOW: a planted logs/<file> symlink cannot
 *    redirect root's write.  The elapsed time goes out once a second.
 *  - Its output (stdout and stderr) goes to log, capped: the first head and
 *    the last tail bytes are kept, with a line saying how much was left out.
 */
#ifndef CE_RUNPROC_H
#define CE_RUNPROC_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"

typedef struct ce_runproc {
    const char *path;          /* program to execve */
    char *const *argv;
    char *const *env;
    const char *cwd;           /* the child's working directory */
    const char *log;           /* created (truncated) for its output */
    double timeout_s;          /* <= 0: none */
    size_t log_head, log_tail; /* bytes of output kept at each end */
    const char *label;         /* for the CE_EV_ELAPSED event sent about once a second */
} ce_runproc;

/* Run it and wait.  CE_OK with *status (a waitpid status; a process killed
 * at the deadline shows as killed by SIGKILL, and *timed_out is true), or
 * CE_ERR_IO (the log), CE_ERR_OTHER (fork/pipe). */
int ce_runproc_run(ce_ctx *ctx, const ce_runproc *p, int *status, bool *timed_out);

#endif
