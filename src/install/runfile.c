#include "runfile.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/file.h"
#include "core/version.h"
#include "core/proc.h"

extern char **environ;

/* The installer's environment: ours minus what makes it write elsewhere or
 * behave differently (EasyBuild learned each of these the hard way:
 * nvidia-facts §6b), plus a private HOME/TMPDIR. */
static char **installer_env(const char *tmp)
{
    static const char *drop[] = { "HOME=", "TMPDIR=", "TMP=", "TEMP=", "LANG=", "LANGUAGE=", "DISPLAY=",
                                  "SUDO_USER=", "SUDO_UID=", "SUDO_GID=", "SUDO_COMMAND=", NULL };
    size_t n = 0, tl = strlen(tmp) + sizeof "TMPDIR=";
    while (environ[n]) n++;
    /* the array and its two strings in one block, each call its own: two
     * installers run at once (one thread each, unpackers.c), and a static
     * buffer gave the first the second's HOME and TMPDIR, which the second
     * removes when it ends (the first then lost its working directory) */
    char **env = calloc(1, (n + 8) * sizeof *env + 2 * tl);
    if (!env) return NULL;
    char *home = (char *)(env + n + 8), *tmpdir = home + tl;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool skip = strncmp(environ[i], "LC_", 3) == 0;
        for (size_t j = 0; !skip && drop[j]; j++)
            skip = strncmp(environ[i], drop[j], strlen(drop[j])) == 0;
        if (!skip) env[k++] = environ[i];
    }
    snprintf(home, tl, "HOME=%s", tmp);
    snprintf(tmpdir, tl, "TMPDIR=%s", tmp);
    env[k++] = home;
    env[k++] = tmpdir;
    env[k++] = "LANG=C";
    env[k++] = "LC_ALL=C";
    env[k] = NULL;
    return env;
}

/* The last non-empty line of the log, for the error message. */
static void log_tail(const char *log, char *out, size_t outsz)
{
    out[0] = '\0';
    FILE *f = fopen(log, "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0]) snprintf(out, outsz, "%s", line);
    }
    fclose(f);
}

/* Paths a CUDA runfile touches when it ignores --toolkitpath (under
 * CUDAENV_SYSROOT when set): compared before and after, and reported. */
#define N_WATCH 6
typedef struct watched {
    char path[4200];
    bool exists;
    struct stat st;
} watched;

static void watch_take(const ce_ctx *ctx, const char *version, watched w[N_WATCH])
{
    char mm[32];
    ce_version_prefix(version, 2, mm, sizeof mm);
    char cuda_mm[64];
    snprintf(cuda_mm, sizeof cuda_mm, "/usr/local/cuda-%s", mm);
    const char *paths[N_WATCH] = { "/usr/local/cuda", cuda_mm, "/etc/ld.so.conf.d", "/etc/profile.d",
                                   "/usr/bin/nvidia-uninstall", "/usr/local/bin" };
    for (int i = 0; i < N_WATCH; i++) {
        snprintf(w[i].path, sizeof w[i].path, "%s%s", ctx->sysroot, paths[i]);
        w[i].exists = lstat(w[i].path, &w[i].st) == 0;
    }
}

static bool same_stat(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_mode == b->st_mode &&
           a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
           a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

static void watch_report(ce_ctx *ctx, const char *version, const char *staging, const watched before[N_WATCH])
{
    watched after[N_WATCH];
    watch_take(ctx, version, after);
    for (int i = 0; i < N_WATCH; i++) {
        if (before[i].exists == after[i].exists && (!after[i].exists || same_stat(&before[i].st, &after[i].st)))
            continue;
        ce_emit(ctx, CE_EV_WARN, after[i].path, "the CUDA %s installer %s %s, outside the toolkit path it was "
                "given (%s); check it and undo it if it is not yours", version,
                !before[i].exists ? "created" : !after[i].exists ? "removed" : "changed", after[i].path, staging);
    }
}

int ce_runfile_install(ce_ctx *ctx, const char *runfile, const char *label, const char *staging,
                       const char *tmp, const char *log, const char *version, const int *cancel)
{
    char a_tk[4200], a_def[4200], a_tmp[4200];
    snprintf(a_tk, sizeof a_tk, "--toolkitpath=%s", staging);
    snprintf(a_def, sizeof a_def, "--defaultroot=%s", staging);
    snprintf(a_tmp, sizeof a_tmp, "--tmpdir=%s", tmp);
    char *argv[] = { "sh", (char *)runfile, "--silent", "--toolkit", a_tk, a_def, "--no-opengl-libs",
                     "--no-man-page", "--no-drm", "--override", a_tmp, NULL };
    char **env = installer_env(tmp);
    if (!env) return ce_fail(CE_ERR_NOMEM, "out of memory");
    long timeout = ce_setting_long(ctx->set.runfile_timeout, CE_RUNFILE_TIMEOUT_S, 1);
    long cap = ce_setting_long(ctx->set.runfile_log_cap, CE_RUNFILE_LOG_CAP, 1);
    /* O_NOFOLLOW: a planted logs/<file> symlink cannot redirect root's write */
    int logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (logfd < 0) {
        free(env);
        return ce_fail(CE_ERR_IO, "cannot create %s: %s", log, strerror(errno));
    }
    ce_proc rp = { .path = "/bin/sh", .argv = argv, .env = env, .cwd = tmp, .out = CE_PROC_CAPTURE_FD,
                   .fd = logfd, .timeout_s = (double)timeout, .cap_head = (size_t)cap, .cap_tail = (size_t)cap,
                   .supervise = true, .label = label, .cancel = cancel };
    watched before[N_WATCH];
    watch_take(ctx, version, before);
    ce_emit(ctx, CE_EV_STEP, label, "running the CUDA %s installer (log: %s)", version, log);
    ce_proc_result res;
    int rc = ce_proc_run(ctx, &rp, &res);
    close(logfd);
    free(env);
    if (rc != CE_OK) return rc;
    watch_report(ctx, version, staging, before);
    if (res.cancelled)   /* the install's own failure is the one reported */
        return ce_fail(CE_ERR_OTHER, "the CUDA %s installer (%s) was stopped with everything it started: "
                       "the install failed; its output is in %s", version, label, log);
    if (res.timed_out)
        return ce_fail(CE_ERR_OTHER, "the CUDA %s installer (%s) did not finish in %ld s and was stopped "
                       "with everything it started (CUDAENV_RUNFILE_TIMEOUT); its output is in %s",
                       version, label, timeout, log);
    if (res.code != 0) {
        char tail[512];
        log_tail(log, tail, sizeof tail);
        char how[64];
        if (res.sig) snprintf(how, sizeof how, "signal %d", res.sig);
        else snprintf(how, sizeof how, "exit status %d", res.code);
        return ce_fail(CE_ERR_OTHER, "the CUDA %s installer (%s) failed with %s%s%s; its output is in %s",
                       version, label, how, tail[0] ? ": " : "", tail, log);
    }
    return ce_toolkit_check(staging, version, label);
}

static bool has_prefix_entry(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    struct dirent *e;
    bool found = false;
    size_t n = strlen(prefix);
    while (!found && (e = readdir(d))) {
        if (strncmp(e->d_name, prefix, n) != 0) continue;
        char p[8400];
        if (ce_path_join(p, sizeof p, dir, e->d_name) != CE_OK) continue;
        struct stat st;
        found = stat(p, &st) == 0 && S_ISREG(st.st_mode);
    }
    closedir(d);
    return found;
}

/* MAJOR.MINOR of the toolkit in dir, "" when no version file says. */
static void toolkit_version(const char *dir, char *out, size_t outsz, char *from, size_t fromsz)
{
    out[0] = '\0';
    char p[4200], *text = NULL;
    snprintf(p, sizeof p, "%s/version.json", dir);
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int trc = ce_file_read(p, 1u << 20, &text, NULL);
    ce_quiet_end(&q);
    if (trc == CE_OK) {
        cJSON *j = cJSON_Parse(text);
        static const char *keys[] = { "cuda_cudart", "cuda_nvcc", "cuda" };
        for (size_t i = 0; j && i < 3 && !out[0]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, keys[i]), "version");
            if (cJSON_IsString(v) && ce_version_valid(v->valuestring)) {
                ce_version_prefix(v->valuestring, 2, out, (unsigned)outsz);
                snprintf(from, fromsz, "version.json %s.version %s", keys[i], v->valuestring);
            }
        }
        cJSON_Delete(j);
        free(text);
        return;
    }
    snprintf(p, sizeof p, "%s/version.txt", dir);
    ce_quiet_begin(&q, false);
    trc = ce_file_read(p, 1u << 16, &text, NULL);
    ce_quiet_end(&q);
    if (trc == CE_OK) {
        const char *v = strstr(text, "CUDA Version ");
        if (v) {
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v + 13);
            buf[strcspn(buf, " \r\n")] = '\0';
            if (ce_version_valid(buf)) {
                ce_version_prefix(buf, 2, out, (unsigned)outsz);
                snprintf(from, fromsz, "version.txt %s", buf);
            }
        }
        free(text);
    }
}

int ce_toolkit_check(const char *dir, const char *version, const char *label)
{
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/bin/nvcc", dir);
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR))
        return ce_fail(CE_ERR_INTEGRITY, "%s did not install bin/nvcc (no executable %s); "
                       "it is not the CUDA %s toolkit the manifest promised", label, p, version);
    snprintf(p, sizeof p, "%s/lib64", dir);
    if (!has_prefix_entry(p, "libcudart.so."))
        return ce_fail(CE_ERR_INTEGRITY, "%s did not install lib64/libcudart.so.* (in %s); "
                       "it is not the CUDA %s toolkit the manifest promised", label, p, version);
    char have[32], from[128] = "", want[32];
    toolkit_version(dir, have, sizeof have, from, sizeof from);
    ce_version_prefix(version, 2, want, sizeof want);
    if (!have[0])
        return ce_fail(CE_ERR_INTEGRITY, "%s installed no version.json or version.txt in %s; "
                       "cannot confirm it is CUDA %s", label, dir, version);
    if (strcmp(have, want) != 0)
        return ce_fail(CE_ERR_INTEGRITY, "%s installed CUDA %s (%s), but the manifest promised %s; "
                       "the manifest entry is wrong", label, have, from, version);
    return CE_OK;
}
