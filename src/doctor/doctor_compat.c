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

/* Minor-version compatibility (nvidia-facts.md §5b): inside a CUDA major
 * family a toolkit runs, with a limited feature set (no PTX JIT of newer
 * code), on any driver at or above the family floor. */
static const char *family_floor(int major)
{
    switch (major) {
    case 11: return "450.80.02";
    case 12: return "525.60.13";
    case 13: return "580";
    default: return NULL;
    }
}

int doc_driver_fits(const char *driver, const char *min_driver, const char *cuda, char *why, size_t whysz)
{
    if (why && whysz) why[0] = '\0';
    if (ce_version_cmp(driver, min_driver) >= 0) return 1;
    const char *floor = family_floor(ce_version_major(cuda));
    if (floor && ce_version_cmp(driver, floor) >= 0) {
        if (why) snprintf(why, whysz, "CUDA %d.x minor-version compatibility needs >= %s", ce_version_major(cuda), floor);
        return 0;
    }
    return -1;
}

int doc_sm_num(const char *s)
{
    if (!s || !*s) return -1;
    char *end;
    long maj = strtol(s, &end, 10);
    if (end == s) return -1;
    long min = 0;
    if (*end == '.') min = strtol(end + 1, NULL, 10);
    return (int)(maj * 10 + min);
}

const char *doc_cuda_for_sm(int cc)
{
    if (cc < 30) return "no CUDA release cudaenv installs (9.0+)";
    if (cc < 35) return "CUDA 10.2 or older";
    if (cc < 50) return "CUDA 11.8 or older";
    if (cc < 75) return "CUDA 12.x (12.9 or older)";
    if (cc < 80) return "CUDA 10.0 or newer";
    if (cc == 80) return "CUDA 11.0 or newer";
    if (cc < 89) return "CUDA 11.1 or newer (sm_87: 11.5)";
    if (cc <= 90) return "CUDA 11.8 or newer";
    if (cc == 110) return "CUDA 13.0 or newer";
    if (cc == 103 || cc == 121) return "CUDA 12.9 or newer";
    return "CUDA 12.8 or newer";
}

void doc_check_driver_toolkit(ce_doctor *d)
{
    const ce_doc_active *a = &d->act;
    const ce_probe *p = &d->probe;
    const char *drv = p->driver[0] ? p->driver : p->module_version;
    if (!a->present || !drv[0] || !a->cuda[0]) return;
    char ev[4096], fix[2048], sum[512], why[256];
    int fits = 1;
    if (a->min_driver[0]) fits = doc_driver_fits(drv, a->min_driver, a->cuda, why, sizeof why);
    /* the driver's own answer: the newest CUDA it supports */
    int want = ce_version_major(a->cuda) * 1000;
    if (p->cuda_version > 0 && p->cuda_version < want) fits = -1;
    if (fits == 1) return;
    bool dc = false;
    for (int i = 0; i < p->n_gpus; i++) if (doc_datacenter_gpu(p->gpus[i].name)) dc = true;
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
    int lo = doc_sm_num(a->sm_min), hi = doc_sm_num(a->sm_max);
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
                            "VERSION", doc_cuda_for_sm(cc)));
        else if (hi > 0 && cc > hi)
            doc_add(d, "compat.sm-too-new", CE_SEV_WARNING,
                    doc_fmt(sum, sizeof sum, "GPU %d (%s, sm_%d) is newer than CUDA %s knows", i, g->name, cc, a->cuda),
                    doc_fmt(ev, sizeof ev, "compute capability %d.%d; %s targets up to sm_%d", g->cc_major, g->cc_minor,
                            a->name, hi),
                    doc_fmt(fix, sizeof fix, "code runs only through PTX JIT (slow first start, libraries may lack "
                            "kernels): use %s", doc_cuda_for_sm(cc)));
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
