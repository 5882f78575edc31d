/* NVIDIA's CUDA runfile in its silent toolkit mode, into a staging tree, and
 * the check that the result really is the toolkit the manifest promised.
 * Full binary only (it is part of the install pipeline). */
#ifndef CE_RUNFILE_H
#define CE_RUNFILE_H

#include "core/ctx.h"

/* Run `sh RUNFILE --silent --toolkit --toolkitpath=STAGING
 * --defaultroot=STAGING --no-opengl-libs --no-man-page --no-drm --override
 * --tmpdir=TMP` through core/proc.h (no shell in between), HOME and TMPDIR set
 * to tmp (a private, empty directory), LANG=C, DISPLAY and SUDO_USER unset,
 * stdin from /dev/null and stdout/stderr into log.  runfile must be the
 * verified cache file.  It runs supervised: its own process group
 * killed with cudaenv (even kill -9), a deadline (CE_RUNFILE_TIMEOUT_S,
 * CUDAENV_RUNFILE_TIMEOUT), the log capped to its first and last
 * CE_RUNFILE_LOG_CAP bytes (CUDAENV_RUNFILE_LOG_CAP).  A few well-known
 * system paths (/usr/local/cuda, /usr/local/cuda-X.Y, /etc/ld.so.conf.d,
 * /etc/profile.d, /usr/bin/nvidia-uninstall, /usr/local/bin, under
 * CUDAENV_SYSROOT) are compared before and after: a change is a CE_EV_WARN.
 * Then ce_toolkit_check(version).  *cancel set nonzero while it runs (the
 * install failed elsewhere: a cuDNN download) stops it and its group within
 * 0.2 s.
 * CE_ERR_OTHER when the installer fails, times out (naming the log) or is
 * cancelled, CE_ERR_INTEGRITY when the tree is not the promised toolkit. */
#define CE_RUNFILE_TIMEOUT_S 3600
#define CE_RUNFILE_LOG_CAP (1L << 20)
int ce_runfile_install(ce_ctx *ctx, const char *runfile, const char *label, const char *staging,
                       const char *tmp, const char *log, const char *version, const int *cancel);

/* A toolkit tree holds bin/nvcc, lib64/libcudart.so.* and the CUDA
 * MAJOR.MINOR of version (from version.json's cuda_cudart / cuda_nvcc, then
 * cuda: whose patch is sometimes a date, so only major.minor count; or
 * version.txt on <= 11.0).  CE_ERR_INTEGRITY naming what is missing. */
int ce_toolkit_check(const char *dir, const char *version, const char *label);

#endif
