/* Loading the manifest for a command: --manifest / CUDAENV_MANIFEST or the
 * built-in one (manifest/source.h).  A local path (or file:// URL) is read
 * here.  A remote one is read from its local copy in the store; when that
 * is missing or stale (manifest/copy.h), refreshing it needs libcurl, which
 * only the full binary links, so the light binary re-execs cudaenv-full
 * with the same argv. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "manifest/copy.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"
#include "manifest/slice.h"
#include "manifest/source.h"
#include "core/config.h"

int cli_load_manifest(cli *c, ce_manifest **out)
{
    *out = NULL;
    ce_msource src;
    int rc = ce_manifest_source(&c->ctx, &src);
    if (rc) return rc;
    if (src.remote) {
        if (cli_url_manifest_loader)
            return cli_url_manifest_loader(&c->ctx, src.origin, out);
        if (!ce_mcopy_fresh(&c->ctx, &src) && !c->ctx.offline) {
            cli_exec_full(c);   /* returns only when the exec failed (and says so) */
            return ce_fail(&c->ctx, CE_ERR_OTHER, "cannot load manifest %s without cudaenv-full", src.origin);
        }
    }
    return ce_manifest_load_source(&c->ctx, &src, out);
}

static char *cut_tf(char *text, size_t len, const void *tf, size_t *outlen)
{
    return ce_manifest_slice_tf(text, len, tf, outlen);
}

static char *cut_cuda(char *text, size_t len, const void *version, size_t *outlen)
{
    return ce_manifest_slice_cuda(text, len, version, outlen);
}

int cli_load_manifest_for(cli *c, const ce_spec *spec, const char *cudnn, ce_manifest **out)
{
    /* a TensorFlow row or a CUDA release ("12.4", not "12" or "latest"), no
     * cuDNN of the user's: the slice of the manifest it reads
     * (manifest/slice.h), the same answers at any manifest size */
    bool tf = spec->kind == CE_SPEC_TF, cuda = spec->kind == CE_SPEC_CUDA;
    if ((!tf && !cuda) || !strchr(spec->version, '.') || spec->cudnn[0] || (cudnn && *cudnn))
        return cli_load_manifest(c, out);
    *out = NULL;
    ce_msource src;
    int rc = ce_manifest_source(&c->ctx, &src);
    if (rc || (src.remote && (cli_url_manifest_loader || (!ce_mcopy_fresh(&c->ctx, &src) && !c->ctx.offline))))
        return cli_load_manifest(c, out);
    return ce_manifest_load_source_sliced(&c->ctx, &src, tf ? cut_tf : cut_cuda, spec->version, out);
}

void cli_manifest_about(cli *c, const ce_manifest *m, char *out, size_t n)
{
    ce_msource src;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    int rc = ce_manifest_source(&c->ctx, &src);
    ce_manifest *own = NULL;
    ce_mcopy_meta meta;
    bool copy = rc == CE_OK && src.remote && ce_mcopy_meta_read(&c->ctx, &src, &meta) == CE_OK;
    /* without a parsed manifest, its date is read, not the whole document parsed (--version) */
    char peek[64] = "";
    if (rc == CE_OK && !m && !copy && !ce_json_top_string(src.path, "updated", peek, sizeof peek) &&
        ce_manifest_load_source(&c->ctx, &src, &own) == CE_OK)
        m = own;
    const char *date = m && m->updated ? m->updated : copy ? meta.updated : peek[0] ? peek : NULL;
    if (rc) snprintf(out, n, "none found (%s)", ce_errmsg());
    else if (src.remote && !copy) snprintf(out, n, "%s (no local copy yet: cudaenv update)", src.origin);
    else snprintf(out, n, "%s%s, dated %s%s%s%s", src.origin, src.builtin ? " (built-in)" : "", date ? date : "?",
                  copy ? " (local copy: " : "", copy ? src.path : "", copy ? ")" : "");
    ce_manifest_free(own);
    ce_quiet_end(&q);
}

void cli_cudnn_policy(cli *c, const ce_spec *spec, const char **cudnn, bool *no_cudnn, char *buf, size_t n)
{
    if (spec->kind != CE_SPEC_CUDA || spec->cudnn[0] || **cudnn || *no_cudnn) return;
    if (!ce_config_get(&c->ctx, "cudnn", buf, n, NULL) || !strcmp(buf, "newest")) return;
    if (!strcmp(buf, "none")) *no_cudnn = true;
    else *cudnn = buf;
}
