/* framework.two-copies (issue 37): the toolchain in use has its lib64 on
 * LD_LIBRARY_PATH (a plain `use`) while python3 (or CUDAENV_DOCTOR_PYTHON)
 * brings its own copies of the same library families (nvidia-* wheels, a
 * conda env): the framework would preload its own by path and take their
 * sub-libraries from the toolchain.  Directories read only, no Python runs
 * (core/pylibs.h), so it costs doctor nothing beside the framework probe. */
#include "doctor_int.h"

#include <stdio.h>
#include <string.h>

#include "core/pylibs.h"

void doc_check_pylibs(ce_doctor *d)
{
    const char *py = d->ctx->set.doctor_python;
    if (!d->act.present || d->act.system || (py && !strcmp(py, "none"))) return;
    py = py && *py ? py : "python3";
    char lib[sizeof d->act.prefix + 8], sum[2048], fix[1024], ev[2048];
    snprintf(lib, sizeof lib, "%s/lib64", d->act.prefix);
    ce_pylibs pl;
    unsigned both = ce_pylibs_shadowed(py, lib, &pl);
    if (!both) return;
    ce_pylibs_hazard_text(py, d->act.name, both, &pl, sum, sizeof sum, fix, sizeof fix);
    size_t used = (size_t)snprintf(ev, sizeof ev, "LD_LIBRARY_PATH has %s", lib);
    for (size_t i = 0; i < pl.n && used < sizeof ev; i++)
        used += (size_t)snprintf(ev + used, sizeof ev - used, "\n%s's own: %s", py, pl.dir[i]);
    doc_add(d, "framework.two-copies", CE_SEV_WARNING, sum, ev, fix);
}
