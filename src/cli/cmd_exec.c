/* cudaenv exec [VERSION] [--] CMD [ARG...]: run one command with a toolchain's
 * environment (cron, IDEs, Jupyter); without VERSION (exec -- CMD), the
 * selection in effect, as mise and pyenv do, and exit 3 when there is none.
 * execvp replaces cudaenv, so the exit status is the command's own; a command that cannot be found exits 127 and
 * one that cannot be run 126, like a shell.  exec --for PYTHON -- CMD: the
 * toolchain PYTHON's frameworks were built for (for_python.c). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "store/activate.h"
#include "cli.h"
#include "core/trust.h"

enum { OPT_FOR = 1, OPT_FRAMEWORK, OPT_LIBS };

static const cli_opt cmd_exec_opts[] = {
    { "for", 0, true, OPT_FOR },
    { "framework", 0, true, OPT_FRAMEWORK },
    { "libs", 0, true, OPT_LIBS },
    { 0 },
};

static int cmd_exec(cli *c, const cli_args *a)
{
    /* the command starts after VERSION, with or without "--" (CLI_REST); with
     * --for after "--" (a first word would be read as VERSION) */
    const char *version = a->n ? a->pos[0] : NULL;
    char **rest = a->rest;
    if (a->opt[OPT_FOR] && version)
        return cli_usage_error(c->cmd, "--for PYTHON decides the toolchain: cudaenv exec --for PYTHON -- CMD [ARG...]");
    char forspec[96];
    int rc = cli_for_version(c, a, OPT_FOR, OPT_FRAMEWORK, forspec, sizeof forspec, &version);
    if (rc) return rc;
    if (a->n_rest == 0)
        return cli_usage_error(c->cmd, "usage: cudaenv exec [VERSION] -- CMD [ARG...]");
    ce_active_info sel;
    memset(&sel, 0, sizeof sel);
    sel.origin = CE_ORIGIN_SHELL;
    if (version) {
        if ((rc = ce_select(&c->ctx, version, &sel))) return cli_fail(c, rc);
    } else {
        /* no VERSION: the selection in effect, as the shell has it (use's
         * CUDAENV_VERSION, .cuda-version up from here, global); a pin naming
         * nothing installed names its file (never what it says) */
        if ((rc = ce_active(&c->ctx, NULL, &sel))) return cli_fail(c, rc);
        if (sel.origin == CE_ORIGIN_SYSTEM)
            return cli_fail(c, ce_fail(CE_ERR_NOTFOUND, "no toolchain selected here (cudaenv use, "
                                       ".cuda-version, cudaenv global): name one, cudaenv exec VERSION -- %s, or "
                                       "the machine's own CUDA, cudaenv exec system -- %s", rest[0], rest[0]));
    }
    /* as root, the toolchain the command will find first on PATH and
     * LD_LIBRARY_PATH must be root's (core/trust.h) */
    if (sel.tc.prefix[0] && (rc = ce_trust_toolchain(sel.tc.prefix))) return cli_fail(c, rc);
    /* a Python with its own CUDA libraries (for_python.c) */
    const char *py = a->opt[OPT_FOR] ? a->opt[OPT_FOR] : cli_python_cmd(rest[0]);
    if ((rc = cli_libs_mode(c, a->opt[OPT_LIBS], py, &sel))) return rc;
    ce_env env;
    if ((rc = ce_env_compute(&c->ctx, &sel, true, &env))) return cli_fail(c, rc);
    rc = ce_env_apply(&env);
    ce_env_free(&env);
    if (rc) return cli_fail(c, rc);
    fflush(stdout);
    execvp(rest[0], rest);
    int e = errno;
    if (e == ENOENT) {
        cli_error(c, "%s: command not found (looked in %s/bin and PATH)", rest[0],
                  sel.is_system ? "/usr/local/cuda" : sel.tc.prefix);
        return 127;
    }
    cli_error(c, "cannot run %s: %s", rest[0], strerror(e));
    return 126;
}

const cli_cmd cli_cmd_exec = {
    .name = "exec", .run = cmd_exec,
    .summary = "run one command with a toolchain",
    .usage =
        "usage: cudaenv exec [VERSION] -- CMD [ARG...]\n"
        "       cudaenv exec --for PYTHON [--framework tf|torch|jax] -- CMD [ARG...]\n"
        "       cudaenv exec --libs framework|toolchain [VERSION] -- CMD [ARG...]\n"
        "\n"
        "Run CMD with the environment of toolchain VERSION; without VERSION, of the selection\n"
        "in effect (CUDAENV_VERSION from use, the nearest .cuda-version, global; none: exit 3);\n"
        "--for PYTHON: of the toolchain\n"
        "that Python's frameworks were built for (see install --for), e.g.\n"
        "cudaenv exec --for .venv/bin/python -- .venv/bin/python setup.py build_ext.\n"
        "A Python that brings its own CUDA libraries (--for, or CMD a python) runs on them:\n"
        "the toolchain's lib64 stays off LD_LIBRARY_PATH (see use).\n",
    .opts = cmd_exec_opts, .max_pos = 1, .needs = CLI_REST,
};
