/* The light binary's libcrypto, loaded on first use (as cjson_lazy.c does
 * for libcjson).  The light binary hashes a manifest only when the
 * resolution index finds it changed (manifest/index.h: once per upgrade or
 * update, never on a current index), so it does not link libcrypto: the two
 * functions that takes are defined here and forward to libcrypto.so.3,
 * dlopen'ed by the path pkg-config gave at build time (CE_CRYPTO_LIBDIR),
 * else by its soname.  The full binary and the unit tests link libcrypto. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <openssl/evp.h>

static void *crypto_sym(const char *name)
{
    static void *lib;
#ifdef CE_CRYPTO_LIBDIR
    if (!lib && CE_CRYPTO_LIBDIR[0] == '/') lib = dlopen(CE_CRYPTO_LIBDIR "/libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
#endif
    if (!lib) lib = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    void *p = lib ? dlsym(lib, name) : NULL;
    if (!p) {
        fprintf(stderr, "cudaenv: cannot load %s from libcrypto.so.3: %s; install libssl3\n", name, dlerror());
        exit(1);
    }
    return p;
}

const EVP_MD *EVP_sha256(void)
{
    static const EVP_MD *(*f)(void);
    if (!f) *(void **)(&f) = crypto_sym("EVP_sha256");
    return f();
}

int EVP_Digest(const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type,
               ENGINE *impl)
{
    static int (*f)(const void *, size_t, unsigned char *, unsigned int *, const EVP_MD *, ENGINE *);
    if (!f) *(void **)(&f) = crypto_sym("EVP_Digest");
    return f(data, count, md, size, type, impl);
}
