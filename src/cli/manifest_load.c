/* Loading the manifest for a command: --manifest / CUDAENV_MANIFEST or the
 * built-in one.  A local path (or file:// URL) is read here; an http(s) URL
 * needs libcurl, which only the full binary links, so the light binary
 * re-execs cudaenv-full with the same argv instead. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "manifest/manifest.h"

int cli_load_manifest(cli *c, ce_manifest **out)
{
    *out = NULL;
    char loc[4096];
    int rc = ce_manifest_location(&c->ctx, loc, sizeof loc);
    if (rc) return rc;
    if (strncasecmp(loc, "https://", 8) == 0 || strncasecmp(loc, "http://", 7) == 0) {
        if (cli_url_manifest_loader)
            return cli_url_manifest_loader(&c->ctx, loc, out);
        cli_exec_full(c);   /* returns only when the exec failed (and says so) */
        return ce_fail(&c->ctx, CE_ERR_OTHER, "cannot load manifest %s without cudaenv-full", loc);
    }
    const char *path = strncasecmp(loc, "file://", 7) == 0 ? loc + 7 : loc;
    /* name it as the user would find it: bin/../share/... -> share/... */
    char real[PATH_MAX];
    if (realpath(path, real)) path = real;
    return ce_manifest_load_file(&c->ctx, path, out);
}
