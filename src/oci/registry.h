/* A client of the OCI distribution API (blobs, uploads, manifests) on the
 * transfer rules of fetch/http.h: https only unless --insecure (then
 * http://), TLS always verified against the system CA or CURL_CA_BUNDLE.
 *
 * Authentication follows the registry's challenge: a 401 with
 * "WWW-Authenticate: Basic" is answered with the credentials, one with
 * "Bearer realm=...,service=...,scope=..." by a token from the realm (asked
 * with the credentials when there are any, anonymously otherwise), and the
 * request is made again once.  Credentials: CUDAENV_REGISTRY_AUTH=user:pass,
 * else the registry's entry in ~/.docker/config.json ("auths": {HOST:
 * {"auth": base64(user:pass)}}, what docker login writes).
 *
 * Errors: CE_ERR_DOWNLOAD (network, an HTTP status, credentials refused or
 * missing), CE_ERR_INTEGRITY (a blob or manifest that does not hash to its
 * digest), CE_ERR_NOTFOUND (no such manifest or tag), CE_ERR_IO. */
#ifndef CE_OCI_REGISTRY_H
#define CE_OCI_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "ref.h"

#define CE_OCI_MANIFEST_MT "application/vnd.oci.image.manifest.v1+json"
#define CE_OCI_MANIFEST_MAX (4u << 20)

typedef struct ce_reg {
    ce_ctx *ctx;
    ce_oci_ref ref;
    bool allow_http;
    char base[300];          /* "https://HOST" */
    char userpwd[512];       /* "user:pass" or "" */
    char bearer[8192];       /* the token the last Bearer challenge got, or "" */
    bool basic;              /* the registry asked for Basic */
    int blobs_uploaded, blobs_skipped; /* push: blobs sent, blobs the registry had */
    int blobs_mounted;       /* push: blobs the registry mounted from another repository */
} ce_reg;

/* Prepare a client for ref (no request yet). */
int ce_reg_open(ce_ctx *ctx, const ce_oci_ref *ref, bool allow_http, ce_reg *r);

/* Push: whether the repository has blob digest ("sha256:..."). */
int ce_reg_blob_exists(ce_reg *r, const char *digest, bool *yes);
/* Push: upload a blob (POST then one PUT) from a file or from memory
 * (path NULL), unless the registry has it already (HEAD).  from (NULL or
 * "": none): another repository of the registry that holds it, asked to
 * mount it first (POST ...?mount=DIGEST&from=REPO: 201 mounted, nothing
 * sent; 202 declined, the upload goes on in the session it opened). */
int ce_reg_blob_put(ce_reg *r, const char *digest, const char *path, const void *mem, long long size,
                    const char *from);
/* Push: PUT the manifest under reference (a tag); digest_out: the
 * manifest's sha256 digest ("sha256:...", 72 bytes). */
int ce_reg_manifest_put(ce_reg *r, const char *reference, const char *body, size_t len, char *digest_out);

/* Pull: GET the manifest of reference (a tag or a digest), OCI or Docker v2;
 * *body malloc'ed, digest_out its sha256 digest, which must equal reference
 * when that is a digest (else CE_ERR_INTEGRITY). */
int ce_reg_manifest_get(ce_reg *r, const char *reference, char **body, size_t *len, char *digest_out);
/* Pull: a small blob (a config) into memory, verified against digest. */
int ce_reg_blob_get(ce_reg *r, const char *digest, size_t max, char **body, size_t *len);
/* Pull: blob digest into the download cache (fetch/fetch.h: resumed,
 * hashed as it arrives, not fetched again when cached); path_out its path. */
int ce_reg_blob_fetch(ce_reg *r, const char *digest, long long size, char *path_out, size_t n);

#endif
