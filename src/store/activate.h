/* Which toolchain is active, and the environment that activates one.
 *
 * Precedence (CLI.md): CUDAENV_VERSION (set by `use` in this shell) >
 * .cuda-version (looked up from the working directory up to /) >
 * $CUDAENV_ROOT/global > the machine's own CUDA ("system").
 *
 * The environment of a toolchain: CUDA_HOME, CUDA_PATH, CUDNN_PATH (only
 * when the toolchain has cuDNN), CUDAENV_VERSION (shell selections only),
 * <prefix>/bin first in PATH, <prefix>/lib64 first in LD_LIBRARY_PATH,
 * <prefix>/lib64 and lib64/stubs first in LIBRARY_PATH (the linker's: -lcuda).
 * Every list entry under $CUDAENV_ROOT/versions/ is removed first, so
 * switching never makes the lists grow and leaving gives back the lists as
 * they were.  The value CUDA_HOME, CUDA_PATH or CUDNN_PATH had before the
 * first switch is kept in __CUDAENV_OLD_<NAME> and restored on leaving (for
 * "system"), as direnv and mise do.  Other CUDA library directories in
 * LD_LIBRARY_PATH are collected (foreign), never removed.
 *
 * activate.c: the selection (spec files, .cuda-version, global, ce_active);
 * env.c: the environment (ce_env_*, ce_shell_parse). */
#ifndef CE_ACTIVATE_H
#define CE_ACTIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "store.h"

#define CE_VERSION_FILE ".cuda-version"

typedef enum ce_origin {
    CE_ORIGIN_SHELL,   /* CUDAENV_VERSION (cudaenv use) */
    CE_ORIGIN_FILE,    /* a .cuda-version file (path in source) */
    CE_ORIGIN_GLOBAL,  /* $CUDAENV_ROOT/global (path in source) */
    CE_ORIGIN_SYSTEM,  /* nothing selected: the machine's own CUDA */
} ce_origin;

/* Where a toolchain's process takes its CUDA runtime libraries from
 * (issue 37).  CE_LIBS_FRAMEWORK: from the framework's own (a Python whose
 * nvidia-* wheels or conda env bring them, core/pylibs.h): <prefix>/lib64 is
 * kept off LD_LIBRARY_PATH, so no family is loaded twice; nvcc, CUDA_HOME,
 * CUDA_PATH, CUDNN_PATH and LIBRARY_PATH stay the toolchain's (building
 * extensions).  Carried by CUDAENV_LIBS=framework (a shell selection) or the
 * line "libs=framework" after the spec of a .cuda-version. */
typedef enum ce_libs { CE_LIBS_TOOLCHAIN, CE_LIBS_FRAMEWORK } ce_libs;
#define CE_LIBS_VAR "CUDAENV_LIBS"

typedef struct ce_active_info {
    ce_origin origin;
    ce_libs libs;          /* CE_LIBS_FRAMEWORK: the toolchain's lib64 is not put on LD_LIBRARY_PATH */
    bool is_system;        /* "system" selected (explicitly or by default): tc unset */
    ce_toolchain tc;       /* the installed toolchain when !is_system */
    char spec[128];        /* what the origin names, as written ("11.8", "tf-2.14") */
    char source[CE_PATH_MAX];     /* the .cuda-version or global file; "" for shell/system */
} ce_active_info;

/* "shell", ".cuda-version", "global", "system". */
const char *ce_origin_name(ce_origin o);

/* The active selection for a working directory (NULL: getcwd).  On
 * CE_ERR_NOTFOUND (the origin names a toolchain that is not installed) out
 * is still filled (origin, source; spec only when typed: CUDAENV_VERSION)
 * and the status (ce_errmsg) names the file, never what a file says. */
int ce_active(ce_ctx *ctx, const char *cwd, ce_active_info *out);
/* The global default alone (what a new shell outside any project gets):
 * CE_ORIGIN_GLOBAL with its file in source, or CE_ORIGIN_SYSTEM. */
int ce_active_global(ce_ctx *ctx, ce_active_info *out);
/* The spec pinned where this process runs, installed or not: the nearest
 * .cuda-version from the working directory up, else the global default.
 * 1 found (spec, and its file in source), 0 none, <0 a ce_err. */
int ce_pin_in_effect(ce_ctx *ctx, char *spec, size_t specsz, char *source, size_t sourcesz);

/* The nearest .cuda-version from dir up to /: 1 found (path, spec filled),
 * 0 none, < 0 error (unreadable, empty). */
int ce_version_file_find(const char *dir, char *path, size_t pathsz,
                         char *spec, size_t specsz);
/* First line of a spec file (.cuda-version, global), trimmed: a regular
 * file not on procfs/sysfs (FIFOs, devices, /proc/kmsg refused without
 * blocking: the read keeps O_NONBLOCK), at most CE_SPEC_FILE_MAX bytes read,
 * the first line ending within them; content that is not a spec reported by
 * ce_spec_file_unresolved, without echoing it. */
#define CE_SPEC_FILE_MAX 256
int ce_spec_file_read(const char *path, char *spec, size_t specsz);
/* The failure (CE_ERR_NOTFOUND) for a spec file whose content is not a
 * spec or names nothing installed: "FILE: no such toolchain or spec
 * (content not shown)".  What a file says is never quoted back (it may be
 * a symlink to a token); only specs typed on the command line are. */
int ce_spec_file_unresolved(const char *shown);
/* CE_OK when spec (read from the file shown) is a spec by its syntax and
 * may be printed (`local`, `global` without VERSION: a pin of a release not
 * installed yet), else ce_spec_file_unresolved. */
int ce_spec_file_showable(const char *shown, const char *spec);
/* Write a one-line spec file atomically. */
int ce_spec_file_write(const char *path, const char *spec);
/* ... with the line "libs=framework" after the spec when libs says so. */
int ce_pin_write(const char *path, const char *spec, ce_libs libs);

/* $CUDAENV_ROOT/global */
int ce_global_path(ce_ctx *ctx, char *out, size_t outsz);

/* Resolve a selection: "system" -> is_system, else ce_store_find. */
int ce_select(ce_ctx *ctx, const char *spec, ce_active_info *out);

/* One environment change: value NULL means unset. */
typedef struct ce_env_var {
    const char *name;
    char *value;
} ce_env_var;

#define CE_ENV_MAX 16

typedef struct ce_env {
    ce_env_var vars[CE_ENV_MAX];
    size_t n;
    char foreign[4096];    /* foreign CUDA entries found (":"-joined), for warn-once */
} ce_env;

/* The environment that activates sel (is_system: strips cudaenv entries and
 * gives the CUDA_* variables back their values from before) starting from
 * the current process environment.  set_version: also set CUDAENV_VERSION (a
 * shell selection) instead of unsetting it.  Reports nothing. */
int ce_env_compute(ce_ctx *ctx, const ce_active_info *sel, bool set_version, ce_env *out);
/* Warn (CE_EV_WARN) about env's foreign entries, once per distinct set in a
 * shell: not again while CUDAENV_WARNED names them (set here in env).  Only
 * an explicit `use` warns; the hook, env, exec and scripts never do. */
int ce_env_warn_foreign(ce_ctx *ctx, ce_env *env, const char *name);
void ce_env_free(ce_env *env);
/* Apply to this process (setenv/unsetenv), e.g. before exec. */
int ce_env_apply(const ce_env *env);

typedef enum ce_shell { CE_SH_POSIX, CE_SH_FISH, CE_SH_JSON } ce_shell;
/* "bash"/"zsh"/"sh" -> POSIX, "fish", "json"; -1 for anything else. */
int ce_shell_parse(const char *name);
/* Render env as code for a shell (export/unset; fish set -gx/set -e, PATH
 * lists as fish lists) or as one JSON document {"name","prefix","env":{},
 * "unset":[]}.  *out is malloc'ed. */
int ce_env_format(const ce_env *env, const ce_active_info *sel, ce_shell sh, char **out);

/* true when path is under $CUDAENV_ROOT/versions/ (an entry cudaenv added). */
bool ce_env_is_ours(const ce_ctx *ctx, const char *path);

#endif
