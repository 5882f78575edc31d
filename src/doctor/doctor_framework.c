/* The framework layer of doctor: when python3 (or CUDAENV_DOCTOR_PYTHON;
 * "none" skips the layer) can import PyTorch or TensorFlow, the quick form
 * of verify --framework (selftest/framework.h) runs in the user's own
 * environment: build information against the active toolchain, the
 * libcudart/libcudnn files the import mapped, CPU-only builds.  No GPU work;
 * a framework that is not installed is no finding. */
#include "doctor_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selftest/framework.h"

void doc_check_framework(ce_doctor *d)
{
    const char *py = d->ctx->set.doctor_python;
    if (py && !strcmp(py, "none")) return;
    ce_fw_target t;
    memset(&t, 0, sizeof t);
    if (d->act.present) {
        snprintf(t.name, sizeof t.name, "%s", d->act.name);
        snprintf(t.prefix, sizeof t.prefix, "%s", d->act.prefix);
        snprintf(t.cuda, sizeof t.cuda, "%s", d->act.cuda);
        snprintf(t.cudnn, sizeof t.cudnn, "%s", d->act.cudnn);
    }
    static const char *const fws[] = { "torch", "tf" };
    for (size_t i = 0; i < sizeof fws / sizeof *fws; i++) {
        ce_fw_options opt = { .framework = fws[i], .python = py && *py ? py : NULL, .quick = true, .timeout_s = 120 };
        ce_fw_report r;
        ce_quiet q;
        ce_quiet_begin(&q, false);
        int frc = ce_fw_run(d->ctx, &t, &opt, &r);
        if (frc == CE_ERR_PERM) {   /* as root, a Python that is not root's (core/pyrun.h): the error, exit 6 */
            ce_quiet_keep(&q);
            ce_fw_free(&r);
            d->refused = frc;
            return;
        }
        ce_quiet_end(&q);
        if (frc != CE_OK) {  /* no python3: no framework to check */
            ce_fw_free(&r);
            return;
        }
        for (size_t k = 0; k < r.n; k++) {
            const ce_fw_finding *f = &r.f[k];
            /* not installed, or a python3 that cannot run the check: nothing about frameworks to say */
            if (!strcmp(f->code, "framework.not-importable") || !strcmp(f->code, "framework.script-failed")) continue;
            /* doctor cannot know a GPU was wanted: a CPU-only build is a warning here */
            ce_severity sev = !strcmp(f->code, "framework.cpu-only-build") ? CE_SEV_WARNING
                            : f->sev == CE_FW_ERROR                        ? CE_SEV_ERROR
                            : f->sev == CE_FW_WARNING                      ? CE_SEV_WARNING
                                                                           : CE_SEV_INFO;
            doc_add(d, f->code, sev, f->summary, f->evidence, f->fix);
        }
        ce_fw_free(&r);
    }
}
