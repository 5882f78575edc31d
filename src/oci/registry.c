/* The distribution API client (registry.h): one request at a time on a
 * libcurl easy handle set up by fetch/http.c, answered challenges, blob
 * uploads by POST + PUT, manifests, and blob downloads through the cache of
 * fetch/fetch.h.  Full binary only. */
#include "registry.h"

#include <cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/file.h"
#include "fetch/digest.h"
#include "fetch/fetch.h"
#include "fetch/http.h"

typedef struct req {
    const char *method;        /* GET HEAD POST PUT */
    char url[8600];
    const char *accept, *ctype;
    const char *body;          /* PUT/POST from memory (blen bytes) ... */
    size_t blen;
    int fd;                    /* ... or PUT from this file (fsize bytes), -1 none */
    long long fsize;
    size_t max;                /* response body kept up to this (0: dropped) */
    long status;
    char *out;
    size_t olen;
    bool over;
    char location[4096], www[2048], dcd[80];
} req;

static void req_init(req *q, const char *method)
{
    memset(q, 0, sizeof *q);
    q->method = method;
    q->fd = -1;
}

static size_t on_body(char *p, size_t size, size_t nmemb, void *ud)
{
    req *q = ud;
    size_t n = size * nmemb;
    if (q->max == 0) return n;
    if (q->olen + n > q->max) {
        q->over = true;
        return 0;
    }
    char *m = realloc(q->out, q->olen + n + 1);
    if (!m) return 0;
    q->out = m;
    memcpy(q->out + q->olen, p, n);
    q->olen += n;
    q->out[q->olen] = '\0';
    return n;
}

static void take(const char *p, size_t n, const char *name, char *out, size_t outsz)
{
    size_t nl = strlen(name);
    if (n <= nl || strncasecmp(p, name, nl) != 0 || p[nl] != ':') return;
    const char *v = p + nl + 1, *end = p + n;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && strchr("\r\n \t", end[-1])) end--;
    if ((size_t)(end - v) >= outsz) return;
    memcpy(out, v, (size_t)(end - v));
    out[end - v] = '\0';
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *ud)
{
    req *q = ud;
    size_t n = size * nmemb;
    if (n >= 5 && memcmp(p, "HTTP/", 5) == 0) {   /* a new response (after a redirect) */
        q->location[0] = q->www[0] = q->dcd[0] = '\0';
        return n;
    }
    take(p, n, "Location", q->location, sizeof q->location);
    take(p, n, "WWW-Authenticate", q->www, sizeof q->www);
    take(p, n, "Docker-Content-Digest", q->dcd, sizeof q->dcd);
    return n;
}

static size_t on_read(char *p, size_t size, size_t nmemb, void *ud)
{
    req *q = ud;
    ssize_t got = read(q->fd, p, size * nmemb);
    return got < 0 ? CURL_READFUNC_ABORT : (size_t)got;
}

/* One request with the credentials held now. */
static int perform(ce_reg *r, req *q)
{
    CURL *e = curl_easy_init();
    if (!e) return ce_fail(CE_ERR_NOMEM, "cannot start libcurl");
    char errbuf[CURL_ERROR_SIZE], h[256];
    ce_http_setup(e, q->url, r->allow_http, errbuf);
    curl_easy_setopt(e, CURLOPT_FAILONERROR, 0L);   /* a 401's challenge and an error's body are read */
    struct curl_slist *hdrs = curl_slist_append(NULL, "Expect:");
    if (q->accept) { snprintf(h, sizeof h, "Accept: %s", q->accept); hdrs = curl_slist_append(hdrs, h); }
    if (q->ctype) { snprintf(h, sizeof h, "Content-Type: %s", q->ctype); hdrs = curl_slist_append(hdrs, h); }
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
    if (r->bearer[0]) {
        curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BEARER);
        curl_easy_setopt(e, CURLOPT_XOAUTH2_BEARER, r->bearer);
    } else if (r->basic && r->userpwd[0]) {
        curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
        curl_easy_setopt(e, CURLOPT_USERPWD, r->userpwd);
    }
    if (!strcmp(q->method, "HEAD")) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (q->fd >= 0) {
        if (lseek(q->fd, 0, SEEK_SET) != 0) {
            curl_slist_free_all(hdrs);
            curl_easy_cleanup(e);
            return ce_fail(CE_ERR_IO, "cannot read the blob to upload: %s", strerror(errno));
        }
        curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(e, CURLOPT_READDATA, q);
        curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, (curl_off_t)q->fsize);
    } else if (!strcmp(q->method, "POST") || !strcmp(q->method, "PUT")) {
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, q->method);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, q->body ? q->body : "");
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(q->body ? q->blen : 0));
    }
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, q);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, q);
    free(q->out);
    q->out = NULL;
    q->olen = 0;
    CURLcode cc = curl_easy_perform(e);
    int rc = CE_OK;
    q->status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &q->status);
    if (q->over) {
        rc = ce_fail(CE_ERR_DOWNLOAD, "%s sent more than %zu bytes: not what a registry sends", q->url, q->max);
    } else if (cc != CURLE_OK) {
        char msg[4096];
        bool retry;
        rc = ce_fail(ce_http_attempt_error(e, cc, q->url, errbuf, msg, sizeof msg, &retry), "%s", msg);
    }
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(e);
    return rc;
}

/* The value of param in a challenge's list: key="value",key=value. */
static bool param(const char *ch, const char *key, char *out, size_t n)
{
    size_t kl = strlen(key);
    for (const char *p = ch; (p = strcasestr(p, key)) != NULL; p += kl) {
        if ((p != ch && !strchr(" ,", p[-1])) || p[kl] != '=') continue;
        const char *v = p + kl + 1;
        size_t len = *v == '"' ? strcspn(++v, "\"") : strcspn(v, ", ");
        if (len >= n) return false;
        memcpy(out, v, len);
        out[len] = '\0';
        return true;
    }
    return false;
}

static const char cred_hint[] = "set CUDAENV_REGISTRY_AUTH=USER:PASSWORD, or log in with docker login";

/* Answer a 401's challenge: Basic takes the credentials, Bearer a token from the realm. */
static int authenticate(ce_reg *r, const char *ch)
{
    if (!strncasecmp(ch, "Basic", 5)) {
        if (!r->userpwd[0]) return ce_fail(CE_ERR_DOWNLOAD, "registry %s asks for credentials: %s", r->ref.host, cred_hint);
        if (r->basic) return ce_fail(CE_ERR_DOWNLOAD, "registry %s refused the credentials: %s", r->ref.host, cred_hint);
        r->basic = true;
        return CE_OK;
    }
    char realm[2048], service[512] = "", scope[512] = "";
    if (strncasecmp(ch, "Bearer", 6) != 0 || !param(ch, "realm", realm, sizeof realm))
        return ce_fail(CE_ERR_DOWNLOAD, "registry %s asks for an authentication cudaenv does not speak "
                       "(WWW-Authenticate: %.200s)", r->ref.host, ch);
    param(ch, "service", service, sizeof service);
    if (!param(ch, "scope", scope, sizeof scope))
        snprintf(scope, sizeof scope, "repository:%s:pull", r->ref.repo);
    char msg[4096];
    int rc = ce_http_check_url(msg, sizeof msg, realm, r->allow_http);
    if (rc) return ce_fail(rc, "token service of %s: %s", r->ref.host, msg);
    char *es = curl_easy_escape(NULL, service, 0), *sc = curl_easy_escape(NULL, scope, 0);
    req q;
    req_init(&q, "GET");
    snprintf(q.url, sizeof q.url, "%s%sservice=%s&scope=%s", realm, strchr(realm, '?') ? "&" : "?",
             es ? es : "", sc ? sc : "");
    curl_free(es);
    curl_free(sc);
    q.max = 1u << 20;
    bool had_basic = r->basic;
    r->bearer[0] = '\0';
    r->basic = r->userpwd[0] != '\0';   /* the token service takes the credentials, if any */
    rc = perform(r, &q);
    r->basic = had_basic;
    cJSON *o = rc == CE_OK && q.status == 200 ? cJSON_Parse(q.out) : NULL;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "token");
    if (!cJSON_IsString(t)) t = cJSON_GetObjectItemCaseSensitive(o, "access_token");
    if (rc == CE_OK && cJSON_IsString(t) && strlen(t->valuestring) < sizeof r->bearer)
        snprintf(r->bearer, sizeof r->bearer, "%s", t->valuestring);
    else if (rc == CE_OK)
        rc = ce_fail(CE_ERR_DOWNLOAD, "the token service %s of registry %s answered HTTP %ld without a token%s%s",
                     realm, r->ref.host, q.status, q.status == 401 || q.status == 403 ? ": " : "",
                     q.status == 401 || q.status == 403 ? cred_hint : "");
    cJSON_Delete(o);
    free(q.out);
    return rc;
}

/* perform, and once more after answering a 401's challenge. */
static int request(ce_reg *r, req *q)
{
    int rc = perform(r, q);
    if (rc == CE_OK && q->status == 401 && q->www[0]) {
        char ch[sizeof q->www];
        snprintf(ch, sizeof ch, "%s", q->www);
        if ((rc = authenticate(r, ch)) == CE_OK) rc = perform(r, q);
    }
    return rc;
}

/* A status the caller did not expect, with the registry's own error code and message. */
static int status_error(ce_reg *r, req *q, const char *what)
{
    char detail[300] = "";
    cJSON *o = q->out ? cJSON_Parse(q->out) : NULL;
    const cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "errors"), 0);
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(e0, "code"), *m = cJSON_GetObjectItemCaseSensitive(e0, "message");
    if (cJSON_IsString(code))
        snprintf(detail, sizeof detail, ": %.60s%s%.200s", code->valuestring, cJSON_IsString(m) ? " " : "",
                 cJSON_IsString(m) ? m->valuestring : "");
    cJSON_Delete(o);
    int code_rc = q->status == 404 ? CE_ERR_NOTFOUND : CE_ERR_DOWNLOAD;
    if (q->status == 401 && (r->basic || r->bearer[0]))
        return ce_fail(code_rc, "registry %s refused the credentials (%s) for %s%s; %s", r->ref.host,
                       r->ctx->set.registry_auth && *r->ctx->set.registry_auth ? "CUDAENV_REGISTRY_AUTH" : "~/.docker/config.json",
                       q->url, detail, cred_hint);
    const char *hint = q->status == 401 || q->status == 403 ? cred_hint : q->status == 404 ? "check the reference" : "";
    return ce_fail(code_rc, "%s: HTTP %ld from %s%s%s%s", what, q->status, q->url, detail, *hint ? "; " : "", hint);
}

/* user:pass from the docker client's config: auths[HOST].auth (base64). */
static void docker_creds(ce_reg *r)
{
    const char *home = ce_home();
    char path[4200], *text = NULL;
    if (!home || snprintf(path, sizeof path, "%s/.docker/config.json", home) >= (int)sizeof path || access(path, R_OK))
        return;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = ce_file_read(path, 1u << 20, &text, NULL);
    ce_quiet_end(&q);
    if (rc) return;
    cJSON *o = cJSON_Parse(text);
    free(text);
    const cJSON *auths = cJSON_GetObjectItemCaseSensitive(o, "auths");
    char key[300];
    snprintf(key, sizeof key, "https://%s", r->ref.host);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(auths, r->ref.host);
    if (!a) a = cJSON_GetObjectItemCaseSensitive(auths, key);
    const cJSON *b64 = cJSON_GetObjectItemCaseSensitive(a, "auth");
    unsigned char out[sizeof r->userpwd];
    size_t bl = cJSON_IsString(b64) ? strlen(b64->valuestring) : 0;
    if (bl > 0 && bl % 4 == 0 && bl / 4 * 3 < sizeof out) {
        int n = EVP_DecodeBlock(out, (const unsigned char *)b64->valuestring, (int)bl);
        while (n > 0 && out[n - 1] == '\0') n--;   /* the padding's zero bytes */
        if (n > 0 && memchr(out, ':', (size_t)n)) {
            memcpy(r->userpwd, out, (size_t)n);
            r->userpwd[n] = '\0';
        }
    }
    cJSON_Delete(o);
}

int ce_reg_open(ce_ctx *ctx, const ce_oci_ref *ref, bool allow_http, ce_reg *r)
{
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->ref = *ref;
    r->allow_http = allow_http;
    snprintf(r->base, sizeof r->base, "%s://%s", allow_http ? "http" : "https", ref->host);
    const char *cred = ctx->set.registry_auth;
    if (cred && *cred) {
        if (!strchr(cred, ':') || strlen(cred) >= sizeof r->userpwd)
            return ce_fail(CE_ERR_USAGE, "CUDAENV_REGISTRY_AUTH must be USER:PASSWORD (value not shown)");
        snprintf(r->userpwd, sizeof r->userpwd, "%s", cred);
    } else {
        docker_creds(r);
    }
    ce_http_global_init();
    return CE_OK;
}

static void url_of(ce_reg *r, req *q, const char *kind, const char *name)
{
    snprintf(q->url, sizeof q->url, "%s/v2/%s/%s/%s", r->base, r->ref.repo, kind, name);
}

int ce_reg_blob_exists(ce_reg *r, const char *digest, bool *yes)
{
    req q;
    req_init(&q, "HEAD");
    url_of(r, &q, "blobs", digest);
    int rc = request(r, &q);
    *yes = q.status == 200;
    if (rc == CE_OK && q.status != 200 && q.status != 404) rc = status_error(r, &q, "checking a blob");
    free(q.out);
    return rc;
}

int ce_reg_blob_put(ce_reg *r, const char *digest, const char *path, const void *mem, long long size,
                    const char *from)
{
    bool have;
    int rc = ce_reg_blob_exists(r, digest, &have);
    if (rc || have) {
        if (have) r->blobs_skipped++;
        return rc;
    }
    req q;
    req_init(&q, "POST");
    bool mount = from && *from && strcmp(from, r->ref.repo) != 0;
    if (mount) snprintf(q.url, sizeof q.url, "%s/v2/%s/blobs/uploads/?mount=%s&from=%s", r->base, r->ref.repo, digest, from);
    else snprintf(q.url, sizeof q.url, "%s/v2/%s/blobs/uploads/", r->base, r->ref.repo);
    q.max = 1u << 16;
    rc = request(r, &q);
    if (rc == CE_OK && mount && q.status == 201) {   /* mounted: the registry had it in from */
        free(q.out);
        r->blobs_mounted++;
        return CE_OK;
    }
    if (rc == CE_OK && (q.status != 202 || !q.location[0]))
        rc = status_error(r, &q, "starting an upload");
    char loc[4096];
    snprintf(loc, sizeof loc, "%s", q.location);
    free(q.out);
    if (rc) return rc;
    req_init(&q, "PUT");
    q.max = 1u << 16;
    snprintf(q.url, sizeof q.url, "%s%s%sdigest=%s", loc[0] == '/' ? r->base : "", loc, strchr(loc, '?') ? "&" : "?", digest);
    q.ctype = "application/octet-stream";
    if (path) {
        q.fd = open(path, O_RDONLY | O_CLOEXEC);
        if (q.fd < 0) return ce_fail(CE_ERR_IO, "cannot open %s: %s", path, strerror(errno));
        q.fsize = size;
    } else {
        q.body = mem;
        q.blen = (size_t)size;
    }
    if ((rc = request(r, &q)) == CE_OK && q.status != 201) rc = status_error(r, &q, "uploading a blob");
    if (q.fd >= 0) close(q.fd);
    free(q.out);
    if (rc == CE_OK) r->blobs_uploaded++;
    return rc;
}

static void sha256_mem(const void *p, size_t n, char *digest)
{
    char hex[CE_SHA256_HEX] = "";
    ce_sha256 *h = ce_sha256_new();
    if (h) {
        ce_sha256_update(h, p, n);
        ce_sha256_final(h, hex);
        ce_sha256_free(h);
    }
    snprintf(digest, 72, "sha256:%s", hex);
}

int ce_reg_manifest_put(ce_reg *r, const char *reference, const char *body, size_t len, char *digest_out)
{
    req q;
    req_init(&q, "PUT");
    url_of(r, &q, "manifests", reference);
    q.ctype = CE_OCI_MANIFEST_MT;
    q.body = body;
    q.blen = len;
    q.max = 1u << 16;
    int rc = request(r, &q);
    if (rc == CE_OK && q.status != 201) rc = status_error(r, &q, "storing the manifest");
    sha256_mem(body, len, digest_out);
    if (rc == CE_OK && q.dcd[0] && strcmp(q.dcd, digest_out) != 0)
        rc = ce_fail(CE_ERR_INTEGRITY, "registry %s stored the manifest as %s, not as %s: it changed it",
                     r->ref.host, q.dcd, digest_out);
    free(q.out);
    return rc;
}

int ce_reg_manifest_get(ce_reg *r, const char *reference, char **body, size_t *len, char *digest_out)
{
    req q;
    req_init(&q, "GET");
    url_of(r, &q, "manifests", reference);
    q.accept = CE_OCI_MANIFEST_MT ", application/vnd.docker.distribution.manifest.v2+json";
    q.max = CE_OCI_MANIFEST_MAX;
    int rc = request(r, &q);
    if (rc == CE_OK && q.status != 200) rc = status_error(r, &q, "reading the manifest");
    if (rc == CE_OK && !q.out) rc = ce_fail(CE_ERR_DOWNLOAD, "%s: an empty manifest", q.url);
    if (rc == CE_OK) {
        sha256_mem(q.out, q.olen, digest_out);
        if (!strncmp(reference, "sha256:", 7) && strcmp(reference, digest_out) != 0)
            rc = ce_fail(CE_ERR_INTEGRITY, "the manifest %s sent hashes to %s, not to the %s asked for",
                         q.url, digest_out, reference);
        else if (q.dcd[0] && strcmp(q.dcd, digest_out) != 0)
            rc = ce_fail(CE_ERR_INTEGRITY, "the manifest %s sent hashes to %s, not to the %s the registry "
                         "names it by (Docker-Content-Digest): its copy is damaged or was changed", q.url, digest_out,
                         q.dcd);
    }
    if (rc) {
        free(q.out);
        return rc;
    }
    *body = q.out;
    *len = q.olen;
    return CE_OK;
}

int ce_reg_blob_get(ce_reg *r, const char *digest, size_t max, char **body, size_t *len)
{
    req q;
    req_init(&q, "GET");
    url_of(r, &q, "blobs", digest);
    q.max = max;
    int rc = request(r, &q);
    if (rc == CE_OK && q.status != 200) rc = status_error(r, &q, "reading a blob");
    char got[72];
    sha256_mem(q.out ? q.out : "", q.olen, got);
    if (rc == CE_OK && strcmp(got, digest) != 0)
        rc = ce_fail(CE_ERR_INTEGRITY, "%s hashes to %s, not to its digest: the registry's copy is damaged "
                     "or was changed", q.url, got);
    if (rc || !q.out) {
        free(q.out);
        return rc ? rc : ce_fail(CE_ERR_DOWNLOAD, "%s: an empty blob", q.url);
    }
    *body = q.out;
    *len = q.olen;
    return CE_OK;
}

int ce_reg_blob_fetch(ce_reg *r, const char *digest, long long size, char *path_out, size_t n)
{
    bool have;   /* also answers the challenge, so the download carries a current token */
    int rc = ce_reg_blob_exists(r, digest, &have);
    if (rc) return rc;
    if (!have)
        return ce_fail(CE_ERR_NOTFOUND, "registry %s has no blob %s in %s, which the image names: the image "
                       "is incomplete there; push it again", r->ref.host, digest, r->ref.repo);
    ce_fetch_item it = { .sha256 = digest + 7, .size = size, .label = digest, .allow_http = r->allow_http,
                         .bearer = r->bearer[0] ? r->bearer : NULL,
                         .userpwd = !r->bearer[0] && r->basic && r->userpwd[0] ? r->userpwd : NULL };
    char url[4200];
    snprintf(url, sizeof url, "%s/v2/%s/blobs/%s", r->base, r->ref.repo, digest);
    it.url = url;
    if ((rc = ce_fetch_all(r->ctx, &it, 1))) return rc;
    snprintf(path_out, n, "%s", it.path);
    return CE_OK;
}
