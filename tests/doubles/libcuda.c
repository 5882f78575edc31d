/* Test doubles for machines without a GPU (one source, three libraries):
 *   default            libcuda.so.1 (the driver API verify and doctor call)
 *   -DCE_DOUBLE_CUDART  libcudart: versions plus memory (host memory)
 *   -DCE_DOUBLE_NVRTC   libnvrtc: a "compiler" that emits a token image
 * Memory is plain host memory, so the fake driver's launch can compute the
 * verify kernel (out = a*x + y) on the pointers it is given.  The doubles
 * check what they are given as the real ones would: NVRTC needs a source
 * with an extern "C" __global__ function, compiles for --gpu-architecture
 * (default compute_52), and writes that name and arch into its image (a
 * cubin only for sm_XY);
 * the driver loads only such an image, whose arch the device can run (PTX
 * of compute_XY <= the device, a cubin of the device's major and at most
 * its minor), finds only the function the image names, and launches only a
 * function of a module still loaded, with a grid and block in range.
 * Behaviour comes from the environment:
 *   FAKE_CUDA_DRIVER_VERSION  cuDriverGetVersion (default 13000)
 *   FAKE_CUDA_INIT            error cuInit returns (default 0)
 *   FAKE_CUDA_DEVICES         device count (default 1; 0: cuInit says NO_DEVICE)
 *   FAKE_CUDA_CC              compute capability "9.0"; FAKE_CUDA_NAME; FAKE_CUDA_MEM_GIB
 *   FAKE_CUDA_MODULE_LOAD     "fail": cuModuleLoadData* return CUDA_ERROR_INVALID_PTX
 *   FAKE_CUDA_LAUNCH          "compute" (default), "fail" (CUDA_ERROR_LAUNCH_FAILED),
 *                             "noop" (returns success, writes nothing)
 *   FAKE_NVRTC_COMPILE        "fail": nvrtcCompileProgram fails with a log
 *   FAKE_CUDA_PEER            cudaDeviceCanAccessPeer's answer for two GPUs (default 1)
 * Build: cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o libcuda.so.1 libcuda.c */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

static int env_is(const char *name, const char *want)
{
    const char *v = getenv(name);
    return v && strcmp(v, want) == 0;
}

#if !defined(CE_DOUBLE_CUDART) && !defined(CE_DOUBLE_NVRTC)

enum {
    CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_NOT_INITIALIZED = 3, CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101, CUDA_ERROR_INVALID_IMAGE = 200, CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_INVALID_PTX = 218, CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222, CUDA_ERROR_INVALID_HANDLE = 400, CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_LAUNCH_FAILED = 719,
};

static int initialized;

static const struct { int code; const char *name, *text; } errors[] = {
    { CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
    { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
    { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
    { CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
    { CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
    { CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
    { CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device" },
    { CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed" },
    { CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
      "the provided PTX was compiled with an unsupported toolchain." },
    { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
    { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
    { CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure" },
};

int cuGetErrorName(int e, const char **s)
{
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].code == e) { *s = errors[i].name; return 0; }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

int cuGetErrorString(int e, const char **s)
{
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].code == e) { *s = errors[i].text; return 0; }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

int cuDriverGetVersion(int *v)
{
    *v = env_int("FAKE_CUDA_DRIVER_VERSION", 13000);
    return 0;
}

int cuInit(unsigned flags)
{
    (void)flags;
    int e = env_int("FAKE_CUDA_INIT", 0);
    if (e) return e;
    if (env_int("FAKE_CUDA_DEVICES", 1) <= 0) return CUDA_ERROR_NO_DEVICE;
    initialized = 1;
    return 0;
}

int cuDeviceGetCount(int *n)
{
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    *n = env_int("FAKE_CUDA_DEVICES", 1);
    return 0;
}

int cuDeviceGet(int *d, int ordinal)
{
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (ordinal < 0 || ordinal >= env_int("FAKE_CUDA_DEVICES", 1)) return CUDA_ERROR_INVALID_DEVICE;
    *d = ordinal;
    return 0;
}

int cuDeviceGetName(char *name, int len, int dev)
{
    const char *n = getenv("FAKE_CUDA_NAME");
    snprintf(name, (size_t)len, "%s", n && *n ? n : "cudaenv fake GPU");
    (void)dev;
    return 0;
}

int cuDeviceGetAttribute(int *v, int attr, int dev)
{
    const char *cc = getenv("FAKE_CUDA_CC");
    int maj = 9, min = 0;
    if (cc && *cc) sscanf(cc, "%d.%d", &maj, &min);
    (void)dev;
    if (attr == 75) *v = maj;       /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
    else if (attr == 76) *v = min;  /* ..._MINOR */
    else *v = 0;
    return 0;
}

int cuDeviceTotalMem_v2(size_t *bytes, int dev)
{
    (void)dev;
    *bytes = (size_t)env_int("FAKE_CUDA_MEM_GIB", 80) << 30;
    return 0;
}

static int fake_ctx;

int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    (void)dev;
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    *ctx = &fake_ctx;
    return 0;
}

int cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
int cuCtxSetCurrent(void *ctx) { (void)ctx; return 0; }
int cuCtxSynchronize(void) { return 0; }

#define IMAGE_MAGIC "// cudaenv fake NVRTC image\n"

/* a loaded module: the one function its image names */
static struct fake_mod { int loaded; char entry[128]; int fn; } mods[8];

static int device_cc(void)
{
    const char *cc = getenv("FAKE_CUDA_CC");
    int maj = 9, min = 0;
    if (cc && *cc) sscanf(cc, "%d.%d", &maj, &min);
    return maj * 10 + min;
}

int cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals)
{
    (void)n; (void)opts; (void)vals;
    if (env_is("FAKE_CUDA_MODULE_LOAD", "fail")) return CUDA_ERROR_INVALID_PTX;
    if (!mod || !image || strncmp(image, IMAGE_MAGIC, strlen(IMAGE_MAGIC)) != 0) return CUDA_ERROR_INVALID_IMAGE;
    const char *t = strstr(image, ".target "), *e = strstr(image, ".visible .entry ");
    char kind[16] = "";
    int arch = 0;
    if (!t || !e || sscanf(t, ".target %15[a-z]_%d", kind, &arch) != 2) return CUDA_ERROR_INVALID_IMAGE;
    int dev = device_cc();
    if (strcmp(kind, "compute") == 0) {
        if (arch > dev) return CUDA_ERROR_INVALID_PTX;           /* PTX for a newer GPU: no JIT */
        /* PTX of an ISA newer than the driver's CUDA (minor-version
         * compatibility: the runtime runs, the JIT does not) */
        const char *v = strstr(image, ".version ");
        int isa_maj = 0, isa_min = 0, dv = env_int("FAKE_CUDA_DRIVER_VERSION", 13000);
        if (v && sscanf(v, ".version %d.%d", &isa_maj, &isa_min) == 2 &&
            isa_maj * 100 + isa_min > (dv / 1000 - 4) * 100 + dv % 1000 / 10)
            return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    } else if (strcmp(kind, "sm") != 0 || arch / 10 != dev / 10 || arch > dev) {
        return CUDA_ERROR_NO_BINARY_FOR_GPU;                     /* a cubin for another GPU */
    }
    for (size_t i = 0; i < sizeof mods / sizeof *mods; i++) {
        if (mods[i].loaded) continue;
        if (sscanf(e, ".visible .entry %127[A-Za-z0-9_]", mods[i].entry) != 1) return CUDA_ERROR_INVALID_IMAGE;
        mods[i].loaded = 1;
        *mod = &mods[i];
        return 0;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

int cuModuleLoadData(void **mod, const void *image)
{
    return cuModuleLoadDataEx(mod, image, 0, NULL, NULL);
}

static struct fake_mod *loaded_mod(void *mod)
{
    for (size_t i = 0; i < sizeof mods / sizeof *mods; i++)
        if (mod == &mods[i] && mods[i].loaded) return &mods[i];
    return NULL;
}

int cuModuleGetFunction(void **fn, void *mod, const char *name)
{
    struct fake_mod *m = loaded_mod(mod);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    if (!name || strcmp(name, m->entry) != 0) return CUDA_ERROR_NOT_FOUND;
    *fn = &m->fn;
    return 0;
}

int cuModuleUnload(void *mod)
{
    struct fake_mod *m = loaded_mod(mod);
    if (!m) return CUDA_ERROR_INVALID_HANDLE;
    m->loaded = 0;
    return 0;
}

/* The verify kernel: (const float *x, const float *y, float *out, float a, unsigned n). */
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shmem, void *stream, void **params, void **extra)
{
    (void)shmem; (void)stream; (void)extra;
    struct fake_mod *m = NULL;
    for (size_t i = 0; i < sizeof mods / sizeof *mods && !m; i++)
        if (f == &mods[i].fn && mods[i].loaded) m = &mods[i];
    if (!m || strcmp(m->entry, "cudaenv_axpy") != 0) return CUDA_ERROR_INVALID_HANDLE;
    if (env_is("FAKE_CUDA_LAUNCH", "fail")) return CUDA_ERROR_LAUNCH_FAILED;
    if (env_is("FAKE_CUDA_LAUNCH", "noop")) return 0;
    if (!params || gx * gy * gz == 0 || bx * by * bz == 0 || bx * by * bz > 1024) return CUDA_ERROR_INVALID_VALUE;
    const float *x = *(const float **)params[0], *y = *(const float **)params[1];
    float *out = *(float **)params[2];
    float a = *(const float *)params[3];
    unsigned n = *(const unsigned *)params[4];
    for (unsigned i = 0; i < n; i++) out[i] = fmaf(a, x[i], y[i]);  /* the kernel's grid-stride loop */
    return 0;
}

#elif defined(CE_DOUBLE_CUDART)

#ifndef CUDART_VER
#define CUDART_VER 13000
#endif

int cudaRuntimeGetVersion(int *v) { *v = CUDART_VER; return 0; }
int cudaDriverGetVersion(int *v) { *v = env_int("FAKE_CUDA_DRIVER_VERSION", 13000); return 0; }
const char *cudaGetErrorName(int e) { return e ? "cudaErrorMemoryAllocation" : "cudaSuccess"; }
const char *cudaGetErrorString(int e) { return e ? "out of memory" : "no error"; }
int cudaSetDevice(int d) { (void)d; return 0; }
/* FAKE_CUDA_PEER=0: no pair of GPUs has peer access (P2P off in the BIOS, an IOMMU) */
int cudaDeviceCanAccessPeer(int *can, int a, int b) { *can = a != b && env_int("FAKE_CUDA_PEER", 1); return 0; }
int cudaMalloc(void **p, size_t n) { *p = malloc(n ? n : 1); return *p ? 0 : 2; }
int cudaMallocHost(void **p, size_t n) { return cudaMalloc(p, n); }
int cudaFree(void *p) { free(p); return 0; }
int cudaFreeHost(void *p) { free(p); return 0; }
int cudaMemcpy(void *d, const void *s, size_t n, int kind) { (void)kind; memmove(d, s, n); return 0; }
int cudaMemcpyAsync(void *d, const void *s, size_t n, int kind, void *st) { (void)st; return cudaMemcpy(d, s, n, kind); }
int cudaMemset(void *d, int v, size_t n) { memset(d, v, n); return 0; }
int cudaDeviceSynchronize(void) { return 0; }
static int fake_event;
int cudaEventCreate(void **e) { *e = &fake_event; return 0; }
int cudaEventRecord(void *e, void *s) { (void)e; (void)s; return 0; }
int cudaEventSynchronize(void *e) { (void)e; return 0; }
int cudaEventElapsedTime(float *ms, void *a, void *b) { (void)a; (void)b; *ms = 1.0f; return 0; }
int cudaEventDestroy(void *e) { (void)e; return 0; }

#else /* CE_DOUBLE_NVRTC */

#ifndef NVRTC_MAJ
#define NVRTC_MAJ 13
#define NVRTC_MIN 0
#endif

/* one program at a time: its source, then the image compiling it produced */
static int fake_prog;
static const char *prog_src;
static char image[512], prog_log[256];
static size_t image_len;
static int image_cubin;

int nvrtcVersion(int *maj, int *min) { *maj = NVRTC_MAJ; *min = NVRTC_MIN; return 0; }
const char *nvrtcGetErrorString(int e)
{
    return e == 0 ? "NVRTC_SUCCESS" : e == 3 ? "NVRTC_ERROR_INVALID_INPUT" : e == 4 ? "NVRTC_ERROR_INVALID_PROGRAM"
         : e == 5 ? "NVRTC_ERROR_INVALID_OPTION" : "NVRTC_ERROR_COMPILATION";
}
int nvrtcCreateProgram(void **p, const char *src, const char *name, int n, const char *const *h,
                       const char *const *inc)
{
    (void)name; (void)h; (void)inc;
    if (!p || !src || n < 0) return 3;
    prog_src = src;
    image_len = 0;
    *p = &fake_prog;
    return 0;
}
int nvrtcCompileProgram(void *p, int n, const char *const *opts)
{
    if (p != &fake_prog || !prog_src) return 4;
    const char *arch = NULL;
    for (int i = 0; i < n; i++)
        if (strncmp(opts[i], "--gpu-architecture=", 19) == 0) arch = opts[i] + 19;
    if (!arch) arch = "compute_52";  /* NVRTC's default: PTX for an old GPU, no cubin */
    if (strncmp(arch, "compute_", 8) != 0 && strncmp(arch, "sm_", 3) != 0) return 5;
    snprintf(prog_log, sizeof prog_log, "cudaenv_verify.cu(1): error: fake compile failure");
    if (env_is("FAKE_NVRTC_COMPILE", "fail")) return 6;
    const char *g = strstr(prog_src, "__global__ void ");
    char entry[128];
    if (!strstr(prog_src, "extern \"C\"") || !g || sscanf(g + 16, "%127[A-Za-z0-9_]", entry) != 1) {
        snprintf(prog_log, sizeof prog_log, "cudaenv_verify.cu(1): error: no extern \"C\" __global__ function");
        return 6;
    }
    /* PTX ISA X.Y of CUDA (X+4).Y, as NVRTC writes it (12.4 -> 8.4, 11.8 -> 7.8) */
    image_len = (size_t)snprintf(image, sizeof image, "// cudaenv fake NVRTC image\n.version %d.%d\n.target %s\n"
                                 ".visible .entry %s()\n", NVRTC_MAJ - 4, NVRTC_MIN, arch, entry) + 1;
    image_cubin = strncmp(arch, "sm_", 3) == 0;
    return 0;
}
int nvrtcGetPTXSize(void *p, size_t *n) { if (p != &fake_prog || !image_len) return 4; *n = image_len; return 0; }
int nvrtcGetPTX(void *p, char *out) { if (p != &fake_prog || !image_len) return 4; memcpy(out, image, image_len); return 0; }
/* NVRTC makes a cubin only for a real architecture (sm_XY) */
int nvrtcGetCUBINSize(void *p, size_t *n) { if (p != &fake_prog || !image_len) return 4; *n = image_cubin ? image_len : 0; return 0; }
int nvrtcGetCUBIN(void *p, char *out) { if (p != &fake_prog || !image_cubin) return 4; memcpy(out, image, image_len); return 0; }
int nvrtcGetProgramLogSize(void *p, size_t *n) { (void)p; *n = strlen(prog_log) + 1; return 0; }
int nvrtcGetProgramLog(void *p, char *out) { (void)p; memcpy(out, prog_log, strlen(prog_log) + 1); return 0; }
int nvrtcDestroyProgram(void **p)
{
    if (!p || *p != &fake_prog) return 4;
    prog_src = NULL;
    *p = NULL;
    return 0;
}

#endif
