/* The host compiler nvcc will use, one answer for doctor, the install
 * preflight and verify: $NVCC_CCBIN when set (nvcc reads it), else gcc on
 * PATH (nvcc -ccbin also accepts the C++ driver; its version is gcc's). */
#ifndef CE_HOSTCC_H
#define CE_HOSTCC_H

#include <stddef.h>

/* Its major version, 0 when there is none or it does not answer
 * -dumpfullversion; the path run in where, the full version ("13.2.0") in
 * full. */
int ce_host_cc(char *where, size_t wsz, char *full, size_t fsz);

#endif
