/* cudaenv install oci://... (oci.h): manifest, config and layers verified
 * against their digests, the layers unpacked through install's archive
 * code and entry policy (archive/unpack.h) into a staging tree, the receipt
 * checked against the annotation, then one rename into versions/. */
#include "oci.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "core/rmtree.h"
#include "archive/unpack.h"
#include "blobmap.h"
#include "registry.h"
#include "store/receipt.h"
#include "store/store.h"
#include "store/usage.h"

/* .cudaenv-oci.json: where the toolchain came from, by digest. */
static int write_origin(const char *staging, const ce_oci_ref *ref, const char *text, const char *digest)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "reference", text);
    cJSON_AddStringToObject(o, "registry", ref->host);
    cJSON_AddStringToObject(o, "repository", ref->repo);
    cJSON_AddStringToObject(o, "digest", digest);
    char *s = o ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    if (!s) return ce_fail(CE_ERR_NOMEM, "out of memory");
    char path[CE_PATH_MAX];
    int rc = ce_join(path, sizeof path, staging, CE_OCI_ORIGIN_NAME);
    if (rc == CE_OK) rc = ce_file_write_atomic(path, s, strlen(s), 0644);
    free(s);
    return rc;
}

/* The image's layers into staging, each verified as it is read. */
static int unpack_layers(ce_ctx *ctx, ce_reg *reg, const ce_oci_image *img, const char *staging, long long *bytes)
{
    for (size_t i = 0; i < img->n_layers; i++) {
        const ce_oci_blob *l = &img->layers[i];
        char path[4200], url[4400];
        ce_emit(ctx, CE_EV_STEP, l->digest, "downloading layer %.19s (%lld bytes)", l->digest, l->size);
        int rc = ce_reg_blob_fetch(reg, l->digest, l->size, path, sizeof path);
        if (rc) return rc;
        snprintf(url, sizeof url, "%s/v2/%s/blobs/%s", reg->base, reg->ref.repo, l->digest);
        ce_emit(ctx, CE_EV_STEP, l->digest, "unpacking layer %.19s", l->digest);
        ce_unpack_src src = { .path = path, .label = url, .sha256 = l->digest + 7, .size = l->size };
        if ((rc = ce_unpack(ctx, &src, staging))) return rc;
        ce_oci_blob_seen(ctx, l->digest, reg->ref.host, reg->ref.repo);   /* a push elsewhere mounts it */
        *bytes += l->size;
    }
    return CE_OK;
}

int ce_oci_install(ce_ctx *ctx, const ce_oci_ref *ref, const char *text, ce_oci_pull_res *res)
{
    memset(res, 0, sizeof *res);
    char abs[4096];   /* the unpacker chdirs: store paths absolute (install.c) */
    if (ctx->root[0] != '/' && realpath(ctx->root, abs)) snprintf(ctx->root, sizeof ctx->root, "%s", abs);
    ce_reg reg;
    int rc = ce_reg_open(ctx, ref, ctx->insecure, &reg);
    char *body = NULL, *config = NULL;
    size_t len = 0, clen = 0;
    if (rc == CE_OK) rc = ce_reg_manifest_get(&reg, ce_oci_ref_name(ref), &body, &len, res->manifest_digest);
    if (rc) return rc;
    char where[4400];
    snprintf(where, sizeof where, "%s/v2/%s/manifests/%s", reg.base, ref->repo, res->manifest_digest);
    ce_oci_image img;
    rc = ce_oci_manifest_parse(body, where, &img);
    free(body);
    if (rc == CE_OK) rc = ce_reg_blob_get(&reg, img.config.digest, 1u << 20, &config, &clen);
    free(config);
    if (rc) return rc;
    res->meta = img.meta;
    char vdir[4200], staging[4200] = "";
    if ((rc = ce_store_path(ctx, "versions", vdir, sizeof vdir)) ||
        (rc = ce_join(res->prefix, sizeof res->prefix, vdir, img.meta.name)))
        return rc;
    if (ce_is_dir(res->prefix) && !ctx->force) {
        ce_oci_meta have;
        ce_quiet q;
        ce_quiet_begin(&q, false);
        int mrc = ce_oci_meta_read(res->prefix, &have);
        ce_quiet_end(&q);
        if (mrc == CE_OK && strcmp(have.receipt_sha256, img.meta.receipt_sha256) == 0) {
            res->already = true;
            return CE_OK;
        }
        return ce_fail(CE_ERR_USAGE, "%s is installed already, not from this image (its receipt differs): "
                       "uninstall it first, or install with --force to replace it", img.meta.name);
    }
    if ((rc = ce_mkdir_p(vdir, 0755)) || (rc = ce_store_staging(ctx, "versions", staging, sizeof staging)))
        return rc;
    rc = unpack_layers(ctx, &reg, &img, staging, &res->bytes);
    if (rc == CE_OK) ce_oci_blob_seen(ctx, img.config.digest, ref->host, ref->repo);   /* the cache exists now */
    char receipt[CE_PATH_MAX], got[CE_SHA256_HEX] = "";
    if (rc == CE_OK) rc = ce_join(receipt, sizeof receipt, staging, CE_RECEIPT_NAME);
    if (rc == CE_OK && !ce_exists(receipt))
        rc = ce_fail(CE_ERR_INTEGRITY, "%s holds no %s: not a cudaenv toolchain image", where, CE_RECEIPT_NAME);
    if (rc == CE_OK && (rc = ce_sha256_file(receipt, got)) == CE_OK && strcmp(got, img.meta.receipt_sha256) != 0)
        rc = ce_fail(CE_ERR_INTEGRITY, "%s: the receipt in the layers hashes to %s, the annotation "
                     "io.cudaenv.receipt.sha256 says %s: the image was altered; nothing installed", where, got,
                     img.meta.receipt_sha256);
    if (rc == CE_OK) {
        ce_oci_meta in;
        if ((rc = ce_oci_meta_read(staging, &in)) == CE_OK && strcmp(in.name, img.meta.name) != 0)
            rc = ce_fail(CE_ERR_INTEGRITY, "%s: its receipt names %s, its annotation %s", where, in.name,
                         img.meta.name);
        else if (rc == CE_OK && img.meta.tree_sha256[0] && strcmp(in.tree_sha256, img.meta.tree_sha256) != 0)
            rc = ce_fail(CE_ERR_INTEGRITY, "%s: the receipt's tree digest is %s, the annotation "
                         "io.cudaenv.tree_sha256 says %s: the image was altered; nothing installed", where,
                         in.tree_sha256[0] ? in.tree_sha256 : "(none)", img.meta.tree_sha256);
    }
    if (rc == CE_OK) rc = write_origin(staging, ref, text, res->manifest_digest);
    if (rc == CE_OK) {
        ce_quiet q;   /* list's inode record: a cache, never a failure */
        ce_quiet_begin(&q, false);
        ce_usage_record(staging);
        ce_quiet_end(&q);
        ce_fsync_dir(staging);
        rc = ce_store_commit(staging, res->prefix);
    }
    if (rc != CE_OK) {
        ce_quiet q;
        ce_quiet_begin(&q, false);
        ce_rm_tree(staging);
        ce_quiet_end(&q);
    }
    return rc;
}
