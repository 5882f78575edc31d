/* The receipt of a toolchain, versions/<name>/.cudaenv-receipt.json (format
 * in store.h): what was installed, from which URLs and sha256s, when, and
 * every regular file with its size, so verify can detect tampering and
 * uninstall knows what it owns.  Light (cJSON only). */
#ifndef CE_RECEIPT_H
#define CE_RECEIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "compose.h"
#include "core/ctx.h"
#include "manifest/resolve.h"

#define CE_RECEIPT_NAME ".cudaenv-receipt.json"

typedef struct ce_receipt_source {
    const char *kind;     /* "runfile" | "cudnn" */
    const char *url;
    const char *sha256;
    long long size;       /* -1 unknown */
} ce_receipt_source;

/* A component installed from NVIDIA's redistrib JSON, and the pkgs/ tree
 * it was unpacked into. */
typedef struct ce_receipt_component {
    const char *name, *version, *url, *sha256, *pkg;
    long long size;
} ce_receipt_component;

typedef struct ce_receipt {
    const char *name, *cuda, *cudnn, *platform; /* cudnn NULL/"" -> null */
    const char *min_driver;                    /* NULL -> null */
    const char *min_driver_compat;             /* NULL -> no field */
    int max_gcc;                               /* 0 -> null */
    const char *sm_min, *sm_max;               /* NULL -> no "sm" */
    const char *const *tensorflow;             /* TF releases this pair serves */
    size_t n_tensorflow;
    ce_receipt_source sources[3];   /* redist, cudnn, nccl */
    size_t n_sources;
    const ce_filelist *files;
    const char *profile;                       /* component installs: "tf", "toolkit" */
    const ce_receipt_component *components;    /* n_components == 0: a runfile install */
    size_t n_components;
} ce_receipt;

/* Write <prefix>/.cudaenv-receipt.json (temp + fsync + rename, mode 0644). */
int ce_receipt_write(ce_ctx *ctx, const char *prefix, const ce_receipt *r);

/* The fields every install fills the same way: name, versions, platform, the
 * driver/compiler/architecture limits, the files, and the TensorFlow releases
 * of m this toolchain is the tested pair of (pointers into m, at most cap, in
 * tf).  Sources are left to the caller (their order is the install's). */
void ce_receipt_init(ce_receipt *rec, const ce_manifest *m, const ce_resolved *r, const char *platform,
                     ce_filelist *files, const char **tf, size_t cap);

/* Whether the receipt in prefix lists a component unpacked into pkgs/<pkg>
 * (ce_store_gc_pkgs keeps such trees). */
bool ce_receipt_uses_pkg(const char *prefix, const char *pkg);

#endif
