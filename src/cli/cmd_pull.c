/* cudaenv pull oci://... and install oci://...: toolchain images from an
 * OCI registry (oci/oci.h).  Full binary only but for its table entry. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "oci/oci.h"
#include "store/store.h"

/* the light binary builds only the table entry at the end (cli.h: FULL_ONLY) */
#ifdef CE_FULL

enum { OPT_FORCE = 1 };

static const cli_opt cmd_pull_opts[] = {
    { "force", 'f', false, OPT_FORCE },
    { 0 },
};

/* install oci://... and pull oci://...: one reference at a time. */
int cli_oci_install(cli *c, const char *const *refs, size_t n)
{
    int rc = CE_OK;
    for (size_t i = 0; i < n && rc == CE_OK; i++) {
        ce_oci_ref ref;
        if (ce_oci_ref_parse(refs[i], &ref)) return cli_usage_error(c->cmd, "%s", ce_errmsg());
    }
    ce_store_txn txn = CE_STORE_TXN_INIT;
    if ((rc = ce_store_begin(&c->ctx, &txn)) != CE_OK) {
        ce_store_end(&txn);
        return cli_oci_fail(c, rc);
    }
    cli_render_trap_interrupt(c);
    for (size_t i = 0; i < n && rc == CE_OK; i++) {
        ce_oci_ref ref;
        ce_oci_pull_res res;
        ce_oci_ref_parse(refs[i], &ref);
        if ((rc = ce_oci_install(&c->ctx, &ref, refs[i], &res)) != CE_OK) break;
        if (c->ctx.quiet) continue;
        if (res.already)
            cli_note(c, "%s is installed already, from the same receipt (image %s)", res.meta.name, res.manifest_digest);
        else
            cli_note(c, "installed %s in %s from %s (image %s, %lld layer bytes verified)", res.meta.name, res.prefix,
                     refs[i], res.manifest_digest, res.bytes);
        cli_note(c, "use it: cudaenv use %s, cudaenv exec %s -- CMD", res.meta.name, res.meta.name);
    }
    if (rc == CE_OK) ce_store_index_refresh(&c->ctx);
    ce_store_end(&txn);
    return rc == CE_OK ? 0 : cli_oci_fail(c, rc);
}

static int cmd_pull(cli *c, const cli_args *a)
{
    c->ctx.force = c->ctx.force || cli_on(a, OPT_FORCE);
    for (int i = 0; i < a->n; i++)
        if (!ce_oci_is_ref(a->pos[i]))
            return cli_usage_error(c->cmd, "'%s' is not an oci:// reference (install SPEC installs from the manifest)",
                                   a->pos[i]);
    return cli_oci_install(c, a->pos, (size_t)a->n);
}

#endif /* CE_FULL */

const cli_cmd cli_cmd_pull = {
    .name = "pull", .run = FULL_ONLY(cmd_pull),
    .summary = "install a toolchain image from an OCI registry",
    .usage =
        "usage: cudaenv pull oci://REGISTRY/REPO:TAG|oci://REGISTRY/REPO@sha256:DIGEST... [--force]\n"
        "                    [--insecure]\n"
        "\n"
        "The same as cudaenv install oci://...: read the image's manifest (then used by\n"
        "its digest), check the config and every layer against their sha256 digests\n"
        "while downloading (into the download cache: a layer there is not fetched again),\n"
        "unpack the layers under install's archive rules (no absolute or .. paths, no\n"
        "devices, no setuid) into a staging tree, check its receipt against the\n"
        "io.cudaenv.receipt.sha256 and io.cudaenv.tree_sha256 annotations, then install\n"
        "it as versions/<name> with\n"
        ".cudaenv-oci.json naming the reference and the manifest digest.  A digest that\n"
        "does not match is exit 5 with nothing installed.  Installed already from the\n"
        "same receipt: nothing to do; from another: exit 2 unless --force.\n"
        "\n"
        "  --force      replace a toolchain of the same name\n"
        "  --insecure   plain http:// to the registry\n",
    .opts = FULL_ONLY(cmd_pull_opts), .min_pos = 1, .max_pos = -1,
    .missing = "which image? cudaenv pull oci://REGISTRY/REPO:TAG",
};
