#include "resolve.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "version.h"

void ce_toolchain_name(char *out, unsigned outsz, const char *cuda, const char *cudnn)
{
    if (cudnn && *cudnn)
        snprintf(out, outsz, "%s+cudnn%s", cuda, cudnn);
    else
        snprintf(out, outsz, "%s", cuda);
}

static int bad_spec(ce_ctx *ctx, const char *text)
{
    return ce_fail(ctx, CE_ERR_NOTFOUND,
                   "'%s' is not a version spec; use tf-2.14, tensorflow-2.14.1, 11.8, 11.8.0, cuda-11.8 "
                   "(optionally +cudnn8.7); see: cudaenv list-remote", text);
}

int ce_spec_parse(ce_ctx *ctx, const char *text, ce_spec *out)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text || strlen(text) >= sizeof out->text)
        return bad_spec(ctx, text ? text : "");
    snprintf(out->text, sizeof out->text, "%s", text);
    if (strcmp(text, "system") == 0) {
        out->kind = CE_SPEC_SYSTEM;
        return CE_OK;
    }
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    char *plus = strstr(buf, "+cudnn");
    if (plus) {
        *plus = '\0';
        const char *cv = plus + 6;
        if (*cv == '-' || *cv == '=') cv++;
        if (!ce_version_valid(cv) || strlen(cv) >= sizeof out->cudnn)
            return bad_spec(ctx, text);
        snprintf(out->cudnn, sizeof out->cudnn, "%s", cv);
    }
    const char *v = buf;
    out->kind = CE_SPEC_CUDA;
    static const char *tf_prefixes[] = { "tensorflow==", "tensorflow-", "tensorflow", "tf-", "tf" };
    static const char *cuda_prefixes[] = { "cuda-", "cuda" };
    for (size_t i = 0; i < sizeof tf_prefixes / sizeof *tf_prefixes; i++) {
        size_t n = strlen(tf_prefixes[i]);
        if (strncasecmp(v, tf_prefixes[i], n) == 0) {
            v += n;
            out->kind = CE_SPEC_TF;
            break;
        }
    }
    if (out->kind == CE_SPEC_CUDA) {
        for (size_t i = 0; i < sizeof cuda_prefixes / sizeof *cuda_prefixes; i++) {
            size_t n = strlen(cuda_prefixes[i]);
            if (strncasecmp(v, cuda_prefixes[i], n) == 0) {
                v += n;
                break;
            }
        }
    }
    if (!ce_version_valid(v) || strlen(v) >= sizeof out->version)
        return bad_spec(ctx, text);
    if (out->kind == CE_SPEC_TF) {
        /* TensorFlow keys are MAJOR.MINOR: 2.14.1 -> 2.14 */
        if (!strchr(v, '.')) return bad_spec(ctx, text);
        ce_version_prefix(v, 2, out->version, sizeof out->version);
    } else {
        snprintf(out->version, sizeof out->version, "%s", v);
    }
    return CE_OK;
}

/* ce_resolve: implemented with the manifest (issue 2, manifest module owner). */
int ce_resolve(ce_ctx *ctx, const ce_manifest *m, const ce_spec *spec,
               const char *cudnn_override, bool no_cudnn, ce_resolved *out)
{
    (void)m; (void)spec; (void)cudnn_override; (void)no_cudnn; (void)out;
    return ce_fail(ctx, CE_ERR_OTHER, "resolve: not implemented yet");
}
