/* A toolchain composed from NVIDIA's component archives in the runfile's
 * layout, so CUDA_HOME, CMake's FindCUDAToolkit, TensorFlow and verify see
 * what they see after a runfile install:
 *   bin/, nvvm/, ...                     as the components ship them
 *   targets/<arch>-linux/include         every component's include/
 *   targets/<arch>-linux/lib             every component's lib/ (lib64/)
 *   include -> targets/<arch>-linux/include, lib64 -> targets/<arch>-linux/lib
 *   share/licenses/<component>/...       top-level files (LICENSE)
 *   version.json                         NVIDIA's format, from the JSON's versions
 * Hardlinks from the pristine trees in pkgs/ (ce_compose_merge: the same
 * path from two components must have the same content).  Light. */
#ifndef CE_LAYOUT_H
#define CE_LAYOUT_H

#include <stddef.h>

#include "compose.h"
#include "core/ctx.h"

/* "linux-x86_64" -> "x86_64-linux", "linux-sbsa" -> "sbsa-linux"; NULL otherwise. */
const char *ce_layout_target(const char *platform);

/* Create targets/<target>/{include,lib} and the include and lib64 links in dst. */
int ce_layout_begin(const char *dst, const char *target);

/* Link the unpacked tree of component name into dst. */
int ce_layout_component(ce_ctx *ctx, const char *tree, const char *dst, const char *target, const char *name,
                        ce_filelist *files);

typedef struct ce_layout_version {
    const char *key, *name, *version;   /* "cuda_cudart", "CUDA Runtime (cudart)", "11.8.89" */
} ce_layout_version;

/* dst/version.json: {"cuda": {"name": "CUDA SDK", "version": cuda}, key: {name, version}...}
 * with NVIDIA's spacing; added to files. */
int ce_layout_version_json(const char *dst, const char *cuda, const ce_layout_version *v, size_t n,
                           ce_filelist *files);

#endif
