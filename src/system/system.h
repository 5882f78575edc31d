/* The system-wide switch (root): $SYSROOT/usr/local/cuda and
 * $SYSROOT/etc/ld.so.conf.d/cudaenv.conf point at one toolchain, then
 * ldconfig.  One planned transaction under the store lock (uninstall cannot
 * remove the target meanwhile) and the system lock
 * ($SYSROOT/etc/cudaenv/lock): temp symlink + rename(2), temp conf + fsync +
 * rename, never unlink-then-create; the selection and the one before it are
 * recorded in $SYSROOT/etc/cudaenv/system.json for doctor (with the history
 * for --rollback and the original state for the restore, below).
 *
 * Crash safety (issue 9; issue 13: one record written once): the new
 * record is written first as an intent, system.json.pending (everything
 * needed to roll forward or back: target, lib, what it replaces, history,
 * original), then link, conf, ldconfig; exchanging it with system.json
 * (renameat2 RENAME_EXCHANGE; a rename when there is none) marks it done.
 * Records carry a generation, "gen": the intent's is system.json's + 1, so
 * after the exchange system.json.pending holds the record before, of a
 * lower gen, and the next switch writes its intent over it in place (no new
 * inode, one fsync; created, with its directory's fsync, only when absent).
 * A pending file is an intent only when its gen is greater than
 * system.json's, or when neither has a gen (an older cudaenv's intent,
 * which it removed when done); one that is not JSON was cut short before
 * it was durable, so before anything changed, and is ignored.  The final
 * exchange is not fsync'ed: lost in a crash, the intent is still the
 * greater and the next run completes it (idempotent).  The intent is
 * written before the trust walk and its fsync follows it; nothing changes
 * before both are done, and a switch the walk refuses removes its intent.
 * The conf's spare is fsync'ed with the intent only when this switch wrote
 * it: one already holding the text was made durable by the switch that
 * wrote it (a repair syncs it anyway; a spare rewritten and never synced is
 * emptied).  An intent found by the next switch or rollback is completed
 * (or, when its target is gone or unsafe, rolled back) before anything
 * else, its repair staged and renamed over it (the old intent stays until
 * the new is durable); doctor reports it (env.system-switch-interrupted).
 * A system.json saying "state":"pending" (an older cudaenv's intent)
 * counts as pending too.  An older cudaenv takes any system.json.pending
 * that parses for an intent: the record before gets '#' for its first
 * byte after the exchange, so to that version it is a torn intent, which
 * it ignores and removes.
 *
 * Trust (issue 9): the whole toolchain tree is walked with lstat (owner
 * root, no group/other write, symlink targets checked from / down), and the
 * fully resolved prefix and lib64 are what get linked and recorded.  An
 * intent left by a crash before the walk finished is checked again by the
 * repair: an unsafe target is rolled back, never completed.
 *
 * ldconfig: $CUDAENV_LDCONFIG if set ("" or "none": skip), else
 * /sbin/ldconfig; with a sysroot it runs `ldconfig -r SYSROOT`, which reads
 * SYSROOT/etc/ld.so.conf (that file must include ld.so.conf.d/ *.conf).
 *
 * Restore (issue 11): the first switch also records the machine's own state
 * ("original": no link, a plain link and where it pointed, the
 * update-alternatives selection with its status and registered alternatives,
 * or a real directory moved aside with --force; and cudaenv.conf's text
 * before, null when absent: the only ld.so.conf.d file cudaenv writes).  No
 * later switch or rollback rewrites it.  ce_system_restore returns exactly
 * there through the same transaction ("action":"restore" in the intent, so an
 * interrupted restore is completed as a restore).  --rollback walks
 * "history", newest first, CE_SYS_HISTORY deep: a switch pushes what it
 * replaces unless that is its own target or already on top; a rollback pops. */
#ifndef CE_SYSTEM_H
#define CE_SYSTEM_H

#include <stdbool.h>

#include "core/ctx.h"
#include "store/store.h"

#define CE_SYS_LINK "/usr/local/cuda"
#define CE_SYS_CONF "/etc/ld.so.conf.d/cudaenv.conf"
#define CE_SYS_STATE "/etc/cudaenv/system.json"
#define CE_SYS_PENDING CE_SYS_STATE ".pending"   /* the intent of a switch under way */

typedef enum ce_sys_mode {
    CE_SYS_MODE_LINK,          /* /usr/local/cuda is (or becomes) our symlink */
    CE_SYS_MODE_ALTERNATIVES,  /* /usr/local/cuda -> /etc/alternatives/cuda */
} ce_sys_mode;

#define CE_SYS_HISTORY 16

/* One earlier selection ("" target = no link). */
typedef struct ce_sys_entry {
    char name[96];
    char target[CE_PATH_MAX];
    char lib[CE_PATH_MAX];
} ce_sys_entry;

typedef enum ce_sys_orig_kind {
    CE_SYS_ORIG_NONE,          /* no /usr/local/cuda at all */
    CE_SYS_ORIG_LINK,          /* a plain symlink to target */
    CE_SYS_ORIG_ALTERNATIVES,  /* -> /etc/alternatives/cuda; target is the value */
    CE_SYS_ORIG_DIR,           /* a real directory, moved aside to target by --force */
} ce_sys_orig_kind;

/* The machine's own state before cudaenv's first switch. */
typedef struct ce_sys_original {
    bool present;              /* false: the record predates issue 11 (no restore) */
    ce_sys_orig_kind kind;
    char target[CE_PATH_MAX];
    bool alt_manual;           /* alternatives: "Status: manual" */
    char alt_list[8192];       /* alternatives registered then, '\n'-separated */
    bool conf_present;         /* cudaenv.conf existed */
    char conf_text[4096];      /* and held this */
} ce_sys_original;

/* What system.json records (paths as seen from inside the sysroot).  A
 * field added here or to ce_sys_original is also cleared by rec_clear
 * (system_record.c). */
typedef struct ce_sys_record {
    bool present;              /* a system switch was ever made */
    bool pending;              /* read from system.json.pending: an intent whose switch has not finished */
    long long gen;             /* the record's generation ("gen"; -1: none, an older cudaenv's) */
    ce_sys_mode mode;
    char name[96];             /* toolchain selected ("" after a rollback to a non-toolchain) */
    char target[CE_PATH_MAX];         /* where the link (or the alternative) points */
    char lib[CE_PATH_MAX];            /* the directory cudaenv.conf names */
    char prev_target[CE_PATH_MAX];    /* before that switch ("" = there was no link) */
    char prev_lib[CE_PATH_MAX];       /* cudaenv.conf before ("" = none) */
    char prev_name[96];
    long long when;            /* unix time of the switch */
    bool restore;              /* this transaction returns to original */
    ce_sys_original original;
    int nhistory;
    unsigned hlen;             /* bytes of hpool in use */
    /* the history, newest first: entry i's name, target and lib are the
     * strings at hpool + hoff[i][0], [1], [2] (ce_sys_hist_str); packed, so a
     * switch touches the bytes in use, not 16 entries of 8 KiB */
    unsigned hoff[CE_SYS_HISTORY][3];
    char hpool[(CE_SYS_HISTORY + 2) * (96 + 2 * 4096)];
} ce_sys_record;

typedef struct ce_sys_opts {
    bool force;     /* move a real directory at /usr/local/cuda aside */
    bool dry_run;   /* print the plan (CE_EV_NOTE), change nothing */
} ce_sys_opts;

/* Switch the system to tc.  CE_ERR_PERM: not root, or any file, directory
 * or symlink target of the toolchain is not root-owned / is writable by
 * group or others; CE_ERR_OTHER: a real directory at /usr/local/cuda
 * without force; CE_ERR_NOTFOUND: tc was uninstalled before the lock. */
int ce_system_switch(ce_ctx *ctx, const ce_toolchain *tc, const ce_sys_opts *o);
/* Return to the newest history entry and pop it (same transaction);
 * CE_ERR_NOTFOUND when the history is empty. */
int ce_system_rollback(ce_ctx *ctx, const ce_sys_opts *o);
/* Return exactly to the machine's own state recorded by the first switch
 * (same transaction; ldconfig).  CE_ERR_NOTFOUND: no switch recorded, or a
 * record from before issue 11 (the message says how to restore by hand). */
int ce_system_restore(ce_ctx *ctx, const ce_sys_opts *o);
/* Read system.json (rec->present false when none).  For doctor: compare
 * rec->target with readlink(/usr/local/cuda) to find another installer's move. */
int ce_system_record(ce_ctx *ctx, ce_sys_record *rec);
/* The installed toolchain the system switch put at /usr/local/cuda, into
 * *out: system.json names it (a switch, not a restore) and the link, its
 * links followed inside the sysroot, is that toolchain's directory.  false
 * (quiet) when there is none: no switch, the machine's own CUDA restored,
 * the link moved since by another installer, the toolchain uninstalled.
 * For list, current and verify: what "system" stands for. */
bool ce_system_toolchain(ce_ctx *ctx, ce_toolchain *out);
/* path (under the sysroot) with its links followed as the machine they
 * belong to sees them (an absolute target is inside the sysroot too) into
 * out: false when it leads to no directory (or past 16 links). */
bool ce_sys_resolve(const ce_ctx *ctx, const char *path, char *out, size_t outsz);
/* system_hist.c: the restore part of system.json (pure: no files, no
 * output).  Read: fill rec->original / rec->history from the record's JSON
 * text (a record without "history", from an older cudaenv, starts it with
 * its prev_* selection).  Write: add "original" and "history" to it.  Push:
 * on top, unless it is rec's own target or already on top; the oldest beyond
 * CE_SYS_HISTORY goes.  Pop: the top into *out (false when empty). */
struct ce_jtext;
/* From the record's text t (NUL-terminated): orig and hist are where the
 * values of "original" and "history" begin and end ({0, 0}: absent); -1
 * when one is not JSON (the record is then refused). */
int ce_sys_hist_read(const char *t, const size_t orig[2], const size_t hist[2], ce_sys_record *rec);
/* Appends "original" (when present) and "history", the last members. */
void ce_sys_hist_write(struct ce_jtext *j, const ce_sys_record *rec);
void ce_sys_hist_push(ce_sys_record *rec, const char *name, const char *target, const char *lib);
bool ce_sys_hist_pop(ce_sys_record *rec, ce_sys_entry *out);
/* dst's history := src's (the entries in use, string by string). */
void ce_sys_hist_copy(ce_sys_record *dst, const ce_sys_record *src);
/* Entry i's name (k 0), target (1) or lib (2). */
const char *ce_sys_hist_str(const ce_sys_record *rec, int i, int k);

#endif
