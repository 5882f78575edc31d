/* Per-user state beside a shared store.  A store the user does not own (one
 * root-owned /opt/cudaenv for a whole machine) is read-only to them, so their
 * own choices live in ${XDG_CONFIG_HOME:-~/.config}/cudaenv (the default
 * toolchain, `global`); the store's own `global` is then the site default,
 * used until they pick one.  (Warnings given once are per shell, in
 * CUDAENV_WARNED; besides these only a cache is kept per user, below.) */
#ifndef CE_USERSTATE_H
#define CE_USERSTATE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"

/* true when $CUDAENV_ROOT exists and belongs to another user. */
bool ce_store_shared(const ce_ctx *ctx);
/* ${XDG_CONFIG_HOME:-$HOME/.config}/cudaenv/<name> */
int ce_user_config_path(const char *name, char *out, size_t outsz);
/* ${XDG_CACHE_HOME:-$HOME/.cache}/cudaenv/<name>: what may be thrown away
 * (doctor's framework probe, doctor_fwcache.c; a shared store's index) */
int ce_user_cache_path(const char *name, char *out, size_t outsz);
/* The user's own resolution index for the store ctx->root
 * (manifest/index.h): ce_user_cache_path's index-<64-bit FNV-1a of the
 * store path, hex>.  Only for a shared store, never as root (the caller's
 * rule). */
int ce_user_index_path(ce_ctx *ctx, char *out, size_t outsz);

#endif
