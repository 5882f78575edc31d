/* What doctor reports: findings (a stable code, a severity, the evidence
 * and the fix) and the state the checks share.  The types of doctor.h, in
 * a header of their own so that the checks' private header (doctor_int.h)
 * and the public one (doctor.h) both build on them. */
#ifndef CE_DOCTOR_REPORT_H
#define CE_DOCTOR_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "machine/machine.h"
#include "machine/probe.h"

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
    char prefix[CE_PATH_MAX];             /* host path */
    char min_driver[32];           /* "" unknown */
    char min_driver_compat[32];    /* minor-version compatibility floor, "" unknown */
    int max_gcc;                   /* 0 unknown */
    char sm_min[16], sm_max[16];   /* "" unknown */
    char tf[32];                   /* TF release when the spec named one */
    char python[32];               /* that release's Python range */
    char problem[4096];            /* why it could not be determined */
} ce_doc_active;

/* The framework layer: probe unless a kept result still holds (auto), probe
 * in any case (doctor --framework), or skip it (--no-framework). */
typedef enum ce_doctor_fw { CE_DOCTOR_FW_AUTO, CE_DOCTOR_FW_PROBE, CE_DOCTOR_FW_SKIP } ce_doctor_fw;
/* What the framework layer did: ran the probe, used kept results, or not checked. */
typedef enum ce_doc_fw_state { CE_DOC_FW_RAN, CE_DOC_FW_CACHED, CE_DOC_FW_SKIPPED } ce_doc_fw_state;

typedef struct ce_doctor {
    ce_ctx *ctx;
    ce_machine m;
    ce_probe probe;
    ce_doc_active act;
    ce_finding *f;
    size_t n, cap;
    int errors, warnings, infos;
    double elapsed_ms;
    int refused;                   /* CE_ERR_PERM: as root, the framework layer's Python is not root's */
    struct doc_ld *ld;             /* the loader's search state (doctor_libs.c) */
    ce_doctor_fw fw_mode;          /* as asked (ce_doctor_run) */
    ce_doc_fw_state fw_state;
    char fw_python[CE_PATH_MAX];          /* the interpreter probed ("" none) */
    long long fw_probed_at;        /* CE_DOC_FW_CACHED: when the kept result was made (epoch s) */
    char fw_note[2048];            /* one line: what the framework layer did and why */
} ce_doctor;

/* report.c */
/* Add a finding; summary, evidence and fix are copied. */
void doc_add(ce_doctor *d, const char *code, ce_severity sev,
             const char *summary, const char *evidence, const char *fix);
/* snprintf into a fixed buffer, for building finding texts. */
const char *doc_fmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *ce_severity_name(ce_severity s);
/* Human title of a layer from a code ("driver.x" -> "GPU driver"). */
const char *ce_doctor_layer_title(const char *code);
/* The layers in report order, NULL-terminated. */
extern const char *const ce_doctor_layers[];

#endif
