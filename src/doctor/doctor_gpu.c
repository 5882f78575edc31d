/* Layer 1: is there an NVIDIA GPU, is its kernel module loaded, are the
 * device nodes there, do the driver's user-space libraries (NVML, libcuda)
 * load and agree with the module.  "No device", "module not loaded" and
 * "library missing" are different findings because their fixes differ. */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

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

#define NVML_ERROR_LIB_RM_VERSION_MISMATCH 18

void doc_module_version(const char *text, char *out, size_t outsz)
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

void doc_probe_gpu(const ce_machine *m, ce_probe *p, bool with_cuinit)
{
    char buf[4096];
    p->cuinit = -1;
    p->cu_count = -1;
    p->nvml_init = -1;
    probe_pci(m, p);
    if (ce_machine_read(m, "/proc/driver/nvidia/version", buf, sizeof buf) >= 0) {
        p->module = true;
        doc_module_version(buf, p->module_version, sizeof p->module_version);
    }
    probe_nodes(m, p);
    probe_nvml(m, p);
    probe_cuda(m, p, with_cuinit);
}

bool doc_datacenter_gpu(const char *name)
{
    static const char *const dc[] = { "Tesla", "A100", "A800", "A30", "A40", "A10", "A16", "A2 ",
                                      "H100", "H800", "H200", "H20", "GH200", "GB200", "B200", "B100",
                                      "L40", "L20", "L4", "V100", "T4", "P100", "P40", "K80", NULL };
    for (int i = 0; dc[i]; i++)
        if (strstr(name, dc[i])) return true;
    return false;
}

static bool hides_devices(void)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    return v && (!*v || strncmp(v, "-1", 2) == 0);
}

void doc_check_gpu(ce_doctor *d)
{
    ce_probe *p = &d->probe;
    char ev[2048], sum[512], fix[1024];
    if (p->wsl) return;   /* no PCI device, module or nodes in WSL2: doc_check_wsl */
    bool in_ct = p->container[0] != '\0';
    bool nvml_ok = p->nvml_loaded && p->nvml_init == 0;
    if (p->n_pci == 0 && !p->module && !p->dev_ctl && !nvml_ok) {
        doc_add(d, "gpu.no-device", CE_SEV_ERROR, "no NVIDIA GPU on this machine",
                doc_fmt(ev, sizeof ev, "no PCI device with vendor 0x10de under %s/sys/bus/pci/devices; "
                        "no %s/proc/driver/nvidia/version%s%s", d->m.root, d->m.root,
                        in_ct ? "; inside a container: " : "", in_ct ? p->container_why : ""),
                in_ct ? "the host (or VM) this container runs on shows no NVIDIA GPU either: attach or pass "
                        "through a GPU to the VM/host (cloud: pick a GPU instance type), then start the "
                        "container with --gpus all"
                      : "attach an NVIDIA GPU (VM: PCI passthrough / a GPU instance type); building CUDA code "
                        "without a GPU works, running it does not");
        return;
    }
    if (!p->module) {
        doc_add(d, "driver.module-not-loaded", CE_SEV_ERROR,
                "an NVIDIA GPU is present but the nvidia kernel module is not loaded",
                doc_fmt(ev, sizeof ev, "%d NVIDIA PCI device(s) (%s); %s/proc/driver/nvidia/version missing",
                        p->n_pci, p->n_pci ? p->pci[0] : "?", d->m.root),
                "sudo modprobe nvidia; if modprobe says the module is not found, install the driver "
                "(Ubuntu: sudo ubuntu-drivers install; others: the NVIDIA .run driver or your distribution's "
                "nvidia-driver package) and reboot; if it fails with 'Key was rejected by service', "
                "Secure Boot blocks the unsigned module: enroll the MOK or disable Secure Boot");
        return;
    }
    if (!in_ct && (!p->dev_ctl || p->n_dev == 0)) {
        doc_add(d, "driver.device-nodes-missing", CE_SEV_ERROR,
                "the nvidia module is loaded but its device nodes are missing",
                doc_fmt(ev, sizeof ev, "%s/dev/nvidiactl %s, %d /dev/nvidiaN node(s)", d->m.root,
                        p->dev_ctl ? "present" : "missing", p->n_dev),
                "sudo nvidia-modprobe -c=0 -u (or run nvidia-smi once as root); on a system without udev "
                "rules for NVIDIA, install the nvidia-modprobe package");
    } else if (!in_ct && !p->dev_uvm) {
        doc_add(d, "driver.uvm-missing", CE_SEV_ERROR,
                "/dev/nvidia-uvm is missing: CUDA programs fail in cuInit (CUDA_ERROR_UNKNOWN)",
                doc_fmt(ev, sizeof ev, "%s/dev/nvidia-uvm does not exist; nvidia module %s loaded", d->m.root,
                        p->module_version),
                "sudo modprobe nvidia-uvm && sudo nvidia-modprobe -c=0 -u");
    }
    if (!p->nvml_loaded) {
        if (!in_ct)
            doc_add(d, "driver.nvml-missing", CE_SEV_ERROR,
                    "the driver's NVML library (libnvidia-ml.so.1) cannot be loaded",
                    doc_fmt(ev, sizeof ev, "kernel module %s loaded; dlopen libnvidia-ml.so.1: %s",
                            p->module_version, p->nvml_where),
                    doc_fmt(fix, sizeof fix, "install the driver's user-space libraries matching the module "
                            "(Ubuntu/Debian: sudo apt install libnvidia-compute-%.*s; the .run driver installs "
                            "them itself), then sudo ldconfig", (int)strcspn(p->module_version, "."),
                            p->module_version));
    } else if (p->nvml_init == NVML_ERROR_LIB_RM_VERSION_MISMATCH) {
        doc_add(d, "driver.version-mismatch", CE_SEV_ERROR,
                "the loaded kernel module and the driver libraries are different versions",
                doc_fmt(ev, sizeof ev, "nvmlInit: %s; kernel module %s; library %s", p->nvml_error,
                        p->module_version, p->nvml_where),
                "reboot (the driver was upgraded but the old module is still loaded); without a reboot: "
                "stop every GPU process, then sudo rmmod nvidia_uvm nvidia_drm nvidia_modeset nvidia && "
                "sudo modprobe nvidia");
        return;
    } else if (p->nvml_init != 0) {
        doc_add(d, "driver.nvml-error", CE_SEV_ERROR, "NVML cannot talk to the driver",
                doc_fmt(ev, sizeof ev, "nvmlInit (%s): error %d: %s", p->nvml_where, p->nvml_init, p->nvml_error),
                "check 'sudo dmesg | grep -i -E \"nvrm|xid\"' for the driver's reason; a GPU that fell off "
                "the bus (Xid 79) needs a reboot or a reset (sudo nvidia-smi -r)");
    }
    if (!p->cuda_loaded) {
        if (!in_ct)
            doc_add(d, "driver.libcuda-missing", CE_SEV_ERROR,
                    "the driver's CUDA library (libcuda.so.1) cannot be loaded",
                    doc_fmt(ev, sizeof ev, "kernel module %s loaded; dlopen libcuda.so.1: %s", p->module_version,
                            p->cuda_where),
                    doc_fmt(fix, sizeof fix, "install the driver's CUDA library matching the module (Ubuntu/Debian: "
                            "sudo apt install libnvidia-compute-%.*s); it comes with the driver, never with the "
                            "toolkit; then sudo ldconfig", (int)strcspn(p->module_version, "."), p->module_version));
    } else if (p->cuinit > 0 && !hides_devices() && p->dev_ctl && p->dev_uvm && p->n_dev > 0 &&
               (p->nvml_init == 0 || !p->nvml_loaded)) {
        doc_add(d, "driver.cuinit-failed", CE_SEV_ERROR, "the CUDA driver fails to initialize (cuInit)",
                doc_fmt(ev, sizeof ev, "cuInit(0) = %d (%s) from %s", p->cuinit, p->cuinit_name, p->cuda_where),
                "check 'sudo dmesg | grep -i nvrm' and CUDA_VISIBLE_DEVICES; CUDA_ERROR_SYSTEM_DRIVER_MISMATCH "
                "(803) means libcuda and the kernel module differ: reboot after a driver upgrade");
    }
    for (int i = 0; i < p->n_gpus; i++) {
        const ce_gpu *g = &p->gpus[i];
        if (g->mem_total == 0 || g->mig == 1) continue;
        if (g->mem_used * 10 >= g->mem_total * 9) {
            doc_add(d, "gpu.memory-busy", CE_SEV_WARNING,
                    doc_fmt(sum, sizeof sum, "GPU %d (%s) has almost no free memory", i, g->name),
                    doc_fmt(ev, sizeof ev, "NVML: %llu MiB of %llu MiB in use", g->mem_used >> 20, g->mem_total >> 20),
                    "see who holds it: nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv; "
                    "stop those processes or pick another GPU with CUDA_VISIBLE_DEVICES");
        }
    }
}
