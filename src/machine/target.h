/* The machine a plan is for: the driver a toolchain must run on (--driver VER
 * or CUDAENV_DRIVER_VERSION for the compute nodes, planned from a login node
 * without a GPU; else this machine's own) and this machine's GPUs.  info,
 * list-remote, the install preflight and `latest` read it here, once. */
#ifndef CE_TARGET_H
#define CE_TARGET_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "probe.h"

typedef struct ce_target {
    char driver[64];          /* "" unknown: no driver here and none planned */
    bool planned;             /* the driver came from --driver / CUDAENV_DRIVER_VERSION */
    int cuda_version;         /* what this machine's driver says it supports (12040), 0 unknown/planned */
    int n_gpus;
    int cc[CE_MAX_GPUS];      /* 90 for sm_90, -1 unknown */
    char gpu[CE_MAX_GPUS][96];
} ce_target;

/* Fill t: ctx->driver when a plan names one, else the machine's (NVML, then
 * the kernel module's version); the GPUs through NVML (no cuInit). */
void ce_target_read(const ce_ctx *ctx, ce_target *t);

typedef enum ce_runs {
    CE_RUNS_UNKNOWN = 0,   /* no driver known (and no GPU that rules it out) */
    CE_RUNS_YES,           /* the driver is at or above the release's min_driver, every GPU in its sm range */
    CE_RUNS_COMPAT,        /* only through minor-version compatibility */
    CE_RUNS_JIT,           /* a GPU newer than the release targets: PTX JIT only */
    CE_RUNS_DRIVER,        /* the driver is too old */
    CE_RUNS_GPU,           /* a GPU older than the release supports */
} ce_runs;

/* Whether a CUDA release (its min_driver, minor-version floor, sm range)
 * runs on t; why (may be NULL) says what decided, in words. */
ce_runs ce_target_runs(const ce_target *t, const char *cuda, const char *min_driver, const char *compat_floor,
                       const char *sm_min, const char *sm_max, char *why, size_t whysz);
/* One word for scripts and list-remote's column: "yes", "compat", "jit",
 * "driver", "gpu", "?" */
const char *ce_runs_word(ce_runs r);
/* What the verdicts were made against, one line: "the planned driver 550.54.14",
 * "this machine's driver 580.95.05, GPU 0 NVIDIA H200 (sm_90)", "no NVIDIA driver here; ...". */
void ce_target_text(const ce_target *t, char *out, size_t n);

#endif
