/* Test double for libnvidia-ml.so.1 (NVML), so doctor's GPU, MIG and
 * performance checks run on machines without a GPU.  Behaviour comes from
 * the environment:
 *   FAKE_NVML_INIT      error nvmlInit_v2 returns (default 0; 18 = driver/library
 *                       version mismatch, 9 = driver not loaded)
 *   FAKE_NVML_DRIVER    nvmlSystemGetDriverVersion (default 580.65.06)
 *   FAKE_NVML_CUDA      nvmlSystemGetCudaDriverVersion_v2 (default 13000)
 *   FAKE_NVML_GPUS      GPUs separated by ';', fields by ',':
 *                       name,cc,total_mib,used_mib,busid,mig,mig_uuids,throttle,util
 *                       e.g. "NVIDIA H100 80GB HBM3,9.0,81559,512,0000:17:00.0,0,,0x1,0"
 *                       mig: 1 = MIG mode on; mig_uuids: space-separated MIG-... UUIDs;
 *                       throttle: clock event reasons (hex); util: GPU utilization %.
 *                       Default: one H100, idle.
 * Build: cc -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o libnvidia-ml.so.1 nvml.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 8
#define MAX_MIG 8

typedef struct gpu {
    char name[96], bus[32], uuid[96];
    int cc_major, cc_minor;
    unsigned long long total, used;
    int mig;
    int n_mig;
    char mig_uuid[MAX_MIG][96];
    unsigned long long throttle;
    unsigned util;
    int is_mig_of;        /* -1 for a physical GPU */
} gpu;

static gpu gpus[MAX_GPUS];
static gpu migs[MAX_GPUS][MAX_MIG];
static int n_gpus, loaded, inited;

static void field(char **s, char *out, size_t n)
{
    char *c = strchr(*s, ',');
    size_t l = c ? (size_t)(c - *s) : strlen(*s);
    snprintf(out, n, "%.*s", (int)l, *s);
    *s += l + (c ? 1 : 0);
}

static void load(void)
{
    if (loaded) return;
    loaded = 1;
    const char *spec = getenv("FAKE_NVML_GPUS");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", spec ? spec : "NVIDIA H100 80GB HBM3,9.0,81559,512,0000:17:00.0,0,,0x1,0");
    char *save = NULL;
    for (char *g = strtok_r(buf, ";", &save); g && n_gpus < MAX_GPUS; g = strtok_r(NULL, ";", &save)) {
        gpu *p = &gpus[n_gpus];
        memset(p, 0, sizeof *p);
        p->is_mig_of = -1;
        char f[512], *s = g;
        field(&s, p->name, sizeof p->name);
        field(&s, f, sizeof f); sscanf(f, "%d.%d", &p->cc_major, &p->cc_minor);
        field(&s, f, sizeof f); p->total = strtoull(f, NULL, 10) << 20;
        field(&s, f, sizeof f); p->used = strtoull(f, NULL, 10) << 20;
        field(&s, p->bus, sizeof p->bus);
        field(&s, f, sizeof f); p->mig = atoi(f);
        field(&s, f, sizeof f);
        char *s2 = NULL;
        for (char *u = strtok_r(f, " ", &s2); u && p->n_mig < MAX_MIG; u = strtok_r(NULL, " ", &s2)) {
            gpu *m = &migs[n_gpus][p->n_mig];
            memset(m, 0, sizeof *m);
            snprintf(m->uuid, sizeof m->uuid, "%s", u);
            snprintf(p->mig_uuid[p->n_mig], sizeof p->mig_uuid[0], "%s", u);
            snprintf(m->name, sizeof m->name, "%s MIG 1g.10gb", p->name);
            m->is_mig_of = n_gpus;
            p->n_mig++;
        }
        field(&s, f, sizeof f); p->throttle = strtoull(f, NULL, 16);
        field(&s, f, sizeof f); p->util = (unsigned)atoi(f);
        snprintf(p->uuid, sizeof p->uuid, "GPU-00000000-0000-0000-0000-00000000000%d", n_gpus);
        n_gpus++;
    }
}

int nvmlInit_v2(void)
{
    const char *e = getenv("FAKE_NVML_INIT");
    int rc = e && *e ? atoi(e) : 0;
    if (rc) return rc;
    load();
    inited = 1;
    return 0;
}

int nvmlInit(void) { return nvmlInit_v2(); }
int nvmlShutdown(void) { inited = 0; return 0; }

const char *nvmlErrorString(int r)
{
    switch (r) {
    case 0: return "Success";
    case 9: return "Driver Not Loaded";
    case 18: return "RM has detected an NVML/RM version mismatch.";
    case 999: return "Unknown Error";
    default: return "NVML error";
    }
}

int nvmlSystemGetDriverVersion(char *v, unsigned n)
{
    const char *e = getenv("FAKE_NVML_DRIVER");
    snprintf(v, n, "%s", e && *e ? e : "580.65.06");
    return 0;
}

int nvmlSystemGetCudaDriverVersion_v2(int *v)
{
    const char *e = getenv("FAKE_NVML_CUDA");
    *v = e && *e ? atoi(e) : 13000;
    return 0;
}

int nvmlDeviceGetCount_v2(unsigned *n)
{
    if (!inited) return 1;   /* NVML_ERROR_UNINITIALIZED */
    *n = (unsigned)n_gpus;
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **h)
{
    if (!inited) return 1;
    if (i >= (unsigned)n_gpus) return 2;   /* NVML_ERROR_INVALID_ARGUMENT */
    *h = &gpus[i];
    return 0;
}

int nvmlDeviceGetName(void *h, char *out, unsigned n) { snprintf(out, n, "%s", ((gpu *)h)->name); return 0; }
int nvmlDeviceGetUUID(void *h, char *out, unsigned n) { snprintf(out, n, "%s", ((gpu *)h)->uuid); return 0; }

int nvmlDeviceGetCudaComputeCapability(void *h, int *maj, int *min)
{
    gpu *g = h;
    *maj = g->cc_major;
    *min = g->cc_minor;
    return 0;
}

typedef struct { unsigned long long total, free, used; } nvml_memory;

int nvmlDeviceGetMemoryInfo(void *h, nvml_memory *m)
{
    gpu *g = h;
    m->total = g->total;
    m->used = g->used;
    m->free = g->total - g->used;
    return 0;
}

typedef struct {
    char bus_legacy[16];
    unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
    char bus_id[32];
} nvml_pci;

int nvmlDeviceGetPciInfo_v3(void *h, nvml_pci *p)
{
    gpu *g = h;
    memset(p, 0, sizeof *p);
    /* NVML writes an 8-digit domain: 00000000:17:00.0 */
    snprintf(p->bus_id, sizeof p->bus_id, "0000%s", g->bus);
    for (char *c = p->bus_id; *c; c++) if (*c >= 'a' && *c <= 'f') *c = (char)(*c - 'a' + 'A');
    return 0;
}

int nvmlDeviceGetMigMode(void *h, unsigned *cur, unsigned *pend)
{
    gpu *g = h;
    if (g->is_mig_of >= 0) return 3;   /* NVML_ERROR_NOT_SUPPORTED on a MIG device */
    *cur = *pend = (unsigned)g->mig;
    return 0;
}

int nvmlDeviceGetMaxMigDeviceCount(void *h, unsigned *n)
{
    gpu *g = h;
    *n = g->mig ? 7 : 0;
    return 0;
}

int nvmlDeviceGetMigDeviceHandleByIndex(void *h, unsigned i, void **out)
{
    gpu *g = h;
    int idx = (int)(g - gpus);
    if ((int)i >= g->n_mig) return 6;   /* NVML_ERROR_NOT_FOUND */
    *out = &migs[idx][i];
    return 0;
}

int nvmlDeviceGetCurrentClocksThrottleReasons(void *h, unsigned long long *r)
{
    *r = ((gpu *)h)->throttle;
    return 0;
}

int nvmlDeviceGetCurrentClocksEventReasons(void *h, unsigned long long *r)
{
    return nvmlDeviceGetCurrentClocksThrottleReasons(h, r);
}

typedef struct { unsigned gpu, memory; } nvml_util;

int nvmlDeviceGetUtilizationRates(void *h, nvml_util *u)
{
    u->gpu = ((gpu *)h)->util;
    u->memory = 0;
    return 0;
}
