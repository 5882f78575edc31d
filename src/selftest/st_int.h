/* Private to src/selftest: the function tables of the libraries the
 * self-test dlopen()s, the state one run shares between its steps, and the
 * step helpers.  Types are declared here with the ABI of the real headers
 * (handles are pointers, CUdevice an int, CUdeviceptr 64 bits) so that no
 * CUDA header is needed to build cudaenv. */
#ifndef CE_ST_INT_H
#define CE_ST_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/clock.h"   /* ce_mono_ms: every step times itself */
#include "core/proc.h"    /* every program a step runs */
#include "selftest.h"

/* Paths here are below PATH_MAX (4096) and messages are bounded; gcc cannot
 * see that through nested buffers, and a clipped message is harmless. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

typedef unsigned long long st_devptr;

typedef struct st_rt {           /* libcudart: versions and memory */
    void *h;
    char path[CE_PATH_MAX];             /* the file dlopen()ed */
    char soname[128];
    int (*RuntimeGetVersion)(int *);
    int (*SetDevice)(int);
    int (*Malloc)(void **, size_t);
    int (*Free)(void *);
    int (*Memcpy)(void *, const void *, size_t, int);
    int (*Memset)(void *, int, size_t);
    int (*DeviceSynchronize)(void);
    const char *(*GetErrorName)(int);
    const char *(*GetErrorString)(int);
    int (*MallocHost)(void **, size_t);
    int (*FreeHost)(void *);
    int (*MemcpyAsync)(void *, const void *, size_t, int, void *);
    int (*EventCreate)(void **);
    int (*EventRecord)(void *, void *);
    int (*EventSynchronize)(void *);
    int (*EventElapsedTime)(float *, void *, void *);
    int (*EventDestroy)(void *);
} st_rt;

enum { ST_H2D = 1, ST_D2H = 2, ST_D2D = 3 };  /* cudaMemcpyKind */

typedef struct st_nvrtc {
    void *h;
    char path[CE_PATH_MAX];
    char soname[128];
    int (*Version)(int *, int *);
    int (*CreateProgram)(void **, const char *, const char *, int, const char *const *, const char *const *);
    int (*CompileProgram)(void *, int, const char *const *);
    int (*GetPTXSize)(void *, size_t *);
    int (*GetPTX)(void *, char *);
    int (*GetCUBINSize)(void *, size_t *);
    int (*GetCUBIN)(void *, char *);
    int (*GetProgramLogSize)(void *, size_t *);
    int (*GetProgramLog)(void *, char *);
    int (*DestroyProgram)(void **);
    const char *(*GetErrorString)(int);
} st_nvrtc;

typedef struct st_dnn {
    void *h;
    char path[CE_PATH_MAX];
    char soname[128];
    size_t (*GetVersion)(void);
    size_t (*GetCudartVersion)(void);
    const char *(*GetErrorString)(int);
    int (*Create)(void **);
    int (*Destroy)(void *);
    int (*CreateTensorDescriptor)(void **);
    int (*SetTensor4dDescriptor)(void *, int, int, int, int, int, int);
    int (*DestroyTensorDescriptor)(void *);
    int (*CreateFilterDescriptor)(void **);
    int (*SetFilter4dDescriptor)(void *, int, int, int, int, int, int);
    int (*DestroyFilterDescriptor)(void *);
    int (*CreateConvolutionDescriptor)(void **);
    int (*SetConvolution2dDescriptor)(void *, int, int, int, int, int, int, int, int);
    int (*SetConvolutionMathType)(void *, int);
    int (*DestroyConvolutionDescriptor)(void *);
    int (*GetConvolution2dForwardOutputDim)(void *, void *, void *, int *, int *, int *, int *);
    int (*GetConvolutionForwardWorkspaceSize)(void *, void *, void *, void *, void *, int, size_t *);
    int (*ConvolutionForward)(void *, const void *, void *, const void *, void *, const void *,
                              void *, int, void *, size_t, const void *, void *, void *);
} st_dnn;

typedef struct st_cu {           /* libcuda.so.1: the driver API */
    void *h;
    char path[CE_PATH_MAX];             /* where the loader found it */
    int (*Init)(unsigned);
    int (*DriverGetVersion)(int *);
    int (*DeviceGetCount)(int *);
    int (*DeviceGet)(int *, int);
    int (*DeviceGetName)(char *, int, int);
    int (*DeviceGetAttribute)(int *, int, int);
    int (*DeviceTotalMem)(size_t *, int);
    int (*DevicePrimaryCtxRetain)(void **, int);
    int (*DevicePrimaryCtxRelease)(int);
    int (*CtxSetCurrent)(void *);
    int (*CtxSynchronize)(void);
    int (*ModuleLoadData)(void **, const void *);
    int (*ModuleLoadDataEx)(void **, const void *, unsigned, int *, void **);
    int (*ModuleGetFunction)(void **, void *, const char *);
    int (*ModuleUnload)(void *);
    int (*LaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, void *, void **, void **);
    int (*GetErrorName)(int, const char **);
    int (*GetErrorString)(int, const char **);
} st_cu;

/* One run: what the steps share. */
typedef struct st_state {
    ce_ctx *ctx;
    const st_options *opt;
    st_report *r;
    char libdir[CE_PATH_MAX];           /* lib64 (or lib) of the toolchain */
    char cudnn_libdir[CE_PATH_MAX];
    st_rt rt;
    st_nvrtc nv;
    st_dnn dnn;
    st_cu cu;
    char nv_builtins_soname[128];
    bool gpu_ready;              /* a device is set up and its context current */
    int dev;                     /* ordinal the GPU steps use */
    void *cuctx;
    char gpu_skip[512];          /* why the GPU steps cannot run */
    bool gpu_skip_nogpu;         /* ... and whether that is "no usable GPU" (exit 8) */
    ce_proc_child nvcc;          /* nvcc compiling in the background */
    char nvcc_dir[CE_PATH_MAX];
    double nvcc_started;
    int nvcc_arch;               /* 90 for sm_90 */
    bool minor_compat;           /* the driver runs this toolkit only through minor-version
                                    compatibility: newer PTX does not JIT (kernel step) */
    char gcc_note[1024];
    int loaded_checked;          /* toolchain objects the loader step saw */
    char errbuf[2][400];         /* st_cu_err / st_rt_err answers */
    int errsel;
} st_state;

/* Step helpers (step.c). */
void st_note(st_step *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void st_pass(st_step *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void st_failf(st_step *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void st_skip(st_step *s, bool nogpu, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Bind a symbol into *slot; appends its name to missing when absent. */
void st_bind(void *h, const char *name, void *slot, char *missing, size_t msz);
/* The toolkit's CUDA major.minor ("13.0") as a number 13000. */
int st_cuda_num(const char *dotted);
/* Fresh random numbers: a xorshift seeded from getrandom(). */
typedef struct st_rng { unsigned long long s; } st_rng;
void st_rng_seed(st_rng *g);
float st_rng_float(st_rng *g);  /* uniform in [-1, 1) */

/* Steps, one module each. */
void st_files(st_state *st);                  /* files.c */
int st_toolchain_facts(st_state *st);         /* files.c: receipt / manifest facts */
void st_versions_step(st_state *st);          /* versions.c (opens the libraries) */
void st_loader_step(st_state *st);            /* loader.c */
void st_loader_late(st_state *st);            /* loader.c: after cuDNN pulled in its parts */
int st_elf_soname(const char *path, char *out, size_t outsz); /* loader.c */
int st_elf_complete(const char *path, char *why, size_t wsz);  /* loader.c: not truncated */
/* Copies of soname before the toolchain's own directory in LD_LIBRARY_PATH: in the
 * environment the check runs in a failure of s (counted), in the shell's a warning
 * of the report.  loader.c */
int st_ld_shadows(st_state *st, st_step *s, const char *soname, const char *ours_path);
/* Every "stem*.so.*" in dir complete (cuDNN loads its parts later). loader.c */
int st_elf_dir_complete(const char *dir, const char *stem, char *why, size_t wsz);
void st_driver_step(st_state *st);            /* driver.c */
void st_device_step(st_state *st);            /* driver.c */
const char *st_cu_err(st_state *st, int rc);  /* libs.c: "CUDA_ERROR_X: text" */
const char *st_rt_err(st_state *st, int rc);  /* libs.c */
void st_gpu_release(st_state *st);            /* driver.c */
void st_kernel_step(st_state *st);            /* kernel.c */
bool st_rt_bind(st_state *st, st_step *s);    /* libs.c: runtime memory entry points, cudaSetDevice */
void st_nvcc_start(st_state *st);             /* nvcc.c: compile in the background */
void st_nvcc_step(st_state *st);              /* nvcc.c: wait, run */
void st_nvcc_abandon(st_state *st);           /* nvcc.c: reap a build nobody waits for */
void st_cudnn_step(st_state *st);             /* cudnn.c */
void st_nccl_step(st_state *st);              /* nccl.c */
void st_nccl_decode(int code, char *out, size_t outsz);
/* verify --all-devices with 2+ GPUs: peer access, an exact all-reduce, its bus
 * bandwidth with --bench (collective.c); false when it failed the step */
bool st_nccl_collective(st_state *st, st_step *s, void *h, const char *ver, char *summary, size_t ssz);
int st_cudnn_conv_time(st_state *st, double *tflops, char *shape, size_t shapesz); /* cudnn.c, for bench */
void st_bench_run(st_state *st);              /* bench.c */

#endif
