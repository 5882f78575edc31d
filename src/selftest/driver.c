/* Steps 4 and 5: the driver (libcuda.so.1, where it came from, new enough
 * for this runtime and for the toolkit's minimum) and the GPUs (name,
 * compute capability within the toolkit's sm range, memory).  Also the
 * context the later GPU steps run in: the device's primary context, which
 * the runtime shares. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "st_int.h"
#include "core/version.h"
#include "machine/probe.h"

#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CUDA_ERROR_NO_DEVICE 100

static void no_gpu(st_state *st, bool nogpu, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void no_gpu(st_state *st, bool nogpu, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->gpu_skip, sizeof st->gpu_skip, fmt, ap);
    va_end(ap);
    st->gpu_skip_nogpu = nogpu;
}

/* "580.95.05" from libcuda.so.580.95.05, else from the kernel module. */
static void driver_release(st_state *st, const char *real)
{
    const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    const char *v = strstr(base, ".so.");
    char *out = st->r->v.driver_release;
    size_t outsz = sizeof st->r->v.driver_release;
    if (v && strchr(v + 4, '.') && ce_version_valid(v + 4)) {
        snprintf(out, outsz, "%s", v + 4);
        return;
    }
    if (st->opt->libcuda) return;  /* a test double: the machine's module says nothing about it */
    ce_machine m;
    ce_machine_init(&m, st->ctx);
    if (ce_machine_driver_version(&m, out, outsz) <= 0) out[0] = '\0';
}

static bool bind_driver(st_state *st, st_step *s)
{
    st_cu *c = &st->cu;
    char miss[1024] = "";
    st_bind(c->h, "cuGetErrorName", &c->GetErrorName, miss, sizeof miss);
    st_bind(c->h, "cuGetErrorString", &c->GetErrorString, miss, sizeof miss);
    st_bind(c->h, "cuInit", &c->Init, miss, sizeof miss);
    st_bind(c->h, "cuDriverGetVersion", &c->DriverGetVersion, miss, sizeof miss);
    st_bind(c->h, "cuDeviceGetCount", &c->DeviceGetCount, miss, sizeof miss);
    st_bind(c->h, "cuDeviceGet", &c->DeviceGet, miss, sizeof miss);
    st_bind(c->h, "cuDeviceGetName", &c->DeviceGetName, miss, sizeof miss);
    st_bind(c->h, "cuDeviceGetAttribute", &c->DeviceGetAttribute, miss, sizeof miss);
    st_bind(c->h, "cuDeviceTotalMem_v2", &c->DeviceTotalMem, miss, sizeof miss);
    st_bind(c->h, "cuDevicePrimaryCtxRetain", &c->DevicePrimaryCtxRetain, miss, sizeof miss);
    st_bind(c->h, "cuDevicePrimaryCtxRelease_v2", &c->DevicePrimaryCtxRelease, NULL, 0);
    if (!c->DevicePrimaryCtxRelease)
        st_bind(c->h, "cuDevicePrimaryCtxRelease", &c->DevicePrimaryCtxRelease, miss, sizeof miss);
    st_bind(c->h, "cuCtxSetCurrent", &c->CtxSetCurrent, miss, sizeof miss);
    st_bind(c->h, "cuCtxSynchronize", &c->CtxSynchronize, miss, sizeof miss);
    st_bind(c->h, "cuModuleLoadData", &c->ModuleLoadData, miss, sizeof miss);
    st_bind(c->h, "cuModuleLoadDataEx", &c->ModuleLoadDataEx, miss, sizeof miss);
    st_bind(c->h, "cuModuleGetFunction", &c->ModuleGetFunction, miss, sizeof miss);
    st_bind(c->h, "cuModuleUnload", &c->ModuleUnload, miss, sizeof miss);
    st_bind(c->h, "cuLaunchKernel", &c->LaunchKernel, miss, sizeof miss);
    if (miss[0]) {
        st_failf(s, "%s lacks driver API entry points: %s", c->path, miss);
        return false;
    }
    return true;
}

void st_driver_step(st_state *st)
{
    st_step *s = &st->r->steps[ST_DRIVER];
    st_versions *v = &st->r->v;
    const char *want = st->opt->libcuda ? st->opt->libcuda : "libcuda.so.1";
    dlerror();
    st->cu.h = dlopen(want, RTLD_NOW | RTLD_LOCAL);
    if (!st->cu.h) {
        const char *why = dlerror();
        if (st->opt->libcuda)
            no_gpu(st, true, "libcuda.so.1 not found: no NVIDIA driver on this machine (%s: %s)", want,
                   why ? why : "?");
        else
            no_gpu(st, true, "libcuda.so.1 not found: no NVIDIA driver on this machine");
        st_skip(s, true, "%s", st->gpu_skip);
        return;
    }
    struct link_map *lm = NULL;
    char real[4096] = "";
    if (dlinfo(st->cu.h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name[0]) {
        snprintf(st->cu.path, sizeof st->cu.path, "%s", lm->l_name);
        if (!realpath(lm->l_name, real)) snprintf(real, sizeof real, "%s", lm->l_name);
    } else {
        snprintf(st->cu.path, sizeof st->cu.path, "%s", want);
        snprintf(real, sizeof real, "%s", want);
    }
    st_note(s, "libcuda.so.1: %s%s%s", st->cu.path, strcmp(real, st->cu.path) ? " -> " : "",
            strcmp(real, st->cu.path) ? real : "");
    driver_release(st, real);
    if (!bind_driver(st, s)) {
        no_gpu(st, false, "the driver library is unusable (see driver)");
        return;
    }
    int dv = 0, rc = st->cu.DriverGetVersion(&dv);
    if (rc != 0) {
        st_failf(s, "cuDriverGetVersion failed: %s", st_cu_err(st, rc));
        no_gpu(st, false, "the driver does not answer (see driver)");
        return;
    }
    v->driver_cuda = dv;
    char dmm[32], rmm[32];
    st_cuda_decode(dv, dmm, sizeof dmm);
    int runtime = v->cudart_runtime ? v->cudart_runtime : v->cudart_header;
    st_cuda_decode(runtime, rmm, sizeof rmm);
    const char *min = st->r->tc.min_driver;
    char need[160];
    if (min[0]) snprintf(need, sizeof need, "NVIDIA driver %s or newer", min);
    else snprintf(need, sizeof need, "an NVIDIA driver that supports CUDA %s", rmm);
    st_note(s, "driver %s supports CUDA up to %s (cuDriverGetVersion = %d)",
            v->driver_release[0] ? v->driver_release : "(release unknown)", dmm, dv);
    /* Inside a major family a toolkit runs on an older driver at or above the
     * family's floor, with a limited feature set (no JIT of newer PTX):
     * NVIDIA's minor-version compatibility, a warning as in doctor and the
     * install preflight, not a failure. */
    char why[256] = "";
    int fits = 1;
    const char *cuda = st->r->tc.cuda[0] ? st->r->tc.cuda : rmm;   /* a tree without facts: its runtime */
    if (v->driver_release[0] && (min[0] || (runtime && dv < runtime)))
        fits = ce_driver_fits(v->driver_release, min, st->r->tc.min_driver_compat, cuda, why, sizeof why);
    bool compat = fits == 0 && (!runtime || dv >= runtime || dv / 1000 == runtime / 1000);
    if (runtime && dv < runtime && !compat) {
        st_failf(s, "the driver %s supports CUDA up to %s but this toolkit's runtime is CUDA %s (%d): the driver is "
                 "too old for this toolkit; install %s, or use a toolchain of CUDA %s or older",
                 v->driver_release[0] ? v->driver_release : "", dmm, rmm, runtime, need, dmm);
        no_gpu(st, false, "the driver is too old for CUDA %s (see driver)", rmm);
        return;
    }
    if (compat) {
        st->minor_compat = true;
        if (min[0])
            st_note(s, "driver %s is older than %s, the minimum for CUDA %s (%s): it runs in minor-version "
                    "compatibility mode (%s); PTX newer than the driver cannot be JIT-compiled", v->driver_release,
                    min, cuda, st->r->tc.facts_from, why);
        else
            st_note(s, "driver %s supports CUDA %s, older than the runtime's %s: it runs in minor-version "
                    "compatibility mode (%s); PTX newer than the driver cannot be JIT-compiled", v->driver_release,
                    dmm, rmm, why);
        size_t used = strlen(st->r->warnings);
        snprintf(st->r->warnings + used, sizeof st->r->warnings - used,
                 "%sdriver %s runs CUDA %s only in minor-version compatibility mode (%s): no JIT of newer PTX; "
                 "install %s for full support", used ? "\n" : "", v->driver_release, cuda, why, need);
    } else if (min[0] && v->driver_release[0] && ce_version_cmp(v->driver_release, min) < 0) {
        st_failf(s, "driver %s is older than %s, the minimum for CUDA %s (%s); install %s",
                 v->driver_release, min, st->r->tc.cuda, st->r->tc.facts_from, need);
        no_gpu(st, false, "the driver is older than CUDA %s needs (see driver)", st->r->tc.cuda);
        return;
    }
    if (min[0] && !v->driver_release[0])
        st_note(s, "the driver's release is unknown; compared its CUDA version only (minimum is %s)", min);
    if (compat)
        st_pass(s, "driver %s (CUDA %s) from %s runs runtime %s in minor-version compatibility mode (%s for full "
                "support)", v->driver_release, dmm, real, rmm, min[0] ? min : need);
    else
        st_pass(s, "driver %s (CUDA %s) from %s, new enough for runtime %s%s%s",
                v->driver_release[0] ? v->driver_release : "?", dmm, real, rmm, min[0] ? " and minimum " : "", min);
}

static bool cc_in_range(const st_toolchain *tc, int maj, int min, char *why, size_t wsz)
{
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", maj, min);
    if (tc->sm_min[0] && ce_version_cmp(cc, tc->sm_min) < 0) {
        snprintf(why, wsz, "sm_%d%d is older than CUDA %s supports (sm %s to %s)", maj, min, tc->cuda, tc->sm_min,
                 tc->sm_max[0] ? tc->sm_max : "?");
        return false;
    }
    if (tc->sm_max[0] && ce_version_cmp(cc, tc->sm_max) > 0) {
        snprintf(why, wsz, "sm_%d%d is newer than CUDA %s supports (sm %s to %s)", maj, min, tc->cuda,
                 tc->sm_min[0] ? tc->sm_min : "?", tc->sm_max);
        return false;
    }
    return true;
}

void st_device_step(st_state *st)
{
    st_step *s = &st->r->steps[ST_DEVICE];
    if (!st->cu.Init || st->gpu_skip[0]) {
        st_skip(s, st->gpu_skip_nogpu, "%s", st->gpu_skip[0] ? st->gpu_skip : "no driver");
        return;
    }
    /* JIT the PTX for real instead of answering from ~/.nv/ComputeCache. */
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    int rc = st->cu.Init(0);
    if (rc != 0) {
        no_gpu(st, true, "cuInit failed: %s%s%s", st_cu_err(st, rc), vis ? "; CUDA_VISIBLE_DEVICES=" : "",
               vis ? vis : "");
        st_skip(s, true, "%s", st->gpu_skip);
        return;
    }
    int n = 0;
    rc = st->cu.DeviceGetCount(&n);
    if (rc != 0 || n <= 0) {
        no_gpu(st, true, "no CUDA device visible%s%s%s%s", rc ? ": " : "", rc ? st_cu_err(st, rc) : "",
               vis ? " (CUDA_VISIBLE_DEVICES=" : "", vis ? vis : "");
        if (vis) strncat(st->gpu_skip, ")", sizeof st->gpu_skip - strlen(st->gpu_skip) - 1);
        st_skip(s, true, "%s", st->gpu_skip);
        return;
    }
    int count = st->opt->all_devices ? n : 1;
    st->r->devices = calloc((size_t)count, sizeof *st->r->devices);
    if (!st->r->devices) {
        st_failf(s, "out of memory");
        return;
    }
    for (int i = 0; i < count; i++) {
        st_device *d = &st->r->devices[st->r->n_devices++];
        int dev = 0;
        d->ordinal = i;
        if ((rc = st->cu.DeviceGet(&dev, i)) != 0) {
            st_failf(s, "cuDeviceGet(%d) failed: %s", i, st_cu_err(st, rc));
            continue;
        }
        if (st->cu.DeviceGetName(d->name, (int)sizeof d->name, dev) != 0) snprintf(d->name, sizeof d->name, "?");
        st->cu.DeviceGetAttribute(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        st->cu.DeviceGetAttribute(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        st->cu.DeviceTotalMem(&d->total_mem, dev);
        char why[256] = "";
        d->supported = cc_in_range(&st->r->tc, d->cc_major, d->cc_minor, why, sizeof why);
        char mem[32];
        ce_bytes_text(mem, sizeof mem, (double)d->total_mem);
        st_note(s, "GPU %d: %s, compute capability %d.%d, %s%s%s", i, d->name, d->cc_major, d->cc_minor, mem,
                d->supported ? "" : ": ", why);
        if (!d->supported)
            st_failf(s, "GPU %d (%s): %s; use a toolchain whose CUDA supports it", i, d->name, why);
    }
    if (n > count) st_note(s, "%d more GPU(s) not checked; --all-devices checks every one", n - count);
    if (!st->r->tc.sm_min[0] && !st->r->tc.sm_max[0])
        st_note(s, "the toolchain's sm range is unknown (no receipt or manifest entry); not compared");
    st_device *d0 = &st->r->devices[0];
    if (!d0->supported || !d0->name[0]) {
        no_gpu(st, false, "GPU 0 is not supported by this toolchain (see device)");
        return;
    }
    /* nvcc (about a second) builds in the background from here on. */
    st->nvcc_arch = d0->cc_major * 10 + d0->cc_minor;
    st_nvcc_start(st);
    if ((rc = st->cu.DeviceGet(&st->dev, 0)) != 0 || (rc = st->cu.DevicePrimaryCtxRetain(&st->cuctx, st->dev)) != 0 ||
        (rc = st->cu.CtxSetCurrent(st->cuctx)) != 0) {
        st_failf(s, "cannot create a context on GPU 0: %s", st_cu_err(st, rc));
        no_gpu(st, false, "no context on GPU 0 (see device)");
        st->cuctx = NULL;
        return;
    }
    st->gpu_ready = true;
    if (s->status != ST_FAILED)
        st_pass(s, "%d GPU%s checked: %s (sm_%d%d) supported by CUDA %s", count, count == 1 ? "" : "s", d0->name,
                d0->cc_major, d0->cc_minor, st->r->tc.cuda);
}

void st_gpu_release(st_state *st)
{
    if (st->cuctx && st->cu.DevicePrimaryCtxRelease) st->cu.DevicePrimaryCtxRelease(st->dev);
    st->cuctx = NULL;
}
