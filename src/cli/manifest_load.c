/* Loading the manifest for a command: --manifest / CUDAENV_MANIFEST or the
 * built-in one (manifest/source.h).  A local path (or file:// URL) is read
 * here.  A remote one is read from its local copy in the store; when that
 * is missing or stale (manifest/copy.h), refreshing it needs libcurl, which
 * only the full binary links, so the light binary re-execs cudaenv-full
 * with the same argv. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "manifest/copy.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"
#include "manifest/slice.h"
#include "manifest/source.h"
#include "core/config.h"
#include "core/file.h"
#include "store/store.h"

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
            return ce_fail(CE_ERR_OTHER, "cannot load manifest %s without cudaenv-full", src.origin);
        }
    }
    return ce_manifest_load_source(&c->ctx, &src, out);
}

typedef struct want { const char *kind, *version; } want;

/* The slice a spec reads: cut from the pieces the resolution index says
 * where they are (store.h ce_store_index_at: nothing else of the file is
 * read), else from the whole text. */
static char *cut(ce_ctx *ctx, int fd, const char *path, const void *arg, size_t *outlen)
{
    const want *w = arg;
    const char *recs;
    size_t len = 0;
    char *idx = ce_store_index_at(ctx, fd, &recs);
    char *text = idx ? ce_manifest_slice_pieces(fd, recs, w->kind, w->version, &len) : NULL;
    free(idx);
    if (text) close(fd);
    else if (ce_file_read_fd(fd, path, CE_MANIFEST_MAX, &text, &len) != CE_OK) return NULL;
    char *out = ce_manifest_slice(text, len, w->kind, w->version, outlen);
    free(text);
    return out;
}

int cli_load_manifest_for(cli *c, const ce_spec *spec, const char *cudnn, ce_manifest **out)
{
    /* a TensorFlow row, a CUDA release ("12.4", not "12" or "latest") or a
     * PyTorch/JAX release, no cuDNN of the user's: the slice of the manifest
     * it reads (manifest/slice.h), the same answers at any manifest size */
    const char *fw = ce_spec_fw_name(spec->kind);
    want w = { spec->kind == CE_SPEC_TF ? "tensorflow" : spec->kind == CE_SPEC_CUDA ? "cuda" : fw, spec->version };
    if (!w.kind || !strchr(spec->version, '.') || spec->cudnn[0] || (cudnn && *cudnn))
        return cli_load_manifest(c, out);
    *out = NULL;
    ce_msource src;
    int rc = ce_manifest_source(&c->ctx, &src);
    if (rc || (src.remote && (cli_url_manifest_loader || (!ce_mcopy_fresh(&c->ctx, &src) && !c->ctx.offline))))
        return cli_load_manifest(c, out);
    return ce_manifest_load_source_sliced(&c->ctx, &src, cut, &w, out);
}

void cli_manifest_about(cli *c, const ce_manifest *m, char *out, size_t n)
{
    ce_msource src;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    int rc = ce_manifest_source(&c->ctx, &src);
    ce_manifest *own = NULL;
    ce_mcopy_meta meta;
    bool copy = rc == CE_OK && src.remote && ce_mcopy_meta_read(&src, &meta) == CE_OK;
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
