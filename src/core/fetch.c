#include "manifest.h"

/* Placeholder until the fetch module lands (issue 2). */
int ce_manifest_load_url(ce_ctx *ctx, const char *url, ce_manifest **out)
{
    (void)url;
    *out = NULL;
    return ce_fail(ctx, CE_ERR_OTHER, "fetch: not implemented yet");
}
