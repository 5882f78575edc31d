/* The machine a plan is for (target.h): a planned driver or this machine's,
 * and this machine's GPUs, judged against a CUDA release by the same rules
 * the install preflight applies (compat.c). */
#include "target.h"

#include <stdio.h>
#include <string.h>

#include "core/version.h"

void ce_target_read(const ce_ctx *ctx, ce_target *t)
{
    memset(t, 0, sizeof *t);
    ce_machine m;
    ce_probe p;
    memset(&p, 0, sizeof p);
    ce_machine_init(&m, ctx);
    ce_probe_gpu(&m, &p, false);   /* NVML answers driver and GPUs; no cuInit */
    if (ctx->driver[0]) {
        snprintf(t->driver, sizeof t->driver, "%s", ctx->driver);
        t->planned = true;
    } else {
        snprintf(t->driver, sizeof t->driver, "%s", p.driver[0] ? p.driver : p.module_version);
        t->cuda_version = p.cuda_version;
    }
    for (int i = 0; i < p.n_gpus && i < CE_MAX_GPUS; i++) {
        const ce_gpu *g = &p.gpus[i];
        t->cc[t->n_gpus] = g->cc_major < 0 ? -1 : g->cc_major * 10 + g->cc_minor;
        snprintf(t->gpu[t->n_gpus], sizeof t->gpu[0], "%s", g->name);
        t->n_gpus++;
    }
}

ce_runs ce_target_runs(const ce_target *t, const char *cuda, const char *min_driver, const char *compat_floor,
                       const char *sm_min, const char *sm_max, char *why, size_t whysz)
{
    char w[512] = "";
    ce_runs r = CE_RUNS_UNKNOWN;
    int lo = ce_sm_num(sm_min), hi = ce_sm_num(sm_max);
    for (int i = 0; i < t->n_gpus; i++) {
        if (t->cc[i] < 0) continue;
        if (lo > 0 && t->cc[i] < lo) {
            snprintf(w, sizeof w, "GPU %d (%s) is sm_%d; CUDA %s supports sm_%d and newer", i, t->gpu[i], t->cc[i],
                     cuda, lo);
            r = CE_RUNS_GPU;
            goto out;
        }
    }
    if (t->driver[0]) {
        char floor[160];   /* ce_driver_fits' why: the minor-version floor */
        int fits = ce_driver_fits(t->driver, min_driver, compat_floor, cuda, floor, sizeof floor);
        if (!t->planned && t->cuda_version > 0 && t->cuda_version < ce_version_major(cuda) * 1000) fits = -1;
        if (fits < 0) {
            snprintf(w, sizeof w, "needs driver >= %s, not %s", min_driver && *min_driver ? min_driver : "a newer branch",
                     t->driver);
            r = CE_RUNS_DRIVER;
            goto out;
        }
        r = fits ? CE_RUNS_YES : CE_RUNS_COMPAT;
        if (!fits)
            snprintf(w, sizeof w, "driver %.63s < %.63s (%s)", t->driver, min_driver && *min_driver ? min_driver : "?",
                     floor);
    }
    for (int i = 0; i < t->n_gpus; i++) {
        if (t->cc[i] >= 0 && hi > 0 && t->cc[i] > hi) {
            snprintf(w, sizeof w, "GPU %d (%s, sm_%d) is newer than CUDA %s targets (sm_%d): PTX JIT only", i,
                     t->gpu[i], t->cc[i], cuda, hi);
            if (r != CE_RUNS_UNKNOWN) r = CE_RUNS_JIT;
            break;
        }
    }
    if (r == CE_RUNS_YES && !w[0])
        snprintf(w, sizeof w, "driver %s >= %s", t->driver, min_driver && *min_driver ? min_driver : "?");
out:
    if (why && whysz) snprintf(why, whysz, "%s", w);
    return r;
}

const char *ce_runs_word(ce_runs r)
{
    switch (r) {
    case CE_RUNS_YES: return "yes";
    case CE_RUNS_COMPAT: return "compat";
    case CE_RUNS_JIT: return "jit";
    case CE_RUNS_DRIVER: return "driver";
    case CE_RUNS_GPU: return "gpu";
    default: return "?";
    }
}

void ce_target_text(const ce_target *t, char *out, size_t n)
{
    size_t used = 0;
    if (t->driver[0])
        used = (size_t)snprintf(out, n, "%s %s", t->planned ? "the planned driver" : "this machine's driver", t->driver);
    else
        used = (size_t)snprintf(out, n, "this machine (no NVIDIA driver; --driver VER plans for the compute nodes' one)");
    for (int i = 0; i < t->n_gpus && used < n; i++) {
        if (t->cc[i] < 0)
            used += (size_t)snprintf(out + used, n - used, ", GPU %d %s", i, t->gpu[i]);
        else
            used += (size_t)snprintf(out + used, n - used, ", GPU %d %s (sm_%d)", i, t->gpu[i], t->cc[i]);
    }
}
