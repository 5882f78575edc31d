/* Reading one string member of a parsed JSON object (cJSON): the receipts,
 * system.json, the manifest copy's metadata and the framework probe's report
 * all read theirs this one way. */
#ifndef CE_JSON_H
#define CE_JSON_H

#include <stddef.h>

#include <cJSON.h>

/* The string at key in o, or NULL when o is not an object, lacks key, or
 * holds something other than a string there. */
const char *ce_json_str(const cJSON *o, const char *key);

/* The same copied into out[n] (cut to fit, always terminated); "" when
 * absent or not a string. */
void ce_json_copy(const cJSON *o, const char *key, char *out, size_t n);

#endif
