/* cudaenv use VERSION|system: switch the current shell.  A process cannot
 * change its parent's environment, so the shell function from `cudaenv init`
 * runs `cudaenv use --shell SH VERSION` and evals what it prints; run
 * directly, use checks VERSION and explains how to set up the integration. */
#include <stdlib.h>
#include <string.h>

#include "store/activate.h"
#include "cli.h"

enum { OPT_SHELL = 1 };

const cli_opt cmd_use_opts[] = {
    { "shell", 0, true, OPT_SHELL },
    { 0 },
};

int cmd_use(cli *c, const cli_args *a)
{
    const char *shell = a->opt[OPT_SHELL], *version = a->pos[0];
    int sh = -1;
    if (shell && ((sh = ce_shell_parse(shell)) < 0 || sh == CE_SH_JSON))
        return cli_usage_error(c->cmd, "unknown shell '%s' (bash, zsh, fish)", shell);
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
    if ((rc = cli_print_env(c, &sel, true, true, sh))) return rc;
    if (!c->ctx.quiet)
        cli_note(c, "using %s%s%s", sel.is_system ? "the machine's own CUDA" : sel.tc.name,
                 sel.is_system ? "" : " at ", sel.is_system ? "" : sel.tc.prefix);
    return 0;
}
