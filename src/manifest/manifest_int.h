/* Internal to src/core/manifest*.c: the parser's state, its error (naming
 * the JSON path of the offending value and the manifest it came from), and
 * the URL rules (manifest_url.c) the artifact parser applies.  Not for other
 * modules. */
#ifndef CE_MANIFEST_INT_H
#define CE_MANIFEST_INT_H

#include <stdbool.h>

#include "manifest.h"

typedef struct parser {
    ce_ctx *ctx;
    const char *origin;
    bool local;
    char path[512];     /* JSON path of the value being read */
} parser;

/* manifest.c: CE_ERR_INTEGRITY "invalid manifest ORIGIN: PATH: MESSAGE" */
int mf_bad(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* manifest_url.c: *url (as the manifest wrote it, escaped for printing; raw:
 * its bytes) made absolute against the manifest's location, the mirror
 * applied, and its scheme checked against what the origin allows. */
int mf_check_url(parser *p, char **url, const char *raw);

#endif
