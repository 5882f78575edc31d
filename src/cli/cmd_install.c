/* cudaenv install SPEC... : lock, clean up after crashed runs, load the
 * manifest, resolve every spec (all before any download, so a typo in the
 * third spec costs nothing), then the pipeline in core/install.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "install/install.h"
#include "core/manifest.h"
#include "core/resolve.h"
#include "store/index.h"
#include "store/modulefile.h"
#include "store/store.h"

enum { OPT_CUDNN = 1, OPT_NO_CUDNN, OPT_FORCE, OPT_OFFLINE, OPT_FROM, OPT_COMPONENTS, OPT_MODULEFILES, OPT_MODULE_FORMAT };

static const cli_opt install_opts[] = {
    { "cudnn", 0, true, OPT_CUDNN },
    { "no-cudnn", 0, false, OPT_NO_CUDNN },
    { "force", 'f', false, OPT_FORCE },
    { "offline", 0, false, OPT_OFFLINE },
    { "from", 0, true, OPT_FROM },
    { "components", 0, true, OPT_COMPONENTS },
    { "modulefiles", 0, true, OPT_MODULEFILES },
    { "module-format", 0, true, OPT_MODULE_FORMAT },
    { 0 },
};

int cmd_install(cli *c, int argc, char **argv)
{
    const cli_cmd *cmd = cli_find_cmd("install");
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *arg, *cudnn = "", *moddir = NULL;
    ce_modfmt modfmt = CE_MODFMT_LMOD;
    bool no_cudnn = false;
    const char **specs = calloc((size_t)argc, sizeof *specs);
    size_t nspecs = 0;
    if (!specs) return 1;
    for (int id; (id = cli_next(c, &a, cmd, install_opts, &arg)) != CLI_END;) {
        switch (id) {
        case CLI_HELP: free(specs); return cli_help(cmd);
        case CLI_BAD: free(specs); return 2;
        case CLI_ARG: specs[nspecs++] = arg; break;
        case OPT_CUDNN: cudnn = arg; break;
        case OPT_NO_CUDNN: no_cudnn = true; break;
        case OPT_FORCE: c->ctx.force = true; break;
        case OPT_OFFLINE: c->ctx.offline = true; break;
        case OPT_FROM:
            if (strcmp(arg, "runfile") != 0 && strcmp(arg, "redist") != 0) {
                free(specs);
                return cli_usage_error(cmd, "--from takes runfile or redist, not '%s'", arg);
            }
            snprintf(c->ctx.install_from, sizeof c->ctx.install_from, "%s", arg);
            break;
        case OPT_COMPONENTS:
            if (strlen(arg) >= sizeof c->ctx.install_components) {
                free(specs);
                return cli_usage_error(cmd, "--components: the list is too long");
            }
            snprintf(c->ctx.install_components, sizeof c->ctx.install_components, "%s", arg);
            break;
        case OPT_MODULEFILES: moddir = arg; break;
        case OPT_MODULE_FORMAT:
            if (!ce_modfmt_parse(arg, &modfmt)) {
                free(specs);
                return cli_usage_error(cmd, "unknown module format '%s': use lmod or tcl", arg);
            }
            break;
        }
    }
    if (nspecs == 0) {
        free(specs);
        return cli_usage_error(cmd, "which toolchain? e.g. cudaenv install tf-2.14");
    }
    if (c->ctx.install_components[0] && strcmp(c->ctx.install_from, "runfile") == 0) {
        free(specs);
        return cli_usage_error(cmd, "--components chooses NVIDIA components; the runfile installs its own set");
    }
    if (no_cudnn && *cudnn) {
        free(specs);
        return cli_usage_error(cmd, "--cudnn and --no-cudnn contradict each other");
    }

    ce_store_txn txn = CE_STORE_TXN_INIT;
    int rc;
    ce_manifest *m = NULL;
    ce_resolved *r = calloc(nspecs, sizeof *r);
    if (!r) { free(specs); return 1; }
    if ((rc = ce_store_begin(&c->ctx, &txn)) != CE_OK) goto out;
    if ((rc = cli_load_manifest(c, &m)) != CE_OK) goto out;
    for (size_t i = 0; i < nspecs; i++) {
        ce_spec spec;
        if ((rc = ce_spec_parse(&c->ctx, specs[i], &spec)) != CE_OK) goto out;
        if (spec.kind == CE_SPEC_SYSTEM) {
            rc = ce_fail(&c->ctx, CE_ERR_NOTFOUND, "'system' is the machine's own CUDA; nothing to install");
            goto out;
        }
        if ((rc = ce_resolve(&c->ctx, m, &spec, cudnn, no_cudnn, &r[i])) != CE_OK) goto out;
    }
    cli_render_trap_interrupt(c);
    rc = ce_install(&c->ctx, m, r, nspecs);
    if (rc == CE_OK) ce_index_rebuild(&c->ctx, m);   /* tf-X resolves without the manifest */
    if (rc == CE_OK && moddir) /* still under the lock: no install races the listing */
        rc = ce_modulefile_write_all(&c->ctx, modfmt, moddir, NULL, NULL, NULL);
    if (rc == CE_OK && !c->ctx.quiet)
        cli_note(c, "use it: cudaenv use %s (this shell; needs eval \"$(cudaenv init bash)\"), "
                 "cudaenv exec %s -- CMD, cudaenv global %s (default)", r[0].name, r[0].name, r[0].name);
out:
    ce_store_end(&txn);
    ce_manifest_free(m);
    free(r);
    free(specs);
    return rc == CE_OK ? 0 : cli_fail(c, rc);
}
