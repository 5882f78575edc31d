/* The URLs a manifest names (MANIFEST.md): relative references resolved
 * against the manifest's own location, CUDAENV_MIRROR applied, and only the
 * schemes its origin allows (https; http:// and file:// from a local
 * manifest or with --insecure).  Part of the parser (manifest_int.h). */
#include "manifest_int.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NVIDIA_PREFIX "https://developer.download.nvidia.com/"
#define PYPI_PREFIX "https://files.pythonhosted.org/"

static size_t scheme_len(const char *u)
{
    size_t i = 0;
    while ((u[i] >= 'a' && u[i] <= 'z') || (u[i] >= 'A' && u[i] <= 'Z') ||
           (i && ((u[i] >= '0' && u[i] <= '9') || u[i] == '+' || u[i] == '-' || u[i] == '.')))
        i++;
    return i && u[i] == ':' ? i : 0;
}

/* Resolve a relative reference against the manifest's own location: the
 * directory of a local path (as a file:// URL) or of the manifest's URL. */
static int resolve_ref(parser *p, const char *ref, char **out)
{
    char base[8192];
    if (scheme_len(p->origin)) {
        snprintf(base, sizeof base, "%s", p->origin);
        base[strcspn(base, "?#")] = '\0';
        char *host = strstr(base, "://");
        host = host ? host + 3 : base;
        if (ref[0] == '/' && ref[1] == '/') {
            host[-2] = '\0';                      /* keep "scheme:" */
        } else if (ref[0] == '/') {
            host[strcspn(host, "/")] = '\0';     /* keep "scheme://host" */
        } else {
            char *slash = strrchr(host, '/');
            if (slash) slash[1] = '\0'; else strcat(base, "/");
        }
    } else {
        if (ref[0] == '/') {
            snprintf(base, sizeof base, "file://");
        } else {
            char dir[PATH_MAX], real[PATH_MAX];
            snprintf(dir, sizeof dir, "%s", p->origin);
            char *slash = strrchr(dir, '/');
            if (slash) { if (slash == dir) slash[1] = '\0'; else *slash = '\0'; }
            else snprintf(dir, sizeof dir, ".");
            if (!realpath(dir, real))
                return mf_bad(p, "cannot resolve relative URL '%s': directory %s of the manifest: %m", ref, dir);
            snprintf(base, sizeof base, "file://%s%s", real, strcmp(real, "/") ? "/" : "");
        }
    }
    size_t n = strlen(base) + strlen(ref) + 1;
    *out = malloc(n);
    if (!*out) return ce_fail(CE_ERR_NOMEM, "out of memory");
    snprintf(*out, n, "%s%s", base, ref);
    return CE_OK;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* What keeps the tail X of a URL mapped to BASE/X from naming a file outside
 * BASE, or another one than `cudaenv mirror --to` wrote under X: NULL, or the
 * reason.  Each segment of its path (up to ? or #) must be non-empty and,
 * percent-decoded (%2e, %2E, .%2e, ...), neither "." nor ".." nor hold a '/',
 * '\' or NUL (a server that decodes them would see other segments). */
static const char *tail_refusal(const char *t)
{
    size_t end = strcspn(t, "?#");
    if (end == 0) return "it is empty";
    for (size_t i = 0;; i++) {   /* i: where a segment starts */
        size_t len = 0, dots = 0;
        bool sep = false;
        for (; i < end && t[i] != '/'; i++, len++) {
            unsigned char c = (unsigned char)t[i];
            if (c == '%' && i + 2 < end && hexval(t[i + 1]) >= 0 && hexval(t[i + 2]) >= 0) {
                c = (unsigned char)(hexval(t[i + 1]) << 4 | hexval(t[i + 2]));
                i += 2;
            }
            dots += c == '.';
            sep = sep || c == '/' || c == '\\' || c == '\0';
        }
        if (len == 0) return i == end ? "it ends with /" : "it has an empty segment (//)";
        if (dots == len && len <= 2) return "it has a '.' or '..' segment (also percent-encoded)";
        if (sep) return "a segment holds a '/', '\\' or NUL (also percent-encoded)";
        if (i == end) return NULL;
    }
}

/* CUDAENV_MIRROR=BASE: https://developer.download.nvidia.com/X -> BASE/X,
 * and the NCCL wheels' https://files.pythonhosted.org/X -> BASE/X: the
 * layout `cudaenv mirror --to DIR` writes (a URL's path under DIR), one
 * slash between them whatever BASE ends with ("/" is the root directory).
 * A BASE that is a plain absolute path means a local directory.  An X that
 * could leave BASE (tail_refusal) makes the manifest invalid, naming the
 * URL: the mirror would serve, or a file:// BASE read, another file. */
static int apply_mirror(parser *p, char **url)
{
    static const char *const upstream[] = { NVIDIA_PREFIX, PYPI_PREFIX };
    const char *mirror = p->ctx->mirror;
    size_t pl = 0;
    for (size_t i = 0; i < sizeof upstream / sizeof *upstream && !pl; i++)
        if (!strncmp(*url, upstream[i], strlen(upstream[i]))) pl = strlen(upstream[i]);
    if (!*mirror || !pl) return CE_OK;
    const char *why = tail_refusal(*url + pl);
    if (why)
        return mf_bad(p, "URL '%s' is refused under CUDAENV_MIRROR=%s: its path after %.*s would leave the "
                      "mirror (%s); fix the manifest's URL, or unset CUDAENV_MIRROR", *url, mirror, (int)pl, *url, why);
    size_t ml = strlen(mirror);
    while (ml > 0 && mirror[ml - 1] == '/') ml--;
    const char *pre = mirror[0] == '/' ? "file://" : "";
    size_t n = strlen(pre) + ml + 1 + strlen(*url + pl) + 1;
    char *r = malloc(n);
    if (!r) return ce_fail(CE_ERR_NOMEM, "out of memory");
    snprintf(r, n, "%s%.*s/%s", pre, (int)ml, mirror, *url + pl);
    free(*url);
    *url = r;
    return CE_OK;
}

/* raw: the string as the manifest wrote it (*url holds it with control
 * characters escaped for printing, so the scan must see the raw bytes). */
int mf_check_url(parser *p, char **url, const char *raw)
{
    for (const unsigned char *c = (const unsigned char *)raw; *c; c++)
        if (*c <= ' ' || *c == 0x7f)
            return mf_bad(p, "URL '%s' contains a %s (byte 0x%02x at offset %zu); percent-encode it "
                          "(a space is %%20)", *url, *c == ' ' ? "space" : "control character", *c,
                       (size_t)(c - (const unsigned char *)raw));
    size_t sl = scheme_len(*url);
    int rc;
    if (!sl) {
        char *abs = NULL;
        if ((rc = resolve_ref(p, *url, &abs))) return rc;
        free(*url);
        *url = abs;
    }
    if ((rc = apply_mirror(p, url))) return rc;
    sl = scheme_len(*url);
    if (sl == 5 && strncasecmp(*url, "https", 5) == 0) return CE_OK;
    if ((sl == 4 && strncasecmp(*url, "http", 4) == 0) || (sl == 4 && strncasecmp(*url, "file", 4) == 0)) {
        if (p->local || p->ctx->insecure) return CE_OK;
        return mf_bad(p, "%s is refused: a manifest loaded from a URL may only name https:// URLs "
                      "(or relative ones); use https or pass --insecure", *url);
    }
    return mf_bad(p, "unsupported URL '%s': use https://, or a path relative to the manifest", *url);
}
