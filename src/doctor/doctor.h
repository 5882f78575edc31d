/* cudaenv doctor: the layered troubleshooting chain (issue 3), run on the
 * machine seen through machine.h.  Each problem is a finding with a stable
 * code ("driver.module-not-loaded"), a severity, the evidence that proves it
 * and the exact fix.  The core never prints: the CLI renders the report.
 *
 * Layers (the first part of every code): gpu, driver, container, wsl, mig,
 * libs, env, compat, framework, perf.  The codes are listed in cudaenv(1). */
#ifndef CE_DOCTOR_H
#define CE_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "core/manifest.h"
#include "machine.h"
#include "probe.h"

/* Finding texts are display strings built from paths of up to PATH_MAX:
 * cutting an absurdly long one short is the right outcome, so GCC's
 * truncation warning is off for the modules that build them (this header
 * is included only by doctor*.c and cmd_doctor.c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

typedef enum ce_severity { CE_SEV_ERROR, CE_SEV_WARNING, CE_SEV_INFO } ce_severity;

typedef struct ce_finding {
    char code[48];
    ce_severity sev;
    char *summary;       /* one line: what is wrong */
    char *evidence;      /* what was seen, with paths and values */
    char *fix;           /* the exact command or change that fixes it */
} ce_finding;

/* The active toolchain and what it needs. */
typedef struct ce_doc_active {
    bool present;
    bool system;                   /* the machine's /usr/local/cuda */
    char origin[32];               /* shell, .cuda-version, global, system */
    char spec[128];                /* as the origin names it */
    char name[96];
    char cuda[32];
    char cudnn[32];
    char prefix[4096];             /* host path */
    char min_driver[32];           /* "" unknown */
    int max_gcc;                   /* 0 unknown */
    char sm_min[16], sm_max[16];   /* "" unknown */
    char tf[32];                   /* TF release when the spec named one */
    char python[32];               /* that release's Python range */
    char problem[4096];            /* why it could not be determined */
} ce_doc_active;

typedef struct ce_doctor {
    ce_ctx *ctx;
    ce_machine m;
    ce_probe probe;
    ce_doc_active act;
    ce_finding *f;
    size_t n, cap;
    int errors, warnings, infos;
    double elapsed_ms;
    struct doc_ld *ld;             /* the loader's search state (doctor_libs.c) */
} ce_doctor;

/* Run every check.  Returns 0 (findings in d, possibly errors) or a negative
 * ce_err when doctor itself could not run. */
int ce_doctor_run(ce_ctx *ctx, ce_doctor *d);
void ce_doctor_free(ce_doctor *d);
const char *ce_severity_name(ce_severity s);
/* Human title of a layer from a code ("driver.x" -> "GPU driver"). */
const char *ce_doctor_layer_title(const char *code);
/* The layers in report order, NULL-terminated. */
extern const char *const ce_doctor_layers[];

/* ---- shared by the doctor modules (doctor*.c) and preflight.c ---- */

/* Add a finding; summary, evidence and fix are copied. */
void doc_add(ce_doctor *d, const char *code, ce_severity sev,
             const char *summary, const char *evidence, const char *fix);
/* snprintf into a fixed buffer, for building finding texts. */
const char *doc_fmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* doctor_platform.c */
void doc_check_container(ce_doctor *d);
void doc_check_wsl(ce_doctor *d);
void doc_check_mig(ce_doctor *d);
void doc_check_perf(ce_doctor *d);
/* doctor_gpu.c */
void doc_check_gpu(ce_doctor *d);
/* doctor_libs.c */
void doc_check_libs(ce_doctor *d);
/* Where the dynamic loader would find soname for a program without RPATH:
 * LD_LIBRARY_PATH, then ld.so.cache (or, when the root has none, the
 * ld.so.conf directories), then the default directories.  0 and the host
 * path in out, via says which ("LD_LIBRARY_PATH", "ld.so.cache", ...);
 * -1 when nothing provides it. */
int doc_ld_resolve(ce_doctor *d, const char *soname, char *out, size_t outsz, char *via, size_t viasz);
/* The ld.so.conf directories (system paths), for the environment checks. */
size_t doc_ld_conf_dirs(ce_doctor *d, const char ***dirs, const char ***files);
void doc_ld_free(ce_doctor *d);
/* doctor_env.c */
void doc_check_env(ce_doctor *d);
/* The CUDA release (major.minor) of a toolkit tree: version.json,
 * version.txt, CUDART_VERSION, then a cuda-X.Y directory name; "" unknown. */
void doc_toolkit_version(const char *root, char *out, size_t n);
/* doctor_framework.c: TensorFlow / PyTorch as python3 imports them (quick:
 * build information and mapped libraries, no GPU work) */
void doc_check_framework(ce_doctor *d);
/* doctor_compat.c */
void doc_check_driver_toolkit(ce_doctor *d);
void doc_check_compat(ce_doctor *d);

#endif
