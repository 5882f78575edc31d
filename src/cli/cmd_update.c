/* cudaenv update: refresh the manifest from its source (a remote manifest's
 * local copy: manifest/copy.h, install/manifest_fetch.h), replace it
 * atomically after every check, and say what changed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "install/manifest_fetch.h"
#include "manifest/copy.h"
#include "manifest/diff.h"
#include "manifest/source.h"
#include "store/store.h"

/* the light binary builds only the table entry at the end (cli.h: FULL_ONLY) */
#ifdef CE_FULL

/* The built-in manifest, quietly (NULL when it cannot be read). */
static ce_manifest *builtin(cli *c)
{
    char path[4200];
    ce_manifest *m = NULL;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    if (ce_builtin_manifest(&c->ctx, path, sizeof path) != CE_OK || ce_manifest_load_file(&c->ctx, path, &m) != CE_OK)
        m = NULL;
    ce_quiet_end(&q);
    return m;
}

static void print_changes(const ce_manifest *old, const ce_manifest *m)
{
    ce_mchange *v = NULL;
    size_t n = 0;
    ce_manifest_diff(old, m, &v, &n);
    static const char *const kind[] = { "new", "removed", "changed" };
    for (size_t i = 0; i < n; i++)
        cli_print("  %-8s %s %s%s%s\n", kind[v[i].kind], v[i].what, v[i].key, v[i].detail[0] ? ": " : "",
               v[i].detail);
    if (!n) cli_print("  (no TensorFlow, PyTorch, JAX, CUDA or cuDNN entry changed)\n");
    free(v);
}

/* The index follows the new copy now, when the store is free (else the
 * next command that resolves a tf- spec does it). */
static void reindex(cli *c)
{
    ce_quiet q;
    ce_quiet_begin(&q, true);
    ce_store_txn txn = CE_STORE_TXN_INIT;
    ce_toolchain *v = NULL;
    size_t n = 0;
    if (ce_store_list(&c->ctx, &v, &n) == CE_OK && n && ce_store_try_begin(&c->ctx, &txn) == CE_OK)
        ce_store_index_refresh(&c->ctx);
    ce_store_end(&txn);
    free(v);
    ce_quiet_end(&q);
}

static int cmd_update(cli *c, const cli_args *a)
{
    (void)a;
    ce_msource src;
    int rc = ce_manifest_source(&c->ctx, &src);
    if (rc) return cli_fail(c, rc);
    if (!src.remote) {
        ce_manifest *m = NULL;
        if ((rc = ce_manifest_load_source(&c->ctx, &src, &m))) return cli_fail(c, rc);
        cli_print("the manifest is %s%s (dated %s): a local file, nothing to fetch\n", src.builtin ? "the built-in " : "",
               src.origin, m->updated ? m->updated : "?");
        cli_note(c, "to follow a published manifest: CUDAENV_MANIFEST=https://HOST/cudaenv.json cudaenv update");
        ce_manifest_free(m);
        return 0;
    }
    ce_manifest *old = NULL, *m = NULL;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    if (ce_manifest_load_source(&c->ctx, &src, &old) != CE_OK) old = NULL;
    ce_quiet_end(&q);
    bool had_copy = old != NULL;
    if (!old) old = builtin(c);
    ce_mrefresh res;
    rc = ce_manifest_refresh(&c->ctx, &src, true, &res);
    if (rc == CE_OK) rc = ce_manifest_load_source(&c->ctx, &src, &m);
    if (rc) {
        ce_manifest_free(old);
        if (had_copy) cli_note(c, "the local copy of the manifest is unchanged");
        return cli_fail(c, rc);
    }
    ce_mcopy_meta meta;
    if (ce_mcopy_meta_read(&src, &meta) != CE_OK) memset(&meta, 0, sizeof meta);
    const char *signer = meta.signed_by[0] ? meta.signed_by : "unsigned";
    if (res == CE_MREFRESH_NEW) {
        cli_print("updated the manifest %s: %s -> %s (%s: %s)\n", src.origin,
               old && old->updated ? old->updated : "none", m->updated ? m->updated : "?",
               meta.signed_by[0] ? "signed by" : "signature", signer);
        if (!had_copy) cli_print("  (compared with the built-in manifest)\n");
        print_changes(old, m);
        reindex(c);
    } else {
        cli_print("the manifest %s is current (dated %s)\n", src.origin, m->updated ? m->updated : "?");
    }
    ce_manifest_free(old);
    ce_manifest_free(m);
    return 0;
}

#endif /* CE_FULL */

const cli_cmd cli_cmd_update = {
    .name = "update", .run = FULL_ONLY(cmd_update),
    .summary = "refresh the manifest from its source",
    .usage =
        "usage: cudaenv update\n"
        "\n"
        "Fetch the manifest again from the URL in use (CUDAENV_MANIFEST / --manifest),\n"
        "with a conditional request (ETag / Last-Modified), check it and replace the\n"
        "local copy in $CUDAENV_ROOT/manifests atomically, then say what changed: new\n"
        "TensorFlow rows and PyTorch/JAX builds, new CUDA and cuDNN releases, corrected\n"
        "values.  Refused (exit 5, the copy kept): an invalid manifest, one not signed by\n"
        "a trusted key (unless\n"
        "CUDAENV_MANIFEST_UNSIGNED=1), one dated before the copy it would replace (or,\n"
        "signed by the project, before the built-in manifest; a site's gets a warning).\n"
        "env, use, exec and the cd hook only ever read the local copy;\n"
        "install, info and list-remote refresh it when it is older than\n"
        "CUDAENV_UPDATE_INTERVAL seconds (default 86400).  With a local manifest file\n"
        "there is nothing to fetch.\n",
};
