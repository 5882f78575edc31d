/* Install preflight: the part of doctor that decides whether a CUDA release
 * can run here, asked before gigabytes are downloaded.  A driver too old
 * for the toolkit (outside minor-version compatibility) or a GPU older than
 * the toolkit supports refuses the install (CE_ERR_CHECK, exit 7) unless
 * --force; a host gcc newer than nvcc accepts is a warning; no driver at all
 * is a note (building on a CPU-only machine is normal).  Free space is
 * checked by install.c, which knows what is already in the cache. */
#include "preflight.h"

#include <stdio.h>
#include <string.h>

#include "core/hostcc.h"
#include "core/version.h"
#include "machine/probe.h"
#include "machine/target.h"

int ce_preflight_install(ce_ctx *ctx, const ce_cuda *cuda)
{
    /* the driver it must run on (--driver / CUDAENV_DRIVER_VERSION plans for the compute
     * nodes'; else this machine's) and this machine's GPUs: one reading (machine/target.h),
     * the one info and list-remote judge by */
    ce_target t;
    ce_target_read(ctx, &t);
    bool planned = t.planned;
    const char *drv = t.driver;
    char reason[2048] = "";
    size_t used = 0;

    if (!drv[0] && !t.cuda_version) {
        ce_emit(ctx, CE_EV_NOTE, NULL, "no NVIDIA driver found: installing CUDA %s anyway (building without a GPU "
                "works); run cudaenv doctor on the machine that will run it", cuda->version);
    } else {
        char why[256];
        int fits = 1;
        if (drv[0] && cuda->min_driver) fits = ce_driver_fits(drv, cuda->min_driver, cuda->min_driver_compat, cuda->version, why,
                                                              sizeof why);
        if (t.cuda_version > 0 && t.cuda_version < ce_version_major(cuda->version) * 1000) fits = -1;
        if (fits < 0) {
            bool dc = false;
            for (int i = 0; i < t.n_gpus; i++) if (ce_datacenter_gpu(t.gpu[i])) dc = true;
            char cudav[48] = "";
            if (t.cuda_version > 0)
                snprintf(cudav, sizeof cudav, " (supports CUDA %d.%d)", t.cuda_version / 1000,
                         t.cuda_version % 1000 / 10);
            used += (size_t)snprintf(reason + used, sizeof reason - used,
                                     "CUDA %s needs NVIDIA driver >= %s; %s %s%s: upgrade the driver%s",
                                     cuda->version, cuda->min_driver ? cuda->min_driver : "a newer branch",
                                     planned ? "the plan's --driver is" : "this machine has",
                                     drv[0] ? drv : "an older driver", cudav,
                                     dc ? " or use the cuda-compat forward-compatibility package of this data-center GPU"
                                        : "");
        } else if (fits == 0) {
            ce_emit(ctx, CE_EV_WARN, NULL, "driver %s is older than CUDA %s's %s: it will run in minor-version "
                    "compatibility mode (%s); upgrade the driver for full support", drv, cuda->version,
                    cuda->min_driver, why);
        }
        int lo = ce_sm_num(cuda->sm_min), hi = ce_sm_num(cuda->sm_max);
        for (int i = 0; i < t.n_gpus; i++) {
            int cc = t.cc[i];
            if (cc < 0) continue;
            if (lo > 0 && cc < lo)
                used += (size_t)snprintf(reason + used, used < sizeof reason ? sizeof reason - used : 0,
                                         "%sGPU %d (%s) is sm_%d, CUDA %s supports sm_%d and newer: use %s",
                                         used ? "; " : "", i, t.gpu[i], cc, cuda->version, lo, ce_cuda_for_sm(cc));
            else if (hi > 0 && cc > hi)
                ce_emit(ctx, CE_EV_WARN, NULL, "GPU %d (%s, sm_%d) is newer than CUDA %s targets (sm_%d): code will "
                        "run through PTX JIT only; %s suits it better", i, t.gpu[i], cc, cuda->version, hi,
                        ce_cuda_for_sm(cc));
        }
    }
    if (cuda->max_gcc > 0) {
        char where[4096], full[128];
        int maj = ce_host_cc(where, sizeof where, full, sizeof full);
        if (maj > cuda->max_gcc)
            ce_emit(ctx, CE_EV_WARN, NULL, "host gcc %s (%s) is newer than CUDA %s's nvcc accepts (gcc <= %d): "
                    "install g++-%d and export NVCC_CCBIN=g++-%d", full, where, cuda->version, cuda->max_gcc,
                    cuda->max_gcc, cuda->max_gcc);
    }
    if (used) {
        if (!ctx->force)
            return ce_fail(CE_ERR_CHECK, "CUDA %s cannot run on %s: %s (pass --force to install it "
                           "anyway)", cuda->version, planned ? "the planned machine" : "this machine", reason);
        ce_emit(ctx, CE_EV_WARN, NULL, "CUDA %s cannot run on %s: %s (--force: installing anyway)",
                cuda->version, planned ? "the planned machine" : "this machine", reason);
    }
    return CE_OK;
}
