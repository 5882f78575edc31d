/* cudaenv push TOOLCHAIN oci://REG/REPO:TAG: a toolchain to an OCI registry
 * (oci/oci.h; pull and install oci://... in cmd_pull.c).  Full binary only
 * but for its table entry. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/error.h"
#include "oci/oci.h"
#include "store/store.h"

/* the light binary builds only the table entry at the end (cli.h: FULL_ONLY) */
#ifdef CE_FULL

int cli_oci_fail(cli *c, int rc)
{
    rc = ce_err_public(rc);
    cli_error(c, "%s", ce_errmsg()[0] ? ce_errmsg() : ce_err_name(rc));
    if (rc == CE_ERR_DOWNLOAD && !strstr(ce_errmsg(), "CUDAENV_REGISTRY_AUTH") && !strstr(ce_errmsg(), "refusing"))
        fprintf(stderr, "cudaenv: behind a proxy: export https_proxy=http://HOST:PORT; a registry serving plain "
                        "http: add --insecure; a private CA: CURL_CA_BUNDLE=FILE\n");
    return ce_exit_code(rc);
}

static int cmd_push(cli *c, const cli_args *a)
{
    ce_oci_ref ref;
    int rc = ce_oci_ref_parse(a->pos[1], &ref);
    if (rc) return cli_usage_error(c->cmd, "%s", ce_errmsg());
    ce_store_txn txn = CE_STORE_TXN_INIT;
    ce_oci_push_res res;
    if ((rc = ce_store_begin(&c->ctx, &txn)) == CE_OK) rc = ce_oci_push(&c->ctx, a->pos[0], &ref, &res);
    ce_store_end(&txn);
    if (rc) return cli_oci_fail(c, rc);
    char size[32];
    cli_size(size, sizeof size, (double)res.layer.size);
    if (!c->ctx.quiet) {
        char mounted[64] = "";
        if (res.mounted) snprintf(mounted, sizeof mounted, ", %d mounted from another repository", res.mounted);
        cli_note(c, "pushed %s: layer %s (%s, %lld entries), %d blob%s uploaded, %d already there%s",
                 res.meta.name, res.layer.digest, size, res.layer.entries, res.uploaded, res.uploaded == 1 ? "" : "s",
                 res.skipped, mounted);
        cli_note(c, "tree digest %s (io.cudaenv.tree_sha256: verify --report's tree_sha256 on a node running it)",
                 res.meta.tree_sha256);
        cli_note(c, "install it anywhere: cudaenv install oci://%s/%s@%s", ref.host, ref.repo, res.manifest_digest);
    }
    cli_print("oci://%s/%s:%s@%s\n", ref.host, ref.repo, ref.tag, res.manifest_digest);
    return 0;
}

#endif /* CE_FULL */

const cli_cmd cli_cmd_push = {
    .name = "push", .run = FULL_ONLY(cmd_push),
    .summary = "push a toolchain to an OCI registry as an image",
    .usage =
        "usage: cudaenv push TOOLCHAIN oci://REGISTRY/REPO:TAG [--insecure]\n"
        "\n"
        "Write the installed TOOLCHAIN (a name or spec of cudaenv list) to a registry as a\n"
        "standard OCI image: one gzip'd tar layer that unpacks to the toolchain tree\n"
        "(bin/, lib64/, include/, the receipt), a config, and a manifest annotated with the\n"
        "toolchain's name, its CUDA, cuDNN and NCCL versions, its receipt's sha256 and\n"
        "its tree digest (io.cudaenv.tree_sha256: the tree_sha256 cudaenv verify --report\n"
        "gives on every node running it; printed here).  The layer is deterministic (sorted entries, fixed times and\n"
        "owners), and a blob the registry has is not sent again: pushing an unchanged\n"
        "toolchain uploads no layer; a blob this store pushed to or installed from another\n"
        "repository of the registry is mounted from there (cross-repository mount), not\n"
        "sent again.  Prints oci://REGISTRY/REPO:TAG@sha256:DIGEST.\n"
        "Nodes install it by that digest: cudaenv install oci://REGISTRY/REPO@sha256:...;\n"
        "a Kubernetes image volume, skopeo, Apptainer or enroot can use the image as is.\n"
        "\n"
        "  --insecure   plain http:// to the registry (default https://, verified against\n"
        "               the system CAs or CURL_CA_BUNDLE)\n"
        "Credentials: CUDAENV_REGISTRY_AUTH=USER:PASSWORD, else the registry's entry in\n"
        "~/.docker/config.json (docker login); Basic and Bearer-token registries.\n",
    .min_pos = 2, .max_pos = 2,
    .missing = "which toolchain, and where? cudaenv push TOOLCHAIN oci://REGISTRY/REPO:TAG",
    .extra = "one toolchain and one reference (got %s and %s)",
};
