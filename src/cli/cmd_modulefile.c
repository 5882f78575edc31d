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

static const cli_opt cmd_modulefile_opts[] = {
    { "all", 'a', false, OPT_ALL },
    { "format", 0, true, OPT_FORMAT },
    { "to", 0, true, OPT_TO },
    { 0 },
};

static int cmd_modulefile(cli *c, const cli_args *a)
{
    const cli_cmd *cmd = c->cmd;
    const char *version = a->n ? a->pos[0] : NULL, *dir = a->opt[OPT_TO], *format = a->opt[OPT_FORMAT];
    bool all = cli_on(a, OPT_ALL);
    ce_modfmt fmt = CE_MODFMT_LMOD;
    if (format && !ce_modfmt_parse(format, &fmt))
        return cli_usage_error(cmd, "unknown format '%s': use lmod or tcl", format);
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
        if ((rc = ce_modulefile_render(&tc, fmt, &text))) return cli_fail(c, rc);
        fputs(text, stdout);
        free(text);
        return 0;
    }
    char path[4600];
    if ((rc = ce_modulefile_write(&tc, fmt, dir, path, sizeof path, NULL))) return cli_fail(c, rc);
    printf("%s\n", path);
    return 0;
}

const cli_cmd cli_cmd_modulefile = {
    .name = "modulefile", .run = cmd_modulefile,
    .summary = "module files for Lmod / Environment Modules",
    .usage =
        "usage: cudaenv modulefile VERSION|--all [--format lmod|tcl] [--to DIR]\n"
        "\n"
        "Write a module file per toolchain so `module load cuda/<name>` applies what\n"
        "cudaenv use does: <prefix>/bin and <prefix>/lib64 first in PATH and LD_LIBRARY_PATH,\n"
        "<prefix>/lib64 and lib64/stubs first in LIBRARY_PATH (gcc -lcudart, -lcuda),\n"
        "CUDA_HOME, CUDA_PATH and CUDNN_PATH set; family(\"cuda\") / conflict cuda, so one\n"
        "is loaded at a time; whatis names CUDA, cuDNN and the TensorFlow releases.\n"
        "Add DIR to MODULEPATH (module use DIR).\n"
        "\n"
        "  --format F  lmod: DIR/cuda/<name>.lua (default); tcl: DIR/cuda/<name>, read by\n"
        "              Environment Modules and Lmod\n"
        "  --to DIR    write DIR/cuda/<name>[.lua] (prints the path); without it, print the\n"
        "              module file of VERSION on stdout\n"
        "  --all       every installed toolchain, and remove the files cudaenv wrote for\n"
        "              toolchains no longer installed (install --modulefiles DIR does this);\n"
        "              prints \"N module files in DIR/cuda: N changed, N removed\"; files whose\n"
        "              text is current are not rewritten\n",
    .opts = cmd_modulefile_opts, .max_pos = 1, .extra = "one VERSION only (or --all)",
};
