/* Step 6: compile a kernel with the toolchain's NVRTC for the GPU's own
 * architecture, load it both as PTX (through the driver's JIT) and as a
 * cubin, and launch each on > 1M elements of fresh random data; the output
 * is poisoned (NaN) first so a kernel that wrote nothing cannot pass.
 * Module loading and launch go through the driver API (the same for every
 * runtime since 11.x); memory through the toolchain's runtime. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st_int.h"

#define N_ELEMS ((1u << 20) + 7u)  /* > 1M, and not a multiple of the block */
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CUDA_ERROR_UNSUPPORTED_PTX_VERSION 222
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

static const char kernel_src[] =
    "extern \"C\" __global__ void cudaenv_axpy(const float *x, const float *y, float *out,\n"
    "                                          float a, unsigned n)\n"
    "{\n"
    "    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)\n"
    "        out[i] = a * x[i] + y[i];\n"
    "}\n";

static bool bind_nvrtc(st_state *st, st_step *s)
{
    st_nvrtc *n = &st->nv;
    if (!n->h) {
        st_failf(s, "NVRTC could not be loaded (see versions)");
        return false;
    }
    char miss[1024] = "";
    st_bind(n->h, "nvrtcCreateProgram", &n->CreateProgram, miss, sizeof miss);
    st_bind(n->h, "nvrtcCompileProgram", &n->CompileProgram, miss, sizeof miss);
    st_bind(n->h, "nvrtcGetPTXSize", &n->GetPTXSize, miss, sizeof miss);
    st_bind(n->h, "nvrtcGetPTX", &n->GetPTX, miss, sizeof miss);
    st_bind(n->h, "nvrtcGetProgramLogSize", &n->GetProgramLogSize, miss, sizeof miss);
    st_bind(n->h, "nvrtcGetProgramLog", &n->GetProgramLog, miss, sizeof miss);
    st_bind(n->h, "nvrtcDestroyProgram", &n->DestroyProgram, miss, sizeof miss);
    st_bind(n->h, "nvrtcGetErrorString", &n->GetErrorString, miss, sizeof miss);
    st_bind(n->h, "nvrtcGetCUBINSize", &n->GetCUBINSize, NULL, 0);  /* NVRTC >= 11.1 */
    st_bind(n->h, "nvrtcGetCUBIN", &n->GetCUBIN, NULL, 0);
    if (miss[0]) {
        st_failf(s, "%s lacks NVRTC entry points: %s", n->path, miss);
        return false;
    }
    return true;
}

/* Compile for arch ("compute_90" -> PTX, "sm_90" -> cubin); malloc'ed image. */
static char *compile(st_state *st, st_step *s, const char *arch, bool cubin, size_t *len)
{
    st_nvrtc *n = &st->nv;
    void *prog = NULL;
    char opt_arch[64];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    const char *opts[] = { opt_arch };
    int rc = n->CreateProgram(&prog, kernel_src, "cudaenv_verify.cu", 0, NULL, NULL);
    if (rc != 0) {
        st_failf(s, "nvrtcCreateProgram: %s", n->GetErrorString(rc));
        return NULL;
    }
    char *img = NULL;
    rc = n->CompileProgram(prog, 1, opts);
    if (rc != 0) {
        size_t ls = 0;
        char log[2048] = "";
        if (n->GetProgramLogSize(prog, &ls) == 0 && ls > 0 && ls < sizeof log) n->GetProgramLog(prog, log);
        st_failf(s, "NVRTC (%s) cannot compile for %s: %s%s%s", n->path, arch, n->GetErrorString(rc),
                 log[0] ? ": " : "", log);
        goto out;
    }
    rc = cubin ? n->GetCUBINSize(prog, len) : n->GetPTXSize(prog, len);
    if (rc != 0 || *len == 0 || !(img = malloc(*len))) {
        st_failf(s, "NVRTC produced no %s for %s", cubin ? "cubin" : "PTX", arch);
        goto out;
    }
    rc = cubin ? n->GetCUBIN(prog, img) : n->GetPTX(prog, img);
    if (rc != 0) {
        st_failf(s, "reading the %s failed: %s", cubin ? "cubin" : "PTX", n->GetErrorString(rc));
        free(img);
        img = NULL;
    }
out:
    n->DestroyProgram(&prog);
    return img;
}

typedef struct bufs {
    float *hx, *hy, *hout;
    void *dx, *dy, *dout;
    float a;
} bufs;

/* Load image as a module, launch, compare with the CPU.  False when it did
 * not run (a failure of s, or PTX a minor-compatibility driver cannot JIT). */
static bool run_image(st_state *st, st_step *s, const char *what, const char *img, bool ptx, bufs *b)
{
    st_cu *c = &st->cu;
    void *mod = NULL, *fn = NULL;
    char jit_log[2048] = "";
    int jopt[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
    void *jval[] = { jit_log, (void *)(size_t)sizeof jit_log };
    double t0 = ce_mono_ms();
    int rc = ptx ? c->ModuleLoadDataEx(&mod, img, 2, jopt, jval) : c->ModuleLoadData(&mod, img);
    double t_load = ce_mono_ms() - t0;
    if (rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION && ptx && st->minor_compat && st->nv.GetCUBIN) {
        st_note(s, "%s: not loadable by this driver (%s): expected in minor-version compatibility mode (see "
                "driver); the cubin below needs no JIT", what, st_cu_err(st, rc));
        return false;
    }
    if (rc != 0) {
        st_failf(s, "loading the %s failed: %s%s%s", what, st_cu_err(st, rc), jit_log[0] ? ": " : "", jit_log);
        return false;
    }
    if ((rc = c->ModuleGetFunction(&fn, mod, "cudaenv_axpy")) != 0) {
        st_failf(s, "%s: cuModuleGetFunction: %s", what, st_cu_err(st, rc));
        c->ModuleUnload(mod);
        return false;
    }
    size_t bytes = (size_t)N_ELEMS * sizeof(float);
    if ((rc = st->rt.Memset(b->dout, 0xFF, bytes)) != 0) {  /* all-ones floats are NaN */
        st_failf(s, "cudaMemset: %s", st_rt_err(st, rc));
        c->ModuleUnload(mod);
        return false;
    }
    unsigned n = N_ELEMS;
    void *args[] = { &b->dx, &b->dy, &b->dout, &b->a, &n };
    unsigned blocks = (N_ELEMS + 255) / 256;
    t0 = ce_mono_ms();
    rc = c->LaunchKernel(fn, blocks, 1, 1, 256, 1, 1, 0, NULL, args, NULL);
    if (rc == 0) rc = c->CtxSynchronize();
    double t_run = ce_mono_ms() - t0;
    c->ModuleUnload(mod);
    if (rc != 0) {
        st_failf(s, "launching the %s kernel failed: %s", what, st_cu_err(st, rc));
        return false;
    }
    if ((rc = st->rt.Memcpy(b->hout, b->dout, bytes, ST_D2H)) != 0) {
        st_failf(s, "cudaMemcpy (device to host): %s", st_rt_err(st, rc));
        return false;
    }
    size_t unwritten = 0, wrong = 0, first_bad = 0;
    double max_rel = 0;
    for (size_t i = 0; i < N_ELEMS; i++) {
        double ref = (double)b->a * b->hx[i] + b->hy[i];
        double got = b->hout[i];
        if (isnan(got)) {
            if (!unwritten++ && !wrong) first_bad = i;
            continue;
        }
        double scale = fabs((double)b->a * b->hx[i]) + fabs((double)b->hy[i]) + 1e-30;
        double rel = fabs(got - ref) / scale;
        if (rel > max_rel) max_rel = rel;
        if (rel > 2.4e-7) { /* 2^-22: one FMA-vs-separate rounding is below this */
            if (!wrong++ && !unwritten) first_bad = i;
        }
    }
    if (unwritten || wrong) {
        st_failf(s, "the %s kernel gave wrong results: %zu of %u outputs not written (still poisoned), %zu wrong; "
                 "first at [%zu]: got %g, expected %g", what, unwritten, N_ELEMS, wrong, first_bad,
                 (double)b->hout[first_bad], (double)b->a * b->hx[first_bad] + b->hy[first_bad]);
        return false;
    }
    st_note(s, "%s: loaded in %.1f ms%s, ran on %u elements in %.2f ms, all match the CPU reference "
            "(max relative error %.1e)", what, t_load, ptx ? " (driver JIT)" : "", N_ELEMS, t_run, max_rel);
    return true;
}

void st_kernel_step(st_state *st)
{
    st_step *s = &st->r->steps[ST_KERNEL];
    if (!bind_nvrtc(st, s) || !st_rt_bind(st, s)) return;
    char ptx_arch[32], sm_arch[32];
    snprintf(ptx_arch, sizeof ptx_arch, "compute_%d", st->nvcc_arch);
    snprintf(sm_arch, sizeof sm_arch, "sm_%d", st->nvcc_arch);
    double t0 = ce_mono_ms();
    size_t ptx_len = 0, cubin_len = 0;
    char *ptx = compile(st, s, ptx_arch, false, &ptx_len);
    double t_ptx = ce_mono_ms() - t0;
    if (!ptx) return;
    char *cubin = NULL;
    double t_cubin = 0;
    if (st->nv.GetCUBIN && st->nv.GetCUBINSize) {
        t0 = ce_mono_ms();
        cubin = compile(st, s, sm_arch, true, &cubin_len);
        t_cubin = ce_mono_ms() - t0;
    } else {
        st_note(s, "this NVRTC cannot emit cubins (before CUDA 11.1): PTX only");
    }
    st_note(s, "NVRTC %d.%d compiled for %s in %.1f ms (%zu bytes of PTX)%s", st->r->v.nvrtc_major,
            st->r->v.nvrtc_minor, ptx_arch, t_ptx, ptx_len, cubin ? "" : "");
    if (cubin) st_note(s, "NVRTC compiled for %s in %.1f ms (%zu bytes of cubin)", sm_arch, t_cubin, cubin_len);

    bufs b = { 0 };
    size_t bytes = (size_t)N_ELEMS * sizeof(float);
    b.hx = malloc(bytes);
    b.hy = malloc(bytes);
    b.hout = malloc(bytes);
    int rc = 0;
    if (!b.hx || !b.hy || !b.hout) {
        st_failf(s, "out of memory");
        goto out;
    }
    st_rng g;
    st_rng_seed(&g);
    unsigned long long seed = g.s;
    for (size_t i = 0; i < N_ELEMS; i++) {
        b.hx[i] = st_rng_float(&g);
        b.hy[i] = st_rng_float(&g);
    }
    b.a = st_rng_float(&g) * 4.0f;
    st_note(s, "fresh random data (seed %#llx), a = %g, output poisoned with NaN before each launch", seed,
            (double)b.a);
    if ((rc = st->rt.Malloc(&b.dx, bytes)) || (rc = st->rt.Malloc(&b.dy, bytes)) ||
        (rc = st->rt.Malloc(&b.dout, bytes))) {
        st_failf(s, "cudaMalloc(%zu bytes): %s", bytes, st_rt_err(st, rc));
        goto out;
    }
    if ((rc = st->rt.Memcpy(b.dx, b.hx, bytes, ST_H2D)) || (rc = st->rt.Memcpy(b.dy, b.hy, bytes, ST_H2D))) {
        st_failf(s, "cudaMemcpy (host to device): %s", st_rt_err(st, rc));
        goto out;
    }
    bool ran_ptx = run_image(st, s, "PTX", ptx, true, &b);
    if (cubin) run_image(st, s, "cubin", cubin, false, &b);
    if (s->status != ST_FAILED)
        st_pass(s, "NVRTC %s%s%s: %u elements, output matches the CPU reference%s", ran_ptx ? ptx_arch : "",
                ran_ptx && cubin ? " + " : "", cubin ? sm_arch : "", N_ELEMS,
                ran_ptx ? "" : " (PTX not JIT-compiled: minor-version compatibility)");
out:
    if (b.dx) st->rt.Free(b.dx);
    if (b.dy) st->rt.Free(b.dy);
    if (b.dout) st->rt.Free(b.dout);
    free(b.hx);
    free(b.hy);
    free(b.hout);
    free(ptx);
    free(cubin);
}
