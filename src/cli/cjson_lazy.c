/* The light binary's cJSON, loaded on first use.
 *
 * `cudaenv env`, `use` and the cd hook print no JSON and read none, yet
 * linking libcjson makes the loader open and map it on every exec (~0.08 ms
 * of a ~0.8 ms process, PERFORMANCE.md).  So the light binary does not link
 * it: each cJSON function it calls is defined here and forwards to
 * libcjson.so.1, dlopen'ed the first time any of them runs: by the path
 * pkg-config gave at build time (CE_CJSON_LIBDIR: no search of
 * ld.so.cache, ~15 us), else by its soname.  The full binary
 * and the unit tests link libcjson as usual (this file is not in them).
 * The executable exports none of these names (no -rdynamic), so calls
 * inside libcjson stay inside it. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <cJSON.h>

static void *cjson_sym(const char *name)
{
    static void *lib;
#ifdef CE_CJSON_LIBDIR
    if (!lib && CE_CJSON_LIBDIR[0] == '/') lib = dlopen(CE_CJSON_LIBDIR "/libcjson.so.1", RTLD_NOW | RTLD_LOCAL);
#endif
    if (!lib) lib = dlopen("libcjson.so.1", RTLD_NOW | RTLD_LOCAL);
    void *p = lib ? dlsym(lib, name) : NULL;
    if (!p) {
        /* the package dependency is missing: nothing sensible to return */
        fprintf(stderr, "cudaenv: cannot load %s from libcjson.so.1: %s; install libcjson1\n", name, dlerror());
        exit(1);
    }
    return p;
}

#define FWD(ret, name, params, args)                              \
    ret name params                                               \
    {                                                             \
        static ret(*f) params;                                    \
        if (!f) *(void **)(&f) = cjson_sym(#name);                \
        return f args;                                            \
    }

FWD(cJSON *, cJSON_Parse, (const char *value), (value))
FWD(cJSON *, cJSON_ParseWithLength, (const char *value, size_t len), (value, len))
FWD(cJSON *, cJSON_ParseWithLengthOpts,
    (const char *value, size_t len, const char **end, cJSON_bool require_nul), (value, len, end, require_nul))
FWD(char *, cJSON_Print, (const cJSON *item), (item))
FWD(char *, cJSON_PrintUnformatted, (const cJSON *item), (item))
FWD(int, cJSON_GetArraySize, (const cJSON *array), (array))
FWD(cJSON *, cJSON_GetObjectItemCaseSensitive, (const cJSON *const object, const char *const string),
    (object, string))
FWD(cJSON_bool, cJSON_IsString, (const cJSON *const item), (item))
FWD(cJSON_bool, cJSON_IsNumber, (const cJSON *const item), (item))
FWD(cJSON_bool, cJSON_IsObject, (const cJSON *const item), (item))
FWD(cJSON_bool, cJSON_IsArray, (const cJSON *const item), (item))
FWD(cJSON_bool, cJSON_IsNull, (const cJSON *const item), (item))
FWD(cJSON_bool, cJSON_IsBool, (const cJSON *const item), (item))
FWD(cJSON_bool, cJSON_IsTrue, (const cJSON *const item), (item))
FWD(cJSON_bool, cJSON_IsFalse, (const cJSON *const item), (item))
FWD(cJSON *, cJSON_Duplicate, (const cJSON *item, cJSON_bool recurse), (item, recurse))
FWD(cJSON *, cJSON_DetachItemFromObjectCaseSensitive, (cJSON *object, const char *string), (object, string))
FWD(cJSON *, cJSON_CreateObject, (void), ())
FWD(cJSON *, cJSON_CreateArray, (void), ())
FWD(cJSON *, cJSON_CreateNull, (void), ())
FWD(cJSON *, cJSON_CreateString, (const char *string), (string))
FWD(cJSON *, cJSON_CreateNumber, (double num), (num))
FWD(cJSON *, cJSON_CreateBool, (cJSON_bool boolean), (boolean))
FWD(cJSON_bool, cJSON_AddItemToArray, (cJSON *array, cJSON *item), (array, item))
FWD(cJSON_bool, cJSON_AddItemToObject, (cJSON *object, const char *string, cJSON *item), (object, string, item))
FWD(cJSON *, cJSON_AddNullToObject, (cJSON *const object, const char *const name), (object, name))
FWD(cJSON *, cJSON_AddBoolToObject, (cJSON *const object, const char *const name, const cJSON_bool b),
    (object, name, b))
FWD(cJSON *, cJSON_AddNumberToObject, (cJSON *const object, const char *const name, const double n),
    (object, name, n))
FWD(cJSON *, cJSON_AddStringToObject, (cJSON *const object, const char *const name, const char *const s),
    (object, name, s))
FWD(cJSON *, cJSON_AddObjectToObject, (cJSON *const object, const char *const name), (object, name))
FWD(cJSON *, cJSON_AddArrayToObject, (cJSON *const object, const char *const name), (object, name))

void cJSON_Delete(cJSON *item)
{
    static void (*f)(cJSON *);
    if (!item) return;
    if (!f) *(void **)(&f) = cjson_sym("cJSON_Delete");
    f(item);
}
