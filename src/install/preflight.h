/* Install preflight (issue 3): before downloading, check that the target
 * CUDA release can run here (driver minimum, GPU compute capability) and warn
 * about the host gcc.  No driver at all is a note, not an error.  Returns
 * CE_ERR_CHECK (exit 7) with the reason when the toolkit cannot run, unless
 * ctx->force. */
#ifndef CE_PREFLIGHT_H
#define CE_PREFLIGHT_H

#include "core/ctx.h"
#include "manifest/manifest.h"

int ce_preflight_install(ce_ctx *ctx, const ce_cuda *cuda);

/* Unpacked size estimates for the free-space preflight: a CUDA runfile
 * unpacks to about 2.5x its size (4.3 GB -> ~10 GB with the installer's own
 * temporary copy), an xz cuDNN tarball to about 2x. */
#define CE_RUNFILE_UNPACK_FACTOR 2.5
#define CE_TARBALL_UNPACK_FACTOR 2.0

#endif
