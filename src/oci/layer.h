/* A toolchain tree as one OCI layer: a gzip'd tar whose entries unpack to
 * the tree itself (bin/nvcc, lib64/..., the receipt), so a Kubernetes image
 * volume, skopeo copy ... dir: + tar, Apptainer or enroot see the toolchain
 * without cudaenv.  Deterministic: entries in byte order of their paths,
 * uid/gid 0, no user or group names, one fixed mtime, permissions as in the
 * tree without setuid/setgid/sticky bits, hardlinks stored as files, no
 * gzip timestamp: the same tree gives the same digest, so a second push
 * uploads nothing.  The store's inode record (.cudaenv-usage) and an adopted
 * toolkit's marker (.cudaenv-adopted) and a pulled one's origin
 * (.cudaenv-oci.json) are left out: they describe this
 * machine's disk; an adopted toolkit's links to its directory are followed
 * (the layer holds the toolkit's tree).  Full binary only. */
#ifndef CE_OCI_LAYER_H
#define CE_OCI_LAYER_H

#include "core/ctx.h"

#define CE_OCI_LAYER_MT "application/vnd.oci.image.layer.v1.tar+gzip"
#define CE_OCI_LAYER_MTIME 946684800   /* 2000-01-01T00:00:00Z */

typedef struct ce_oci_layer {
    char path[4200];        /* the .tar.gz written (the caller removes it) */
    char digest[72];        /* sha256 of the compressed bytes: the blob's digest */
    char diff_id[72];       /* sha256 of the tar: the config's rootfs.diff_ids */
    long long size;         /* compressed bytes */
    long long entries;
} ce_oci_layer;

/* Write the layer of tree into a new file under dir.  CE_ERR_IO naming the
 * file that could not be read or written, CE_ERR_OTHER for a device, FIFO or
 * socket in the tree. */
int ce_oci_layer_build(ce_ctx *ctx, const char *tree, const char *dir, ce_oci_layer *out);

#endif
