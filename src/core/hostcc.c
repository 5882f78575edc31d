#include "hostcc.h"

#include <stdio.h>
#include <stdlib.h>

#include "proc.h"

int ce_host_cc(char *where, size_t wsz, char *full, size_t fsz)
{
    const char *cc = getenv("NVCC_CCBIN");
    char prog[4096];
    snprintf(prog, sizeof prog, "%s", cc && *cc ? cc : "gcc");
    /* nvcc -ccbin accepts the C++ driver; its version is gcc's */
    char *const argv[] = { prog, "-dumpfullversion", "-dumpversion", NULL };
    if (!ce_run_line(prog, argv, full, fsz, where, wsz)) return 0;
    return atoi(full);
}
