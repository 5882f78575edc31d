/* cudaenv use VERSION|system: switch the current shell.  A process cannot
 * change its parent's environment, so the shell function from `cudaenv init`
 * runs `cudaenv use --shell SH VERSION` and evals what it prints; run
 * directly, use checks VERSION and explains how to set up the integration.
 * use --for PYTHON: the toolchain that Python's frameworks were built for
 * (for_python.c), which must be installed.  Only --for starts a Python: plain
 * `use X` stays on the light binary's short path.  deactivate (and use
 * --unset) are the shell function's alone; reaching the binary, they say
 * how to set it up (exit 2). */
#include <stdlib.h>
#include <string.h>

#include "store/activate.h"
#include "cli.h"

enum { OPT_SHELL = 1, OPT_FOR, OPT_FRAMEWORK, OPT_LIBS, OPT_UNSET };

static const cli_opt cmd_use_opts[] = {
    { "shell", 0, true, OPT_SHELL },
    { "for", 0, true, OPT_FOR },
    { "framework", 0, true, OPT_FRAMEWORK },
    { "libs", 0, true, OPT_LIBS },
    { "unset", 0, false, OPT_UNSET },   /* the shell function's; run directly: explained */
    { 0 },
};

/* deactivate / use --unset reached the binary: the shell function from
 * `cudaenv init` handles them (unset CUDAENV_VERSION, then the hook), so
 * there is none in this shell.  A usage error that says how to get it. */
static int needs_function(cli *c, const char *what)
{
    cli_error(c, "%s drops this shell's selection and needs the shell integration (the cudaenv shell "
                 "function); add to ~/.bashrc:\n"
                 "    eval \"$(cudaenv init bash)\"   (zsh: init zsh; fish: cudaenv init fish | source)\n"
                 "or, for this shell only: unset CUDAENV_VERSION; eval \"$(cudaenv env)\"", what);
    return 2;
}

static int cmd_deactivate(cli *c, const cli_args *a)
{
    (void)a;
    return needs_function(c, "deactivate");
}

static int cmd_use(cli *c, const cli_args *a)
{
    const char *shell = a->opt[OPT_SHELL], *version = a->n ? a->pos[0] : NULL;
    int sh = -1;
    if (shell && ((sh = ce_shell_parse(shell)) < 0 || sh == CE_SH_JSON))
        return cli_usage_error(c->cmd, "unknown shell '%s' (bash, zsh, fish)", shell);
    char forspec[96];
    int rc = cli_for_version(c, a, OPT_FOR, OPT_FRAMEWORK, forspec, sizeof forspec, &version);
    if (rc) return rc;
    if (cli_on(a, OPT_UNSET)) {
        if (version) return cli_usage_error(c->cmd, "--unset takes no VERSION");
        return needs_function(c, "use --unset");
    }
    ce_active_info sel;
    memset(&sel, 0, sizeof sel);
    sel.origin = CE_ORIGIN_SHELL;
    if (!version) return cli_usage_error(c->cmd, "which toolchain? (cudaenv list shows the installed ones)");
    if ((rc = ce_select(&c->ctx, version, &sel))) {
        int code = cli_fail(c, rc);
        if (rc == CE_ERR_NOTFOUND && a->opt[OPT_FOR])
            cli_note(c, "install it first: cudaenv install --for %s%s%s", a->opt[OPT_FOR],
                     a->opt[OPT_FRAMEWORK] ? " --framework " : "", a->opt[OPT_FRAMEWORK] ? a->opt[OPT_FRAMEWORK] : "");
        return code;
    }
    if ((rc = cli_libs_mode(c, a->opt[OPT_LIBS], a->opt[OPT_FOR], &sel))) return rc;
    if (sh < 0) {
        cli_error(c, "use changes the current shell and needs the shell integration; add to ~/.bashrc:\n"
                     "    eval \"$(cudaenv init bash)\"   (zsh: init zsh; fish: cudaenv init fish | source)\n"
                     "or, for this shell only: eval \"$(cudaenv env %s)\"", version);
        return 1;
    }
    if ((rc = cli_print_env(c, &sel, true, true, sh))) return rc;
    if (!c->ctx.quiet)
        cli_note(c, "using %s%s%s", sel.is_system ? "the machine's own CUDA" : sel.tc.name,
                 sel.is_system ? "" : " at ", sel.is_system ? "" : sel.tc.prefix);
    return 0;
}

const cli_cmd cli_cmd_use = {
    .name = "use", .run = cmd_use,
    .summary = "switch this shell",
    .usage =
        "usage: cudaenv use VERSION|system | --unset\n"
        "       cudaenv use --for PYTHON [--framework tf|torch|jax] [--libs framework|toolchain]\n"
        "\n"
        "Switch the current shell (needs the shell function from cudaenv init).  VERSION\n"
        "is an installed toolchain or a spec (11.8 = newest installed 11.8.x, tf-2.14);\n"
        "system = the machine's own CUDA.  --unset (or: cudaenv deactivate) drops the\n"
        "shell selection, so .cuda-version / global apply again.  Exit 3: not installed.\n"
        "--for PYTHON uses the toolchain that Python's frameworks were built for (see\n"
        "install --for; it must be installed: cudaenv install --for PYTHON).  When that\n"
        "Python brings its own CUDA libraries (nvidia-* wheels, conda), the toolchain's\n"
        "lib64 stays off LD_LIBRARY_PATH (nvcc, CUDA_HOME, LIBRARY_PATH are the toolchain's),\n"
        "so one process never loads two copies of a library.  --libs toolchain: the\n"
        "toolchain's libraries instead (refused while the Python's own would still load).\n",
    .opts = cmd_use_opts, .max_pos = 1, .extra = "one VERSION only",
};

const cli_cmd cli_cmd_deactivate = {
    .name = "deactivate", .run = cmd_deactivate,
    .summary = "drop this shell's selection (use --unset)",
    .usage =
        "usage: cudaenv deactivate\n"
        "\n"
        "Drop the shell selection (what use set: CUDAENV_VERSION), so .cuda-version and the\n"
        "global default apply again; the same as use --unset.  Like use it changes the\n"
        "current shell, so it is the shell function's (eval \"$(cudaenv init bash)\");\n"
        "run as the program, it says so (exit 2).\n",
    .needs = CLI_NO_STORE,
};
