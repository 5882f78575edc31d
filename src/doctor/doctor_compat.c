/* Layers 2 and 5: can the active toolkit run on this driver and these GPUs,
 * and will its nvcc accept the host compiler; for a TensorFlow selection,
 * is python3 one TensorFlow was built for.  The limits come from the
 * toolchain's receipt (or the manifest): min_driver, sm range, max_gcc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/hostcc.h"
#include "core/proc.h"
#include "core/version.h"
#include "doctor_int.h"

void doc_check_driver_toolkit(ce_doctor *d)
{
    const ce_doc_active *a = &d->act;
    const ce_probe *p = &d->probe;
    const char *drv = p->driver[0] ? p->driver : p->module_version;
    if (!a->present || !drv[0] || !a->cuda[0]) return;
    char ev[4096], fix[2048], sum[512], why[256];
    int fits = 1;
    if (a->min_driver[0]) fits = ce_driver_fits(drv, a->min_driver, a->min_driver_compat, a->cuda, why, sizeof why);
    /* the driver's own answer: the newest CUDA it supports */
    int want = ce_version_major(a->cuda) * 1000;
    if (p->cuda_version > 0 && p->cuda_version < want) fits = -1;
    if (fits == 1) return;
    bool dc = false;
    for (int i = 0; i < p->n_gpus; i++) if (ce_datacenter_gpu(p->gpus[i].name)) dc = true;
    char cudav[32] = "";
    if (p->cuda_version > 0) snprintf(cudav, sizeof cudav, " (supports CUDA %d.%d)", p->cuda_version / 1000,
                                      p->cuda_version % 1000 / 10);
    char cm[16];
    ce_version_prefix(a->cuda, 2, cm, sizeof cm);
    for (char *c = cm; *c; c++) if (*c == '.') *c = '-';
    if (fits == 0) {
        doc_add(d, "driver.minor-compat", CE_SEV_WARNING,
                doc_fmt(sum, sizeof sum, "driver %s is older than CUDA %s's %s: it runs in minor-version "
                        "compatibility mode", drv, a->cuda, a->min_driver),
                doc_fmt(ev, sizeof ev, "driver %s%s; %s (%s) needs %s; %s", drv, cudav, a->name, a->origin,
                        a->min_driver, why),
                doc_fmt(fix, sizeof fix, "features that need the newer driver (PTX JIT of code built by this "
                        "toolkit, new APIs) fail with CUDA_ERROR_UNSUPPORTED_PTX_VERSION: upgrade the driver to "
                        ">= %s", a->min_driver));
        return;
    }
    doc_add(d, "driver.too-old", CE_SEV_ERROR,
            doc_fmt(sum, sizeof sum, "the driver is too old for CUDA %s: it needs driver >= %s", a->cuda,
                    a->min_driver[0] ? a->min_driver : "a newer branch"),
            doc_fmt(ev, sizeof ev, "driver %s%s; %s (%s) needs >= %s", drv, cudav, a->name, a->origin,
                    a->min_driver[0] ? a->min_driver : "?"),
            doc_fmt(fix, sizeof fix, "upgrade the NVIDIA driver to %s or newer%s, or use an older CUDA that this "
                    "driver supports (cudaenv list-remote cuda)%s%s%s", a->min_driver[0] ? a->min_driver : "the branch",
                    " (Ubuntu: sudo ubuntu-drivers install; then reboot)",
                    dc ? "; on this data-center GPU the forward-compatibility package cuda-compat-" : "",
                    dc ? cm : "", dc ? " lets the newer toolkit run on the installed driver" : ""));
}

/* "3.9-3.11" or "2.7, 3.5-3.7": does ver (3.10) fall in it? */
static bool in_range(const char *range, const char *ver)
{
    char copy[64], *save = NULL;
    snprintf(copy, sizeof copy, "%s", range);
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ') t++;
        char *dash = strchr(t, '-');
        char lo[16], hi[16];
        if (dash) {
            snprintf(lo, sizeof lo, "%.*s", (int)(dash - t), t);
            snprintf(hi, sizeof hi, "%s", dash + 1);
        } else {
            snprintf(lo, sizeof lo, "%s", t);
            snprintf(hi, sizeof hi, "%s", t);
        }
        if (ce_version_cmp(ver, lo) >= 0 && ce_version_cmp(ver, hi) <= 0) return true;
    }
    return false;
}

void doc_check_compat(ce_doctor *d)
{
    const ce_doc_active *a = &d->act;
    const ce_probe *p = &d->probe;
    char ev[4096], fix[2048], sum[512];
    if (!a->present) return;
    int lo = ce_sm_num(a->sm_min), hi = ce_sm_num(a->sm_max);
    for (int i = 0; i < p->n_gpus; i++) {
        const ce_gpu *g = &p->gpus[i];
        if (g->cc_major < 0) continue;
        int cc = g->cc_major * 10 + g->cc_minor;
        if (lo > 0 && cc < lo)
            doc_add(d, "compat.sm-unsupported", CE_SEV_ERROR,
                    doc_fmt(sum, sizeof sum, "CUDA %s does not support GPU %d (%s, sm_%d)", a->cuda, i, g->name, cc),
                    doc_fmt(ev, sizeof ev, "compute capability %d.%d; %s supports sm_%d to sm_%d", g->cc_major,
                            g->cc_minor, a->name, lo, hi > 0 ? hi : lo),
                    doc_fmt(fix, sizeof fix, "use %s for this GPU: cudaenv list-remote cuda, then cudaenv install "
                            "VERSION", ce_cuda_for_sm(cc)));
        else if (hi > 0 && cc > hi)
            doc_add(d, "compat.sm-too-new", CE_SEV_WARNING,
                    doc_fmt(sum, sizeof sum, "GPU %d (%s, sm_%d) is newer than CUDA %s knows", i, g->name, cc, a->cuda),
                    doc_fmt(ev, sizeof ev, "compute capability %d.%d; %s targets up to sm_%d", g->cc_major, g->cc_minor,
                            a->name, hi),
                    doc_fmt(fix, sizeof fix, "code runs only through PTX JIT (slow first start, libraries may lack "
                            "kernels): use %s", ce_cuda_for_sm(cc)));
    }
    if (a->max_gcc > 0) {
        char where[4096], full[128];
        int maj = ce_host_cc(where, sizeof where, full, sizeof full);
        if (maj > a->max_gcc)
            doc_add(d, "compat.gcc-too-new", CE_SEV_WARNING,
                    doc_fmt(sum, sizeof sum, "host gcc %d is newer than CUDA %s's nvcc accepts (gcc <= %d)", maj,
                            a->cuda, a->max_gcc),
                    doc_fmt(ev, sizeof ev, "%s -dumpfullversion: %s; %s: max_gcc %d", where, full, a->name,
                            a->max_gcc),
                    doc_fmt(fix, sizeof fix, "install gcc-%d/g++-%d and point nvcc at it: export NVCC_CCBIN=g++-%d "
                            "(or nvcc -ccbin g++-%d; CMake: -DCMAKE_CUDA_HOST_COMPILER=g++-%d)", a->max_gcc,
                            a->max_gcc, a->max_gcc, a->max_gcc, a->max_gcc));
    }
    if (a->tf[0] && a->python[0]) {
        char out[256], where[4096];
        char prog[] = "python3", flag[] = "--version";
        char *const argv[] = { prog, flag, NULL };
        if (ce_run_line(prog, argv, out, sizeof out, where, sizeof where) && !strncmp(out, "Python ", 7)) {
            char mm[16];
            ce_version_prefix(out + 7, 2, mm, sizeof mm);
            if (!in_range(a->python, mm))
                doc_add(d, "compat.python-out-of-range", CE_SEV_WARNING,
                        doc_fmt(sum, sizeof sum, "python3 %s is outside TensorFlow %s's Python range %s", mm, a->tf,
                                a->python),
                        doc_fmt(ev, sizeof ev, "%s --version: %s; the selection %s (%s) is TensorFlow %s, built for "
                                "Python %s", where, out, a->spec, a->origin, a->tf, a->python),
                        doc_fmt(fix, sizeof fix, "pip has no TensorFlow %s wheel for Python %s: use a Python in %s "
                                "(pyenv install / uv venv --python X.Y) or a TensorFlow release built for %s", a->tf,
                                mm, a->python, mm));
        }
    }
}
