/* The OCI image of a toolchain: its config and manifest as cudaenv writes
 * them, and a manifest read back.  Annotations on the manifest (and the
 * same as the config's labels):
 *   io.cudaenv.toolchain       the toolchain's name ("11.8.0+cudnn8.7.0.84")
 *   io.cudaenv.spec            the spec that installs it (its name)
 *   io.cudaenv.cuda, .cudnn, .nccl, .platform, .profile, .tensorflow
 *   io.cudaenv.tree_sha256     the toolchain's tree digest (store/receipt.h:
 *                              ce_receipt_tree_sha256), the tree_sha256 that
 *                              `verify --report` gives on every node running it
 *   io.cudaenv.receipt.sha256  sha256 of its .cudaenv-receipt.json (the bytes
 *                              install oci:// checks the layers' receipt by)
 *   org.opencontainers.image.title
 * No creation time: the same toolchain gives the same manifest digest.
 * Full binary only. */
#ifndef CE_OCI_IMAGE_H
#define CE_OCI_IMAGE_H

#include <stddef.h>

#include "core/ctx.h"
#include "fetch/digest.h"

#define CE_OCI_CONFIG_MT "application/vnd.oci.image.config.v1+json"
#define CE_OCI_MAX_LAYERS 16
/* beside the receipt of a toolchain installed from an image: the reference and
 * the manifest digest (oci.h) */
#define CE_OCI_ORIGIN_NAME ".cudaenv-oci.json"

typedef struct ce_oci_meta {
    char name[96], cuda[32], cudnn[32], nccl[32], platform[32], profile[32];
    char tensorflow[256];           /* "2.14,2.15" */
    char receipt_sha256[CE_SHA256_HEX];
    char tree_sha256[CE_SHA256_HEX];   /* "" read from an image pushed before it was annotated */
} ce_oci_meta;

/* The toolchain at prefix, from its receipt (which must be there: CE_ERR_NOTFOUND). */
int ce_oci_meta_read(const char *prefix, ce_oci_meta *m);

/* malloc'ed JSON texts (NULL: out of memory). */
char *ce_oci_config_json(const ce_oci_meta *m, const char *diff_id);
char *ce_oci_manifest_json(const ce_oci_meta *m, const char *config_digest, long long config_size,
                           const char *layer_digest, long long layer_size);

typedef struct ce_oci_blob {
    char digest[72];
    long long size;
} ce_oci_blob;

typedef struct ce_oci_image {
    ce_oci_blob config;
    ce_oci_blob layers[CE_OCI_MAX_LAYERS];
    size_t n_layers;
    ce_oci_meta meta;               /* from the annotations */
} ce_oci_image;

/* Read a manifest (where: its URL, for messages).  CE_ERR_INTEGRITY when it
 * is not an image manifest of tar layers, lacks cudaenv's annotations (the
 * tree digest may be absent: images pushed before it; present, it must be a
 * sha256), or names a toolchain by a name that is not one. */
int ce_oci_manifest_parse(const char *text, const char *where, ce_oci_image *out);

#endif
