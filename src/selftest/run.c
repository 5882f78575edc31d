/* The order of the steps and what one step needs from another. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st_int.h"

static const struct { const char *id, *title; } step_names[ST_NSTEPS] = {
    [ST_FILES] = { "files", "files match the receipt" },
    [ST_VERSIONS] = { "versions", "versions agree" },
    [ST_LOADER] = { "loader", "libraries load from the toolchain" },
    [ST_DRIVER] = { "driver", "driver is new enough" },
    [ST_DEVICE] = { "device", "GPU supported by this CUDA" },
    [ST_KERNEL] = { "kernel", "NVRTC kernel on the GPU" },
    [ST_NVCC] = { "nvcc", "nvcc builds and runs a program" },
    [ST_CUDNN] = { "cudnn", "cuDNN convolution" },
    [ST_NCCL] = { "nccl", "NCCL loads, one-GPU communicator" },
};

/* Run one step, timing it; a step the GPU cannot reach is skipped with the
 * reason found earlier (no driver, no device, driver too old). */
typedef void (*step_fn)(st_state *);

static void timed(st_state *st, int idx, step_fn fn, bool needs_gpu)
{
    st_step *s = &st->r->steps[idx];
    double t0 = ce_mono_ms();
    if (needs_gpu && !st->gpu_ready)
        st_skip(s, st->gpu_skip_nogpu, "%s", st->gpu_skip[0] ? st->gpu_skip : "no usable GPU");
    else
        fn(st);
    s->ms += ce_mono_ms() - t0;
    if (s->status == ST_PENDING) st_pass(s, "ok");
    ce_emit(st->ctx, CE_EV_INFO, s->id, "%s: %s (%.0f ms)", s->id, st_status_name(s->status), s->ms);
}

static void close_libs(st_state *st)
{
    /* Unloading CUDA libraries while threads they started still run is a
     * known source of crashes at exit; the process ends right after verify,
     * so the handles are left open on purpose. */
    (void)st;
}

int st_run(ce_ctx *ctx, const st_toolchain *tc, const st_options *opt, st_report *r)
{
    memset(r, 0, sizeof *r);
    r->tc = *tc;
    for (int i = 0; i < ST_NSTEPS; i++) {
        r->steps[i].id = step_names[i].id;
        r->steps[i].title = step_names[i].title;
    }
    st_state *st = calloc(1, sizeof *st);
    if (!st) return ce_fail(CE_ERR_NOMEM, "out of memory");
    st->ctx = ctx;
    st->opt = opt;
    st->r = r;
    st->nvcc.pid = -1;
    double t0 = ce_mono_ms();

    /* Facts (min_driver, sm range, max_gcc) come with step 1's receipt. */
    double f0 = ce_mono_ms();
    st_toolchain_facts(st);
    r->steps[ST_FILES].ms += ce_mono_ms() - f0;
    timed(st, ST_FILES, st_files, false);
    timed(st, ST_VERSIONS, st_versions_step, false);
    timed(st, ST_LOADER, st_loader_step, false);
    timed(st, ST_DRIVER, st_driver_step, false);
    timed(st, ST_DEVICE, st_device_step, false);
    /* nvcc builds in another process (started by the device step); the
     * kernel and cuDNN steps run meanwhile, so step 7 is waited for last. */
    timed(st, ST_KERNEL, st_kernel_step, true);
    timed(st, ST_CUDNN, st_cudnn_step, true);
    timed(st, ST_NVCC, st_nvcc_step, true);
    timed(st, ST_NCCL, st_nccl_step, false);
    st_nvcc_abandon(st);
    {
        double l0 = ce_mono_ms();
        st_loader_late(st);
        r->steps[ST_LOADER].ms += ce_mono_ms() - l0;
    }
    r->total_ms = ce_mono_ms() - t0;
    if (opt->bench && st->gpu_ready) {
        double b0 = ce_mono_ms();
        st_bench_run(st);
        r->bench_ms = ce_mono_ms() - b0;
    } else if (opt->bench) {
        snprintf(r->bench.torch_note, sizeof r->bench.torch_note, "not run: %s",
                 st->gpu_skip[0] ? st->gpu_skip : "no usable GPU");
    }
    st_gpu_release(st);
    close_libs(st);
    free(st);
    return CE_OK;
}
