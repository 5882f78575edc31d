/* Specs (what users type) -> toolchains.
 *   tf-2.14, tensorflow-2.14.1, tf-2.14.0, tensorflow==2.14.0   TensorFlow release
 *   tf-2 (the newest 2.x), tf-latest (the newest)                TensorFlow aliases
 *   torch-2.5, pytorch-2.5.1, torch==2.5.1 (the default build: what pip installs
 *   from PyPI), torch-2.5+cu121 / torch-2.5.1+cu121 (another CUDA build),
 *   torch-2, torch-latest                                       PyTorch release
 *   jax-0.4.30, jax==0.4.30 (+cuda12 / +cuda13), jax-0.4, jax-latest   JAX release
 *   latest, cuda-latest: the newest CUDA release this machine's driver runs
 *   (its min_driver; the newest of all when no driver is found), 12 = newest 12.x
 *   11.8, 11.8.0, cuda-11.8                                     CUDA release
 *   any of the above + "+cudnn8.9" / "+cudnn8.7.0.84"           cuDNN choice
 *   system                                                      the machine's own CUDA
 * A toolchain's name is "<cuda>" or "<cuda>+cudnn<cudnn>", e.g.
 * "11.8.0+cudnn8.7.0.84"; it is its directory name under versions/. */
#ifndef CE_RESOLVE_H
#define CE_RESOLVE_H

#include <stdbool.h>

#include "core/ctx.h"
#include "manifest.h"

typedef enum ce_spec_kind { CE_SPEC_TF, CE_SPEC_CUDA, CE_SPEC_SYSTEM, CE_SPEC_TORCH, CE_SPEC_JAX } ce_spec_kind;

typedef struct ce_spec {
    ce_spec_kind kind;
    char version[32];   /* TF: "2.14" (patch dropped), "2" or "latest"; CUDA: as typed, "11.8",
                           "11.8.0", "12" or "latest" */
    char cudnn[32];     /* from "+cudnnX", "" if none */
    char build[16];     /* TORCH/JAX: the CUDA build "cu121" / "cuda12" after '+', "" for the default */
    char text[128];     /* the spec as typed */
} ce_spec;

/* Syntax only; CE_ERR_NOTFOUND for something that is no spec at all. */
int ce_spec_parse(const char *text, ce_spec *out);

/* "torch" / "jax" for those kinds, NULL for the others. */
const char *ce_spec_fw_name(ce_spec_kind kind);
/* "PyTorch" / "JAX" / "TensorFlow" / "CUDA". */
const char *ce_spec_kind_label(ce_spec_kind kind);

typedef struct ce_resolved {
    const ce_tf *tf;                 /* when the spec named TensorFlow */
    const ce_fw *fw;                 /* when the spec named PyTorch or JAX: the release */
    const ce_fw_build *fw_build;     /* ... and its CUDA build (the default unless +cuNNN) */
    const char *fw_name;             /* "torch", "jax" */
    const ce_cuda *cuda;
    const ce_cudnn *cudnn;           /* NULL with no_cudnn or none available */
    const ce_artifact *runfile;      /* for ctx->platform; NULL if none */
    const ce_artifact *cudnn_archive;
    const ce_cudnn *nccl;            /* the TF row's NCCL (manifest "nccl"), NULL for none */
    const ce_artifact *nccl_archive; /* its wheel for ctx->platform; NULL if none */
    const ce_cudnn_choice *cudnn_choice; /* a bare spec's: the manifest's cudnn_default, NULL if none */
    const char *cudnn_why;           /* an implicit cuDNN: why this one (manifest text), NULL if none */
    const char *cudnn_passed_over;   /* ... the newer ones passed over, NULL if none */
    char name[96];                   /* toolchain name */
} ce_resolved;

/* Resolve against the manifest.  cudnn_override ("8.9", "" for none) and
 * no_cudnn come from --cudnn / --no-cudnn.  Unknown versions return
 * CE_ERR_NOTFOUND with "did you mean ...?" naming the nearest valid specs. */
int ce_resolve(ce_ctx *ctx, const ce_manifest *m, const ce_spec *spec,
               const char *cudnn_override, bool no_cudnn, ce_resolved *out);

/* The NCCL wheel an install of r takes for ctx->platform: the TF row's NCCL;
 * none when adjust (install --components) says "-nccl"; with "+nccl" where
 * the row names none, the newest NCCL built for the CUDA major (CE_ERR_USAGE
 * when the manifest has none).  *lib and *art are NULL for no NCCL. */
int ce_resolve_nccl(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, const char *adjust,
                    const ce_cudnn **lib, const ce_artifact **art);

/* Levenshtein distance of two short strings (99 when either is over 31
 * characters): the did-you-mean of specs and commands. */
int ce_edit_distance(const char *a, const char *b);

/* The driver `latest` plans for: ctx->driver (--driver VER,
 * CUDAENV_DRIVER_VERSION) when given, else the kernel module's version from
 * $SYSROOT/proc/driver/nvidia/version ("550.54.14"): 1 found, 0 none. */
int ce_driver_version(ce_ctx *ctx, char *out, size_t n);

/* Toolchain directory name for a CUDA release and optional cuDNN release. */
void ce_toolchain_name(char *out, unsigned outsz, const char *cuda, const char *cudnn);

#endif
