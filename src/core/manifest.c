#include "manifest.h"

/* Placeholder until the manifest module lands (issue 2). */
int ce_manifest_parse(ce_ctx *ctx, const char *text, size_t len, const char *origin,
                      bool local, ce_manifest **out)
{
    (void)text; (void)len; (void)origin; (void)local;
    *out = NULL;
    return ce_fail(ctx, CE_ERR_OTHER, "manifest: not implemented yet");
}
int ce_manifest_load_file(ce_ctx *ctx, const char *path, ce_manifest **out)
{
    (void)path;
    *out = NULL;
    return ce_fail(ctx, CE_ERR_OTHER, "manifest: not implemented yet");
}
void ce_manifest_free(ce_manifest *m) { (void)m; }
const ce_cuda *ce_manifest_cuda(const ce_manifest *m, const char *v) { (void)m; (void)v; return 0; }
const ce_cudnn *ce_manifest_cudnn(const ce_manifest *m, const char *v) { (void)m; (void)v; return 0; }
const ce_tf *ce_manifest_tf(const ce_manifest *m, const char *v) { (void)m; (void)v; return 0; }
const ce_artifact *ce_artifact_for(const ce_artifact *l, size_t n, const char *p) { (void)l; (void)n; (void)p; return 0; }
const ce_artifact *ce_cudnn_archive(const ce_cudnn *c, int M, const char *p) { (void)c; (void)M; (void)p; return 0; }
