/* Facts about CUDA releases and the machines they run on, shared by the
 * install preflight, doctor and verify: the driver a release needs (with
 * minor-version compatibility), compute capabilities, datacenter GPUs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/version.h"
#include "probe.h"

/* Minor-version compatibility (nvidia-facts.md §5b): inside a CUDA major
 * family a toolkit runs, with a limited feature set (no PTX JIT of newer
 * code), on any driver at or above the family floor. */
static const char *family_floor(int major)
{
    switch (major) {
    case 11: return "450.80.02";
    case 12: return "525.60.13";
    case 13: return "580";
    default: return NULL;
    }
}

int ce_driver_fits(const char *driver, const char *min_driver, const char *compat_floor, const char *cuda,
                   char *why, size_t whysz)
{
    if (why && whysz) why[0] = '\0';
    if (min_driver && *min_driver && ce_version_cmp(driver, min_driver) >= 0) return 1;
    /* the release's own floor (manifest min_driver_compat, kept in the
     * receipt) wins; the family table answers for trees that carry none */
    const char *floor = compat_floor && *compat_floor ? compat_floor : family_floor(ce_version_major(cuda));
    if (floor && ce_version_cmp(driver, floor) >= 0) {
        if (why) snprintf(why, whysz, "CUDA %d.x minor-version compatibility needs >= %s", ce_version_major(cuda), floor);
        return 0;
    }
    return -1;
}

int ce_sm_num(const char *s)
{
    if (!s || !*s) return -1;
    char *end;
    long maj = strtol(s, &end, 10);
    if (end == s) return -1;
    long min = 0;
    if (*end == '.') min = strtol(end + 1, NULL, 10);
    return (int)(maj * 10 + min);
}

const char *ce_cuda_for_sm(int cc)
{
    if (cc < 30) return "no CUDA release cudaenv installs (9.0+)";
    if (cc < 35) return "CUDA 10.2 or older";
    if (cc < 50) return "CUDA 11.8 or older";
    if (cc < 75) return "CUDA 12.x (12.9 or older)";
    if (cc < 80) return "CUDA 10.0 or newer";
    if (cc == 80) return "CUDA 11.0 or newer";
    if (cc < 89) return "CUDA 11.1 or newer (sm_87: 11.5)";
    if (cc <= 90) return "CUDA 11.8 or newer";
    if (cc == 110) return "CUDA 13.0 or newer";
    if (cc == 103 || cc == 121) return "CUDA 12.9 or newer";
    return "CUDA 12.8 or newer";
}

bool ce_datacenter_gpu(const char *name)
{
    static const char *const dc[] = { "Tesla", "A100", "A800", "A30", "A40", "A10", "A16", "A2 ",
                                      "H100", "H800", "H200", "H20", "GH200", "GB200", "B200", "B100",
                                      "L40", "L20", "L4", "V100", "T4", "P100", "P40", "K80", NULL };
    for (int i = 0; dc[i]; i++)
        if (strstr(name, dc[i])) return true;
    return false;
}
