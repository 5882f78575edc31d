/* Reading one string member of a parsed JSON object (cJSON): the receipts,
 * system.json, the manifest copy's metadata and the framework probe's report
 * all read theirs this one way. */
#ifndef CE_JSON_H
#define CE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

/* The string at key in o, or NULL when o is not an object, lacks key, or
 * holds something other than a string there. */
const char *ce_json_str(const cJSON *o, const char *key);

/* The same copied into out[n] (cut to fit, always terminated); "" when
 * absent or not a string. */
void ce_json_copy(const cJSON *o, const char *key, char *out, size_t n);

/* Where the top-level member name of the JSON text t[0..len) (t[len] is a
 * NUL: an object or array value is stepped over with strcspn) is, without
 * parsing it: *key_at its key's opening quote, *val_at its value's first
 * byte, *end one past the value.  1 found; 0 the document ends without it;
 * -1 the text ends first (cut, or not JSON).  Nothing else is validated: for
 * reading one member of a large document cheaply (the manifest's date, a
 * receipt without its file list). */
int ce_json_top_member(const char *t, size_t len, const char *name, size_t *key_at, size_t *val_at, size_t *end);
/* The same for the first member whose key is name or starts with name and a
 * '.' ("13.0" finds "13.0.2": a release named by its prefix). */
int ce_json_top_member_dotted(const char *t, size_t len, const char *name, size_t *key_at, size_t *val_at, size_t *end);
/* The same, stopping at the value's first byte (an object or array value is
 * not stepped over): for a member known to come last. */
int ce_json_top_key(const char *t, size_t len, const char *name, size_t *key_at, size_t *val_at);

/* Each top-level member of the JSON object t[0..len) (t[len] a NUL), in
 * order, without parsing it: fn gets its key (with the quotes, klen bytes
 * from key_at) and value (val_at to end); a nonzero return stops (negative:
 * an error, returned as -1).  1 all seen; 0 stopped by fn; -1 not an object
 * or cut short. */
typedef int (*ce_json_member_fn)(void *ud, const char *t, size_t key_at, size_t klen, size_t val_at, size_t end);
int ce_json_each_member(const char *t, size_t len, ce_json_member_fn fn, void *ud);

#endif
