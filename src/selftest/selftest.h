/* The self-test behind `cudaenv verify`: eight steps, each passed / failed /
 * skipped with its evidence and duration, filled into one plain struct that
 * the CLI renders (table or JSON).  Nothing here prints.
 *
 * CUDA runtime, NVRTC, cuDNN and the driver are dlopen()ed at run time from
 * explicit paths, never linked: cudaenv must run where no CUDA is installed,
 * and it must test the toolchain it is pointed at, not the build machine's. */
#ifndef CE_SELFTEST_H
#define CE_SELFTEST_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"

typedef enum st_status { ST_PENDING = 0, ST_PASSED, ST_FAILED, ST_SKIPPED } st_status;

enum {
    ST_FILES,     /* 1 receipt vs tree */
    ST_VERSIONS,  /* 2 every version source agrees */
    ST_LOADER,    /* 3 libraries load from the toolchain, nothing shadows them */
    ST_DRIVER,    /* 4 libcuda.so.1 new enough */
    ST_DEVICE,    /* 5 GPUs and their compute capability */
    ST_KERNEL,    /* 6 NVRTC -> PTX/cubin -> launch -> CPU reference */
    ST_NVCC,      /* 7 nvcc builds and runs a program */
    ST_CUDNN,     /* 8 cuDNN forward convolutions vs float64 reference */
    ST_NCCL,      /* 9 libnccl.so.2 from the toolchain, its version, a one-GPU communicator */
    ST_NSTEPS
};

#define ST_EVIDENCE_MAX 6144

typedef struct st_step {
    const char *id;            /* "files", "versions", ... (stable JSON key) */
    const char *title;         /* "Files match the receipt" */
    st_status status;
    bool nogpu;                /* skipped because no usable GPU/driver (exit 8) */
    char summary[640];         /* one line: what was shown, or why it failed/was skipped */
    char evidence[ST_EVIDENCE_MAX]; /* lines separated by '\n' */
    double ms;
} st_step;

/* What each source says; 0 / "" when that source was not read. */
typedef struct st_versions {
    char cuda_expected[32];    /* from the toolchain name / receipt: "13.0.2" */
    char version_json[32];     /* version.json cuda.version as written */
    char nvcc[32];             /* "13.0" from "release 13.0, V13.0.88" */
    int cudart_header;         /* CUDART_VERSION, 13000 */
    int cudart_runtime;        /* cudaRuntimeGetVersion */
    int nvrtc_major, nvrtc_minor;
    bool has_cudnn;
    char cudnn_expected[32];   /* from the toolchain name */
    char cudnn_header[32];     /* "9.19.0" from cudnn_version.h */
    char cudnn_lib[32];        /* "9.19.0" from libcudnn.so.9.19.0 ("" when only .so.9) */
    long cudnn_runtime;        /* cudnnGetVersion() raw */
    char cudnn_runtime_str[32];/* decoded ("8.7.0" from 8700, "9.19.0" from 91900) */
    long cudnn_cudart;         /* cudnnGetCudartVersion() raw, 13000 */
    int driver_cuda;           /* cuDriverGetVersion, 13000 */
    char driver_release[32];   /* "580.95.05" from the libcuda file name or /proc */
} st_versions;

typedef struct st_device {
    int ordinal;
    char name[256];
    int cc_major, cc_minor;
    size_t total_mem;
    bool supported;            /* within the toolchain's sm range */
} st_device;

typedef struct st_bench {
    bool ran;
    size_t copy_bytes;         /* bytes per copy */
    double h2d_gbs, d2h_gbs, d2d_gbs;   /* GB/s (1e9), median of the repeats */
    double conv_tflops;        /* forward convolution, FMA math */
    char conv_shape[128];
    double allreduce_busbw_gbs;  /* NCCL all-reduce of 256 MiB, bus bandwidth (--all-devices, 2+ GPUs) */
    int allreduce_gpus;          /* over that many GPUs; 0: not measured */
    bool torch;                /* PyTorch measured the same copies */
    double torch_h2d_gbs, torch_d2h_gbs, torch_d2d_gbs, torch_conv_tflops;
    char torch_note[512];      /* why there is no comparison, or its version */
} st_bench;

/* Facts about the toolchain from its receipt, else from the manifest. */
typedef struct st_toolchain {
    char name[96];
    char prefix[CE_PATH_MAX];
    char cuda[32], cudnn[32];
    char nccl[32];             /* the receipt's NCCL ("2.25.1"), "" for none */
    char min_driver[32];       /* "580.65.06", "" unknown */
    char min_driver_compat[32]; /* minor-version compatibility floor ("525.60.13"), "" unknown */
    int max_gcc;               /* 0 unknown */
    char sm_min[16], sm_max[16]; /* "7.5", "12.1"; "" unknown */
    char facts_from[64];       /* "receipt", "manifest", "" */
    bool adhoc;                /* a tree cudaenv neither installed nor adopted (the
                                  machine's own /usr/local/cuda): no receipt, step 1 skipped */
    char selected_by[8704];    /* why this one when none was named ("" when named) */
} st_toolchain;

typedef int (*st_sha256_fn)(const char *path, char hex[65]);

typedef struct st_options {
    bool all_devices, bench, deep;
    const char *libcuda;       /* test only: path of the driver library to use */
    st_sha256_fn sha256_file;  /* for --deep; NULL where this binary has none */
    const char *tmpdir;        /* for the nvcc program; NULL = $TMPDIR or /tmp */
    const char *shell_ld_path; /* the shell's LD_LIBRARY_PATH when the check runs in the
                                  toolchain's own environment (as exec): what shadows
                                  the toolchain there is a warning; NULL: none */
} st_options;

typedef struct st_report {
    st_toolchain tc;
    st_step steps[ST_NSTEPS];
    st_versions v;
    st_device *devices;
    int n_devices;
    st_bench bench;
    double total_ms;
    double bench_ms;
    char warnings[2048];       /* lines separated by '\n': true here, no check failed */
    /* What tells nodes apart (verify --report, contrib/slurm/cudaenv-report):
     * the sha256 of the receipt's file list (each "path size sha256" line,
     * sorted: the same tree gives the same digest on every node, whenever and
     * from wherever it was installed; "" without a receipt), and the
     * toolchain libraries the process mapped, resolved, '\n'-separated. */
    char tree_sha256[65];
    char mapped[8192];
} st_report;

/* Run every step on the toolchain in tc (name and prefix set; the rest is
 * read from its receipt, or the manifest).  Always fills the report; returns
 * 0, or a negative ce_err only when the report could not be made at all. */
int st_run(ce_ctx *ctx, const st_toolchain *tc, const st_options *opt, st_report *r);
/* The verify exit rule: 7 if any step failed, else 8 if a GPU step was
 * skipped for want of a GPU/driver, else 0. */
int st_exit_code(const st_report *r);
void st_report_free(st_report *r);
const char *st_status_name(st_status s);

/* cuDNN's version number -> "major.minor.patch": the encoding changed in 9
 * (8.x: M*1000+m*100+p, 9.x: M*10000+m*100+p). */
void st_cudnn_decode(long v, char *out, size_t outsz);
/* "CUDA 13.0" style major.minor of CUDART_VERSION / cudaRuntimeGetVersion
 * (M*1000+m*10). */
void st_cuda_decode(int v, char *out, size_t outsz);

#endif
