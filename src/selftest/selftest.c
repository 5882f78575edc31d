/* The public side of the self-test: status names, version decoding and
 * the exit rule (the runner is run.c, the step helpers step.c). */
#include "selftest.h"

#include <stdio.h>
#include <stdlib.h>

const char *st_status_name(st_status s)
{
    switch (s) {
    case ST_PASSED: return "passed";
    case ST_FAILED: return "failed";
    case ST_SKIPPED: return "skipped";
    default: return "pending";
    }
}

void st_cuda_decode(int v, char *out, size_t outsz)
{
    snprintf(out, outsz, "%d.%d", v / 1000, (v % 1000) / 10);
}

void st_cudnn_decode(long v, char *out, size_t outsz)
{
    if (v >= 90000) /* 9.x: M*10000 + m*100 + p */
        snprintf(out, outsz, "%ld.%ld.%ld", v / 10000, (v % 10000) / 100, v % 100);
    else            /* <= 8.x: M*1000 + m*100 + p */
        snprintf(out, outsz, "%ld.%ld.%ld", v / 1000, (v % 1000) / 100, v % 100);
}

int st_exit_code(const st_report *r)
{
    bool nogpu = false;
    for (int i = 0; i < ST_NSTEPS; i++) {
        if (r->steps[i].status == ST_FAILED) return 7;
        if (r->steps[i].status == ST_SKIPPED && r->steps[i].nogpu) nogpu = true;
    }
    return nogpu ? 8 : 0;
}

void st_report_free(st_report *r)
{
    free(r->devices);
    r->devices = NULL;
    r->n_devices = 0;
}
