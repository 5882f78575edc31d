/* The install pipeline (ARCHITECTURE.md), full binary only:
 *   skip installed -> preflight (driver/GPU, free space) -> fetch everything
 *   missing in parallel, unpacking cuDNN archives while they download ->
 *   runfile into pkgs/.staging-* -> rename to pkgs/cuda-<ver> ->
 *   compose versions/.staging-* with hardlinks -> receipt -> fsync -> rename.
 * The caller has begun a store transaction (ce_store_begin: the lock is
 * held and stale staging directories are gone).
 * Fault points (core/fault.h): during-download, after-unpack, before-commit. */
#ifndef CE_INSTALL_H
#define CE_INSTALL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"

/* Install each resolved toolchain.  Already installed ones are skipped
 * unless ctx->force.  Returns the first failure; what was installed before
 * it stays installed, nothing half-installed remains. */
int ce_install(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, size_t n);

#endif
