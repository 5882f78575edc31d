/* Back to the machine's own CUDA (issue 11): what the first system switch
 * found (capture), and the restore through the switch's transaction (system.c,
 * system_int.h): the link as it was or none, the alternatives cudaenv
 * registered removed and the selection and its mode back, a directory moved
 * aside moved back, cudaenv.conf as it was or none, then ldconfig. */
#include "system_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/file.h"

/* update-alternatives --query cuda: the status and the registered
 * alternatives ('\n'-separated).  CE_ERR_NOTFOUND without a cuda group. */
static int alt_query(ce_ctx *ctx, bool *manual, char *list, size_t n)
{
    static char q[65536];
    ce_quiet qt;
    ce_quiet_begin(&qt, true);
    int qrc = ce_sys_alt(ctx, q, sizeof q, "--query", "cuda", NULL);
    ce_quiet_end(&qt);
    if (qrc != CE_OK)
        return CE_ERR_NOTFOUND;
    size_t off = 0;
    list[0] = '\0';
    *manual = false;
    for (char *sv, *l = strtok_r(q, "\n", &sv); l; l = strtok_r(NULL, "\n", &sv)) {
        if (!strncmp(l, "Status: ", 8)) *manual = !strcmp(l + 8, "manual");
        if (strncmp(l, "Alternative: ", 13)) continue;
        int w = snprintf(list + off, n - off, "%s\n", l + 13);
        if (w < 0 || (size_t)w >= n - off) break;
        off += (size_t)w;
    }
    return CE_OK;
}

/* Is path one of the '\n'-separated lines of list? */
static bool in_list(const char *list, const char *path)
{
    size_t pl = strlen(path);
    for (const char *p = list; *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (l == pl && !strncmp(p, path, l)) return true;
        if (!nl) break;
        p = nl + 1;
    }
    return false;
}

/* What is there before cudaenv's first switch; backup: where --force is
 * about to move a real directory ("" when none). */
void ce_sys_capture_original(ce_ctx *ctx, const link_state *ls, const char *backup, ce_sys_original *g)
{
    memset(g, 0, sizeof *g);
    g->present = true;
    if (ls->real) {
        g->kind = CE_SYS_ORIG_DIR;
        snprintf(g->target, sizeof g->target, "%s", ce_sys_inside(ctx, backup));
    } else if (ls->mode == CE_SYS_MODE_ALTERNATIVES) {
        g->kind = CE_SYS_ORIG_ALTERNATIVES;
        snprintf(g->target, sizeof g->target, "%s", ls->now);
        /* unreadable: keep at least the selected one, so a restore never
         * removes an alternative that was the machine's */
        if (alt_query(ctx, &g->alt_manual, g->alt_list, sizeof g->alt_list) != CE_OK || !in_list(g->alt_list, ls->now))
            snprintf(g->alt_list + strlen(g->alt_list), sizeof g->alt_list - strlen(g->alt_list), "%s\n", ls->now);
    } else {
        g->kind = ls->now[0] ? CE_SYS_ORIG_LINK : CE_SYS_ORIG_NONE;
        snprintf(g->target, sizeof g->target, "%s", ls->now);
    }
    char path[4200], *data;
    size_t len;
    ce_sys_path(ctx, CE_SYS_CONF, path, sizeof path);
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rrc = ce_file_read(path, sizeof g->conf_text - 1, &data, &len);
    ce_quiet_end(&q);
    if (rrc == CE_OK) {
        g->conf_present = true;
        snprintf(g->conf_text, sizeof g->conf_text, "%s", data);
        free(data);
    }
}

/* The directory the original cudaenv.conf named ("" when none). */
static void original_lib(const ce_sys_original *g, char *out, size_t n)
{
    out[0] = '\0';
    for (const char *p = g->conf_text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (*p == '/') { snprintf(out, n, "%.*s", (int)l, p); return; }
        if (!nl) break;
        p = nl + 1;
    }
}

/* Point link at target: a temp symlink renamed over it, so readers see the
 * old target or the new one, never nothing. */
static int swap_link(const char *link, const char *target)
{
    char dir[4200], tmp[4200];
    snprintf(dir, sizeof dir, "%s", link);
    char *slash = strrchr(dir, '/');
    if (!slash) return ce_fail(CE_ERR_OTHER, "not an absolute path: %s", link);
    *slash = '\0';
    if (snprintf(tmp, sizeof tmp, "%s/.%s.cudaenv-tmp-%ld", dir, slash + 1, (long)getpid()) >= (int)sizeof tmp)
        return ce_fail(CE_ERR_OTHER, "path too long: %s", link);
    unlink(tmp);   /* our own leftover from a crash, if any */
    if (symlink(target, tmp) != 0)
        return ce_fail(CE_ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
    if (rename(tmp, link) != 0) {
        int e = errno;
        unlink(tmp);
        return ce_fail(CE_ERR_IO, "cannot rename %s over %s: %s", tmp, link, strerror(e));
    }
    ce_fsync_dir(dir);
    return CE_OK;
}

/* Step 2 of a restore; idempotent, so an interrupted restore repeats it. */
int ce_sys_restore_link(ce_ctx *ctx, const char *link, const ce_sys_original *g)
{
    struct stat st;
    int rc;
    switch (g->kind) {
    case CE_SYS_ORIG_LINK:
        return swap_link(link, g->target);
    case CE_SYS_ORIG_NONE:
        if (lstat(link, &st) == 0 && !S_ISLNK(st.st_mode))
            return ce_fail(CE_ERR_OTHER, "%s is now a real directory; there was nothing there before cudaenv's "
                           "first switch, and cudaenv does not remove a directory: move it away by hand", link);
        if (unlink(link) != 0 && errno != ENOENT)
            return ce_fail(CE_ERR_IO, "cannot remove %s: %s", link, strerror(errno));
        return CE_OK;
    case CE_SYS_ORIG_DIR: {
        char backup[4300];
        ce_sys_path(ctx, g->target, backup, sizeof backup);
        if (lstat(backup, &st) == 0 && S_ISDIR(st.st_mode)) {
            /* swap the directory and our link in one step, then drop the link */
            if (lstat(link, &st) != 0) {
                if (rename(backup, link) != 0)
                    return ce_fail(CE_ERR_IO, "cannot move %s back to %s: %s", backup, link, strerror(errno));
            } else if (renameat2(AT_FDCWD, backup, AT_FDCWD, link, RENAME_EXCHANGE) != 0) {
                return ce_fail(CE_ERR_IO, "cannot move %s back to %s: %s", backup, link, strerror(errno));
            }
        }
        if (lstat(backup, &st) == 0 && S_ISLNK(st.st_mode)) unlink(backup);
        return CE_OK;
    }
    case CE_SYS_ORIG_ALTERNATIVES: {
        /* remove the alternatives cudaenv registered, then the selection and
         * its mode as they were */
        static char now[8192];
        bool manual;
        if ((rc = alt_query(ctx, &manual, now, sizeof now)))
            return ce_fail(rc, "update-alternatives knows no 'cuda' group any more; the machine's own "
                           "selection was %s", g->target);
        for (char *sv, *p = strtok_r(now, "\n", &sv); p; p = strtok_r(NULL, "\n", &sv))
            if (!in_list(g->alt_list, p) && (rc = ce_sys_alt(ctx, NULL, 0, "--remove", "cuda", p))) return rc;
        return g->alt_manual ? ce_sys_alt(ctx, NULL, 0, "--set", "cuda", g->target)
                             : ce_sys_alt(ctx, NULL, 0, "--auto", "cuda", NULL);
    }
    }
    return CE_OK;
}

/* Step 3 of a restore: cudaenv.conf back to its text, or gone. */
int ce_sys_restore_conf(ce_ctx *ctx, const ce_sys_original *g)
{
    char path[4200];
    ce_sys_path(ctx, CE_SYS_CONF, path, sizeof path);
    if (g->conf_present) return ce_file_write_atomic(path, g->conf_text, strlen(g->conf_text), 0644);
    if (unlink(path) != 0 && errno != ENOENT) return ce_fail(CE_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    return CE_OK;
}

static const char *orig_words(const ce_sys_original *g, char *buf, size_t n)
{
    switch (g->kind) {
    case CE_SYS_ORIG_NONE: return "no /usr/local/cuda";
    case CE_SYS_ORIG_LINK: snprintf(buf, n, "/usr/local/cuda -> %s", g->target); break;
    case CE_SYS_ORIG_ALTERNATIVES:
        snprintf(buf, n, "update-alternatives cuda -> %s (%s)", g->target, g->alt_manual ? "manual" : "auto");
        break;
    case CE_SYS_ORIG_DIR: snprintf(buf, n, "the directory /usr/local/cuda (now at %s)", g->target); break;
    }
    return buf;
}

int ce_system_restore(ce_ctx *ctx, const ce_sys_opts *o)
{
    int rc;
    if (!o->dry_run && (rc = ce_sys_need_root("global system --system"))) return rc;
    ce_store_txn txn = CE_STORE_TXN_INIT;
    int fd = -1;
    static ce_sys_record old, rec;
    char link[4200], words[4400];
    ce_sys_path(ctx, CE_SYS_LINK, link, sizeof link);
    if (!o->dry_run && (rc = ce_sys_begin(ctx, &txn, &fd, &old))) goto out;
    if (o->dry_run && (rc = ce_system_record(ctx, &old))) goto out;
    if (o->dry_run && old.pending)
        ce_emit(ctx, CE_EV_NOTE, NULL, "plan: first complete the interrupted %s", old.restore ? "restore" : "switch");
    if (!old.present) {
        rc = ce_fail(CE_ERR_NOTFOUND, "cudaenv never switched this machine (%s%s does not exist): "
                     "/usr/local/cuda and ld.so.conf.d are the machine's own already", ctx->sysroot, CE_SYS_STATE);
        goto out;
    }
    if (!old.original.present) {
        rc = ce_fail(CE_ERR_NOTFOUND, "%s%s was written by an older cudaenv and does not record the machine's "
                     "own state; restore by hand: sudo rm %s%s; point %s at your CUDA (sudo ln -sfn /usr/local/cuda-X.Y "
                     "%s) or remove it; sudo ldconfig; sudo rm %s%s", ctx->sysroot, CE_SYS_STATE, ctx->sysroot,
                     CE_SYS_CONF, link, link, ctx->sysroot, CE_SYS_STATE);
        goto out;
    }
    /* a switch to the original state; what it replaces goes on the history
     * so --rollback returns to the toolchain */
    rec = old;
    rec.present = true;
    rec.pending = false;
    rec.restore = true;
    rec.when = (long long)time(NULL);
    rec.mode = old.original.kind == CE_SYS_ORIG_ALTERNATIVES ? CE_SYS_MODE_ALTERNATIVES : CE_SYS_MODE_LINK;
    rec.name[0] = '\0';
    snprintf(rec.target, sizeof rec.target, "%s",
             old.original.kind == CE_SYS_ORIG_LINK || old.original.kind == CE_SYS_ORIG_ALTERNATIVES ? old.original.target : "");
    original_lib(&old.original, rec.lib, sizeof rec.lib);
    snprintf(rec.prev_name, sizeof rec.prev_name, "%s", old.name);
    snprintf(rec.prev_target, sizeof rec.prev_target, "%s", old.target);
    snprintf(rec.prev_lib, sizeof rec.prev_lib, "%s", old.lib);
    if (!old.restore) ce_sys_hist_push(&rec, old.name, old.target, old.lib);

    const ce_sys_original *g = &rec.original;
    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: restore the machine's own CUDA as cudaenv found it: %s",
            orig_words(g, words, sizeof words));
    if (g->kind == CE_SYS_ORIG_ALTERNATIVES) {
        static char now[8192];
        bool manual;
        if (alt_query(ctx, &manual, now, sizeof now) == CE_OK)
            for (char *sv, *p = strtok_r(now, "\n", &sv); p; p = strtok_r(NULL, "\n", &sv))
                if (!in_list(g->alt_list, p))
                    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: update-alternatives --remove cuda %s (registered by cudaenv)", p);
        if (g->alt_manual) ce_emit(ctx, CE_EV_NOTE, NULL, "plan: update-alternatives --set cuda %s", g->target);
        else ce_emit(ctx, CE_EV_NOTE, NULL, "plan: update-alternatives --auto cuda (it selected %s)", g->target);
    } else if (g->kind == CE_SYS_ORIG_DIR) {
        ce_emit(ctx, CE_EV_NOTE, NULL, "plan: move %s%s back to %s", ctx->sysroot, g->target, link);
    } else {
        ce_emit(ctx, CE_EV_NOTE, NULL, "plan: %s %s%s (was %s)", g->target[0] ? link : "remove", g->target[0] ? "-> " : link,
                g->target, old.target[0] ? old.target : "absent");
    }
    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: %s %s%s%s", g->conf_present ? "write back" : "remove", ctx->sysroot, CE_SYS_CONF,
            g->conf_present ? " as it was" : " (there was none)");
    const char *ld = ce_sys_ldconfig_path(ctx);
    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: run %s%s%s", ld ? ld : "no ldconfig", ctx->sysroot[0] && ld ? " -r " : "",
            ld ? ctx->sysroot : "");
    /* the machine's own CUDA is walked as a switch walks a toolchain: root's
     * loader trusts it all the same (a dangling link is put back as it was) */
    if ((rc = ce_sys_record_safe(ctx, &rec))) goto out;
    if (o->dry_run) goto out;
    rc = ce_sys_transact(ctx, &rec);
out:
    ce_sys_end(&txn, fd);
    return rc;
}
