/* Layers 6-9: containers, WSL2, MIG and the performance traps.  Each of
 * these changes what the fix for a missing GPU is: inside a container the
 * fix is a runtime flag, not a driver install; in WSL2 installing a Linux
 * driver is the mistake itself. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "doctor_int.h"

void doc_check_container(ce_doctor *d)
{
    ce_probe *p = &d->probe;
    char ev[2048];
    if (!p->container[0] || p->wsl) return;
    bool host_gpu = p->n_pci > 0 || p->module;
    if (!host_gpu) return;    /* gpu.no-device says it: the host has none */
    if (!p->dev_ctl || p->n_dev == 0 || !p->dev_uvm) {
        doc_add(d, "container.devices-not-mapped", CE_SEV_ERROR,
                "inside a container without the GPU device nodes",
                doc_fmt(ev, sizeof ev, "%s; the host has %s but %s/dev/nvidiactl is %s, %d /dev/nvidiaN, "
                        "/dev/nvidia-uvm %s", p->container_why,
                        p->module ? "the nvidia module loaded" : "an NVIDIA PCI device", d->m.root,
                        p->dev_ctl ? "present" : "missing", p->n_dev, p->dev_uvm ? "present" : "missing"),
                "start the container with the GPUs: docker run --gpus all ... (needs the NVIDIA Container "
                "Toolkit on the host: nvidia-ctk runtime configure --runtime=docker); podman run "
                "--device nvidia.com/gpu=all ...; Kubernetes: resources.limits nvidia.com/gpu: 1 with the "
                "NVIDIA device plugin");
        return;
    }
    if (!p->cuda_loaded || !p->nvml_loaded) {
        doc_add(d, "container.libcuda-not-mapped", CE_SEV_ERROR,
                "inside a container with the GPU devices but without the driver libraries",
                doc_fmt(ev, sizeof ev, "%s; device nodes present; dlopen libcuda.so.1: %s; libnvidia-ml.so.1: %s",
                        p->container_why, p->cuda_loaded ? "ok" : p->cuda_where,
                        p->nvml_loaded ? "ok" : p->nvml_where),
                "let the NVIDIA runtime mount the host driver's libraries: docker run --gpus all (or "
                "--runtime=nvidia -e NVIDIA_DRIVER_CAPABILITIES=compute,utility); never install a driver "
                "inside the image, and do not bake libcuda.so.1 into it");
    }
}

void doc_check_wsl(ce_doctor *d)
{
    ce_probe *p = &d->probe;
    char ev[2048], got[4096], via[256];
    if (!p->wsl) return;
    if (!ce_machine_devnode(&d->m, "/dev/dxg") && !ce_machine_exists(&d->m, "/dev/dxg")) {
        doc_add(d, "wsl.dxg-missing", CE_SEV_ERROR, "WSL without GPU paravirtualization (/dev/dxg missing)",
                doc_fmt(ev, sizeof ev, "kernel %s; %s/dev/dxg does not exist", p->osrelease, d->m.root),
                "run the distribution under WSL 2 (wsl --set-version <distro> 2) on Windows 11 or Windows 10 "
                "21H2+, then wsl --update and wsl --shutdown");
    }
    if (!ce_machine_exists(&d->m, "/usr/lib/wsl/lib/libcuda.so.1")) {
        doc_add(d, "wsl.libcuda-missing", CE_SEV_ERROR,
                "WSL2 without the Windows driver's libcuda (/usr/lib/wsl/lib/libcuda.so.1)",
                doc_fmt(ev, sizeof ev, "kernel %s; %s/usr/lib/wsl/lib/libcuda.so.1 does not exist", p->osrelease,
                        d->m.root),
                "install or update the NVIDIA driver on Windows (it provides libcuda to WSL2); do not install "
                "a Linux NVIDIA driver inside WSL; then wsl --shutdown and reopen");
        return;
    }
    int r = doc_ld_resolve(d, "libcuda.so.1", got, sizeof got, via, sizeof via);
    char want[4096];
    ce_machine_path(&d->m, "/usr/lib/wsl/lib/libcuda.so.1", want, sizeof want);
    if (r != 0) {
        doc_add(d, "wsl.libcuda-not-in-loader", CE_SEV_ERROR,
                "the loader does not find WSL's libcuda.so.1",
                doc_fmt(ev, sizeof ev, "%s exists, but neither LD_LIBRARY_PATH nor ld.so.cache lead to libcuda.so.1",
                        want),
                "echo /usr/lib/wsl/lib | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig");
    } else if (!ce_same_file(got, want)) {
        doc_add(d, "wsl.libcuda-shadowed", CE_SEV_ERROR,
                "a Linux driver's libcuda.so.1 shadows the Windows driver's in WSL2",
                doc_fmt(ev, sizeof ev, "the loader picks %s (via %s) instead of %s", got, via, want),
                "remove the Linux NVIDIA driver from the WSL distribution (sudo apt purge 'nvidia-driver-*' "
                "'libnvidia-compute-*', or nvidia-uninstall for a .run driver); install only the CUDA toolkit "
                "there, then sudo ldconfig");
    }
}

static bool cvd_names_mig(void)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    return v && strstr(v, "MIG-");
}

void doc_check_mig(ce_doctor *d)
{
    ce_probe *p = &d->probe;
    char ev[2048], sum[512], fix[1024];
    for (int i = 0; i < p->n_gpus; i++) {
        const ce_gpu *g = &p->gpus[i];
        if (g->mig != 1) continue;
        if (g->n_mig == 0) {
            doc_add(d, "mig.no-instances", CE_SEV_ERROR,
                    doc_fmt(sum, sizeof sum, "GPU %d (%s) is in MIG mode with no GPU instances: CUDA sees no device on it",
                            i, g->name),
                    doc_fmt(ev, sizeof ev, "NVML: MIG mode enabled on %s, 0 MIG devices", g->uuid),
                    doc_fmt(fix, sizeof fix, "create instances: sudo nvidia-smi mig -i %d -lgip (profiles), then "
                            "sudo nvidia-smi mig -i %d -cgi <profile> -C; or turn MIG off: sudo nvidia-smi -i %d -mig 0",
                            i, i, i));
            continue;
        }
        char list[1500] = "";
        size_t used = 0;
        for (unsigned k = 0; k < g->n_mig && used + 200 < sizeof list; k++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s (%s)", k ? ", " : "",
                                     g->mig_uuid[k], g->mig_name[k]);
        const char *v = getenv("CUDA_VISIBLE_DEVICES");
        if (cvd_names_mig()) {
            bool known = false;
            for (int j = 0; j < p->n_gpus && !known; j++)
                for (unsigned k = 0; k < p->gpus[j].n_mig; k++)
                    if (strstr(v, p->gpus[j].mig_uuid[k])) known = true;
            if (!known)
                doc_add(d, "mig.unknown-instance", CE_SEV_ERROR,
                        "CUDA_VISIBLE_DEVICES names a MIG device that does not exist",
                        doc_fmt(ev, sizeof ev, "CUDA_VISIBLE_DEVICES=%s; MIG devices of GPU %d: %s", v, i, list),
                        doc_fmt(fix, sizeof fix, "export CUDA_VISIBLE_DEVICES=%s (nvidia-smi -L lists them)",
                                g->mig_uuid[0]));
            continue;
        }
        doc_add(d, "mig.enabled", CE_SEV_WARNING,
                doc_fmt(sum, sizeof sum, "GPU %d (%s) is split into %u MIG devices; a CUDA process uses only one",
                        i, g->name, g->n_mig),
                doc_fmt(ev, sizeof ev, "NVML: MIG mode enabled; %s", list),
                doc_fmt(fix, sizeof fix, "select the instance explicitly: export CUDA_VISIBLE_DEVICES=%s",
                        g->mig_uuid[0]));
    }
}

static double read_num(const ce_machine *m, const char *bdf, const char *file)
{
    char path[512], buf[128];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/%s", bdf, file);
    if (ce_machine_read(m, path, buf, sizeof buf) <= 0) return -1;
    char *end;
    double v = strtod(buf, &end);
    return end == buf ? -1 : v;
}

static const ce_gpu *gpu_at(const ce_probe *p, const char *bdf)
{
    for (int i = 0; i < p->n_gpus; i++)
        if (!strcasecmp(p->gpus[i].bus, bdf)) return &p->gpus[i];
    return NULL;
}

void doc_check_perf(ce_doctor *d)
{
    ce_probe *p = &d->probe;
    char ev[2048], sum[512];
    for (int i = 0; i < p->n_pci; i++) {
        const char *bdf = p->pci[i];
        double cw = read_num(&d->m, bdf, "current_link_width"), mw = read_num(&d->m, bdf, "max_link_width");
        double cs = read_num(&d->m, bdf, "current_link_speed"), ms = read_num(&d->m, bdf, "max_link_speed");
        if (cw > 0 && mw > 0 && cw < mw)
            doc_add(d, "perf.pcie-width-degraded", CE_SEV_WARNING,
                    doc_fmt(sum, sizeof sum, "GPU %s runs its PCIe link at x%.0f of x%.0f lanes", bdf, cw, mw),
                    doc_fmt(ev, sizeof ev, "%s/sys/bus/pci/devices/%s: current_link_width %.0f, max_link_width %.0f",
                            d->m.root, bdf, cw, mw),
                    "reseat the card in a full-width slot (check the slot's wiring in the board manual, risers "
                    "and bifurcation settings in the BIOS); host<->GPU copies are slower until then");
        /* GPUs drop the link speed when idle to save power, so a low speed is
         * only a finding while the GPU is busy. */
        const ce_gpu *g = gpu_at(p, bdf);
        if (cs > 0 && ms > 0 && cs < ms && g && g->util > 0)
            doc_add(d, "perf.pcie-speed-degraded", CE_SEV_WARNING,
                    doc_fmt(sum, sizeof sum, "GPU %s runs its PCIe link at %.1f of %.1f GT/s while busy", bdf, cs, ms),
                    doc_fmt(ev, sizeof ev, "%s/sys/bus/pci/devices/%s: current_link_speed %.1f GT/s, max_link_speed "
                            "%.1f GT/s; GPU utilization %d%%", d->m.root, bdf, cs, ms, g->util),
                    "check the BIOS PCIe generation setting for the slot, risers and retimers; under load the "
                    "link should train to its maximum speed");
    }
    static const struct { unsigned long long bit; const char *what; } rs[] = {
        { 0x4, "software power cap" }, { 0x8, "hardware slowdown" }, { 0x20, "software thermal slowdown" },
        { 0x40, "hardware thermal slowdown" }, { 0x80, "hardware power brake" },
    };
    for (int i = 0; i < p->n_gpus; i++) {
        const ce_gpu *g = &p->gpus[i];
        char why[256] = "";
        size_t used = 0;
        for (size_t k = 0; k < sizeof rs / sizeof *rs; k++)
            if (g->throttle & rs[k].bit)
                used += (size_t)snprintf(why + used, sizeof why - used, "%s%s", used ? ", " : "", rs[k].what);
        if (!used) continue;
        bool thermal = g->throttle & 0x68;
        doc_add(d, "perf.throttled", CE_SEV_WARNING,
                doc_fmt(sum, sizeof sum, "GPU %d (%s) is slowing its clocks: %s", i, g->name, why),
                doc_fmt(ev, sizeof ev, "NVML clock event reasons 0x%llx", g->throttle),
                thermal ? "improve cooling (airflow, fan curve, dust, data-center inlet temperature); watch "
                          "nvidia-smi -q -d TEMPERATURE,PERFORMANCE"
                        : "the GPU hits its power limit: check nvidia-smi -q -d POWER (limit vs default), the PSU "
                          "cabling, and raise the limit with sudo nvidia-smi -pl <watts> where allowed");
    }
}
