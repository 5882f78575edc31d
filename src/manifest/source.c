/* Where the manifest comes from (source.h). */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/config.h"
#include "core/file.h"
#include "core/json.h"
#include "core/path.h"
#include "core/priv.h"

bool ce_manifest_is_remote(const char *loc)
{
    return strncasecmp(loc, "https://", 8) == 0 || strncasecmp(loc, "http://", 7) == 0;
}

int ce_manifest_copy_path(ce_ctx *ctx, const char *url, char *out, size_t outsz)
{
    uint64_t h = 1469598103934665603ull;   /* FNV-1a 64 */
    for (const unsigned char *p = (const unsigned char *)url; *p; p++) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    char sub[64];
    snprintf(sub, sizeof sub, "manifests/%016llx.json", (unsigned long long)h);
    if (ce_path_join(out, outsz, ctx->root, sub) != CE_OK)
        return ce_fail(CE_ERR_OTHER, "path too long: %s/%s", ctx->root, sub);
    return CE_OK;
}

/* dir with its last `levels` components taken off, then rest: dir/../rest
 * without the "..": the same file, as dir has no symlink in it (ce_self_dir
 * reads /proc/self/exe), named as the user would find it. */
static void up_join(char *out, size_t n, const char *dir, int levels, const char *rest)
{
    size_t l = strlen(dir);
    for (int k = 0; k < levels && l > 0; k++) {
        while (l > 0 && dir[l - 1] != '/') l--;
        if (l > 0) l--;   /* the slash */
    }
    snprintf(out, n, "%.*s%s", (int)l, dir, rest);
}

int ce_builtin_manifest(ce_ctx *ctx, char *out, size_t outsz)
{
    const char *candidates[3];
    char a[8192], b[8192];
    /* build tree and installed layout: <bindir>/../share/cudaenv/manifests;
     * the full binary's <prefix>/libexec/cudaenv/../../share/... */
    up_join(a, sizeof a, ce_self_dir(ctx), 1, "/share/cudaenv/manifests/cudaenv.json");
    up_join(b, sizeof b, ce_self_dir(ctx), 2, "/share/cudaenv/manifests/cudaenv.json");
    candidates[0] = a;
    candidates[1] = b;
    candidates[2] = CE_DATADIR "/manifests/cudaenv.json";
    for (size_t i = 0; i < 3; i++) {
        if (access(candidates[i], R_OK) == 0) {
            snprintf(out, outsz, "%s", candidates[i]);
            return CE_OK;
        }
    }
    return ce_fail(CE_ERR_NOTFOUND,
                   "built-in manifest not found (looked in %s and %s); reinstall cudaenv or set CUDAENV_MANIFEST",
                   a, candidates[2]);
}

/* Whether the config files have been applied to the context (once), and
 * whether ctx->manifest came from them rather than --manifest/the environment. */
static bool configured, from_config;

const char *ce_manifest_given(const ce_ctx *ctx)
{
    return from_config ? "" : ctx->manifest;
}

int ce_manifest_location(ce_ctx *ctx, char *out, size_t outsz)
{
    /* the config files, below the environment and --manifest (config.h) */
    if (!configured) {
        configured = true;
        if (!ctx->manifest[0]) {
            ce_config_get(ctx, "manifest", ctx->manifest, sizeof ctx->manifest, NULL);
            from_config = ctx->manifest[0] != '\0';
        }
        if (!ctx->mirror[0]) ce_config_get(ctx, "mirror", ctx->mirror, sizeof ctx->mirror, NULL);
    }
    if (ctx->manifest[0]) {
        snprintf(out, outsz, "%s", ctx->manifest);
        return CE_OK;
    }
    return ce_builtin_manifest(ctx, out, outsz);
}

/* As root a local manifest decides what root downloads and runs: the file
 * and every directory above it must pass the rule (core/priv.h), or
 * CE_ERR_PERM naming it; out->path becomes the resolved path checked, so
 * no link on the way is followed again. */
static int local_trusted(ce_msource *out)
{
    if (!ce_priv()) return CE_OK;
    char real[PATH_MAX], why[PATH_MAX + 128];
    int fd = ce_priv_file_open(out->path, true, real, sizeof real, why, sizeof why);
    if (fd < 0 && (errno == ENOENT || errno == EINVAL)) return CE_OK;   /* the loader says what is wrong */
    if (fd < 0)
        return ce_fail(CE_ERR_PERM, "unsafe for cudaenv run as root: the manifest %s: %s; a user could choose "
                       "what root downloads and runs. Use a manifest only root can change (chown root:root and "
                       "chmod go-w the file and the directories above it, or copy it to /etc/cudaenv), or run the "
                       "command as that user", out->origin, why);
    close(fd);
    snprintf(out->path, sizeof out->path, "%s", real);
    return CE_OK;
}

int ce_manifest_source(ce_ctx *ctx, ce_msource *out)
{
    out->remote = out->builtin = false;
    int rc = ce_manifest_location(ctx, out->origin, sizeof out->origin);
    if (rc) return rc;
    out->builtin = !ctx->manifest[0];
    if (ce_manifest_is_remote(out->origin)) {
        out->remote = true;
        return ce_manifest_copy_path(ctx, out->origin, out->path, sizeof out->path);
    }
    const char *p = strncasecmp(out->origin, "file://", 7) == 0 ? out->origin + 7 : out->origin;
    snprintf(out->path, sizeof out->path, "%s", p);
    return local_trusted(out);
}

/* The file src is read from, named as the user would find it (bin/../share/... ->
 * share/...), and the origin and locality its parse takes. */
static void source_file(const ce_msource *src, char *path, size_t n, const char **origin, bool *local)
{
    char real[PATH_MAX];
    snprintf(path, n, "%s", !src->remote && realpath(src->path, real) ? real : src->path);
    *origin = src->remote ? src->origin : path;
    *local = !src->remote;
}

int ce_manifest_load_source_sliced(ce_ctx *ctx, const ce_msource *src, ce_manifest_cut cut, const void *arg,
                                   ce_manifest **out)
{
    char path[sizeof ((ce_msource *)0)->path], *slice = NULL;
    const char *origin;
    bool local;
    size_t slen = 0;
    *out = NULL;
    source_file(src, path, sizeof path, &origin, &local);
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int fd = ce_open_regular(path);   /* never a FIFO's open that waits */
    if (fd >= 0) slice = cut(ctx, fd, path, arg, &slen);
    int rc = slice ? ce_manifest_parse(ctx, slice, slen, origin, local, out) : CE_ERR_OTHER;
    ce_quiet_end(&q);
    free(slice);
    if (rc == CE_OK) return CE_OK;
    ce_manifest_free(*out);
    return ce_manifest_load_source(ctx, src, out);   /* the whole manifest, and its own errors */
}

int ce_manifest_load_source(ce_ctx *ctx, const ce_msource *src, ce_manifest **out)
{
    if (!src->remote) {
        char path[sizeof src->path];
        const char *origin;
        bool local;
        source_file(src, path, sizeof path, &origin, &local);
        return ce_manifest_load_file(ctx, path, out);
    }
    *out = NULL;
    char *data = NULL;
    size_t len = 0;
    int rc = ce_file_read(src->path, CE_MANIFEST_MAX, &data, &len);
    if (rc == CE_ERR_NOTFOUND)
        return ce_fail(rc, "no local copy of the manifest %s yet (%s): run cudaenv update",
                       src->origin, src->path);
    if (rc) return rc;
    rc = ce_manifest_parse(ctx, data, len, src->origin, false, out);
    free(data);
    return rc;
}

/* A top-level string member of a JSON document, read without parsing it
 * (core/json.h): the manifest's "updated" sits in its first lines, so
 * --version reads one block instead of parsing the whole manifest (issue 43);
 * the whole file only when the block ends first. */
int ce_json_top_string(const char *path, const char *name, char *out, size_t n)
{
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    size_t cap = 64 << 10, len = 0;
    char *t = malloc(cap);
    size_t k, v, e;
    int r = -1;
    while (t) {
        ssize_t got = read(fd, t + len, cap - 1 - len);
        if (got < 0) break;
        len += (size_t)got;
        t[len] = '\0';
        r = ce_json_top_member(t, len, name, &k, &v, &e);
        if (r >= 0 || got == 0 || cap >= CE_MANIFEST_MAX) break;
        if (len == cap - 1) {
            char *nt = realloc(t, cap * 2);
            if (!nt) break;
            t = nt;
            cap *= 2;
        }
    }
    close(fd);
    int found = 0;
    if (r == 1 && t[v] == '"') {   /* a string: its text, escapes taken as the character they escape */
        size_t o = 0;
        for (size_t i = v + 1; i + 1 < e && o + 1 < n; i++) {
            if (t[i] == '\\') i++;
            out[o++] = t[i];
        }
        bool fits = true;
        for (size_t i = v + 1, c = 0; i + 1 < e; i++, c++) {
            if (t[i] == '\\') i++;
            if (c + 1 >= n) fits = false;
        }
        out[fits ? o : 0] = '\0';
        found = fits;
    }
    free(t);
    return found;
}
