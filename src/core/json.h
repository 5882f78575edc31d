/* Reading one string member of a parsed JSON object (cJSON): the receipts,
 * system.json, the manifest copy's metadata and the framework probe's report
 * all read theirs this one way. */
#ifndef CE_JSON_H
#define CE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

/* An untrusted JSON document parsed strictly (the manifest, a redistrib
 * JSON: one reader for both): valid JSON, exactly one value (only
 * whitespace after it: not a second document, not garbage) and no \u0000 in
 * any string (cJSON cuts a string there: "a.run\u0000..." would read as
 * "a.run").  CE_OK and *out, the caller's to cJSON_Delete; else
 * CE_ERR_INTEGRITY, "invalid WHAT ORIGIN: ..." naming the line and byte. */
int ce_json_parse_strict(const char *text, size_t len, const char *what, const char *origin, cJSON **out);

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

/* The innermost object of the JSON text t[0..len) (t[len] a NUL) whose
 * braces hold offset off (a byte of a string value in it, say), found by
 * one forward scan that steps over strings: *start its '{', *end one past
 * its '}'.  1 found; 0 off is in no object; -1 the text ends first, or
 * nests deeper than 64.  For reading one object of a large document (the
 * manifest's artifact that names a sha256) without parsing the rest. */
int ce_json_object_around(const char *t, size_t len, size_t off, size_t *start, size_t *end);

/* Each top-level member of the JSON object t[0..len) (t[len] a NUL), in
 * order, without parsing it: fn gets its key (with the quotes, klen bytes
 * from key_at) and value (val_at to end); a nonzero return stops (negative:
 * an error, returned as -1).  1 all seen; 0 stopped by fn; -1 not an object
 * or cut short. */
typedef int (*ce_json_member_fn)(void *ud, const char *t, size_t key_at, size_t klen, size_t val_at, size_t end);
int ce_json_each_member(const char *t, size_t len, ce_json_member_fn fn, void *ud);

/* Each element of the JSON array t[0..len) (t[len] need not be a NUL if the
 * array is well formed inside a NUL-terminated text): fn gets the value
 * (val_at to end); the same returns as ce_json_each_member. */
typedef int (*ce_json_elem_fn)(void *ud, const char *t, size_t val_at, size_t end);
int ce_json_each_element(const char *t, size_t len, ce_json_elem_fn fn, void *ud);

/* The JSON string t[at..end) (with its quotes) decoded into out[n] (cut to
 * fit, always terminated; \uXXXX and surrogate pairs as UTF-8).  0; -1 when
 * it is not a string, has a raw control character or a bad escape. */
int ce_json_unquote(const char *t, size_t at, size_t end, char *out, size_t n);
/* The number t[at..end) as a long long (a fraction is cut, as a cast of
 * cJSON's double would): 0; -1 when it is not a JSON number. */
int ce_json_number(const char *t, size_t at, size_t end, long long *out);

/* A JSON text being written, in cJSON_Print's layout where a writer wants it
 * (tabs; members as "key":<TAB>value): appended to, grown as needed; oom
 * once an allocation failed (p is then NULL at the end: ce_jtext_take). */
typedef struct ce_jtext {
    char *p;
    size_t len, cap;
    bool oom;
} ce_jtext;
void ce_jtext_add(ce_jtext *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as it is (no formatting: what most of a text is); put: n bytes of p. */
void ce_jtext_raw(ce_jtext *j, const char *s);
void ce_jtext_put(ce_jtext *j, const char *p, size_t n);
/* s as a JSON string: quoted, escaped as cJSON escapes (", \, \b \f \n \r
 * \t, other control characters as \u00XX; other bytes as they are). */
void ce_jtext_str(ce_jtext *j, const char *s);
/* The text (malloc'd; NULL when out of memory); j is empty again. */
char *ce_jtext_take(ce_jtext *j);

#endif
