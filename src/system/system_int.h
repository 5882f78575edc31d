/* Internal to src/system/system*.c: the pieces of the system switch's
 * transaction (system.c) that the restore (system_restore.c) builds on, and
 * the restore steps the transaction calls back.  Not for other modules. */
#ifndef CE_SYSTEM_INT_H
#define CE_SYSTEM_INT_H


#include "core/file.h"
#include "system.h"

#define CE_ALT_LINK "/etc/alternatives/cuda"

/* The state of /usr/local/cuda: mode, what it points at now (inside view,
 * "" when absent), and whether it is something other than a symlink. */
typedef struct link_state {
    ce_sys_mode mode;
    char now[CE_PATH_MAX];
    bool real;          /* a directory or file: must be moved aside */
} link_state;

/* system.c */
const char *ce_sys_inside(const ce_ctx *ctx, const char *host);
int ce_sys_need_root(const char *what);
/* both locks, then the repair of an interrupted switch; ce_sys_end releases */
int ce_sys_begin(ce_ctx *ctx, ce_store_txn *txn, int *fd, ce_sys_record *old);
void ce_sys_end(ce_store_txn *txn, int fd);
/* steps 1-5: intent, link, conf, ldconfig, final record */
int ce_sys_transact(ce_ctx *ctx, ce_sys_record *rec);

/* system_run.c: update-alternatives [--root SYSROOT] --quiet ARGS (out,
 * may be NULL: its stdout); ldconfig's path (NULL: CUDAENV_LDCONFIG says
 * none) and the run of it (-r SYSROOT with a sysroot), meanwhile (may be
 * NULL) done while it runs. */
int ce_sys_alt(ce_ctx *ctx, char *out, size_t on, const char *a1, const char *a2, const char *a3);
int ce_sys_alternatives(ce_ctx *ctx, const char *a1, const char *a2, const char *a3, const char *a4, const char *a5);
const char *ce_sys_ldconfig_path(const ce_ctx *ctx);
int ce_sys_run_ldconfig(ce_ctx *ctx, void (*meanwhile)(ce_ctx *));

/* system_trust.c: prefix fully resolved (real; lib is the resolved lib64
 * directory the loader will be pointed at), then the whole tree at real
 * checked (owner root, no group/other write, every symlink's target from /
 * down); _safe is both. */
int ce_sys_toolchain_resolve(const char *prefix, char *real, char *lib);
int ce_sys_toolchain_walk(ce_ctx *ctx, const char *real);
/* The one walk of what the system is pointed at (issue 21), used by the
 * switch, the rollback, the repair of an interrupted switch and the
 * restore alike: the tree at the resolved target real ("" none) and the
 * resolved lib directory ("" none) when it is not inside it. */
int ce_sys_walk(ce_ctx *ctx, const char *real, const char *lib);
/* The same for recorded (inside) paths, linked as recorded: target (a
 * link's relative text is relative to /usr/local) and lib resolved hop by
 * hop, every directory and every symlink on the way root's, then
 * ce_sys_walk.  A path that no longer exists: CE_ERR_NOTFOUND, or skipped
 * when missing_ok (a restore puts back a dangling link as it was). */
int ce_sys_selection_safe(ce_ctx *ctx, const char *target, const char *lib, bool missing_ok);
/* The host path of a recorded (inside) path: inside the sysroot, or as is
 * when it lived outside. */
void ce_sys_host(const ce_ctx *ctx, const char *inside, char *out, size_t n);
/* ce_sys_selection_safe for what the record r points the system at (a
 * restore: the machine's own state, missing parts allowed). */
int ce_sys_record_safe(ce_ctx *ctx, const ce_sys_record *r);

/* system_record.c: the text of system.json for rec (malloc'd; NULL when
 * out of memory), capped at what the reader takes by dropping the oldest
 * history entries from rec (longer only when none is left). */
#define CE_SYS_RECORD_MAX 65536
char *ce_sys_record_text(ce_sys_record *rec);
/* Is a system.json.pending of gen pg an intent beside a system.json of gen
 * sg (-1: no gen, or no file)?  pg > sg; without any gen (an older
 * cudaenv's files), yes. */
bool ce_sys_is_intent(long long pg, long long sg);
/* system_durable.c: the stale pending file made no JSON to older versions */
void ce_sys_mark_stale(const char *path);
/* system_durable.c: path (a name cudaenv keeps: the lock, the intent, a
 * spare, cudaenv.conf) is a directory, FIFO, symlink...: CE_ERR_OTHER (exit
 * 1) naming it and what to remove; cudaenv never writes through it. */
int ce_sys_wrong_type(const char *path);
/* cudaenv.conf (a file) and the link's spare (a symlink), exchanged only
 * after the intent: of another type, ce_sys_wrong_type before anything
 * changes (the conf's spare and the intent are checked as opened). */
int ce_sys_names_check(ce_ctx *ctx);

/* system_durable.c: fsync the directory of the sysroot path p; the staged
 * files st[0..n) (n <= 2; and with dir, the directory already holding
 * one's final name) fsync'ed and closed (all dropped on failure); the
 * directories of the link and the conf fsync'ed (while ldconfig runs); the
 * intent written into path in place (created when absent: *created, then
 * its directory needs an fsync too) holding text, its writeback started,
 * ce_file_stage_drop removing it. */
void ce_sys_sync_parent(ce_ctx *ctx, const char *p);
int ce_sys_sync_staged(ce_ctx *ctx, ce_staged *st, size_t n, const char *dir);
void ce_sys_sync_changed(ce_ctx *ctx);
int ce_sys_journal_write(const char *path, const char *text, ce_staged *st, bool *created);
/* from and to trade places (a plain rename when to does not exist) */
int ce_sys_exchange(const char *from, const char *to);

/* system_durable.c, the spares (same directories, dot names): the link
 * put in place by exchange with a spare symlink to target (made only when
 * the spare points elsewhere); the conf's next text written into its spare
 * in place (st: fd open, nothing to drop; *written false when it held the
 * text already: made durable by the switch that wrote it, no fsync
 * needed), then exchanged in; the restore removes both. */
#define CE_SYS_LINK_SPARE "/usr/local/.cuda.cudaenv-spare"
#define CE_SYS_CONF_SPARE "/etc/ld.so.conf.d/.cudaenv.conf.spare"
int ce_sys_link_exchange(ce_ctx *ctx, const char *link, const char *target);
int ce_sys_conf_spare_stage(ce_ctx *ctx, const char *text, ce_staged *st, bool *written);
void ce_sys_conf_spare_forget(ce_ctx *ctx);   /* rewritten, never synced: emptied */
int ce_sys_conf_exchange(ce_ctx *ctx);
void ce_sys_drop_spares(ce_ctx *ctx);

/* system_restore.c */
void ce_sys_capture_original(ce_ctx *ctx, const link_state *ls, const char *backup, ce_sys_original *g);
int ce_sys_restore_link(ce_ctx *ctx, const char *link, const ce_sys_original *g);
int ce_sys_restore_conf(ce_ctx *ctx, const ce_sys_original *g);

#endif
