/* Adopting a CUDA toolkit cudaenv did not install (/usr/local/cuda-12.4, a
 * distribution's /usr/lib/cuda): versions/<name>/ becomes a directory of
 * symlinks to the toolkit's top-level entries, with a receipt of every
 * regular file's size (written now, so verify can tell later changes) and
 * .cudaenv-adopted naming the directory.  use/exec/env/verify/doctor see an
 * ordinary toolchain; uninstall removes only the symlinks.
 * Names: a toolchain name ("12.4.1", "12.4.1+cudnn9.1.0"), optionally with
 * "@label" ("12.4.1@system") so it can sit beside one cudaenv installed. */
#ifndef CE_ADOPT_H
#define CE_ADOPT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"

#define CE_ADOPTED_NAME ".cudaenv-adopted"

/* The CUDA release of the toolkit in dir (version.json: its cuda version,
 * or for a runfile's date-stamped one the release its cuda_cudart version
 * names; version.txt; cuda.h / cuda_runtime_api.h) and its cuDNN
 * (cudnn_version.h / cudnn.h), "" if none: files are read, nothing in dir
 * is ever run.  CE_ERR_NOTFOUND when dir is no CUDA toolkit.  As root the
 * tree must be root's (core/priv.h: dir's chain from /, every entry, every
 * symlink and its target): else CE_ERR_PERM naming the path. */
int ce_adopt_probe(ce_ctx *ctx, const char *dir, char *cuda, size_t cudasz, char *cudnn, size_t cudnnsz);

/* Register dir as versions/<name> (name NULL: from the probe, "@adopted"
 * appended when that name is taken).  *out_name gets the name used. */
int ce_adopt(ce_ctx *ctx, const char *dir, const char *name, char *out_name, size_t outsz);

/* 1 when the toolchain at prefix was adopted (from holds the directory),
 * 0 when cudaenv installed it. */
int ce_adopted_from(const char *prefix, char *from, size_t fromsz);

/* Toolkits on this machine worth adopting: $CUDAENV_SYSROOT/usr/local/cuda-*,
 * /opt/cuda*, /usr/lib/cuda (real directories with bin/nvcc), up to max. */
size_t ce_adopt_scan(ce_ctx *ctx, char (*dirs)[4096], size_t max);

#endif
