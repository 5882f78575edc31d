/* The order of the steps, what one step needs from another, the exit rule,
 * and the helpers every step uses to record its result. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

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
};

double st_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *st_status_name(st_status s)
{
    switch (s) {
    case ST_PASSED: return "passed";
    case ST_FAILED: return "failed";
    case ST_SKIPPED: return "skipped";
    default: return "pending";
    }
}

void st_note(st_step *s, const char *fmt, ...)
{
    size_t used = strlen(s->evidence);
    if (used + 2 >= sizeof s->evidence) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(s->evidence + used, sizeof s->evidence - used - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    used = strlen(s->evidence);
    s->evidence[used] = '\n';
    s->evidence[used + 1] = '\0';
}

static void set_summary(st_step *s, const char *fmt, va_list ap)
{
    vsnprintf(s->summary, sizeof s->summary, fmt, ap);
}

void st_pass(st_step *s, const char *fmt, ...)
{
    if (s->status == ST_FAILED) return;  /* a failure recorded earlier stands */
    va_list ap;
    va_start(ap, fmt);
    set_summary(s, fmt, ap);
    va_end(ap);
    s->status = ST_PASSED;
}

void st_failf(st_step *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (s->status == ST_FAILED) {
        /* keep the first summary; the later failure becomes evidence */
        char line[640];
        vsnprintf(line, sizeof line, fmt, ap);
        st_note(s, "also: %s", line);
    } else {
        set_summary(s, fmt, ap);
    }
    va_end(ap);
    s->status = ST_FAILED;
}

void st_skip(st_step *s, bool nogpu, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_summary(s, fmt, ap);
    va_end(ap);
    s->status = ST_SKIPPED;
    s->nogpu = nogpu;
}

void st_bind(void *h, const char *name, void *slot, char *missing, size_t msz)
{
    void *p = h ? dlsym(h, name) : NULL;
    memcpy(slot, &p, sizeof p);
    if (!p && missing) {
        size_t used = strlen(missing);
        snprintf(missing + used, msz - used, "%s%s", used ? ", " : "", name);
    }
}

int st_cuda_num(const char *dotted)
{
    int maj = 0, min = 0;
    if (sscanf(dotted, "%d.%d", &maj, &min) < 1) return 0;
    return maj * 1000 + min * 10;
}

void st_cuda_decode(int v, char *out, size_t outsz)
{
    snprintf(out, outsz, "%d.%d", v / 1000, (v % 1000) / 10);
}

void st_cudnn_decode(long v, char *out, size_t outsz)
{
    if (v >= 90000) /* 9.x: M*10000 + m*100 + p */
        snprintf(out, outsz, "%ld.%ld.%ld", v / 10000, (v % 10000) / 100, v % 100);
    else            /* <= 8.x: M*1000 + m*100 + p */
        snprintf(out, outsz, "%ld.%ld.%ld", v / 1000, (v % 1000) / 100, v % 100);
}

void st_rng_seed(st_rng *g)
{
    unsigned long long s = 0;
    if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s)
        s = (unsigned long long)st_now_ms() * 0x9E3779B97F4A7C15ull;
    g->s = s ? s : 0x2545F4914F6CDD1Dull;
}

float st_rng_float(st_rng *g)
{
    g->s ^= g->s >> 12;
    g->s ^= g->s << 25;
    g->s ^= g->s >> 27;
    unsigned long long x = g->s * 0x2545F4914F6CDD1Dull;
    return (float)((double)(x >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

int st_exit_code(const st_report *r)
{
    bool nogpu = false;
    for (int i = 0; i < ST_NSTEPS; i++) {
        if (r->steps[i].status == ST_FAILED) return 7;
        if (r->steps[i].status == ST_SKIPPED && r->steps[i].nogpu) nogpu = true;
    }
    return nogpu ? 8 : 0;
}

void st_report_free(st_report *r)
{
    free(r->devices);
    r->devices = NULL;
    r->n_devices = 0;
}

/* Run one step, timing it; a step the GPU cannot reach is skipped with the
 * reason found earlier (no driver, no device, driver too old). */
typedef void (*step_fn)(st_state *);

static void timed(st_state *st, int idx, step_fn fn, bool needs_gpu)
{
    st_step *s = &st->r->steps[idx];
    double t0 = st_now_ms();
    if (needs_gpu && !st->gpu_ready)
        st_skip(s, st->gpu_skip_nogpu, "%s", st->gpu_skip[0] ? st->gpu_skip : "no usable GPU");
    else
        fn(st);
    s->ms += st_now_ms() - t0;
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
    if (!st) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    st->ctx = ctx;
    st->opt = opt;
    st->r = r;
    st->nvcc_pid = -1;
    double t0 = st_now_ms();

    /* Facts (min_driver, sm range, max_gcc) come with step 1's receipt. */
    double f0 = st_now_ms();
    st_toolchain_facts(st);
    r->steps[ST_FILES].ms += st_now_ms() - f0;
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
    st_nvcc_abandon(st);
    {
        double l0 = st_now_ms();
        st_loader_late(st);
        r->steps[ST_LOADER].ms += st_now_ms() - l0;
    }
    r->total_ms = st_now_ms() - t0;
    if (opt->bench && st->gpu_ready) {
        double b0 = st_now_ms();
        st_bench_run(st);
        r->bench_ms = st_now_ms() - b0;
    } else if (opt->bench) {
        snprintf(r->bench.torch_note, sizeof r->bench.torch_note, "not run: %s",
                 st->gpu_skip[0] ? st->gpu_skip : "no usable GPU");
    }
    st_gpu_release(st);
    close_libs(st);
    free(st);
    return CE_OK;
}
