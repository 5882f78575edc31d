/* cudaenv install SPEC... : lock, clean up after crashed runs, load the
 * manifest, resolve every spec (all before any download, so a typo in the
 * third spec costs nothing), then the pipeline in core/install.c. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "install/install.h"
#include "core/manifest.h"
#include "core/resolve.h"
#include "store/index.h"
#include "store/store.h"

enum { OPT_CUDNN = 1, OPT_NO_CUDNN, OPT_FORCE, OPT_OFFLINE };

static const cli_opt install_opts[] = {
    { "cudnn", 0, true, OPT_CUDNN },
    { "no-cudnn", 0, false, OPT_NO_CUDNN },
    { "force", 'f', false, OPT_FORCE },
    { "offline", 0, false, OPT_OFFLINE },
    { 0 },
};

int cmd_install(cli *c, int argc, char **argv)
{
    const cli_cmd *cmd = cli_find_cmd("install");
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *arg, *cudnn = "";
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
        }
    }
    if (nspecs == 0) {
        free(specs);
        return cli_usage_error(cmd, "which toolchain? e.g. cudaenv install tf-2.14");
    }
    if (no_cudnn && *cudnn) {
        free(specs);
        return cli_usage_error(cmd, "--cudnn and --no-cudnn contradict each other");
    }

    int lock = -1, rc;
    ce_manifest *m = NULL;
    ce_resolved *r = calloc(nspecs, sizeof *r);
    if (!r) { free(specs); return 1; }
    if ((rc = ce_store_lock(&c->ctx, &lock)) != CE_OK) goto out;
    if ((rc = ce_store_clean_staging(&c->ctx)) < 0) goto out;
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
    rc = ce_install(&c->ctx, m, r, nspecs);
    if (rc == CE_OK) ce_index_rebuild(&c->ctx, m);   /* tf-X resolves without the manifest */
out:
    ce_store_unlock(lock);
    ce_manifest_free(m);
    free(r);
    free(specs);
    return rc == CE_OK ? 0 : cli_fail(c, rc);
}
