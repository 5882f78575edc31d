#include "system.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/file.h"

#define CE_ALT_LINK "/etc/alternatives/cuda"

/* A path as seen from inside the sysroot: what a link or conf file written
 * into an image must name.  Paths outside the sysroot stay as they are. */
static const char *inside(const ce_ctx *ctx, const char *host)
{
    size_t n = strlen(ctx->sysroot);
    if (n && strncmp(host, ctx->sysroot, n) == 0 && host[n] == '/') return host + n;
    return host;
}

int ce_system_path_safe(ce_ctx *ctx, const char *path)
{
    char real[PATH_MAX];
    if (!realpath(path, real))
        return ce_fail(ctx, CE_ERR_NOTFOUND, "cannot resolve %s: %s", path, strerror(errno));
    /* every directory from / down: a user who can write any of them can
     * swap the libraries root's loader will trust */
    char cur[PATH_MAX];
    size_t len = strlen(real);
    for (size_t i = 0; i <= len; i++) {
        if (i != len && real[i] != '/') continue;
        size_t n = i ? i : 1;
        memcpy(cur, real, n);
        cur[n] = '\0';
        struct stat st;
        if (stat(cur, &st) != 0)
            return ce_fail(ctx, CE_ERR_IO, "cannot stat %s: %s", cur, strerror(errno));
        bool writable = (st.st_mode & (S_IWGRP | S_IWOTH)) && !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX));
        if (st.st_uid != 0 || writable)
            return ce_fail(ctx, CE_ERR_PERM,
                           "unsafe for a system switch: %s is %s; root's dynamic loader would trust "
                           "libraries a user can replace.  Install the toolchain into a root-owned "
                           "CUDAENV_ROOT instead, e.g.: sudo CUDAENV_ROOT=/opt/cudaenv cudaenv install SPEC",
                           cur, st.st_uid != 0 ? "not owned by root" : "writable by group or others");
    }
    return CE_OK;
}

/* The libraries themselves (not only their directories) must be root's. */
static int libs_safe(ce_ctx *ctx, const char *lib)
{
    DIR *d = opendir(lib);
    if (!d) return ce_fail(ctx, CE_ERR_NOTFOUND, "cannot open %s: %s", lib, strerror(errno));
    struct dirent *e;
    int rc = CE_OK;
    while (rc == CE_OK && (e = readdir(d))) {
        struct stat st;
        if (e->d_name[0] == '.' || fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISLNK(st.st_mode)) continue;
        if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
            rc = ce_fail(ctx, CE_ERR_PERM,
                         "unsafe for a system switch: %s/%s is not owned by root or is writable by "
                         "group or others; install into a root-owned CUDAENV_ROOT (e.g. /opt/cudaenv)",
                         lib, e->d_name);
    }
    closedir(d);
    return rc;
}

/* ---- the record ------------------------------------------------------ */

static void jget(const cJSON *o, const char *k, char *out, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    snprintf(out, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

int ce_system_record(ce_ctx *ctx, ce_sys_record *rec)
{
    memset(rec, 0, sizeof *rec);
    char path[4200];
    ce_sys_path(ctx, CE_SYS_STATE, path, sizeof path);
    char *data;
    int rc = ce_file_read(ctx, path, 65536, &data, NULL);
    if (rc == CE_ERR_NOTFOUND) return CE_OK;
    if (rc) return rc;
    cJSON *j = cJSON_Parse(data);
    free(data);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%s is not valid JSON; remove it to forget the system selection", path);
    }
    char mode[32];
    jget(j, "mode", mode, sizeof mode);
    rec->mode = strcmp(mode, "alternatives") == 0 ? CE_SYS_MODE_ALTERNATIVES : CE_SYS_MODE_LINK;
    jget(j, "name", rec->name, sizeof rec->name);
    jget(j, "target", rec->target, sizeof rec->target);
    jget(j, "lib", rec->lib, sizeof rec->lib);
    jget(j, "prev_target", rec->prev_target, sizeof rec->prev_target);
    jget(j, "prev_lib", rec->prev_lib, sizeof rec->prev_lib);
    jget(j, "prev_name", rec->prev_name, sizeof rec->prev_name);
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "when");
    rec->when = cJSON_IsNumber(w) ? (long long)w->valuedouble : 0;
    rec->present = true;
    cJSON_Delete(j);
    return CE_OK;
}

static int record_write(ce_ctx *ctx, const ce_sys_record *rec)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "schema", 1);
    cJSON_AddStringToObject(j, "mode", rec->mode == CE_SYS_MODE_ALTERNATIVES ? "alternatives" : "link");
    cJSON_AddStringToObject(j, "name", rec->name);
    cJSON_AddStringToObject(j, "target", rec->target);
    cJSON_AddStringToObject(j, "lib", rec->lib);
    cJSON_AddStringToObject(j, "prev_target", rec->prev_target);
    cJSON_AddStringToObject(j, "prev_lib", rec->prev_lib);
    cJSON_AddStringToObject(j, "prev_name", rec->prev_name);
    cJSON_AddNumberToObject(j, "when", (double)rec->when);
    char *text = cJSON_Print(j);
    cJSON_Delete(j);
    if (!text) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    char path[4200];
    ce_sys_path(ctx, CE_SYS_STATE, path, sizeof path);
    int rc = ce_file_write_atomic(ctx, path, text, strlen(text), 0644);
    free(text);
    return rc;
}

/* ---- actions --------------------------------------------------------- */

/* fork + execv, never system(): no shell parses these paths.  The child's
 * stdout goes to stderr so cudaenv's stdout stays results only. */
static int run_prog(ce_ctx *ctx, char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0) return ce_fail(ctx, CE_ERR_OTHER, "cannot fork: %s", strerror(errno));
    if (pid == 0) {
        dup2(2, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return ce_fail(ctx, CE_ERR_OTHER, "waitpid: %s", strerror(errno));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return CE_OK;
    return ce_fail(ctx, CE_ERR_OTHER, "%s failed (%s %d)", argv[0],
                   WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
}

static const char *ldconfig_path(void)
{
    const char *e = getenv("CUDAENV_LDCONFIG");
    if (e) return (!*e || !strcmp(e, "none")) ? NULL : e;
    return access("/sbin/ldconfig", X_OK) == 0 ? "/sbin/ldconfig" : "/usr/sbin/ldconfig";
}

static int run_ldconfig(ce_ctx *ctx)
{
    const char *ld = ldconfig_path();
    if (!ld) {
        ce_emit(ctx, CE_EV_NOTE, NULL, "ldconfig skipped (CUDAENV_LDCONFIG=%s)", getenv("CUDAENV_LDCONFIG"));
        return CE_OK;
    }
    char *argv[] = { (char *)ld, ctx->sysroot[0] ? "-r" : NULL, ctx->sysroot, NULL };
    return run_prog(ctx, argv);
}

static const char *alternatives_path(void)
{
    const char *e = getenv("CUDAENV_UPDATE_ALTERNATIVES");
    if (e && *e) return e;
    return access("/usr/bin/update-alternatives", X_OK) == 0 ? "/usr/bin/update-alternatives" : "/usr/sbin/update-alternatives";
}

/* update-alternatives [--root SYSROOT] ARGS...: it renames its own links
 * atomically and keeps its admin file, so --display stays consistent. */
static int alternatives(ce_ctx *ctx, const char *a1, const char *a2, const char *a3, const char *a4, const char *a5)
{
    char *argv[12];
    int n = 0;
    argv[n++] = (char *)alternatives_path();
    argv[n++] = "--quiet";
    if (ctx->sysroot[0]) { argv[n++] = "--root"; argv[n++] = ctx->sysroot; }
    const char *rest[] = { a1, a2, a3, a4, a5 };
    for (int i = 0; i < 5 && rest[i]; i++) argv[n++] = (char *)rest[i];
    argv[n] = NULL;
    return run_prog(ctx, argv);
}

/* Point link at target: a temp symlink renamed over it, so readers see the
 * old target or the new one, never nothing. */
static int swap_link(ce_ctx *ctx, const char *link, const char *target)
{
    char tmp[4200], dir[4200];
    snprintf(dir, sizeof dir, "%s", link);
    char *slash = strrchr(dir, '/');
    if (!slash) return ce_fail(ctx, CE_ERR_OTHER, "not an absolute path: %s", link);
    *slash = '\0';
    if (snprintf(tmp, sizeof tmp, "%s/.%s.cudaenv-tmp-%ld", dir, slash + 1, (long)getpid()) >= (int)sizeof tmp)
        return ce_fail(ctx, CE_ERR_OTHER, "path too long: %s", link);
    unlink(tmp);   /* our own leftover from a crash, if any */
    if (symlink(target, tmp) != 0)
        return ce_fail(ctx, CE_ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
    if (rename(tmp, link) != 0) {
        int e = errno;
        unlink(tmp);
        return ce_fail(ctx, CE_ERR_IO, "cannot rename %s over %s: %s", tmp, link, strerror(e));
    }
    ce_fsync_dir(dir);
    return CE_OK;
}

static int write_conf(ce_ctx *ctx, const char *lib, const char *name)
{
    char path[4200], text[4400];
    ce_sys_path(ctx, CE_SYS_CONF, path, sizeof path);
    if (!*lib) {
        if (unlink(path) != 0 && errno != ENOENT)
            return ce_fail(ctx, CE_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
        return CE_OK;
    }
    snprintf(text, sizeof text, "# written by cudaenv (global --system): %s\n%s\n", *name ? name : "rollback", lib);
    return ce_file_write_atomic(ctx, path, text, strlen(text), 0644);
}

/* The library directory our conf file names today ("" if none). */
static void conf_lib(ce_ctx *ctx, char *out, size_t n)
{
    char path[4200];
    out[0] = '\0';
    ce_sys_path(ctx, CE_SYS_CONF, path, sizeof path);
    ce_ctx quiet = *ctx;
    char *data;
    if (ce_file_read(&quiet, path, 65536, &data, NULL) != CE_OK) return;
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
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        ce_ctx quiet = *ctx;
        if (ce_file_read(&quiet, path, 65536, &data, NULL) != CE_OK) continue;
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
    int rc = ce_mkdir_p(ctx, dir, 0755);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/lock", dir);
    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (*fd < 0) return ce_fail(ctx, CE_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    while (flock(*fd, LOCK_EX) != 0)
        if (errno != EINTR) {
            close(*fd);
            return ce_fail(ctx, CE_ERR_IO, "cannot lock %s: %s", path, strerror(errno));
        }
    return CE_OK;
}

static int need_root(ce_ctx *ctx, const char *what)
{
    if (geteuid() == 0) return CE_OK;
    return ce_fail(ctx, CE_ERR_PERM, "%s changes /usr/local/cuda and /etc/ld.so.conf.d and needs root; run: sudo cudaenv %s",
                   what, what);
}

/* The state of /usr/local/cuda: mode, what it points at now (inside view,
 * "" when absent), and whether it is something other than a symlink. */
typedef struct link_state {
    ce_sys_mode mode;
    char now[4096];
    bool real;          /* a directory or file: must be moved aside */
} link_state;

static int inspect_link(ce_ctx *ctx, const char *link, link_state *ls)
{
    memset(ls, 0, sizeof *ls);
    struct stat st;
    if (lstat(link, &st) != 0) {
        if (errno == ENOENT) return CE_OK;
        return ce_fail(ctx, CE_ERR_IO, "cannot inspect %s: %s", link, strerror(errno));
    }
    if (!S_ISLNK(st.st_mode)) {
        ls->real = true;
        return CE_OK;
    }
    ssize_t n = readlink(link, ls->now, sizeof ls->now - 1);
    if (n < 0) return ce_fail(ctx, CE_ERR_IO, "cannot read %s: %s", link, strerror(errno));
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

int ce_system_switch(ce_ctx *ctx, const ce_toolchain *tc, const ce_sys_opts *o)
{
    int rc;
    if (!o->dry_run && (rc = need_root(ctx, "global --system"))) return rc;
    char lib_host[4200], link[4200];
    snprintf(lib_host, sizeof lib_host, "%s/lib64", tc->prefix);
    if ((rc = ce_system_path_safe(ctx, lib_host)) || (rc = libs_safe(ctx, lib_host))) return rc;
    ce_sys_path(ctx, CE_SYS_LINK, link, sizeof link);
    int fd = -1;
    if (!o->dry_run && (rc = lock_open(ctx, &fd))) return rc;

    ce_sys_record old, rec;
    link_state ls;
    if ((rc = ce_system_record(ctx, &old)) || (rc = inspect_link(ctx, link, &ls))) goto out;
    memset(&rec, 0, sizeof rec);
    rec.mode = ls.mode;
    rec.when = (long long)time(NULL);
    snprintf(rec.name, sizeof rec.name, "%s", tc->name);
    snprintf(rec.target, sizeof rec.target, "%s", inside(ctx, tc->prefix));
    if (snprintf(rec.lib, sizeof rec.lib, "%s", inside(ctx, lib_host)) >= (int)sizeof rec.lib) {
        rc = ce_fail(ctx, CE_ERR_OTHER, "path too long: %s", lib_host);
        goto out;
    }
    snprintf(rec.prev_target, sizeof rec.prev_target, "%s", ls.now);
    conf_lib(ctx, rec.prev_lib, sizeof rec.prev_lib);
    if (old.present && !strcmp(old.target, ls.now)) snprintf(rec.prev_name, sizeof rec.prev_name, "%s", old.name);

    char backup[4300] = "";
    if (ls.real) {
        if (!o->force) {
            rc = ce_fail(ctx, CE_ERR_OTHER,
                         "%s is a real directory (another CUDA installation?), not a link; cudaenv does not "
                         "replace it.  Rerun with --force to move it aside to %s.cudaenv-backup-<time> (never deleted)",
                         link, link);
            goto out;
        }
        snprintf(backup, sizeof backup, "%s.cudaenv-backup-%lld", link, rec.when);
        snprintf(rec.prev_target, sizeof rec.prev_target, "%s", inside(ctx, backup));
    }
    warn_shadows(ctx, rec.lib);

    /* the plan */
    if (backup[0]) ce_emit(ctx, CE_EV_NOTE, NULL, "plan: move the directory %s aside to %s", link, backup);
    if (ls.mode == CE_SYS_MODE_ALTERNATIVES)
        ce_emit(ctx, CE_EV_NOTE, NULL, "plan: update-alternatives: register %s as an alternative for cuda and select it (was %s)",
                rec.target, ls.now);
    else
        ce_emit(ctx, CE_EV_NOTE, NULL, "plan: %s -> %s (was %s)", link, rec.target, rec.prev_target[0] ? rec.prev_target : "absent");
    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: write %s%s naming %s", ctx->sysroot, CE_SYS_CONF, rec.lib);
    const char *ld = ldconfig_path();
    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: run %s%s%s", ld ? ld : "no ldconfig", ctx->sysroot[0] && ld ? " -r " : "",
            ld ? ctx->sysroot : "");
    if (o->dry_run) goto out;

    if (backup[0] && rename(link, backup) != 0) {
        rc = ce_fail(ctx, CE_ERR_IO, "cannot move %s to %s: %s", link, backup, strerror(errno));
        goto out;
    }
    if (ls.mode == CE_SYS_MODE_ALTERNATIVES) {
        char prio[16];
        int maj = atoi(tc->cuda), min = atoi(strchr(tc->cuda, '.') ? strchr(tc->cuda, '.') + 1 : "0");
        snprintf(prio, sizeof prio, "%d", maj * 10 + min);
        if ((rc = alternatives(ctx, "--install", CE_SYS_LINK, "cuda", rec.target, prio)) ||
            (rc = alternatives(ctx, "--set", "cuda", rec.target, NULL, NULL)))
            goto out;
    } else if ((rc = swap_link(ctx, link, rec.target))) {
        goto out;
    }
    if ((rc = write_conf(ctx, rec.lib, rec.name)) || (rc = record_write(ctx, &rec))) goto out;
    rc = run_ldconfig(ctx);
out:
    if (fd >= 0) close(fd);
    return rc;
}

int ce_system_rollback(ce_ctx *ctx, const ce_sys_opts *o)
{
    int rc;
    if (!o->dry_run && (rc = need_root(ctx, "global --rollback"))) return rc;
    int fd = -1;
    if (!o->dry_run && (rc = lock_open(ctx, &fd))) return rc;
    ce_sys_record old, rec;
    char link[4200];
    ce_sys_path(ctx, CE_SYS_LINK, link, sizeof link);
    if ((rc = ce_system_record(ctx, &old))) goto out;
    if (!old.present) {
        rc = ce_fail(ctx, CE_ERR_NOTFOUND, "no system switch to roll back (%s%s does not exist)", ctx->sysroot, CE_SYS_STATE);
        goto out;
    }
    /* a rollback is a switch to the previous state; the record swaps so a
     * second rollback returns again */
    memset(&rec, 0, sizeof rec);
    rec.mode = old.mode;
    rec.when = (long long)time(NULL);
    snprintf(rec.name, sizeof rec.name, "%s", old.prev_name);
    snprintf(rec.target, sizeof rec.target, "%s", old.prev_target);
    snprintf(rec.lib, sizeof rec.lib, "%s", old.prev_lib);
    snprintf(rec.prev_name, sizeof rec.prev_name, "%s", old.name);
    snprintf(rec.prev_target, sizeof rec.prev_target, "%s", old.target);
    snprintf(rec.prev_lib, sizeof rec.prev_lib, "%s", old.lib);
    if (rec.lib[0]) {
        /* recorded inside the sysroot, or a host path when it lived outside */
        char host[8200];
        snprintf(host, sizeof host, "%s%s", ctx->sysroot, rec.lib);
        if (!ce_exists(host)) snprintf(host, sizeof host, "%s", rec.lib);
        if ((rc = ce_system_path_safe(ctx, host))) goto out;
    }
    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: %s -> %s (was %s)", link, rec.target[0] ? rec.target : "absent", old.target);
    ce_emit(ctx, CE_EV_NOTE, NULL, "plan: %s %s%s%s%s", rec.lib[0] ? "write" : "remove", ctx->sysroot, CE_SYS_CONF,
            rec.lib[0] ? " naming " : "", rec.lib);
    if (o->dry_run) goto out;
    if (rec.mode == CE_SYS_MODE_ALTERNATIVES && rec.target[0]) {
        rc = alternatives(ctx, "--set", "cuda", rec.target, NULL, NULL);
    } else if (rec.target[0]) {
        rc = swap_link(ctx, link, rec.target);
    } else if (unlink(link) != 0 && errno != ENOENT) {
        rc = ce_fail(ctx, CE_ERR_IO, "cannot remove %s: %s", link, strerror(errno));
    }
    if (rc || (rc = write_conf(ctx, rec.lib, rec.name)) || (rc = record_write(ctx, &rec))) goto out;
    rc = run_ldconfig(ctx);
out:
    if (fd >= 0) close(fd);
    return rc;
}
