/* Layer 1: is there an NVIDIA GPU, is its kernel module loaded, are the
 * device nodes there, do the driver's user-space libraries (NVML, libcuda)
 * load and agree with the module.  "No device", "module not loaded" and
 * "library missing" are different findings because their fixes differ.
 * What the machine shows comes from machine/probe_gpu.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bytes.h"
#include "doctor_int.h"

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
            char used[32], total[32];
            ce_bytes_text(used, sizeof used, (double)g->mem_used);
            ce_bytes_text(total, sizeof total, (double)g->mem_total);
            doc_add(d, "gpu.memory-busy", CE_SEV_WARNING,
                    doc_fmt(sum, sizeof sum, "GPU %d (%s) has almost no free memory", i, g->name),
                    doc_fmt(ev, sizeof ev, "NVML: %s of %s in use", used, total),
                    "see who holds it: nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv; "
                    "stop those processes or pick another GPU with CUDA_VISIBLE_DEVICES");
        }
    }
}
