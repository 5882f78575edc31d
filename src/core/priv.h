/* The privileged-use policy (issues 9 and 21): what cudaenv run as root
 * (euid 0) may open, create, run and believe.  One rule, applied in the few
 * places every command goes through, so a new command gets it without
 * remembering it:
 *
 *  - The rule: something root uses is safe when it is owned by root and not
 *    writable by group or others, and so is every directory from / down to
 *    it (a root-owned sticky directory such as /tmp counts as a safe parent);
 *    never a symlink at the end.  ce_priv_stat_reason / ce_priv_chain_walk.
 *  - Programs: ce_proc_start (core/proc.c), the one function through which
 *    cudaenv starts any program (nvcc, ldconfig, update-alternatives, gcc,
 *    Python, the runfile), resolves the program's path and checks it with
 *    ce_priv_program before it runs; the re-exec of the full binary and
 *    exec's command check the same way.  A new command that runs something
 *    goes through proc.c, and so through the rule.
 *  - Trees (a store, a sysroot, an adopt DIR, init/): ce_priv_tree_open
 *    checks the chain of the resolved directory and holds it as a directory
 *    fd; paths under it are opened with ce_priv_openat (openat2
 *    RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, else a per-component O_NOFOLLOW
 *    walk), so nothing renamed or re-pointed after the check redirects
 *    root.  Files are created with O_EXCL|O_NOFOLLOW (mkstemp).
 *  - Knobs: the environment is read in one place (core/ctx.c); there are
 *    no test variables in the product (tests act through core/fault.h and
 *    LD_PRELOAD, which root's caller could use anyway), and as root
 *    CUDAENV_FULL is ignored (cli_exec_full).  The override programs (CUDAENV_LDCONFIG,
 *    CUDAENV_UPDATE_ALTERNATIVES, CUDAENV_DOCTOR_PYTHON, CUDAENV_TORCH) are
 *    programs like any other: the proc.c check applies.
 *  - Python: every start goes through ce_py_prepare (), which as
 *    root first checks the interpreter as given and resolved, its venv
 *    (pyvenv.cfg) and everything its sys.path imports from
 *    (ce_py_trusted, pyrun_trust.c): a user's venv whose bin/python links to
 *    root's /usr/bin/python3 is refused, not only a user's program.
 *  - Trust anchors and settings: as root, a signing key, a local manifest
 *    and a config file are believed only when ce_priv_file_open passes
 *    (the file and its chain root's, checked on the opened fd); the user's
 *    key directory is never consulted (install/manifest_sig.c).
 *  - Generated files root writes (config.json, a Jupyter kernel.json,
 *    module files) go beneath a directory fd from ce_priv_dir_make,
 *    written with ce_file_write_atomic_at ().
 *  - Temporary files as root go under /tmp (or a TMPDIR that passes the
 *    rule): ce_priv_tmpdir.
 * Nothing here prints; failures come back as a reason string the caller
 * words into its error (status.h). */
#ifndef CE_PRIV_H
#define CE_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "path.h"

/* euid 0 (nothing in the environment can switch the rule off). */
bool ce_priv(void);

/* Is st something only root can change?  NULL when safe, else a short
 * reason ("owned by uid 1000, not root", "writable by group or others",
 * "a symlink").  sticky_ok: a root-owned sticky directory counts as safe. */
const char *ce_priv_stat_reason(const struct stat *st, bool sticky_ok);

/* Directories already found safe, so a walk of many paths under one tree
 * lstats each parent once.  Zero-initialise; ce_priv_cache_free. */
typedef struct ce_priv_cache {
    size_t n;
    char *dirs[128];
} ce_priv_cache;
void ce_priv_cache_free(ce_priv_cache *c);

/* lstat every prefix of the absolute, resolved path real, from / down: 0
 * when all are safe, else 1 with cur (PATH_MAX bytes) the first prefix that
 * failed and *why its reason (NULL: lstat failed, errno says why). */
int ce_priv_chain_walk(const char *real, char *cur, ce_priv_cache *c, const char **why);

/* The program rule: when privileged, path resolved (realpath) must pass the
 * chain rule.  0 when it may run (always when not privileged); -1 with why
 * naming the path and the reason. */
int ce_priv_program(const char *path, char *why, size_t whysz);

/* The same rule for a directory or file root will read, load or write
 * under (a knob's target, a PYTHONPATH entry): the resolved path when it
 * exists, else its nearest existing parent.  true when safe (always when
 * not privileged). */
bool ce_priv_path_ok(const char *path);

/* A directory held by fd after the rule held for it (when privileged):
 * resolved (realpath), its chain checked, opened O_DIRECTORY|O_NOFOLLOW
 * and the open one compared (dev/inode) with what was checked.  fd < 0
 * when closed. */
typedef struct ce_priv_tree {
    int fd;
    char path[CE_PATH_MAX];          /* the resolved path */
} ce_priv_tree;
/* 0, or -1 with why ("X is owned by uid N, not root", "cannot open X: ...")
 * and errno (EPERM for a refusal). */
int ce_priv_tree_open(ce_priv_tree *t, const char *path, char *why, size_t whysz);
void ce_priv_tree_close(ce_priv_tree *t);

/* Open rel (relative, no "..") beneath the directory dfd without following
 * any symlink on the way or at the end: openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS, else a per-component openat O_NOFOLLOW walk.  O_CLOEXEC
 * is added.  The fd, or -1 with errno (ELOOP/EXDEV/ENOTDIR for a symlink). */
int ce_priv_openat(int dfd, const char *rel, int flags, mode_t mode);

/* A file root reads and believes (a signing key, a manifest, a config):
 * follow: the whole path resolved (realpath); else only its directory, and
 * the file itself must be no symlink.  The directory is held as by
 * ce_priv_tree_open (its chain checked when privileged), the file opened
 * beneath it O_RDONLY|O_NOFOLLOW|O_NONBLOCK (cleared after) and checked on
 * the fd: a regular file and, when privileged, root's and writable by no
 * one else.  So nothing swapped after the check is read.  real (PATH_MAX):
 * the resolved path opened.  The fd, or -1 with why ("X is owned by uid N,
 * not root", "X is a symlink") and errno: ENOENT missing, EPERM refused,
 * ELOOP a symlink, EINVAL not a regular file. */
int ce_priv_file_open(const char *path, bool follow, char *real, size_t realsz, char *why, size_t whysz);

/* The directory root writes generated files into (a config, a Jupyter
 * kernelspec, module files), held by fd and created (mode) where missing.
 * Privileged: walked from / one component at a time with openat
 * O_DIRECTORY|O_NOFOLLOW, each directory checked (a root-owned sticky one
 * counts as a safe parent, never as the last), a symlink followed only
 * inside a directory that passed (so it is root's own choice), a user's
 * directory or a link in one refused: nothing a user changes afterwards
 * redirects what is written beneath t->fd (openat, renameat).  Not
 * privileged: mkdir -p and open, the user's own symlinks followed.  0, or
 * -1 with why naming the path and errno (EPERM for a refusal). */
int ce_priv_dir_make(ce_priv_tree *t, const char *path, mode_t mode, char *why, size_t whysz);

/* The directory for root's temporary files: TMPDIR when it passes the rule
 * (or always when not privileged), else /tmp. */
const char *ce_priv_tmpdir(void);

#endif
