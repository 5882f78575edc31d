/* What changed between two manifests (update's report): TensorFlow rows,
 * PyTorch and JAX builds, CUDA and cuDNN releases added, removed, or with corrected values.  Data,
 * not text: the CLI renders it. */
#ifndef CE_MANIFEST_DIFF_H
#define CE_MANIFEST_DIFF_H

#include <stddef.h>

#include "manifest.h"

typedef enum { CE_MCHANGE_ADDED, CE_MCHANGE_REMOVED, CE_MCHANGE_CHANGED } ce_mchange_kind;

typedef struct ce_mchange {
    ce_mchange_kind kind;
    const char *what;        /* "tf", "torch", "jax", "cuda", "cudnn" */
    char key[40];            /* "2.16", "2.5+cu124", "12.5.0", "9.3.0.75" */
    char detail[512];        /* added tf: "CUDA 12.5.0 + cuDNN 9.3.0.75"; changed: "min_driver 525 -> 530; ..." */
} ce_mchange;

/* The changes from old (NULL: everything in new is added) to new, in the
 * order tf, torch, jax, cuda, cudnn and by version; *out is malloc'ed (free it). */
int ce_manifest_diff(const ce_manifest *old, const ce_manifest *new, ce_mchange **out, size_t *n);

#endif
