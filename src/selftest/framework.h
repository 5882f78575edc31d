/* The framework layer of verify (and doctor): does TensorFlow / PyTorch, as
 * the user's Python imports it, really run on the toolchain?  A short script
 * (framework.py, embedded at build time) runs in that Python and reports the
 * framework's build information, its GPUs, a matmul and a convolution on
 * GPU 0 against a float64 reference, and the libcudart/libcudnn files the
 * process mapped.  This module turns that report into findings with a code,
 * evidence and the fix, like doctor's.  Nothing here prints.
 *
 * The caller sets the environment first (verify applies the toolchain's,
 * like exec; doctor keeps the user's own). */
#ifndef CE_FRAMEWORK_H
#define CE_FRAMEWORK_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"

typedef enum ce_fw_sev { CE_FW_ERROR, CE_FW_WARNING, CE_FW_INFO } ce_fw_sev;

typedef struct ce_fw_finding {
    char code[48];             /* "framework.cudnn-mismatch" (listed in cudaenv(1)) */
    ce_fw_sev sev;
    char *summary, *evidence, *fix;
} ce_fw_finding;

/* The toolchain the framework should run on ("" prefix: none known). */
typedef struct ce_fw_target {
    char name[96];
    char prefix[CE_PATH_MAX];
    char cuda[32], cudnn[32];
} ce_fw_target;

typedef struct ce_fw_options {
    const char *framework;     /* "torch" or "tf" (also "pytorch", "tensorflow") */
    const char *python;        /* NULL: python3 on PATH */
    const char *python_opt;    /* the option that named it, for messages ("--for"); NULL: "--python" */
    bool quick;                /* doctor: import and build info only, no GPU work */
    const char *libcuda;       /* driver library to count GPUs with (test hook); NULL: libcuda.so.1 */
    int timeout_s;             /* 0: 300 */
} ce_fw_options;

struct cJSON;

typedef struct ce_fw_report {
    char framework[16];        /* "torch" / "tf" */
    char module[16];           /* "torch" / "tensorflow" */
    char python[CE_PATH_MAX];         /* the interpreter that ran */
    struct cJSON *doc;         /* the script's report (NULL when it wrote none) */
    char log[8192];            /* what the script printed (stdout + stderr, its start) */
    int status;                /* the script's exit status */
    int driver_gpus;           /* GPUs the driver shows cudaenv (CUDA_VISIBLE_DEVICES ignored); -1 no driver */
    int driver_cuda;           /* cuDriverGetVersion, 0 unknown */
    int framework_gpus;        /* GPUs the framework lists; -1 not asked */
    bool imported;
    bool nogpu;                /* no usable GPU at all: exit 8 when nothing failed */
    ce_fw_finding *f;
    size_t n, cap;
    int errors, warnings;
    double ms;
} ce_fw_report;

/* Canonical framework name ("torch", "tf") or NULL when unknown. */
const char *ce_fw_name(const char *s);
/* Run the script and analyse its report.  Always fills r; returns 0, or a
 * negative ce_err (the status set) when the check could not run at all (no such
 * Python, no temporary file). */
int ce_fw_run(ce_ctx *ctx, const ce_fw_target *tc, const ce_fw_options *opt, ce_fw_report *r);
/* 7 when a finding is an error, else 8 when no GPU could be used, else 0. */
int ce_fw_exit_code(const ce_fw_report *r);
void ce_fw_free(ce_fw_report *r);
const char *ce_fw_sev_name(ce_fw_sev s);

/* framework_libs.c: the per-family account (issue 37).  The process ran on
 * the framework's own libraries (the toolchain's lib64 not on the
 * LD_LIBRARY_PATH the script saw: store/activate.h CE_LIBS_FRAMEWORK). */
bool ce_fw_own_mode(const ce_fw_target *tc, const ce_fw_report *r);
/* Where a mapped file lies: "toolchain", "framework (pip wheel)", "framework
 * (conda environment)", "framework (bundled in torch/lib)", "other". */
const char *ce_fw_lib_source(const ce_fw_target *tc, const char *path, char *out, size_t n);
/* Why the loader took one entry of the report's "libs" ("preloaded by path by
 * _ctypes...so", "dlopen(\"libcudnn_graph.so.9\") by libcudnn.so.9, found
 * through the RUNPATH of libcudnn.so.9", "... through LD_LIBRARY_PATH"). */
const char *ce_fw_lib_why(const struct cJSON *lib, char *out, size_t n);
/* framework.family-mixed for each family mapped from two directories. */
void ce_fw_check_families(const ce_fw_target *tc, ce_fw_report *r,
                          void (*add)(ce_fw_report *, const char *, ce_fw_sev, const char *, const char *,
                                      const char *));

/* The findings from a report already in r->doc (framework_check.c). */
void ce_fw_analyse(ce_ctx *ctx, const ce_fw_target *tc, const ce_fw_options *opt, ce_fw_report *r);

#endif
