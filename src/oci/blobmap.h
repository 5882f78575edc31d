/* Where this store last saw each blob on each registry, for cross-repository
 * mounts: pushing to HOST/B a blob that HOST/A holds (the toolchain came
 * from there, or was pushed there before) asks the registry to mount it from
 * A instead of uploading it again.  A text file in the store's cache
 * ($CUDAENV_ROOT/cache/oci-blobs), one "DIGEST HOST REPO" a line, the newest
 * last; started over past 256 KiB.  A hint only: a registry that declines
 * the mount gets the blob uploaded, and a failure to record is no error. */
#ifndef CE_OCI_BLOBMAP_H
#define CE_OCI_BLOBMAP_H

#include <stddef.h>

#include "core/ctx.h"

/* Note that host/repo holds digest. */
void ce_oci_blob_seen(ce_ctx *ctx, const char *digest, const char *host, const char *repo);
/* The repository of host, other than not_repo, that last held digest, into
 * out[n]: 1 found, 0 none. */
int ce_oci_blob_source(ce_ctx *ctx, const char *digest, const char *host, const char *not_repo, char *out, size_t n);

#endif
