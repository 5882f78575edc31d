/* The receipt of a toolchain, versions/<name>/.cudaenv-receipt.json (format
 * in store.h): what was installed, from which URLs and sha256s, when, and
 * every regular file with its size, so verify can detect tampering and
 * uninstall knows what it owns.  Light (cJSON; the tree digest's sha256
 * through libcrypto, which the light binary loads on first use). */
#ifndef CE_RECEIPT_H
#define CE_RECEIPT_H

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "compose.h"
#include "core/ctx.h"
#include "manifest/resolve.h"

#define CE_RECEIPT_NAME ".cudaenv-receipt.json"

typedef struct ce_receipt_source {
    const char *kind;     /* "runfile" | "redist" | "cudnn" | "nccl" */
    const char *url;
    const char *sha256;
    long long size;       /* -1 unknown */
    const char *pkg;      /* the pkgs/ tree it was unpacked into; NULL: none (the JSON) */
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
    const char *const *adjust;                 /* what it holds beyond/without the profile: "+nsight_systems" */
    size_t n_adjust;
    const ce_receipt_component *components;    /* n_components == 0: a runfile install */
    size_t n_components;
    const char *nccl;                          /* NCCL's version, NULL: no NCCL in it */
} ce_receipt;

/* Write <prefix>/.cudaenv-receipt.json (temp + fsync + rename, mode 0644). */
int ce_receipt_write(const char *prefix, const ce_receipt *r);

/* The fields every install fills the same way: name, versions, platform, the
 * driver/compiler/architecture limits, the files, and the TensorFlow releases
 * of m this toolchain is the tested pair of (pointers into m, at most cap, in
 * tf).  Sources are left to the caller (their order is the install's). */
void ce_receipt_init(ce_receipt *rec, const ce_manifest *m, const ce_resolved *r, const char *platform,
                     ce_filelist *files, const char **tf, size_t cap);

/* The receipt in prefix without its file list (what every reader but
 * verify's wants).  ce_receipt_write puts the list last, and what is only
 * shown (list, info, cache list) reads from the front up to it when the
 * text ends as that list does ("]" then "}"); whole (what decides what is
 * removed: uninstall's and prune's kept trees) reads it all (256 MiB at
 * most), so a receipt with another member after its list (written by hand)
 * loses nothing.  The list is cut out before the parse.  NULL: none,
 * unreadable, or not JSON. */
cJSON *ce_receipt_read(const char *prefix, bool whole);

/* Whether the receipt in prefix names pkgs/<pkg> as a tree it was composed
 * from: a component's, a source's (cuDNN, NCCL) "pkg", or a tree named for
 * the sha256 of an archive it lists (ce_pkg_of_sha: receipts written before
 * sources had "pkg").  ce_store_gc_pkgs and cache prune keep such trees. */
bool ce_receipt_uses_pkg(const char *prefix, const char *pkg);
/* Whether pkg is named for the archive sha256: "<...>-<first 12 hex>", as
 * install names the trees of components and NCCL wheels. */
bool ce_pkg_of_sha(const char *pkg, const char *sha256);

/* The toolchain's identity, one digest wherever it is compared: sha256 over
 * the receipt's "path size sha256\n" lines of files (its "files" array),
 * sorted, so neither the time nor the URL an install came from, nor the order
 * it wrote the list in, changes it.  `verify --report`/--json give it as
 * tree_sha256, `push` annotates the image with it (io.cudaenv.tree_sha256),
 * `install oci://` checks it: the same toolchain on every node and in every
 * image has the same one.  hex "" when it cannot be computed. */
void ce_receipt_tree_sha256(const cJSON *files, char hex[65]);

/* What a toolchain holds, read back from its receipt: for list, info, and
 * install, which completes a toolchain with what a spec asks for and it
 * lacks (components.c). */
typedef enum { CE_HELD_UNKNOWN, CE_HELD_RUNFILE, CE_HELD_COMPONENTS } ce_held_kind;
typedef struct ce_receipt_held {
    ce_held_kind kind;               /* UNKNOWN: no receipt, or an adopted toolkit's */
    char profile[32];                /* the profile that describes it best ("" unknown) */
    char adjust[1024];               /* against it: "+nsight_systems,-libcufft", "" none */
    ce_receipt_component *comps;     /* kind COMPONENTS; strings point into json */
    size_t n;
    bool nccl;                       /* NCCL in it */
    char nccl_version[32];           /* "" when the receipt does not say */
    ce_receipt_source nccl_src;      /* its wheel, strings into json */
    void *json;                      /* the parsed receipt (cJSON) */
} ce_receipt_held;

/* Read prefix's receipt into *h (always initialised; ce_receipt_held_free);
 * whole as ce_receipt_read's: install, which composes from it, reads all. */
void ce_receipt_held_read(const char *prefix, bool whole, ce_receipt_held *h);
void ce_receipt_held_free(ce_receipt_held *h);
/* One line for people: "toolkit profile +nsight_systems, NCCL 2.21.5",
 * "runfile", "" for UNKNOWN. */
void ce_receipt_held_text(const ce_receipt_held *h, char *out, size_t n);

#endif
