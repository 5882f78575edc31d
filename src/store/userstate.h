/* Per-user state beside a shared store.  A store the user does not own (one
 * root-owned /opt/cudaenv for a whole machine) is read-only to them, so their
 * own choices live in ${XDG_CONFIG_HOME:-~/.config}/cudaenv (the default
 * toolchain, `global`); the store's own `global` is then the site default,
 * used until they pick one.  (Warnings given once are per shell, in
 * CUDAENV_WARNED: nothing else per user is kept on disk.) */
#ifndef CE_USERSTATE_H
#define CE_USERSTATE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"

/* true when $CUDAENV_ROOT exists and belongs to another user. */
bool ce_store_shared(const ce_ctx *ctx);
/* ${XDG_CONFIG_HOME:-$HOME/.config}/cudaenv/<name> */
int ce_user_config_path(ce_ctx *ctx, const char *name, char *out, size_t outsz);

#endif
