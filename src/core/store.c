#include "store.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "manifest.h"
#include "resolve.h"
#include "version.h"

int ce_store_path(ce_ctx *ctx, const char *sub, char *out, size_t outsz)
{
    if (ce_path_join(out, outsz, ctx->root, sub) != CE_OK)
        return ce_fail(ctx, CE_ERR_OTHER, "path too long: %s/%s", ctx->root, sub);
    return CE_OK;
}

int ce_toolchain_parse_name(const char *name, ce_toolchain *out)
{
    memset(out, 0, sizeof *out);
    if (strlen(name) >= sizeof out->name) return 0;
    snprintf(out->name, sizeof out->name, "%s", name);
    const char *plus = strstr(name, "+cudnn");
    size_t cl = plus ? (size_t)(plus - name) : strlen(name);
    if (cl >= sizeof out->cuda) return 0;
    memcpy(out->cuda, name, cl);
    out->cuda[cl] = '\0';
    if (plus) snprintf(out->cudnn, sizeof out->cudnn, "%s", plus + 6);
    if (!ce_version_valid(out->cuda)) return 0;
    if (plus && !ce_version_valid(out->cudnn)) return 0;
    return 1;
}

static int tc_cmp(const void *a, const void *b)
{
    const ce_toolchain *x = a, *y = b;
    int c = ce_version_cmp(x->cuda, y->cuda);
    if (c) return c;
    if (!x->cudnn[0] || !y->cudnn[0]) return x->cudnn[0] ? 1 : (y->cudnn[0] ? -1 : 0);
    return ce_version_cmp(x->cudnn, y->cudnn);
}

int ce_store_list(ce_ctx *ctx, ce_toolchain **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    char dir[4200];
    int rc = ce_store_path(ctx, "versions", dir, sizeof dir);
    if (rc) return rc;
    DIR *d = opendir(dir);
    if (!d) return CE_OK;
    size_t cap = 0;
    ce_toolchain *v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        ce_toolchain t;
        if (!ce_toolchain_parse_name(e->d_name, &t)) continue;
        if (snprintf(t.prefix, sizeof t.prefix, "%s/%s", dir, e->d_name) >= (int)sizeof t.prefix)
            continue;
        if (!ce_is_dir(t.prefix)) continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 8;
            ce_toolchain *nv = realloc(v, cap * sizeof *v);
            if (!nv) { free(v); closedir(d); return ce_fail(ctx, CE_ERR_NOMEM, "out of memory"); }
            v = nv;
        }
        v[(*n)++] = t;
    }
    closedir(d);
    if (*n) qsort(v, *n, sizeof *v, tc_cmp);
    *out = v;
    return CE_OK;
}

static int not_installed(ce_ctx *ctx, const char *spec, const ce_toolchain *v, size_t n)
{
    char have[1024] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && used + 100 < sizeof have; i++)
        used += (size_t)snprintf(have + used, sizeof have - used, "%s%s", i ? ", " : "", v[i].name);
    if (n == 0)
        return ce_fail(ctx, CE_ERR_NOTFOUND,
                       "%s is not installed (no toolchains installed); run: cudaenv install %s", spec, spec);
    return ce_fail(ctx, CE_ERR_NOTFOUND, "%s is not installed (installed: %s); run: cudaenv install %s",
                   spec, have, spec);
}

int ce_store_find(ce_ctx *ctx, const char *spec_text, ce_toolchain *out)
{
    ce_toolchain *v;
    size_t n;
    int rc = ce_store_list(ctx, &v, &n);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].name, spec_text) == 0) {
            *out = v[i];
            free(v);
            return CE_OK;
        }
    }
    ce_spec spec;
    if ((rc = ce_spec_parse(ctx, spec_text, &spec)) != CE_OK) {
        free(v);
        return rc;
    }
    char want_cuda[32], want_cudnn[32];
    snprintf(want_cuda, sizeof want_cuda, "%s", spec.version);
    snprintf(want_cudnn, sizeof want_cudnn, "%s", spec.cudnn);
    if (spec.kind == CE_SPEC_SYSTEM) {
        free(v);
        return ce_fail(ctx, CE_ERR_NOTFOUND, "'system' is the machine's own CUDA, not an installed toolchain");
    }
    if (spec.kind == CE_SPEC_TF) {
        char path[4200];
        ce_manifest *m = NULL;
        if ((rc = ce_manifest_location(ctx, path, sizeof path)) ||
            (rc = ce_manifest_load_file(ctx, path, &m))) {
            free(v);
            return rc;
        }
        const ce_tf *tf = ce_manifest_tf(m, spec.version);
        if (!tf) {
            ce_manifest_free(m);
            free(v);
            return ce_fail(ctx, CE_ERR_NOTFOUND, "TensorFlow %s is not in the manifest %s; see: cudaenv list-remote tf",
                           spec.version, path);
        }
        snprintf(want_cuda, sizeof want_cuda, "%s", tf->cuda);
        if (!want_cudnn[0] && tf->cudnn) snprintf(want_cudnn, sizeof want_cudnn, "%s", tf->cudnn);
        ce_manifest_free(m);
    }
    /* newest match wins: the list is sorted oldest first */
    for (size_t i = n; i-- > 0;) {
        if (!ce_version_matches(want_cuda, v[i].cuda)) continue;
        if (want_cudnn[0] && !(v[i].cudnn[0] && ce_version_matches(want_cudnn, v[i].cudnn))) continue;
        *out = v[i];
        free(v);
        return CE_OK;
    }
    rc = not_installed(ctx, spec_text, v, n);
    free(v);
    return rc;
}
