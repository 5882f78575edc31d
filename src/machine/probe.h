/* What the machine looks like at the GPU/driver layer, and the rules that
 * say whether a CUDA release runs on it: shared by the install preflight,
 * doctor and verify, owned by none of them (src/machine sits below all
 * three).  The probes read the machine through machine.h. */
#ifndef CE_PROBE_H
#define CE_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "machine.h"

#define CE_MAX_GPUS 16
/* nvmlInit's answer when the kernel module and the libraries differ (nvml.h) */
#define NVML_ERROR_LIB_RM_VERSION_MISMATCH 18
#define CE_MAX_MIG 8

typedef struct ce_gpu {
    char name[96];
    char uuid[96];
    char bus[32];                  /* sysfs form: 0000:17:00.0 ("" unknown) */
    int cc_major, cc_minor;        /* -1 unknown */
    unsigned long long mem_total, mem_used;   /* bytes */
    int mig;                       /* current MIG mode: 1 on, 0 off, -1 unknown */
    unsigned n_mig;
    char mig_uuid[CE_MAX_MIG][96];
    char mig_name[CE_MAX_MIG][96];
    unsigned long long throttle;   /* NVML clock event reasons */
    int util;                      /* GPU utilization %, -1 unknown */
} ce_gpu;

/* What the machine looks like at the GPU/driver layer (shared with the
 * install preflight). */
typedef struct ce_probe {
    /* platform */
    char container[32];            /* "docker", "podman", "kubernetes", "lxc", "" */
    char container_why[256];       /* the marker that said so */
    bool wsl;
    char osrelease[128];
    /* PCI */
    int n_pci;                     /* NVIDIA display/3D functions in sysfs */
    char pci[CE_MAX_GPUS][32];
    /* kernel module */
    bool module;                   /* /proc/driver/nvidia/version exists */
    char module_version[64];
    /* device nodes */
    bool dev_ctl, dev_uvm;
    int n_dev;                     /* /dev/nvidia[0-9]+ */
    /* NVML */
    bool nvml_loaded;
    char nvml_where[512];          /* file or dlerror() */
    int nvml_init;                 /* nvmlInit_v2 result (0 ok) */
    char nvml_error[128];
    char driver[64];               /* NVML driver version ("" unknown) */
    int n_gpus;
    ce_gpu gpus[CE_MAX_GPUS];
    /* libcuda */
    bool cuda_loaded;
    char cuda_where[512];
    int cuda_version;              /* cuDriverGetVersion, 0 unknown */
    int cuinit;                    /* cuInit result, -1 not called */
    char cuinit_name[64];
    int cu_count;                  /* cuDeviceGetCount, -1 unknown */
} ce_probe;

/* probe_platform.c: containers and WSL2 */
void ce_probe_platform(const ce_machine *m, ce_probe *p);
/* probe_gpu.c: PCI, module, device nodes, NVML, libcuda (cuInit only when
 * with_cuinit: the install preflight asks NVML alone) */
void ce_probe_gpu(const ce_machine *m, ce_probe *p, bool with_cuinit);
/* A version like "550.54.14" from /proc/driver/nvidia/version text. */
void ce_driver_module_version(const char *text, char *out, size_t outsz);
/* The one reader of the kernel module's version (the machine's
 * /proc/driver/nvidia/version): 1 with out set, 0 the file says none, -1 no
 * such file (no module loaded). */
int ce_machine_driver_version(const ce_machine *m, char *out, size_t outsz);

/* compat.c: facts about CUDA releases and machines */
/* Whether a driver runs a CUDA release: 1 at or above min_driver, 0 only
 * through minor-version compatibility (why says the floor: compat_floor,
 * the release's min_driver_compat, or when NULL/"" the family's), -1 below.
 * An unknown min_driver (NULL/"") is judged by the floor alone: 0 or -1. */
int ce_driver_fits(const char *driver, const char *min_driver, const char *compat_floor, const char *cuda,
                   char *why, size_t whysz);
bool ce_datacenter_gpu(const char *name);
/* "3.5" -> 35; -1 invalid. */
int ce_sm_num(const char *s);
/* The CUDA releases that support compute capability cc (35 -> "11.8 or older"). */
const char *ce_cuda_for_sm(int cc);

#endif
