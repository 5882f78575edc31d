/* The manifest (MANIFEST.md, schema 1): cJSON -> owned structs, validated
 * strictly.  Every failure names the JSON path of the offending value, e.g.
 * cuda."11.8.0".runfile."linux-x86_64".sha256: expected 64 hex characters */
#ifndef CE_MANIFEST_H
#define CE_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "core/ctx.h"

#define CE_MANIFEST_MAX (16u * 1024 * 1024)
/* Longest CUDA or cuDNN version key: the store names toolchains with it
 * (store.h: ce_toolchain keeps 32-byte versions), so a longer one would
 * install a toolchain that list, use and uninstall cannot see. */
#define CE_MANIFEST_KEY_MAX 31

typedef struct ce_artifact {
    char *platform;      /* "linux-x86_64", "linux-sbsa" */
    char *url;           /* absolute after loading (relative refs resolved, mirror applied) */
    char sha256[65];     /* 64 lowercase hex */
    long long size;      /* bytes, -1 when the manifest gives none */
    char *for_cuda;      /* "for_cuda": the CUDA X.Y an old per-minor cuDNN build
                            needs ("10.1"); NULL = any release of the major */
} ce_artifact;

/* Why an implicit cuDNN choice is what it is (the generator's resolution rule,
 * tools/gen_pick.py): the newest cuDNN whose sha256 rests on XLA's pinned JSON
 * or two independent sources; the newer ones resting on one source passed over. */
typedef struct ce_cudnn_choice {
    char *platform;      /* "linux-x86_64" */
    char *cudnn;         /* "9.20.0.48"; NULL: the bare spec takes no cuDNN (why says so) */
    char *passed_over;   /* "9.27.0.42, 9.21.0.82"; NULL when none */
    char *why;
} ce_cudnn_choice;

typedef struct ce_cuda {
    char *version;       /* "11.8.0" */
    char *min_driver;    /* "520.61.05", NULL if unknown */
    int max_gcc;         /* 0 if unknown */
    char *sm_min, *sm_max; /* "3.5", "9.0"; NULL if unknown */
    char *source;
    ce_artifact *runfiles;
    size_t n_runfiles;
    char *min_driver_compat; /* lowest driver through minor-version compatibility
                                ("525.60.13", "580"), NULL if none/unknown */
    ce_artifact *redist;     /* "redist": NVIDIA's redistrib_<ver>.json pinned by
                                url/sha256/size (platform "any"); NULL if none */
    ce_cudnn_choice *cudnn_defaults; /* "cudnn_default": a bare spec's cuDNN per platform; */
    size_t n_cudnn_defaults;         /* none (older manifests): the newest built for the major */
} ce_cuda;

/* "profiles": named component sets installed from a redistrib JSON.
 * components: exact names, or "*" for every component; exclude: exact names
 * or prefixes ending in "*" ("nsight_*").  Names a release lacks are skipped. */
typedef struct ce_profile {
    char *name;          /* "tf", "toolkit" */
    char **components;
    size_t n_components;
    char **exclude;
    size_t n_exclude;
    char *source;
} ce_profile;

#define CE_COMPONENT_MAX 64  /* longest component name accepted */

typedef struct ce_cudnn_build {
    int cuda_major;      /* from the key "cuda11" */
    ce_artifact *archives;
    size_t n_archives;
} ce_cudnn_build;

/* A library release built per CUDA major: cuDNN ("cudnn" section) and NCCL
 * ("nccl": the wheels TensorFlow's and-cuda extra installs), same shape. */
typedef struct ce_cudnn {
    char *version;       /* "8.7.0.84", "2.25.1" */
    char *source;
    ce_cudnn_build *builds;
    size_t n_builds;
} ce_cudnn;

typedef struct ce_tf {
    char *version;       /* "2.14" (key: MAJOR.MINOR) */
    char *cuda;          /* "11.8.0" */
    char *cudnn;         /* "8.7.0.84", NULL when TF's table names none */
    char *python;        /* "3.9-3.11", informational */
    char *source;
    char *not_installable; /* reason, NULL when installable */
    char *nccl;          /* "2.25.1": the NCCL the row installs, NULL for none */
} ce_tf;

/* A PyTorch or JAX release ("torch", "jax" sections): its CUDA builds, each
 * resolved (by the generator) to a CUDA and a cuDNN release of the manifest. */
typedef struct ce_fw_build {
    char *tag;           /* "cu124" (PyTorch's wheel suffix), "cuda12" (JAX's extra) */
    char *cuda;          /* "12.4.1": the manifest's release for the wheel's CUDA */
    char *cudnn;         /* "9.1.1.17" */
    char *wheel_cuda;    /* what the wheels were built for / pin ("12.4", "9.1.0.70"); NULL if not given */
    char *wheel_cudnn;
    char *channel;       /* "stable", "experimental"; NULL if not given */
    char *source;
    char *not_installable; /* reason, NULL when installable */
    char *cudnn_why;     /* an implicit cuDNN (a range, a pin the manifest lacks): why this one; NULL if none */
    char *cudnn_passed_over; /* the newer ones passed over ("9.27.0.42"), NULL if none */
} ce_fw_build;

typedef struct ce_fw {
    char *version;       /* torch: "2.5" (MAJOR.MINOR); jax: "0.4.30" */
    char *deflt;         /* the build pip installs from PyPI: a tag of builds */
    char *default_source;
    char *python;
    char *source;
    ce_fw_build *builds;
    size_t n_builds;
} ce_fw;

typedef struct ce_manifest {
    int schema;
    char *updated;
    /* the signed claims (manifest_claims.c): what a remote copy is checked
     * against (install/manifest_fetch.h); absent: -1 / NULL */
    long long serial;    /* grows with every publication of the same source */
    char *source;        /* the URL the publisher serves it at */
    char *expires;       /* YYYY-MM-DD: not current after this day (UTC) */
    char *origin;        /* path or URL it was loaded from */
    bool local;          /* loaded from a local path: http:// and file:// allowed */
    ce_tf *tf;           /* sorted by version, newest last */
    size_t n_tf;
    ce_cuda *cuda;       /* sorted by version */
    size_t n_cuda;
    ce_cudnn *cudnn;     /* sorted by version */
    size_t n_cudnn;
    ce_profile *profiles;
    size_t n_profiles;
    ce_cudnn *nccl;      /* sorted by version; NULL/0 when the manifest lists none */
    size_t n_nccl;
    ce_fw *torch;        /* sorted by version, newest last */
    size_t n_torch;
    ce_fw *jax;
    size_t n_jax;
} ce_manifest;

/* Parse and validate text.  origin is the path/URL used to resolve relative
 * URLs; mirror (may be NULL/"") rewrites https://developer.download.nvidia.com/.
 * Returns CE_ERR_INTEGRITY with the JSON path on any schema violation. */
int ce_manifest_parse(ce_ctx *ctx, const char *text, size_t len, const char *origin,
                      bool local, ce_manifest **out);
/* Whether the day YYYY-MM-DD (a validated "expires") is over at now (UTC). */
bool ce_manifest_date_past(const char *day, time_t now);
/* Load from a local path (ctx->mirror applied). */
int ce_manifest_load_file(ce_ctx *ctx, const char *path, ce_manifest **out);
/* Load a remote manifest (the one ctx uses, url): its local copy, refreshed
 * first when stale (source.h, copy.h).  Full binary only (implemented in
 * install/manifest_fetch.c). */
int ce_manifest_load_url(ce_ctx *ctx, const char *url, ce_manifest **out);
void ce_manifest_free(ce_manifest *m);

const ce_cuda *ce_manifest_cuda(const ce_manifest *m, const char *version);
const ce_cudnn *ce_manifest_cudnn(const ce_manifest *m, const char *version);
const ce_cudnn *ce_manifest_nccl(const ce_manifest *m, const char *version);
/* The newest NCCL with a build for a CUDA major and platform, NULL if none. */
const ce_cudnn *ce_manifest_nccl_for(const ce_manifest *m, int cuda_major, const char *platform);
const ce_tf *ce_manifest_tf(const ce_manifest *m, const char *version);
/* version "2.14" exactly, "2" the newest installable 2.x, "latest" the
 * newest installable row; NULL if none. */
const ce_tf *ce_manifest_tf_pick(const ce_manifest *m, const char *version);
/* The framework rows of a manifest: "torch" or "jax" (NULL for another name). */
const ce_fw *ce_manifest_fws(const ce_manifest *m, const char *name, size_t *n);
/* The build of f called tag ("" or NULL: its default); NULL if none. */
const ce_fw_build *ce_fw_build_for(const ce_fw *f, const char *tag);
/* version "2.5" exactly, "2" / "0.4" the newest release of that prefix, "latest"
 * the newest; for the prefixes, only releases whose build tag (default when
 * "") is installable count.  NULL if none. */
const ce_fw *ce_manifest_fw_pick(const ce_manifest *m, const char *name, const char *version, const char *tag);
/* The newest CUDA release with files for platform whose min_driver driver
 * meets (driver NULL: the newest with files); NULL if none. */
const ce_cuda *ce_manifest_cuda_latest(const ce_manifest *m, const char *platform, const char *driver);
const ce_profile *ce_manifest_profile(const ce_manifest *m, const char *name);
/* Whether profile p takes the component called name. */
bool ce_profile_selects(const ce_profile *p, const char *name);
/* A component name as NVIDIA writes them: [a-z0-9_]+, at most
 * CE_COMPONENT_MAX characters (with_glob: "*" or a trailing "*" too). */
bool ce_component_name_valid(const char *name, bool with_glob);
/* The artifact of a list for a platform, NULL if none. */
const ce_artifact *ce_artifact_for(const ce_artifact *list, size_t n, const char *platform);
/* The generator's cuDNN for a bare spec of c on platform ("cudnn_default"),
 * NULL when the manifest gives none (older manifests). */
const ce_cudnn_choice *ce_cuda_cudnn_choice(const ce_cuda *c, const char *platform);
/* The cuDNN archive of cudnn for a CUDA major and platform, NULL if none. */
const ce_artifact *ce_cudnn_archive(const ce_cudnn *c, int cuda_major, const char *platform);

#endif
