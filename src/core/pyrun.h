/* Python run isolated (issue 21): doctor's framework probe, verify
 * --framework and jupyter install start a Python that is not cudaenv's, and
 * a json.py, ipykernel.py or sitecustomize.py in the caller's working
 * directory (a cloned repository, a CI checkout) must never run, as root or
 * as a user.  So every Python cudaenv starts:
 *  - runs with -I (no working directory or script directory on sys.path,
 *    no PYTHON* variables, no user site), in a private directory made with
 *    mkdtemp (0700, removed after) as its working directory;
 *  - gets the embedded script as a file written there exclusively
 *    (O_EXCL|O_NOFOLLOW), never with -c;
 *  - gets back what belongs to the caller through a prologue: the entries
 *    of PYTHONPATH (as root only those that pass the privileged-use rule,
 *    core/priv.h) and, for a user, their user site; the toolchain's
 *    environment (LD_LIBRARY_PATH, CUDA_*) passes as it is.
 * The program itself is checked by core/proc.c as every program is. */
#ifndef CE_PYRUN_H
#define CE_PYRUN_H

#include <stddef.h>

#include "ctx.h"

typedef struct ce_py {
    char dir[CE_PATH_MAX];       /* the private directory ("" when none) */
    char script[4200];    /* dir/cudaenv_script.py */
    char *env_path;       /* "__CUDAENV_PYPATH=..." for the prologue (malloc'ed) */
    char *env_add[3];     /* for ce_proc.env_add: env_path, the user-site flag, NULL */
    char *argv[12];       /* python, -I, script, args..., NULL */
} ce_py;

/* Python as root by construction (issue 36; pyrun_trust.c): as root, the
 * Python python (an absolute path, as it will be run) may run only when the
 * interpreter as given and resolved, every directory above both, its venv's
 * pyvenv.cfg and home, and everything below every directory its sys.path
 * imports from (the site directories whole: .pth files, the framework
 * packages; the paths .pth files add) pass the rule of priv.h.  Nothing a
 * user owns runs to find that out: the resolved base interpreter, already
 * checked, says its sys.path under -I -S.  0 (always when not privileged),
 * else -1 with why naming the first path that failed and the fix.
 * ce_py_prepare calls it, so every Python cudaenv starts is checked. */
int ce_py_trusted(const char *python, char *why, size_t whysz);

/* Make the private directory and write the prologue + script into it;
 * argv = { python, "-I", script, args[0..nargs-1], NULL } (nargs <= 8);
 * as root, CE_ERR_PERM when ce_py_trusted refuses python.
 * Run it with .argv = py->argv, .env_add = (const char *const *)py->env_add,
 * .cwd = py->dir; then ce_py_done ().  CE_ERR_IO/CE_ERR_NOMEM. */
int ce_py_prepare(ce_py *py, const char *python, const char *script, const char *const *args,
                  size_t nargs);
/* A path inside the private directory (for a result file). */
int ce_py_file(const ce_py *py, const char *name, char *out, size_t outsz);
/* Remove the private directory and free what prepare made (safe twice). */
void ce_py_done(ce_py *py);

#endif
