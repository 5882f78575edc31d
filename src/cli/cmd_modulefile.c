/* cudaenv modulefile [VERSION|--all] [--format lmod|tcl] [--to DIR]:
 * module files for Lmod / Environment Modules (store/modulefile.h).  Without
 * --to, one module file is printed on stdout. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "store/modulefile.h"
#include "store/store.h"

enum { OPT_ALL = 1, OPT_FORMAT, OPT_TO };

static const cli_opt opts[] = {
    { "all", 'a', false, OPT_ALL },
    { "format", 0, true, OPT_FORMAT },
    { "to", 0, true, OPT_TO },
    { 0 },
};

int cmd_modulefile(cli *c, int argc, char **argv)
{
    const cli_cmd *cmd = cli_find_cmd("modulefile");
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *arg, *version = NULL, *dir = NULL;
    bool all = false;
    ce_modfmt fmt = CE_MODFMT_LMOD;
    int id;
    while ((id = cli_next(c, &a, cmd, opts, &arg)) != CLI_END) {
        switch (id) {
        case CLI_HELP: return cli_help(cmd);
        case CLI_BAD: return 2;
        case OPT_ALL: all = true; break;
        case OPT_TO: dir = arg; break;
        case OPT_FORMAT:
            if (!ce_modfmt_parse(arg, &fmt))
                return cli_usage_error(cmd, "unknown format '%s': use lmod or tcl", arg);
            break;
        case CLI_ARG:
            if (version) return cli_usage_error(cmd, "one VERSION only (or --all)");
            version = arg;
            break;
        }
    }
    if (all == (version != NULL))
        return cli_usage_error(cmd, all ? "VERSION and --all contradict each other"
                                        : "which toolchain? a VERSION, or --all");
    if (all && !dir) return cli_usage_error(cmd, "--all needs --to DIR");
    int rc;
    if (all) {
        size_t nw, nc, nr;
        if ((rc = ce_modulefile_write_all(&c->ctx, fmt, dir, &nw, &nc, &nr))) return cli_fail(c, rc);
        /* stdout, one line, for scripts and configuration management */
        printf("%zu module file%s in %s/cuda: %zu changed, %zu removed\n", nw, nw == 1 ? "" : "s", dir, nc, nr);
        if (nw == 0) cli_note(c, "no toolchains installed; run: cudaenv install SPEC");
        return 0;
    }
    ce_toolchain tc;
    if ((rc = ce_store_find(&c->ctx, version, &tc))) return cli_fail(c, rc);
    if (!dir) {
        char *text;
        if ((rc = ce_modulefile_render(&c->ctx, &tc, fmt, &text))) return cli_fail(c, rc);
        fputs(text, stdout);
        free(text);
        return 0;
    }
    char path[4600];
    if ((rc = ce_modulefile_write(&c->ctx, &tc, fmt, dir, path, sizeof path, NULL))) return cli_fail(c, rc);
    printf("%s\n", path);
    return 0;
}
