#include "system.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/fault.h"
#include "core/file.h"
#include "core/proc.h"
#include "core/trust.h"
#include "store/store.h"
#include "system_int.h"

/* A path as seen from inside the sysroot: what a link or conf file written
 * into an image must name.  Paths outside the sysroot stay as they are. */
static const char *inside(const ce_ctx *ctx, const char *host)
{
    size_t n = strlen(ctx->sysroot);
    if (n && strncmp(host, ctx->sysroot, n) == 0 && host[n] == '/') return host + n;
    return host;
}


/* cudaenv.conf naming lib (transact() stages it; apply() renames it). */
static void conf_text(const char *lib, const char *name, char *text, size_t n)
{
    snprintf(text, n, "# written by cudaenv (global --system): %s\n%s\n", *name ? name : "rollback", lib);
}

static int remove_conf(ce_ctx *ctx)
{
    char path[4200];
    ce_sys_path(ctx, CE_SYS_CONF, path, sizeof path);
    if (unlink(path) != 0 && errno != ENOENT)
        return ce_fail(CE_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    return CE_OK;
}

/* What a run killed between staging and renaming left: *.tmp-XXXXXX of
 * system.json and cudaenv.conf (only a switch holding the system lock
 * writes them, so under the lock any that exists is stale). */
static void drop_stale_tmp(ce_ctx *ctx, const char *inside_path)
{
    char path[4200];
    ce_sys_path(ctx, inside_path, path, sizeof path);
    char *slash = strrchr(path, '/');
    if (!slash) return;
    *slash = '\0';
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s.tmp-", slash + 1);
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, prefix, strlen(prefix)) && strlen(e->d_name) == strlen(prefix) + 6)
            unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

/* The library directory our conf file names today ("" if none). */
static void conf_lib(ce_ctx *ctx, char *out, size_t n)
{
    char path[4200];
    out[0] = '\0';
    ce_sys_path(ctx, CE_SYS_CONF, path, sizeof path);
    char *data;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rrc = ce_file_read(path, 65536, &data, NULL);
    ce_quiet_end(&q);
    if (rrc != CE_OK) return;
    for (char *l = strtok(data, "\n"); l; l = strtok(NULL, "\n"))
        if (l[0] == '/') { snprintf(out, n, "%s", l); break; }
    free(data);
}

/* Other ld.so.conf.d files naming directories with the same sonames (or
 * another CUDA): reported, never edited; they are someone else's. */
static void warn_shadows(ce_ctx *ctx, const char *lib)
{
    char dir[4200];
    ce_sys_path(ctx, "/etc/ld.so.conf.d", dir, sizeof dir);
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t nl = strlen(e->d_name);
        if (nl < 6 || strcmp(e->d_name + nl - 5, ".conf") || !strcmp(e->d_name, "cudaenv.conf")) continue;
        char path[4500], *data;
        if (ce_path_join(path, sizeof path, dir, e->d_name) != CE_OK) continue;
        ce_quiet q;
        ce_quiet_begin(&q, false);
        int rrc = ce_file_read(path, 65536, &data, NULL);
        ce_quiet_end(&q);
        if (rrc != CE_OK) continue;
        for (char *l = strtok(data, "\n"); l; l = strtok(NULL, "\n")) {
            while (*l == ' ' || *l == '\t') l++;
            if (*l != '/') continue;
            char host[4500], probe[4600];
            snprintf(host, sizeof host, "%s%s", ctx->sysroot, l);
            snprintf(probe, sizeof probe, "%s/libcudart.so", host);
            bool cuda = strstr(l, "cuda") || access(probe, F_OK) == 0;
            if (cuda && strcmp(l, lib) != 0)
                ce_emit(ctx, CE_EV_WARN, NULL,
                        "%s names %s (another CUDA); the loader may take libraries from there instead of %s. "
                        "cudaenv leaves it alone: remove that package or file if it is not wanted",
                        path, l, lib);
        }
        free(data);
    }
    closedir(d);
}

static int lock_open(ce_ctx *ctx, int *fd)
{
    char dir[4200], path[4300];
    ce_sys_path(ctx, "/etc/cudaenv", dir, sizeof dir);
    snprintf(path, sizeof path, "%s/lock", dir);
    /* never through a symlink planted at the lock's name, nor on a FIFO.
     * Not O_CLOEXEC: ldconfig and update-alternatives inherit it, so the
     * lock is held until they exit, also when this run is killed under
     * them (an orphaned ldconfig renaming its ld.so.cache~ while the next
     * switch's does made that one fail) */
    *fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (*fd < 0 && errno == ENOENT) {   /* the first switch: the directory first, its name durable */
        int rc = ce_mkdir_p(dir, 0755);
        if (rc) return rc;
        ce_sys_sync_parent(ctx, "/etc/cudaenv");
        *fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0600);
    }
    if (*fd < 0 && (errno == ELOOP || errno == EISDIR)) return ce_sys_wrong_type(path);
    if (*fd < 0) return ce_fail(CE_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(*fd);
        return ce_sys_wrong_type(path);
    }
    while (flock(*fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            close(*fd);
            return ce_fail(CE_ERR_IO, "cannot lock %s: %s", path, strerror(errno));
        }
    return CE_OK;
}

static int need_root(const char *what)
{
    if (geteuid() == 0) return CE_OK;
    return ce_fail(CE_ERR_PERM, "%s changes /usr/local/cuda and /etc/ld.so.conf.d and needs root; run: sudo cudaenv %s",
                   what, what);
}

static int inspect_link(ce_ctx *ctx, const char *link, link_state *ls)
{
    memset(ls, 0, sizeof *ls);
    struct stat st;
    if (lstat(link, &st) != 0) {
        if (errno == ENOENT) return CE_OK;
        return ce_fail(CE_ERR_IO, "cannot inspect %s: %s", link, strerror(errno));
    }
    if (!S_ISLNK(st.st_mode)) {
        ls->real = true;
        return CE_OK;
    }
    ssize_t n = readlink(link, ls->now, sizeof ls->now - 1);
    if (n < 0) return ce_fail(CE_ERR_IO, "cannot read %s: %s", link, strerror(errno));
    ls->now[n] = '\0';
    if (strcmp(ls->now, CE_ALT_LINK) == 0) {
        ls->mode = CE_SYS_MODE_ALTERNATIVES;
        char alt[4200];
        ce_sys_path(ctx, CE_ALT_LINK, alt, sizeof alt);
        n = readlink(alt, ls->now, sizeof ls->now - 1);
        ls->now[n > 0 ? n : 0] = '\0';
    }
    return CE_OK;
}

/* ---- the transaction (issue 9) ------------------------------------------
 * A switch (or a rollback) is: 1. the intent record (system.json with
 * "state":"pending", naming the new target/lib and the previous ones),
 * 2. the link (a real directory first moved aside with --force), 3. the conf,
 * 4. ldconfig, 5. the final record ("state":"done").  Each step is atomic
 * (rename) and idempotent, so a run killed anywhere leaves a pending intent
 * that the next switch, rollback or doctor sees: recover() completes it when
 * its target is still a safe toolchain, else returns to what it replaced.
 * All of it under the store lock (uninstall cannot remove the target) and the
 * system lock (one switch at a time). */

static void alt_prio(const char *name, char *out, size_t n)
{
    int maj = atoi(name), min = strchr(name, '.') ? atoi(strchr(name, '.') + 1) : 0;
    snprintf(out, n, "%d", maj * 10 + min);
}

/* Make link, conf and the loader cache match rec (steps 2-4); durable (the
 * directories changed, fsync'ed while ldconfig runs) before it returns. */
static int apply(ce_ctx *ctx, const ce_sys_record *rec, ce_staged *conf, void (*durable)(ce_ctx *))
{
    char link[4200], backup[8400];
    int rc;
    ce_sys_path(ctx, CE_SYS_LINK, link, sizeof link);
    /* --force: the real directory goes to its recorded backup name first */
    struct stat st;
    size_t ll = strlen(CE_SYS_LINK ".cudaenv-backup-");
    if (!rec->restore && !strncmp(rec->prev_target, CE_SYS_LINK ".cudaenv-backup-", ll) && lstat(link, &st) == 0 &&
        !S_ISLNK(st.st_mode)) {
        ce_sys_path(ctx, rec->prev_target, backup, sizeof backup);
        if (!ce_exists(backup) && rename(link, backup) != 0)
            return ce_fail(CE_ERR_IO, "cannot move %s to %s: %s", link, backup, strerror(errno));
    }
    if (rec->restore) {
        if ((rc = ce_sys_restore_link(ctx, link, &rec->original))) return rc;
    } else if (rec->mode == CE_SYS_MODE_ALTERNATIVES && rec->target[0]) {
        char prio[16];
        alt_prio(rec->name, prio, sizeof prio);
        /* a toolchain is registered; a rollback to a non-toolchain (the
         * machine's own alternative) keeps its priority and is only selected */
        if ((rec->name[0] && (rc = ce_sys_alternatives(ctx, "--install", CE_SYS_LINK, "cuda", rec->target, prio))) ||
            (rc = ce_sys_alternatives(ctx, "--set", "cuda", rec->target, NULL, NULL)))
            return rc;
    } else if (rec->target[0]) {
        if ((rc = ce_sys_link_exchange(ctx, link, rec->target))) return rc;
    } else if (unlink(link) != 0 && errno != ENOENT) {
        return ce_fail(CE_ERR_IO, "cannot remove %s: %s", link, strerror(errno));
    }
    ce_fault_point("switch-link", NULL);
    if (rec->restore) rc = ce_sys_restore_conf(ctx, &rec->original);
    else if (conf) rc = ce_sys_conf_exchange(ctx);
    else rc = remove_conf(ctx);
    if (rc) return rc;
    if (rec->restore) ce_sys_drop_spares(ctx);   /* the machine as it was: no file of ours beside its own */
    ce_fault_point("switch-conf", NULL);
    /* the renames of steps 2-3 (and a --force move aside), one fsync per
     * directory changed, before the final record can say "done"; done by
     * this thread while ldconfig runs, so the waits overlap (its own fsync
     * of the cache and ours join one commit on a journalling file system)
     * with no thread to start */
    if ((rc = ce_sys_run_ldconfig(ctx, durable))) return rc;
    ce_fault_point("switch-ldconfig", NULL);
    return CE_OK;
}

/* Steps 1-5 for the state rec describes.  One record, written once: the
 * intent system.json.pending is the final record (with "state":"done" and
 * system.json's gen + 1), written over the record before in place;
 * exchanging it with system.json marks the switch done.  Durability in two
 * steps, no thread: the intent and, when this switch wrote it, cudaenv.conf's
 * spare are fsync'ed one after the other (their writeback started when they
 * were written; /etc/cudaenv too only when the intent's name was created;
 * the intent is durable before anything changes);
 * apply() puts link and conf in place (exchanged with their spares,
 * system_durable.c) and fsyncs their directories; the last exchange is not
 * fsync'ed: lost in a crash, the intent is still the greater gen and the
 * next run completes it (idempotent).  Files created: a spare link only
 * when the spare points elsewhere (switching back to the toolchain before
 * creates nothing), the intent only the first time; a repair stages the
 * new intent and renames it over the old one: the old stays until the new
 * is durable.
 *
 * In two halves, so that a switch walks its toolchain while the intent's
 * writeback (started when it was written) is under way: tx_start writes the
 * intent and the conf's spare; tx_finish fsyncs them and, when the walk
 * said yes (ok == CE_OK), changes the system; when it said no, it removes
 * the intent and returns ok.  An intent to an unsafe target that a crash
 * leaves behind changed nothing and is rolled back by recover(), which
 * walks again. */
typedef struct sys_tx {
    ce_staged st[2];
    size_t n;
    bool repair, stage_conf, created, conf_written;
} sys_tx;

static int tx_start(ce_ctx *ctx, ce_sys_record *rec, sys_tx *t)
{
    char jpath[4200], conf[4400];
    int rc;
    t->n = 0;
    if ((rc = ce_sys_names_check(ctx))) return rc;
    t->stage_conf = !rec->restore && rec->lib[0];
    /* a repair replaces an intent that is there (durable): staged and
     * renamed, the old one stays until the new is; a switch writes over
     * the record before system.json's, one gen above system.json */
    t->repair = rec->pending;
    t->created = t->conf_written = false;
    if (!t->repair) rec->gen = (rec->gen < 0 ? 0 : rec->gen) + 1;
    rec->pending = false;
    char *text = ce_sys_record_text(rec);
    rec->pending = true;
    if (!text) return ce_fail(CE_ERR_NOMEM, "out of memory");
    if (strlen(text) > CE_SYS_RECORD_MAX) {
        free(text);
        return ce_fail(CE_ERR_OTHER, "the system record for %s would be larger than %d bytes even without its "
                       "history (paths too long?); use a store with a shorter path", rec->target, CE_SYS_RECORD_MAX);
    }
    ce_sys_path(ctx, CE_SYS_PENDING, jpath, sizeof jpath);
    rc = t->repair ? ce_file_stage(jpath, text, strlen(text), 0644, &t->st[0])
                   : ce_sys_journal_write(jpath, text, &t->st[0], &t->created);
    free(text);
    if (rc) return rc;
    t->n = 1;
    if (t->stage_conf) {
        conf_text(rec->lib, rec->name, conf, sizeof conf);
        if ((rc = ce_sys_conf_spare_stage(ctx, conf, &t->st[1], &t->conf_written))) {
            ce_file_stage_drop(&t->st[0]);
            return rc;
        }
        /* a spare already holding the text was made durable by the switch
         * that wrote it: no fsync (a repair syncs it all the same: a run
         * killed before its fsync may have written it) */
        if (t->conf_written || t->repair) t->n = 2;
        else ce_file_stage_drop(&t->st[1]);
    }
    return CE_OK;
}

static int tx_finish(ce_ctx *ctx, ce_sys_record *rec, sys_tx *t, int ok)
{
    char path[4200], jpath[4200];
    int rc = ok;
    if (ok != CE_OK) {   /* the walk's refusal: the intent goes, nothing changed */
        if (t->conf_written) ce_sys_conf_spare_forget(ctx);
        goto out;
    }
    /* the intent's bytes (its name too when created; a repair's is renamed
     * after) and the conf's bytes when written */
    if ((rc = ce_sys_sync_staged(ctx, t->st, t->n, t->created ? CE_SYS_PENDING : NULL))) {
        if (t->conf_written) ce_sys_conf_spare_forget(ctx);
        goto out;
    }
    ce_sys_path(ctx, CE_SYS_STATE, path, sizeof path);
    ce_sys_path(ctx, CE_SYS_PENDING, jpath, sizeof jpath);
    if (t->repair) {
        if ((rc = ce_file_stage_commit(&t->st[0]))) goto out;
        ce_sys_sync_parent(ctx, CE_SYS_PENDING);
    } else {
        t->st[0].tmp[0] = '\0';   /* durable: the intent stays */
    }
    ce_fault_point("switch-intent", NULL);
    /* the directories changed are durable before the exchange says done */
    if ((rc = apply(ctx, rec, t->stage_conf ? &t->st[1] : NULL, ce_sys_sync_changed))) goto out;   /* the intent stays pending: the next run repairs */
    /* done: the intent becomes system.json, which becomes the pending
     * file, now of the lower gen (not fsync'ed: lost in a crash, the
     * intent is still the greater and the next run completes it) */
    if (ce_sys_exchange(jpath, path) != 0) {
        rc = ce_fail(CE_ERR_IO, "cannot rename %s to %s: %s", jpath, path, strerror(errno));
        goto out;
    }
    /* the machine as it was: no record before this one lying about */
    if (rec->restore) unlink(jpath);
    else ce_sys_mark_stale(jpath);
    rec->pending = false;
out:
    for (size_t i = 0; i < t->n; i++) ce_file_stage_drop(&t->st[i]);   /* what was not renamed */
    return rc;
}

static int transact(ce_ctx *ctx, ce_sys_record *rec)
{
    sys_tx t;
    int rc = tx_start(ctx, rec, &t);
    return rc ? rc : tx_finish(ctx, rec, &t, CE_OK);
}

/* Complete or undo an interrupted switch (rec from system.json; rewritten).
 * Its target is walked as a switch walks it (a restore's too: the
 * machine's own state); when it fails, what it replaced is walked the same
 * way before the switch is rolled back to it: when both fail, nothing
 * changes and the refusal (exit 6, the path) is returned. */
static int recover(ce_ctx *ctx, ce_sys_record *rec)
{
    if (!rec->present || !rec->pending) return CE_OK;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    bool forward = ce_sys_record_safe(ctx, rec) == CE_OK;
    ce_quiet_end(&q);
    if (!forward) {
        /* back to what the interrupted switch (or restore) replaced */
        ce_sys_record back = *rec;
        back.restore = false;
        snprintf(back.name, sizeof back.name, "%s", rec->prev_name);
        snprintf(back.target, sizeof back.target, "%s", rec->prev_target);
        snprintf(back.lib, sizeof back.lib, "%s", rec->prev_lib);
        int rc = ce_sys_selection_safe(ctx, back.target, back.lib, true);
        if (rc) return rc;
        /* the switch had pushed what it replaced: that is current again */
        ce_sys_entry top;
        if (back.nhistory && !strcmp(ce_sys_hist_str(&back, 0, 1), back.target) &&
            !strcmp(ce_sys_hist_str(&back, 0, 2), back.lib))
            ce_sys_hist_pop(&back, &top);
        *rec = back;
    }
    ce_emit(ctx, CE_EV_WARN, NULL, "a system switch to %s was interrupted; %s it", rec->target[0] ? rec->target : "nothing",
            forward ? "completing" : "rolling back");
    int rc = transact(ctx, rec);
    if (rc == CE_OK) ce_emit(ctx, CE_EV_NOTE, NULL, "repaired: %s -> %s", CE_SYS_LINK, rec->target[0] ? rec->target : "absent");
    return rc;
}

/* Both locks, then the repair of an interrupted switch; *old is the record. */
static int begin(ce_ctx *ctx, ce_store_txn *txn, int *fd, ce_sys_record *old)
{
    int rc;
    if ((rc = ce_store_begin(ctx, txn)) || (rc = lock_open(ctx, fd))) return rc;
    if ((rc = ce_system_record(ctx, old))) return rc;
    if (old->pending) {
        /* temp files are staged only while an intent exists: without one
         * there is nothing stale to look for.  An intent cut short before
         * it was durable (not JSON) changed nothing and is not one: the
         * next switch writes over it. */
        drop_stale_tmp(ctx, CE_SYS_STATE);
        drop_stale_tmp(ctx, CE_SYS_PENDING);
        drop_stale_tmp(ctx, CE_SYS_CONF);
    }
    if ((rc = recover(ctx, old))) return rc;
    return CE_OK;
}

static void end(ce_store_txn *txn, int fd)
{
    if (fd >= 0) close(fd);
    ce_store_end(txn);
}

/* Path as seen inside the sysroot, also when the sysroot path itself holds
 * symlinks (realpath resolved them). */
static const char *inside_real(const ce_ctx *ctx, const char *real)
{
    static char sr[PATH_MAX];   /* the resolved sysroot, once per process */
    /* as root ce_trust_sysroot resolved it (a plain path that passed has
     * no symlink in it): no realpath again */
    if (ctx->sysroot[0] && !sr[0] && ce_trust_privileged() && ce_path_plain(ctx->sysroot) && strlen(ctx->sysroot) < sizeof sr)
        memcpy(sr, ctx->sysroot, strlen(ctx->sysroot) + 1);
    if (ctx->sysroot[0] && (sr[0] || realpath(ctx->sysroot, sr))) {
        size_t n = strlen(sr);
        if (strncmp(real, sr, n) == 0 && real[n] == '/') return real + n;
    }
    return inside(ctx, real);
}

int ce_system_switch(ce_ctx *ctx, const ce_toolchain *tc, const ce_sys_opts *o)
{
    int rc;
    if (!o->dry_run && (rc = need_root("global --system"))) return rc;
    char link[4200], real[PATH_MAX], lib[PATH_MAX];
    ce_sys_path(ctx, CE_SYS_LINK, link, sizeof link);
    ce_store_txn txn = CE_STORE_TXN_INIT;
    int fd = -1;
    /* ~160 KiB with the history: one record, read and then turned into the
     * new one in place, so its pages are touched once (a copy faulted in
     * ~45 pages more a switch) */
    static ce_sys_record old;
    ce_sys_record *const r = &old;
    link_state ls;
    if (!o->dry_run && (rc = begin(ctx, &txn, &fd, &old))) goto out;
    if (o->dry_run && (rc = ce_system_record(ctx, &old))) goto out;
    if (o->dry_run && old.pending)
        ce_emit(ctx, CE_EV_NOTE, NULL, "plan: first complete the interrupted switch to %s (or roll it back when "
                "its target is gone)", old.target[0] ? old.target : "nothing");
    /* with the store lock held: the toolchain is still there and stays */
    if (!ce_is_dir(tc->prefix)) {
        rc = ce_fail(CE_ERR_NOTFOUND, "%s is no longer installed (%s is gone); see: cudaenv list", tc->name, tc->prefix);
        goto out;
    }
    /* the fully resolved path is what gets linked (the walk below checks it) */
    if ((rc = ce_sys_toolchain_resolve(tc->prefix, real, lib)) || (rc = inspect_link(ctx, link, &ls))) goto out;
    /* the new record over the old one: the history (what this switch
     * replaces goes on top) and the machine's own state stay */
    bool had = old.present;
    if (had && !strcmp(old.target, ls.now)) memmove(r->prev_name, old.name, strlen(old.name) + 1);
    else r->prev_name[0] = '\0';
    r->present = true;
    r->pending = r->restore = false;
    r->mode = ls.mode;
    r->when = (long long)time(NULL);
    snprintf(r->name, sizeof r->name, "%s", tc->name);
    snprintf(r->target, sizeof r->target, "%s", inside_real(ctx, real));
    snprintf(r->lib, sizeof r->lib, "%s", inside_real(ctx, lib));
    snprintf(r->prev_target, sizeof r->prev_target, "%s", ls.now);
    conf_lib(ctx, r->prev_lib, sizeof r->prev_lib);

    char backup[4300] = "";
    if (ls.real) {
        if (!o->force) {
            rc = ce_fail(CE_ERR_OTHER,
                         "%s is a real directory (another CUDA installation?), not a link; cudaenv does not "
                         "replace it.  Rerun with --force to move it aside to %s.cudaenv-backup-<time> (never deleted)",
                         link, link);
            goto out;
        }
        snprintf(backup, sizeof backup, "%s.cudaenv-backup-%lld", link, r->when);
        snprintf(r->prev_target, sizeof r->prev_target, "%s", inside(ctx, backup));
    }
    if (!had) ce_sys_capture_original(ctx, &ls, backup, &r->original);
    ce_sys_hist_push(r, r->prev_name, r->prev_target, r->prev_lib);

    /* the intent is written before the walk, which runs while its
     * writeback does; nothing changes before both are done */
    sys_tx t;
    if (!o->dry_run) {
        if ((rc = tx_start(ctx, r, &t))) goto out;
        ce_fault_point("switch-trust", NULL);
    }
    /* the whole tree is root's */
    if ((rc = ce_sys_walk(ctx, real, lib))) goto done;
    warn_shadows(ctx, r->lib);

    /* the plan */
    if (backup[0]) ce_emit(ctx, CE_EV_NOTE, NULL, "plan: move the directory %s aside to %s", link, backup);
    if (ls.mode == CE_SYS_MODE_ALTERNATIVES)
        ce_emit(ctx, CE_EV_NOTE, NULL, "plan: update-alternatives: register %s as an alternative for cuda and select it (was %s)",
                r->target, ls.now);
    else
        ce_emit(ctx, CE_EV_NOTE, NULL, "plan: %s -> %s (was %s)", link, r->target, r->prev_target[0] ? r->prev_target : "absent");
    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: write %s%s naming %s", ctx->sysroot, CE_SYS_CONF, r->lib);
    const char *ld = ce_sys_ldconfig_path(ctx);
    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: run %s%s%s", ld ? ld : "no ldconfig", ctx->sysroot[0] && ld ? " -r " : "",
            ld ? ctx->sysroot : "");
done:
    if (!o->dry_run) rc = tx_finish(ctx, r, &t, rc);
out:
    end(&txn, fd);
    return rc;
}

int ce_system_rollback(ce_ctx *ctx, const ce_sys_opts *o)
{
    int rc;
    if (!o->dry_run && (rc = need_root("global --rollback"))) return rc;
    ce_store_txn txn = CE_STORE_TXN_INIT;
    int fd = -1;
    static ce_sys_record old, rec;
    char link[4200];
    ce_sys_path(ctx, CE_SYS_LINK, link, sizeof link);
    if (!o->dry_run && (rc = begin(ctx, &txn, &fd, &old))) goto out;
    if (o->dry_run && (rc = ce_system_record(ctx, &old))) goto out;
    if (!old.present) {
        rc = ce_fail(CE_ERR_NOTFOUND, "no system switch to roll back (%s%s does not exist)", ctx->sysroot, CE_SYS_STATE);
        goto out;
    }
    /* a rollback is a switch to the newest history entry, which it pops: a
     * second rollback walks further back */
    memcpy(&rec, &old, offsetof(ce_sys_record, hoff));
    ce_sys_hist_copy(&rec, &old);
    ce_sys_entry e;
    if (!ce_sys_hist_pop(&rec, &e)) {
        rc = ce_fail(CE_ERR_NOTFOUND, "nothing left to roll back (the history in %s%s is empty); "
                     "the machine's own CUDA: sudo cudaenv global system --system", ctx->sysroot, CE_SYS_STATE);
        goto out;
    }
    rec.present = true;
    rec.pending = rec.restore = false;
    rec.when = (long long)time(NULL);
    snprintf(rec.name, sizeof rec.name, "%s", e.name);
    snprintf(rec.target, sizeof rec.target, "%s", e.target);
    snprintf(rec.lib, sizeof rec.lib, "%s", e.lib);
    snprintf(rec.prev_name, sizeof rec.prev_name, "%s", old.name);
    snprintf(rec.prev_target, sizeof rec.prev_target, "%s", old.target);
    snprintf(rec.prev_lib, sizeof rec.prev_lib, "%s", old.lib);
    /* walked as a switch walks its toolchain: a history entry is no safer
     * than the day it was recorded */
    if ((rc = ce_sys_record_safe(ctx, &rec))) goto out;
    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: %s -> %s (was %s)", link, rec.target[0] ? rec.target : "absent", old.target);
    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: %s %s%s%s%s", rec.lib[0] ? "write" : "remove", ctx->sysroot, CE_SYS_CONF,
            rec.lib[0] ? " naming " : "", rec.lib);
    if (o->dry_run) goto out;
    rc = transact(ctx, &rec);
out:
    end(&txn, fd);
    return rc;
}

/* ---- for system_restore.c (system_int.h) ------------------------------ */

const char *ce_sys_inside(const ce_ctx *ctx, const char *host) { return inside(ctx, host); }
int ce_sys_need_root(const char *what) { return need_root(what); }
int ce_sys_begin(ce_ctx *ctx, ce_store_txn *txn, int *fd, ce_sys_record *old) { return begin(ctx, txn, fd, old); }
void ce_sys_end(ce_store_txn *txn, int fd) { end(txn, fd); }
int ce_sys_transact(ce_ctx *ctx, ce_sys_record *rec) { return transact(ctx, rec); }
