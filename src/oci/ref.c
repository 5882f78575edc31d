/* Parsing oci:// references (ref.h), after the distribution spec's grammar:
 * repository components of [a-z0-9] joined by '.', '_', '__' or '-', tags of
 * [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}, digests sha256:<64 lowercase hex>. */
#include "ref.h"

#include <stdio.h>
#include <string.h>

static const char usage_hint[] = "expected oci://REGISTRY/REPO:TAG or oci://REGISTRY/REPO@sha256:DIGEST, "
                                 "e.g. oci://registry.lab:5000/cuda/toolchains:tf-2.14";

bool ce_oci_is_ref(const char *text)
{
    return text && strncmp(text, "oci://", 6) == 0;
}

static bool lower_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool repo_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (lower_alnum(c)) continue;
        bool sep = c == '/' || c == '.' || c == '_' || c == '-';
        /* a separator between two alphanumerics ("__" and "--" allowed) */
        if (!sep || i == 0 || i + 1 == n || (c == '/' && !lower_alnum(s[i - 1])) ||
            (c == '/' && !lower_alnum(s[i + 1])))
            return false;
        if (c == '.' && !lower_alnum(s[i - 1])) return false;
    }
    return true;
}

static bool tag_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 128 || s[0] == '.' || s[0] == '-') return false;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static bool host_ok(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") == n;
}

int ce_oci_ref_parse(const char *text, ce_oci_ref *out)
{
    memset(out, 0, sizeof *out);
    if (!ce_oci_is_ref(text)) return ce_fail(CE_ERR_USAGE, "'%s' is not an OCI reference: %s", text, usage_hint);
    const char *p = text + 6, *slash = strchr(p, '/');
    if (!slash || slash == p || (size_t)(slash - p) >= sizeof out->host)
        return ce_fail(CE_ERR_USAGE, "'%s' names no registry: %s", text, usage_hint);
    memcpy(out->host, p, (size_t)(slash - p));
    if (!host_ok(out->host)) return ce_fail(CE_ERR_USAGE, "'%s': registry '%s' is not a host[:port]", text, out->host);
    char rest[512];
    if (strlen(slash + 1) >= sizeof rest) return ce_fail(CE_ERR_USAGE, "'%s' is too long", text);
    snprintf(rest, sizeof rest, "%s", slash + 1);
    char *at = strchr(rest, '@');
    if (at) {
        *at = '\0';
        const char *d = at + 1;
        if (strncmp(d, "sha256:", 7) != 0 || strlen(d + 7) != 64 || strspn(d + 7, "0123456789abcdef") != 64)
            return ce_fail(CE_ERR_USAGE, "'%s': the digest must be sha256: and 64 lowercase hex digits", text);
        snprintf(out->digest, sizeof out->digest, "%s", d);
    }
    char *colon = strrchr(rest, ':');
    if (colon && !strchr(colon, '/')) {
        *colon = '\0';
        if (!tag_ok(colon + 1))
            return ce_fail(CE_ERR_USAGE, "'%s': tag '%s' is not [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}", text, colon + 1);
        snprintf(out->tag, sizeof out->tag, "%s", colon + 1);
    }
    if (!repo_ok(rest) || strlen(rest) >= sizeof out->repo)
        return ce_fail(CE_ERR_USAGE, "'%s': repository '%s' must be lowercase letters and digits joined by "
                       "'/', '.', '_' or '-'", text, rest);
    memcpy(out->repo, rest, strlen(rest) + 1);   /* fits: checked above */
    if (!out->tag[0] && !out->digest[0]) snprintf(out->tag, sizeof out->tag, "latest");
    return CE_OK;
}

const char *ce_oci_ref_name(const ce_oci_ref *r)
{
    return r->digest[0] ? r->digest : r->tag;
}
