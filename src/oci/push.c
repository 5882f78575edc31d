/* cudaenv push (oci.h): the toolchain's layer, config and manifest, each
 * blob uploaded only when the registry lacks it. */
#include "oci.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blobmap.h"
#include "core/file.h"
#include "registry.h"
#include "store/store.h"

int ce_oci_push(ce_ctx *ctx, const char *name, const ce_oci_ref *ref, ce_oci_push_res *res)
{
    memset(res, 0, sizeof *res);
    if (ref->digest[0])
        return ce_fail(CE_ERR_USAGE, "push writes a tag: give oci://%s/%s:TAG, not a digest", ref->host, ref->repo);
    ce_toolchain tc;
    int rc = ce_store_find(ctx, name, &tc);
    if (rc) return rc;
    if ((rc = ce_oci_meta_read(tc.prefix, &res->meta))) return rc;
    if (!res->meta.name[0]) snprintf(res->meta.name, sizeof res->meta.name, "%s", tc.name);
    if (strcmp(res->meta.name, tc.name) != 0)
        return ce_fail(CE_ERR_INTEGRITY, "%s: the receipt names the toolchain %s: reinstall it", tc.prefix,
                       res->meta.name);
    char cache[4200];
    if ((rc = ce_store_path(ctx, "cache", cache, sizeof cache)) || (rc = ce_mkdir_p(cache, 0755))) return rc;
    ce_emit(ctx, CE_EV_STEP, tc.name, "packing %s", tc.prefix);
    if ((rc = ce_oci_layer_build(ctx, tc.prefix, cache, &res->layer))) return rc;
    char *config = ce_oci_config_json(&res->meta, res->layer.diff_id), *manifest = NULL;
    char cdigest[72] = "";
    ce_reg reg = { 0 };
    if (!config) rc = ce_fail(CE_ERR_NOMEM, "out of memory");
    if (rc == CE_OK) rc = ce_reg_open(ctx, ref, ctx->insecure, &reg);
    if (rc == CE_OK) {
        ce_sha256 *h = ce_sha256_new();
        char hex[CE_SHA256_HEX] = "";
        if (h) {
            ce_sha256_update(h, config, strlen(config));
            ce_sha256_final(h, hex);
            ce_sha256_free(h);
        }
        snprintf(cdigest, sizeof cdigest, "sha256:%s", hex);
        manifest = ce_oci_manifest_json(&res->meta, cdigest, (long long)strlen(config), res->layer.digest,
                                        res->layer.size);
        if (!h || !manifest) rc = ce_fail(CE_ERR_NOMEM, "out of memory");
    }
    /* a blob this store saw in another repository of the registry (the
     * toolchain's own image, an earlier push) is mounted from there */
    char from[2][256] = { "", "" };
    const char *digests[2] = { res->layer.digest, cdigest };
    for (int i = 0; rc == CE_OK && i < 2; i++)
        ce_oci_blob_source(ctx, digests[i], ref->host, ref->repo, from[i], sizeof from[i]);
    if (rc == CE_OK) {
        ce_emit(ctx, CE_EV_STEP, tc.name, "pushing %s to %s/%s:%s", tc.name, ref->host, ref->repo, ref->tag);
        rc = ce_reg_blob_put(&reg, res->layer.digest, res->layer.path, NULL, res->layer.size, from[0]);
    }
    if (rc == CE_OK) rc = ce_reg_blob_put(&reg, cdigest, NULL, config, (long long)strlen(config), from[1]);
    if (rc == CE_OK) rc = ce_reg_manifest_put(&reg, ref->tag, manifest, strlen(manifest), res->manifest_digest);
    for (int i = 0; rc == CE_OK && i < 2; i++) ce_oci_blob_seen(ctx, digests[i], ref->host, ref->repo);
    res->uploaded = reg.blobs_uploaded;
    res->skipped = reg.blobs_skipped;
    res->mounted = reg.blobs_mounted;
    if (res->layer.path[0]) unlink(res->layer.path);
    res->layer.path[0] = '\0';
    free(config);
    free(manifest);
    return rc;
}
