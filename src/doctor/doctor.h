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
#include "report.h"

/* Run every check.  Returns 0 (findings in d, possibly errors) or a negative
 * ce_err when doctor itself could not run.  fw: the framework layer
 * (report.h; d->fw_note says what it did). */
int ce_doctor_run(ce_ctx *ctx, ce_doctor *d, ce_doctor_fw fw);
void ce_doctor_free(ce_doctor *d);

#endif
