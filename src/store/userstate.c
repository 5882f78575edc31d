#include "userstate.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

bool ce_store_shared(const ce_ctx *ctx)
{
    struct stat st;
    return stat(ctx->root, &st) == 0 && st.st_uid != geteuid();
}

static int xdg_path(const char *var, const char *fallback, const char *name, char *out, size_t outsz)
{
    const char *base = getenv(var), *home = getenv("HOME");
    int n;
    if (base && base[0] == '/') n = snprintf(out, outsz, "%s/cudaenv/%s", base, name);
    /* a relative HOME (HOME=.) would put it under whatever the cwd is */
    else if (home && home[0] == '/') n = snprintf(out, outsz, "%s/%s/cudaenv/%s", home, fallback, name);
    else if (home && *home)
        return ce_fail(CE_ERR_OTHER, "HOME (%s) is not an absolute path: nowhere safe to keep your own %s; "
                       "set HOME (or %s) to an absolute directory", home, name, var);
    else return ce_fail(CE_ERR_OTHER, "neither %s nor HOME is set: nowhere to keep your own %s", var, name);
    if (n < 0 || (size_t)n >= outsz) return ce_fail(CE_ERR_OTHER, "path too long for %s", name);
    return CE_OK;
}

int ce_user_config_path(const char *name, char *out, size_t outsz)
{
    return xdg_path("XDG_CONFIG_HOME", ".config", name, out, outsz);
}

int ce_user_cache_path(const char *name, char *out, size_t outsz)
{
    return xdg_path("XDG_CACHE_HOME", ".cache", name, out, outsz);
}

int ce_user_index_path(ce_ctx *ctx, char *out, size_t outsz)
{
    unsigned long long h = 14695981039346656037ULL;
    for (const unsigned char *p = (const unsigned char *)ctx->root; *p; p++) h = (h ^ *p) * 1099511628211ULL;
    char name[40];
    snprintf(name, sizeof name, "index-%016llx", h);
    return ce_user_cache_path(name, out, outsz);
}
