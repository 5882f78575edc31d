/* cudaenv use VERSION|system: switch the current shell.  A process cannot
 * change its parent's environment, so the shell function from `cudaenv init`
 * runs `cudaenv use --shell SH VERSION` and evals what it prints; run
 * directly, use checks VERSION and explains how to set up the integration. */
#include <stdlib.h>
#include <string.h>

#include "store/activate.h"
#include "cli.h"

enum { OPT_SHELL = 1 };

static const cli_opt opts[] = {
    { "shell", 0, true, OPT_SHELL },
    { 0 },
};

int cmd_use(cli *c, int argc, char **argv)
{
    const cli_cmd *cmd = cli_find_cmd("use");
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *arg, *version = NULL;
    int sh = -1, id;
    while ((id = cli_next(c, &a, cmd, opts, &arg)) != CLI_END) {
        switch (id) {
        case CLI_HELP: return cli_help(cmd);
        case CLI_BAD: return 2;
        case OPT_SHELL:
            if ((sh = ce_shell_parse(arg)) < 0 || sh == CE_SH_JSON)
                return cli_usage_error(cmd, "unknown shell '%s' (bash, zsh, fish)", arg);
            break;
        case CLI_ARG:
            if (version) return cli_usage_error(cmd, "one VERSION only");
            version = arg;
            break;
        }
    }
    if (!version) return cli_usage_error(cmd, "which toolchain? (cudaenv list shows the installed ones)");
    ce_active_info sel;
    memset(&sel, 0, sizeof sel);
    sel.origin = CE_ORIGIN_SHELL;
    int rc = ce_select(&c->ctx, version, &sel);
    if (rc) return cli_fail(c, rc);
    if (sh < 0) {
        cli_error(c, "use changes the current shell and needs the shell integration; add to ~/.bashrc:\n"
                     "    eval \"$(cudaenv init bash)\"   (zsh: init zsh; fish: cudaenv init fish | source)\n"
                     "or, for this shell only: eval \"$(cudaenv env %s)\"", version);
        return 1;
    }
    ce_env env;
    char *text;
    if ((rc = ce_env_compute(&c->ctx, &sel, true, &env))) return cli_fail(c, rc);
    rc = ce_env_format(&c->ctx, &env, &sel, (ce_shell)sh, &text);
    ce_env_free(&env);
    if (rc) return cli_fail(c, rc);
    fputs(text, stdout);
    free(text);
    if (!c->ctx.quiet)
        cli_note(c, "using %s%s%s", sel.is_system ? "the machine's own CUDA" : sel.tc.name,
                 sel.is_system ? "" : " at ", sel.is_system ? "" : sel.tc.prefix);
    return 0;
}
