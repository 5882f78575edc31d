/* cudaenv mirror SPEC... --to oci://REGISTRY/REPO: a set of toolchains into
 * a registry.  Each SPEC is installed here as install SPEC would install it
 * (what is installed already is kept), then pushed as REPO:<name> (its
 * toolchain name, '+' written '-', '@' written '_') and REPO:<spec> when the
 * spec is a tag of its own; the second tag of an unchanged image uploads
 * nothing (oci/oci.h).  Full binary only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"
#include "oci/oci.h"
#include "store/store.h"

/* a toolchain name or spec as a tag: [A-Za-z0-9_.-] */
static void tag_of(const char *name, char *out, size_t n)
{
    snprintf(out, n, "%s", name);
    for (char *p = out; *p; p++)
        if (*p == '+') *p = '-';
        else if (*p == '@') *p = '_';
        else if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", *p)) *p = '_';
}

static int push_tag(cli *c, const ce_oci_ref *base, const char *name, const char *tag_src)
{
    ce_oci_ref ref = *base;
    tag_of(tag_src, ref.tag, sizeof ref.tag);
    ce_oci_push_res res;
    int rc = ce_oci_push(&c->ctx, name, &ref, &res);
    if (rc == CE_OK && !c->ctx.quiet) {
        char mounted[64] = "";
        if (res.mounted) snprintf(mounted, sizeof mounted, ", %d mounted from another repository", res.mounted);
        cli_note(c, "%s -> oci://%s/%s:%s (%d blob%s uploaded, %d already there%s)", name, ref.host, ref.repo,
                 ref.tag, res.uploaded, res.uploaded == 1 ? "" : "s", res.skipped, mounted);
    }
    if (rc == CE_OK) cli_print("oci://%s/%s:%s@%s\n", ref.host, ref.repo, ref.tag, res.manifest_digest);
    return rc;
}

int cli_mirror_oci(cli *c, const char *to, const char **specs, size_t n)
{
    const char *tail = strrchr(to, '/');
    if (tail && (strchr(tail, ':') || strchr(tail, '@')))
        return cli_usage_error(c->cmd, "--to oci://REGISTRY/REPO takes no tag or digest: each toolchain is tagged "
                               "with its name");
    ce_oci_ref base;
    if (ce_oci_ref_parse(to, &base)) return cli_usage_error(c->cmd, "%s", ce_errmsg());
    if (n == 0) return cli_usage_error(c->cmd, "which toolchains? mirror SPEC... --to oci://REGISTRY/REPO");
    cli_args ia = { .pos = specs, .n = (int)n };   /* install SPEC..., no option of its own */
    bool quiet = c->ctx.quiet;
    int rc = cli_cmd_install.run(c, &ia);
    c->ctx.quiet = quiet;
    if (rc) return rc;
    ce_manifest *m = NULL;
    ce_store_txn txn = CE_STORE_TXN_INIT;
    if ((rc = cli_load_manifest(c, &m)) == CE_OK) rc = ce_store_begin(&c->ctx, &txn);
    for (size_t i = 0; i < n && rc == CE_OK; i++) {
        ce_spec spec;
        ce_resolved r;
        const char *dn = "";
        bool nd = false;
        char policy[32];
        if ((rc = ce_spec_parse(specs[i], &spec))) break;
        cli_cudnn_policy(c, &spec, &dn, &nd, policy, sizeof policy);
        if ((rc = ce_resolve(&c->ctx, m, &spec, dn, nd, &r))) break;
        rc = push_tag(c, &base, r.name, r.name);
        char a[160], b[160];
        tag_of(r.name, a, sizeof a);
        tag_of(specs[i], b, sizeof b);
        if (rc == CE_OK && strcmp(a, b) != 0) rc = push_tag(c, &base, r.name, specs[i]);
    }
    ce_store_end(&txn);
    ce_manifest_free(m);
    return rc ? cli_oci_fail(c, rc) : 0;
}
