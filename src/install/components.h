/* Installing a toolchain from NVIDIA's per-component archives (issue 10),
 * full binary only:
 *   fetch redistrib_<ver>.json (pinned by the manifest, cached by sha256) ->
 *   validate it (redist.c) -> select the profile's components (tf for a
 *   TensorFlow spec, toolkit for a CUDA spec; --components adjusts) ->
 *   free-space preflight with the real sizes -> download the missing
 *   archives and the cuDNN tarball in parallel (bounded connections) while
 *   each verified archive is unpacked in a thread of its own (several cores;
 *   the existing entry policy) into pkgs/.staging-* -> rename to
 *   pkgs/<component>-<version>-<sha256:12> (shared between toolchains) ->
 *   compose versions/.staging-* in the runfile's layout (store/layout.h) ->
 *   receipt with the components -> fsync -> rename.
 * The archives go through the same pipeline as a runfile install's (parts.h);
 * fault points (core/fault.h) as for those. */
#ifndef CE_COMPONENTS_H
#define CE_COMPONENTS_H

#include <stdbool.h>

#include "core/ctx.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"

/* Whether r installs from components: the release has a redist JSON, the
 * platform is x86_64 or sbsa, and --from is not runfile.  --from redist for
 * a release without one is CE_ERR_NOTFOUND in *rc. */
bool ce_components_apply(ce_ctx *ctx, const ce_resolved *r, int *rc);

/* Install one toolchain (not yet installed; the caller holds the lock). */
int ce_components_install(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r);

/* r's toolchain is installed in final (the caller holds the lock): a
 * toolchain's name stands for one set of files, so what r selects and the
 * toolchain lacks (components of r's profile and --components, NCCL) is
 * added, said in a note naming them: the archives missing are fetched and
 * unpacked into pkgs/, the whole toolchain is composed again in a staging
 * tree from what it holds and what it gains, with a receipt listing all of
 * it, and swapped in with one rename (ce_store_commit).  Nothing is ever
 * removed (what it holds beyond r is kept and said); what it holds stays as
 * it is (the same archives).  Nothing missing: the "already installed" note,
 * with what it holds.  A runfile (or adopted) toolchain is left as it is. */
int ce_components_complete(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, const char *final);

/* "NAME is already installed in FINAL (holds: ...; --force reinstalls it)"
 * and extra after it. */
void ce_components_note_installed(ce_ctx *ctx, const char *name, const char *final, const char *extra);

/* Fetch (or take from the cache) and parse the release's JSON, select the
 * components for r; *out is freed with ce_redist_free.  For info. */
struct ce_redist;
int ce_components_plan(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, struct ce_redist **out,
                       const char **profile);

#endif
