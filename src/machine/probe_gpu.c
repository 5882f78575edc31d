/* The GPU/driver layer as the machine shows it: NVIDIA functions on the PCI
 * bus, the kernel module, the device nodes, NVML and libcuda.  Read, not
 * judged: doctor (doctor_gpu.c) and the install preflight draw conclusions. */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

/* Probe texts are display strings built from paths and names of up to
 * PATH_MAX: cutting an absurdly long one short is the right outcome. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

/* NVML's ABI (nvml.h), declared here because cudaenv never builds against
 * CUDA headers. */
typedef void *nvml_dev;
typedef struct { unsigned long long total, free, used; } nvml_memory;
typedef struct {
    char bus_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci;
typedef struct { unsigned gpu, memory; } nvml_util;


void ce_driver_module_version(const char *text, char *out, size_t outsz)
{
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.14  Thu Feb 22 ..."
     * (open modules say "Open Kernel Module for x86_64  580.65.06  Release Build") */
    out[0] = '\0';
    const char *s = strstr(text, "Kernel Module");
    if (!s) s = text;
    for (; *s && *s != '\n'; s++) {
        if (isdigit((unsigned char)s[0]) && (s == text || s[-1] == ' ')) {
            size_t n = strspn(s, "0123456789.");
            if (memchr(s, '.', n) && n < outsz) {
                memcpy(out, s, n);
                out[n] = '\0';
                return;
            }
        }
    }
}

static void probe_pci(const ce_machine *m, ce_probe *p)
{
    DIR *d = ce_machine_opendir(m, "/sys/bus/pci/devices");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && p->n_pci < CE_MAX_GPUS) {
        if (e->d_name[0] == '.') continue;
        char path[512], v[64], cls[64];
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/vendor", e->d_name);
        if (ce_machine_read(m, path, v, sizeof v) < 0 || strncmp(v, "0x10de", 6) != 0) continue;
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/class", e->d_name);
        /* display controllers only (0x03xxxx): not the GPU's audio function
         * nor NVSwitch bridges */
        if (ce_machine_read(m, path, cls, sizeof cls) >= 0 && strncmp(cls, "0x03", 4) != 0) continue;
        snprintf(p->pci[p->n_pci++], sizeof p->pci[0], "%s", e->d_name);
    }
    closedir(d);
}

static void probe_nodes(const ce_machine *m, ce_probe *p)
{
    p->dev_ctl = ce_machine_devnode(m, "/dev/nvidiactl");
    p->dev_uvm = ce_machine_devnode(m, "/dev/nvidia-uvm");
    for (int i = 0; i < 64; i++) {
        char n[32];
        snprintf(n, sizeof n, "/dev/nvidia%d", i);
        if (ce_machine_devnode(m, n)) p->n_dev++;
    }
}

#define SYM(h, name) dlsym(h, name)

static void probe_nvml(const ce_machine *m, ce_probe *p)
{
    void *h = ce_machine_dlopen(m, "libnvidia-ml.so.1", p->nvml_where, sizeof p->nvml_where);
    if (!h) return;
    p->nvml_loaded = true;
    int (*init)(void) = SYM(h, "nvmlInit_v2");
    int (*shutdown)(void) = SYM(h, "nvmlShutdown");
    const char *(*errstr)(int) = SYM(h, "nvmlErrorString");
    int (*drv)(char *, unsigned) = SYM(h, "nvmlSystemGetDriverVersion");
    int (*count)(unsigned *) = SYM(h, "nvmlDeviceGetCount_v2");
    int (*byidx)(unsigned, nvml_dev *) = SYM(h, "nvmlDeviceGetHandleByIndex_v2");
    int (*name)(nvml_dev, char *, unsigned) = SYM(h, "nvmlDeviceGetName");
    int (*uuid)(nvml_dev, char *, unsigned) = SYM(h, "nvmlDeviceGetUUID");
    int (*cc)(nvml_dev, int *, int *) = SYM(h, "nvmlDeviceGetCudaComputeCapability");
    int (*mem)(nvml_dev, nvml_memory *) = SYM(h, "nvmlDeviceGetMemoryInfo");
    int (*pci)(nvml_dev, nvml_pci *) = SYM(h, "nvmlDeviceGetPciInfo_v3");
    int (*migmode)(nvml_dev, unsigned *, unsigned *) = SYM(h, "nvmlDeviceGetMigMode");
    int (*migmax)(nvml_dev, unsigned *) = SYM(h, "nvmlDeviceGetMaxMigDeviceCount");
    int (*migdev)(nvml_dev, unsigned, nvml_dev *) = SYM(h, "nvmlDeviceGetMigDeviceHandleByIndex");
    int (*reasons)(nvml_dev, unsigned long long *) = SYM(h, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!reasons) reasons = SYM(h, "nvmlDeviceGetCurrentClocksThrottleReasons");
    int (*util)(nvml_dev, nvml_util *) = SYM(h, "nvmlDeviceGetUtilizationRates");
    if (!init) {
        p->nvml_init = -1;
        snprintf(p->nvml_error, sizeof p->nvml_error, "nvmlInit_v2 not exported by %s", p->nvml_where);
        return;    /* keep the handle: unloading NVML is not worth the risk */
    }
    p->nvml_init = init();
    if (p->nvml_init != 0) {
        snprintf(p->nvml_error, sizeof p->nvml_error, "%s",
                 errstr ? errstr(p->nvml_init) : "NVML error");
        return;
    }
    if (drv) drv(p->driver, sizeof p->driver);
    unsigned n = 0;
    if (count && byidx && count(&n) == 0) {
        for (unsigned i = 0; i < n && p->n_gpus < CE_MAX_GPUS; i++) {
            nvml_dev dv;
            if (byidx(i, &dv) != 0) continue;
            ce_gpu *g = &p->gpus[p->n_gpus++];
            memset(g, 0, sizeof *g);
            g->cc_major = g->cc_minor = g->mig = g->util = -1;
            if (name) name(dv, g->name, sizeof g->name);
            if (uuid) uuid(dv, g->uuid, sizeof g->uuid);
            if (cc) cc(dv, &g->cc_major, &g->cc_minor);
            nvml_memory mi;
            if (mem && mem(dv, &mi) == 0) { g->mem_total = mi.total; g->mem_used = mi.used; }
            nvml_pci pi;
            if (pci && pci(dv, &pi) == 0) {
                /* NVML: "00000000:17:00.0", sysfs: "0000:17:00.0" */
                size_t l = strlen(pi.bus_id);
                const char *b = l > 12 ? pi.bus_id + l - 12 : pi.bus_id;
                for (size_t k = 0; b[k] && k + 1 < sizeof g->bus; k++) g->bus[k] = (char)tolower((unsigned char)b[k]);
            }
            unsigned cur = 0, pend = 0;
            if (migmode && migmode(dv, &cur, &pend) == 0) g->mig = cur ? 1 : 0;
            unsigned max = 0;
            if (g->mig == 1 && migmax && migdev && migmax(dv, &max) == 0) {
                for (unsigned k = 0; k < max && g->n_mig < CE_MAX_MIG; k++) {
                    nvml_dev md;
                    if (migdev(dv, k, &md) != 0) continue;
                    if (uuid) uuid(md, g->mig_uuid[g->n_mig], sizeof g->mig_uuid[0]);
                    if (name) name(md, g->mig_name[g->n_mig], sizeof g->mig_name[0]);
                    g->n_mig++;
                }
            }
            if (reasons) reasons(dv, &g->throttle);
            nvml_util u;
            if (util && util(dv, &u) == 0) g->util = (int)u.gpu;
        }
    }
    if (shutdown) shutdown();
}

static void probe_cuda(const ce_machine *m, ce_probe *p, bool with_cuinit)
{
    void *h = ce_machine_dlopen(m, "libcuda.so.1", p->cuda_where, sizeof p->cuda_where);
    if (!h) return;
    p->cuda_loaded = true;
    int (*ver)(int *) = SYM(h, "cuDriverGetVersion");
    int (*init)(unsigned) = SYM(h, "cuInit");
    int (*count)(int *) = SYM(h, "cuDeviceGetCount");
    int (*get)(int *, int) = SYM(h, "cuDeviceGet");
    int (*name)(char *, int, int) = SYM(h, "cuDeviceGetName");
    int (*attr)(int *, int, int) = SYM(h, "cuDeviceGetAttribute");
    int (*total)(size_t *, int) = SYM(h, "cuDeviceTotalMem_v2");
    int (*ename)(int, const char **) = SYM(h, "cuGetErrorName");
    if (ver) ver(&p->cuda_version);
    if (!with_cuinit || !init) return;
    p->cuinit = init(0);
    if (p->cuinit != 0) {
        const char *s = NULL;
        if (ename) ename(p->cuinit, &s);
        snprintf(p->cuinit_name, sizeof p->cuinit_name, "%s", s ? s : "CUDA error");
        return;
    }
    if (count && count(&p->cu_count) != 0) p->cu_count = -1;
    /* Without NVML the devices come from the driver API (it sees only what
     * CUDA_VISIBLE_DEVICES lets through). */
    if (p->n_gpus > 0 || p->nvml_init == 0 || !get) return;
    for (int i = 0; i < p->cu_count && p->n_gpus < CE_MAX_GPUS; i++) {
        int dv;
        if (get(&dv, i) != 0) continue;
        ce_gpu *g = &p->gpus[p->n_gpus++];
        memset(g, 0, sizeof *g);
        g->cc_major = g->cc_minor = g->mig = g->util = -1;
        if (name) name(g->name, (int)sizeof g->name, dv);
        if (attr) { attr(&g->cc_major, 75, dv); attr(&g->cc_minor, 76, dv); }
        size_t t = 0;
        if (total && total(&t, dv) == 0) g->mem_total = t;
    }
}

int ce_machine_driver_version(const ce_machine *m, char *out, size_t outsz)
{
    char buf[4096];
    out[0] = '\0';
    if (ce_machine_read(m, "/proc/driver/nvidia/version", buf, sizeof buf) < 0) return -1;
    ce_driver_module_version(buf, out, outsz);
    return out[0] != '\0';
}

void ce_probe_gpu(const ce_machine *m, ce_probe *p, bool with_cuinit)
{
    p->cuinit = -1;
    p->cu_count = -1;
    p->nvml_init = -1;
    probe_pci(m, p);
    p->module = ce_machine_driver_version(m, p->module_version, sizeof p->module_version) >= 0;
    probe_nodes(m, p);
    probe_nvml(m, p);
    probe_cuda(m, p, with_cuinit);
}
