/* The rules every request of the fetch module follows: which URLs may be
 * fetched, the libcurl options (TLS always verified, redirects bounded and
 * never downgraded, stall timeout), which failures are worth a retry and
 * how long to wait.  Full binary only; public API in fetch.h. */
#include "http.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <strings.h>
#include <time.h>


#define MAX_REDIRS 10L

static void global_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* install runs ce_fetch_all on its own thread: initialise exactly once. */
void ce_http_global_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, global_init_once);
}

bool ce_http_has_scheme(const char *url, const char *scheme)
{
    size_t n = strlen(scheme);
    return strncasecmp(url, scheme, n) == 0;
}

/* The https-only rule, applied before any request is made. */
int ce_http_check_url(char *msg, size_t n, const char *url, bool allow_http)
{
    if (ce_http_has_scheme(url, "https://"))
        return CE_OK;
    if (allow_http && (ce_http_has_scheme(url, "http://") || ce_http_has_scheme(url, "file://")))
        return CE_OK;
    if (ce_http_has_scheme(url, "http://") || ce_http_has_scheme(url, "file://"))
        snprintf(msg, n, "refusing %s: downloads from a remote manifest are https only; "
                 "use --insecure (or a local manifest) to allow http:// and file:// from a trusted mirror", url);
    else
        snprintf(msg, n, "unsupported URL %s: expected https://", url);
    return CE_ERR_DOWNLOAD;
}

/* The CA bundle: CURL_CA_BUNDLE, then OpenSSL's SSL_CERT_FILE, then the first
 * of the places distributions keep theirs.  The release's libcurl is built on
 * Debian 11 and knows only Debian's path; on RHEL/Rocky, SUSE or Alpine that
 * file does not exist and every https download would fail verification.
 * NULL: libcurl's own default.  Looked up once per process. */
static const char *const ca_known[] = {
    "/etc/ssl/certs/ca-certificates.crt",                 /* Debian, Ubuntu, Arch, Gentoo */
    "/etc/pki/tls/certs/ca-bundle.crt",                   /* RHEL, Rocky, Alma, Fedora, Amazon Linux */
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  /* RHEL's extracted trust */
    "/etc/ssl/ca-bundle.pem",                             /* openSUSE, SLES */
    "/etc/ssl/cert.pem",                                  /* Alpine */
};
static const char *ca_pick;
static pthread_once_t ca_once = PTHREAD_ONCE_INIT;

static void ca_find(void)
{
    for (size_t i = 0; i < sizeof ca_known / sizeof ca_known[0] && !ca_pick; i++)
        if (access(ca_known[i], R_OK) == 0) ca_pick = ca_known[i];
}

const char *ce_http_ca_bundle(void)
{
    const char *env = getenv("CURL_CA_BUNDLE");
    if (env && *env) return env;
    env = getenv("SSL_CERT_FILE");
    if (env && *env) return env;
    pthread_once(&ca_once, ca_find);
    return ca_pick;
}

/* Options every transfer shares: protocols, redirects, TLS, timeouts. */
void ce_http_setup(CURL *e, const char *url, bool allow_http, char *errbuf)
{
    curl_easy_setopt(e, CURLOPT_URL, url);
    /* A redirect may never downgrade to plain http (nor reach file://).  The
     * _STR options need libcurl 7.85; the release is built on Debian 11's 7.74,
     * where only the bitmasks exist (deprecated, hence not used where both do). */
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, allow_http ? "https,http,file" : "https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, allow_http ? "https,http" : "https");
#else
    curl_easy_setopt(e, CURLOPT_PROTOCOLS, allow_http ? (long)(CURLPROTO_HTTPS | CURLPROTO_HTTP | CURLPROTO_FILE)
                                                      : (long)CURLPROTO_HTTPS);
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS, allow_http ? (long)(CURLPROTO_HTTPS | CURLPROTO_HTTP)
                                                            : (long)CURLPROTO_HTTPS);
#endif
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, MAX_REDIRS);
    /* >= 400 fails before any body byte reaches us: no HTML in the cache. */
    curl_easy_setopt(e, CURLOPT_FAILONERROR, 1L);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, "cudaenv/" CE_VERSION);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
    const char *ca = ce_http_ca_bundle();
    if (ca)
        curl_easy_setopt(e, CURLOPT_CAINFO, ca);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, 30L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, ce_setting_long(ce_settings_now()->stall_timeout, 60, 1));
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 512L * 1024);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    errbuf[0] = '\0';
}

static bool retryable_curl(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT: case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: case CURLE_PARTIAL_FILE:
    case CURLE_OPERATION_TIMEDOUT: case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR: case CURLE_RECV_ERROR: case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM: case CURLE_SSL_CONNECT_ERROR:
        return true;
    default:
        return false;
    }
}

/* Describe a failed attempt in msg; *retry: whether another may help. */
int ce_http_attempt_error(CURL *e, CURLcode rc, const char *url, const char *errbuf,
                         char *msg, size_t n, bool *retry)
{
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    const char *why = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    *retry = false;
    if (rc == CURLE_HTTP_RETURNED_ERROR) {
        *retry = status >= 500 || status == 408 || status == 429;
        snprintf(msg, n, "HTTP %ld from %s%s", status, url,
                 status == 404 ? ": not on the server (is the mirror complete?)" : "");
        return CE_ERR_DOWNLOAD;
    }
    if (retryable_curl(rc)) {
        *retry = true;
        snprintf(msg, n, "download of %s failed: %s", url, why);
        return CE_ERR_DOWNLOAD;
    }
    char *target = NULL; /* after a followed redirect: where it pointed */
    curl_easy_getinfo(e, CURLINFO_EFFECTIVE_URL, &target);
    if (rc == CURLE_UNSUPPORTED_PROTOCOL && target && strcmp(target, url) != 0)
        snprintf(msg, n, "%s redirected to %s, which cudaenv refuses: redirects must stay on https "
                 "(use --insecure only for a trusted local mirror)", url, target);
    else if (rc == CURLE_TOO_MANY_REDIRECTS)
        snprintf(msg, n, "more than %ld redirects fetching %s (a redirect loop?)", MAX_REDIRS, url);
    else if (rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE)
        snprintf(msg, n, "TLS verification failed for %s: %s; for a mirror with a private CA set "
                 "CURL_CA_BUNDLE to its certificate file", url, why);
    else
        snprintf(msg, n, "download of %s failed: %s", url, why);
    return CE_ERR_DOWNLOAD;
}

double ce_http_backoff_s(int failures)
{
    long base = ce_setting_long(ce_settings_now()->retry_delay_ms, 1000, 0);
    int shift = failures > 1 ? failures - 1 : 0;
    double d = (double)base * (double)(1L << (shift > 5 ? 5 : shift)) / 1000.0;
    return d > 30.0 ? 30.0 : d;
}
