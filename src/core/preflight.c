#include "preflight.h"

/* Placeholder until the doctor module lands (issue 3). */
int ce_preflight_install(ce_ctx *ctx, const ce_cuda *cuda)
{
    (void)ctx; (void)cuda;
    return CE_OK;
}
