/* Request rules shared by the fetch module (fetch*.c, http.c): internal. */
#ifndef CE_HTTP_H
#define CE_HTTP_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"

void ce_http_global_init(void);
bool ce_http_has_scheme(const char *url, const char *scheme);
/* https only unless allow_http (then http:// and file:// too); before any request. */
int ce_http_check_url(char *msg, size_t n, const char *url, bool allow_http);
/* Options every transfer shares: protocols, redirects, TLS, CA bundle, timeouts. */
void ce_http_setup(CURL *e, const char *url, bool allow_http, char *errbuf);
/* Describe a failed attempt in msg (CE_ERR_DOWNLOAD); *retry: whether another may help. */
int ce_http_attempt_error(CURL *e, CURLcode rc, const char *url, const char *errbuf,
                          char *msg, size_t n, bool *retry);
/* Seconds to wait before attempt failures+1 (CUDAENV_RETRY_DELAY_MS doubling, max 30 s). */
double ce_http_backoff_s(int failures);

/* The CA bundle transfers verify against: CURL_CA_BUNDLE, SSL_CERT_FILE, else
 * the first distribution path that exists (NULL: libcurl's default). */
const char *ce_http_ca_bundle(void);

#endif
