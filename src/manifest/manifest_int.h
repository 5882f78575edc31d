/* Internal to src/core/manifest*.c: the parser's state, its error (naming
 * the JSON path of the offending value and the manifest it came from), and
 * the URL rules (manifest_url.c) the artifact parser applies.  Not for other
 * modules. */
#ifndef CE_MANIFEST_INT_H
#define CE_MANIFEST_INT_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "manifest.h"

typedef struct parser {
    ce_ctx *ctx;
    const char *origin;
    bool local;
    char path[512];     /* JSON path of the value being read */
} parser;

/* manifest.c: CE_ERR_INTEGRITY "invalid manifest ORIGIN: PATH: MESSAGE" */
int mf_bad(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* manifest.c: the JSON path (mf_path_push returns the old length for
 * mf_path_pop), typed members (absent or null: *out stays NULL; "required"
 * makes that an error), and a section parsed into a sorted array of elements
 * that each start with their char *version. */
size_t mf_path_push(parser *p, const char *key);
void mf_path_pop(parser *p, size_t n);
const char *mf_type_name(const cJSON *v);
int mf_get_str(parser *p, const cJSON *obj, const char *key, bool required, char **out);
int mf_get_version(parser *p, const cJSON *obj, const char *key, bool required, char **out);
typedef int (*parse_fn)(parser *, const cJSON *, void *);
int mf_parse_section(parser *p, const cJSON *doc, const char *key, size_t sz, parse_fn fn,
                     int (*cmp)(const void *, const void *), void **arr, size_t *count);

/* manifest_fw.c: the "torch" and "jax" sections, checked against the cuda and
 * cudnn sections (parsed first); and freeing them. */
int mf_parse_frameworks(parser *p, const cJSON *doc, ce_manifest *m);
void mf_free_frameworks(ce_manifest *m);

/* manifest_choice.c: cuda.<ver>."cudnn_default" (why a bare spec takes the
 * cuDNN it takes), and freeing it. */
int mf_parse_cudnn_defaults(parser *p, const cJSON *v, ce_cuda *c);
void mf_free_cudnn_defaults(ce_cuda *c);

/* manifest_claims.c: the top-level "serial", "source" and "expires". */
int mf_parse_claims(parser *p, const cJSON *doc, ce_manifest *m);

/* manifest_url.c: *url (as the manifest wrote it, escaped for printing; raw:
 * its bytes) made absolute against the manifest's location, the mirror
 * applied, and its scheme checked against what the origin allows. */
int mf_check_url(parser *p, char **url, const char *raw);

#endif
