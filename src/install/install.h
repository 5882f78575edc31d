/* The install (ARCHITECTURE.md), full binary only: the plan and its
 * orchestration.  Each toolchain installs from NVIDIA's components where the
 * release has them (components.h), else from its runfile:
 *   skip installed -> preflight (driver/GPU) -> the runfiles and cuDNN
 *   archives of every such toolchain as parts of one plan (parts.h: one
 *   free-space preflight, downloads in parallel, each cuDNN archive unpacked
 *   while it downloads and each runfile run once its download verified, into
 *   pkgs/.staging-*, all renamed to pkgs/<pkg> once every one succeeded) ->
 *   compose versions/.staging-* with hardlinks -> receipt -> fsync -> rename.
 * The caller has begun a store transaction (ce_store_begin: the lock is
 * held and stale staging directories are gone).
 * Fault points (core/fault.h): during-download, unpack-start, after-unpack,
 * before-commit. */
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
