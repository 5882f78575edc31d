/* The install pipeline (ARCHITECTURE.md), full binary only:
 *   skip installed -> preflight (driver/GPU, free space) -> fetch everything
 *   missing in parallel, unpacking cuDNN archives while they download ->
 *   runfile into pkgs/.staging-* -> rename to pkgs/cuda-<ver> ->
 *   compose versions/.staging-* with hardlinks -> receipt -> fsync -> rename.
 * The caller has begun a store transaction (ce_store_begin: the lock is
 * held and stale staging directories are gone).
 *
 * Test-only hooks (environment):
 *   CUDAENV_TEST_FAULT=during-download|after-unpack|before-commit
 *       the process SIGKILLs itself at that point (crash-safety tests);
 *   CUDAENV_TEST_FREE_BYTES=N   pretend the filesystem has N bytes free. */
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
