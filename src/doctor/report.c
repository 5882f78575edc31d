/* The report: the layers in the order of the troubleshooting chain, their
 * titles, and adding a finding.  The checks (doctor_*.c) call doc_add and
 * doc_fmt; the runner (doctor.c) only orders the checks. */
#include "report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ce_doctor_layers[] = { "gpu", "driver", "container", "wsl", "mig", "libs", "env", "compat",
                                         "framework", "perf", NULL };

const char *ce_doctor_layer_title(const char *code)
{
    static const struct { const char *k, *t; } titles[] = {
        { "gpu", "GPU" }, { "driver", "Driver" }, { "container", "Container" }, { "wsl", "WSL2" },
        { "mig", "MIG" }, { "libs", "Libraries the loader picks" }, { "env", "Environment" },
        { "compat", "Compatibility" }, { "framework", "Frameworks (TensorFlow, PyTorch)" }, { "perf", "Performance" },
    };
    size_t n = strcspn(code, ".");
    for (size_t i = 0; i < sizeof titles / sizeof *titles; i++)
        if (strlen(titles[i].k) == n && !strncmp(titles[i].k, code, n)) return titles[i].t;
    return "Other";
}

const char *ce_severity_name(ce_severity s)
{
    return s == CE_SEV_ERROR ? "error" : s == CE_SEV_WARNING ? "warning" : "info";
}

const char *doc_fmt(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return buf;
}

void doc_add(ce_doctor *d, const char *code, ce_severity sev, const char *summary, const char *evidence,
             const char *fix)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        ce_finding *f = realloc(d->f, cap * sizeof *f);
        if (!f) return;
        d->f = f;
        d->cap = cap;
    }
    ce_finding *f = &d->f[d->n++];
    memset(f, 0, sizeof *f);
    snprintf(f->code, sizeof f->code, "%s", code);
    f->sev = sev;
    f->summary = strdup(summary ? summary : "");
    f->evidence = strdup(evidence ? evidence : "");
    f->fix = strdup(fix ? fix : "");
    if (sev == CE_SEV_ERROR) d->errors++;
    else if (sev == CE_SEV_WARNING) d->warnings++;
    else d->infos++;
}
