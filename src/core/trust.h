/* Trust boundaries (issue 9): the one rule for privileged use, and opening
 * paths inside the store without following symlinks.
 *
 * When cudaenv runs as root (euid 0), everything it writes, deletes or runs
 * inside $CUDAENV_ROOT must be something only root can change: the store and
 * every directory from / down to it, and the entries cudaenv opens inside it
 * (.lock, global, cache/, logs/, pkgs/, versions/ and their entries) must be
 * root-owned, not writable by group or others, and not symlinks.  Anything
 * else is refused with CE_ERR_PERM (exit 6) naming the path and the fix.
 * ctx->root is replaced by its fully resolved path, so a user who owns a
 * symlink on the way cannot re-point it afterwards.  Non-root users keep
 * their own store as it is (only the absolute-path rule applies to them). */
#ifndef CE_TRUST_H
#define CE_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "ctx.h"
#include "priv.h"

/* euid 0 (nothing in the environment can switch the rule off). */
bool ce_trust_privileged(void);

/* The store rule above; call once per command before the store is used.
 * Every user: CUDAENV_ROOT must be absolute (CE_ERR_USAGE naming the
 * quoted-tilde mistake). */
int ce_trust_root(ce_ctx *ctx);

/* As root, a toolchain that exec/verify run or load from (prefix, e.g.
 * versions/12.4.1, or an adopted one whose entries link elsewhere): the
 * prefix and its bin/, lib64/, lib/, nvvm/bin/ resolved with their chains
 * from /, and every entry of each (a symlink root's and its target safe).
 * CE_ERR_PERM naming the path; CE_OK when not privileged. */
int ce_trust_toolchain(const char *prefix);

/* As root with CUDAENV_SYSROOT set: the sysroot's chain from / checked and
 * ctx->sysroot replaced by its resolved path; the system directories under
 * it (etc, etc/ld.so.conf.d, etc/cudaenv, usr, usr/local, opt, var/lib/dpkg
 * ...) that exist must be real directories passing the rule (a symlinked
 * img/etc -> /etc is refused).  CE_ERR_PERM naming the path; call once per
 * command, with ce_trust_root. */
int ce_trust_sysroot(ce_ctx *ctx);

/* Is st something only root can change?  Root-owned, no group/other write
 * (a root-owned sticky directory counts as safe when sticky_ok).  NULL when
 * safe, else a short reason ("owned by uid 1000", "writable by group or
 * others", "a symlink"). */
const char *ce_trust_stat_reason(const struct stat *st, bool sticky_ok);

/* CE_ERR_PERM naming the first component of the absolute, resolved path
 * real (from / down) that fails ce_trust_stat_reason.  what names the
 * purpose in the message ("the store", "a system switch"); fix is appended. */
int ce_trust_chain(const char *real, const char *what, const char *fix);

/* The same for many paths under one tree (the walk of a toolchain): the
 * directories found safe as parents are remembered in c and not lstat'ed
 * again (a parent is checked once, not once per file).  Zero-initialise c;
 * ce_trust_cache_free when done. */
typedef ce_priv_cache ce_trust_cache;
int ce_trust_chain_cached(const char *real, const char *what, const char *fix, ce_trust_cache *c);
void ce_trust_cache_free(ce_trust_cache *c);
/* The cache of the command's own chain walks (ce_trust_root's, ce_trust_sysroot's,
 * the system switch's): kept for the process's life, never freed; main
 * thread only. */
ce_trust_cache *ce_trust_command_cache(void);

/* Open rel (relative, e.g. "logs/cuda-11.8.0-runfile.log") beneath
 * ctx->root without following any symlink on the way (openat2
 * RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, else a component-by-component
 * openat O_NOFOLLOW walk).  flags/mode as for open(2); O_CLOEXEC is added.
 * When privileged, an existing file that is not root's own and safe is
 * refused.  Returns the fd, or a negative ce_err with the status set (ce_errmsg). */
int ce_store_open(ce_ctx *ctx, const char *rel, int flags, mode_t mode);

/* ---- text from files, manifests and servers ----
 * Control characters (C0 except tab/newline, DEL, and UTF-8-encoded C1 such
 * as U+009B CSI) become \xNN, so nothing cudaenv prints can drive the
 * terminal (OSC 52 writes the clipboard).  ce_escape_dup mallocs (NULL on
 * out of memory); ce_escape_into truncates to outsz. */
char *ce_escape_dup(const char *s);
void ce_escape_into(char *out, size_t outsz, const char *s);

#endif
