/* Toolchains as OCI images: push an installed toolchain to a registry,
 * install one from there (the image's format: image.h, layer.h; the wire:
 * registry.h).  The caller holds the store's transaction (ce_store_begin).
 * Full binary only. */
#ifndef CE_OCI_H
#define CE_OCI_H

#include <stdbool.h>

#include "core/ctx.h"
#include "image.h"
#include "layer.h"
#include "ref.h"

typedef struct ce_oci_push_res {
    char manifest_digest[72];
    ce_oci_layer layer;             /* path "" again once uploaded */
    ce_oci_meta meta;
    int uploaded, skipped;          /* blobs sent / blobs the registry had (layer + config) */
    int mounted;                    /* blobs mounted from another repository of the registry */
} ce_oci_push_res;

/* Push the installed toolchain name (an installed spec: "11.8", the exact
 * name) to ref, which must carry a tag; ctx->insecure: http://. */
int ce_oci_push(ce_ctx *ctx, const char *name, const ce_oci_ref *ref, ce_oci_push_res *res);

typedef struct ce_oci_pull_res {
    char manifest_digest[72];
    ce_oci_meta meta;
    char prefix[4200];              /* versions/<name> */
    bool already;                   /* installed before, from the same receipt: nothing done */
    long long bytes;                /* layer bytes (compressed) */
} ce_oci_pull_res;

/* Install the toolchain image ref names: the manifest (by its digest from
 * here on), the config and every layer verified against their digests, the
 * layers unpacked under install's entry policy into a staging tree, its
 * receipt checked against the annotation, then committed as
 * versions/<name> with .cudaenv-oci.json (the reference and the manifest
 * digest) beside the receipt.  Already installed with the same receipt:
 * nothing (unless ctx->force).  Nothing is left behind on a failure. */
int ce_oci_install(ce_ctx *ctx, const ce_oci_ref *ref, const char *text, ce_oci_pull_res *res);

#endif
