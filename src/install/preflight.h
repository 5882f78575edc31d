/* Install preflight (issue 3): before downloading, check that the target
 * CUDA release can run here (driver minimum, GPU compute capability) and warn
 * about the host gcc.  No driver at all is a note, not an error.  Returns
 * CE_ERR_CHECK (exit 7) with the reason when the toolkit cannot run, unless
 * ctx->force. */
#ifndef CE_PREFLIGHT_H
#define CE_PREFLIGHT_H

#include "core/ctx.h"
#include "core/manifest.h"

int ce_preflight_install(ce_ctx *ctx, const ce_cuda *cuda);

#endif
