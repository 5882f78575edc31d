#include "runfile.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/file.h"
#include "core/version.h"

extern char **environ;

/* The installer's environment: ours minus what makes it write elsewhere or
 * behave differently (EasyBuild learned each of these the hard way:
 * nvidia-facts §6b), plus a private HOME/TMPDIR. */
static char **installer_env(const char *tmp)
{
    static const char *drop[] = { "HOME=", "TMPDIR=", "TMP=", "TEMP=", "LANG=", "LANGUAGE=", "DISPLAY=",
                                  "SUDO_USER=", "SUDO_UID=", "SUDO_GID=", "SUDO_COMMAND=", NULL };
    size_t n = 0;
    while (environ[n]) n++;
    char **env = calloc(n + 8, sizeof *env);
    if (!env) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool skip = strncmp(environ[i], "LC_", 3) == 0;
        for (size_t j = 0; !skip && drop[j]; j++)
            skip = strncmp(environ[i], drop[j], strlen(drop[j])) == 0;
        if (!skip) env[k++] = environ[i];
    }
    static char home[4200], tmpdir[4200];
    snprintf(home, sizeof home, "HOME=%s", tmp);
    snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", tmp);
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

int ce_runfile_install(ce_ctx *ctx, const char *runfile, const char *label, const char *staging,
                       const char *tmp, const char *log, const char *version)
{
    char a_tk[4200], a_def[4200], a_tmp[4200];
    snprintf(a_tk, sizeof a_tk, "--toolkitpath=%s", staging);
    snprintf(a_def, sizeof a_def, "--defaultroot=%s", staging);
    snprintf(a_tmp, sizeof a_tmp, "--tmpdir=%s", tmp);
    char *argv[] = { "sh", (char *)runfile, "--silent", "--toolkit", a_tk, a_def, "--no-opengl-libs",
                     "--no-man-page", "--no-drm", "--override", a_tmp, NULL };
    char **env = installer_env(tmp);
    if (!env) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    /* O_NOFOLLOW: a planted logs/<file> symlink must not redirect root's write */
    int logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (logfd < 0) {
        free(env);
        return ce_fail(ctx, CE_ERR_IO, "cannot create %s: %s", log, strerror(errno));
    }
    ce_emit(ctx, CE_EV_STEP, label, "running the CUDA %s installer (log: %s)", version, log);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(logfd);
        free(env);
        return ce_fail(ctx, CE_ERR_OTHER, "cannot start the installer: %s", strerror(e));
    }
    if (pid == 0) {
        /* a killed cudaenv must not leave the installer writing into a
         * staging directory the next run deletes */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, 0);
        dup2(logfd, 1);
        dup2(logfd, 2);
        if (chdir(tmp) != 0) _exit(126);
        execve("/bin/sh", argv, env);
        _exit(127);
    }
    close(logfd);
    free(env);
    int st;
    /* the installer runs for minutes: report the elapsed time once a second */
    struct timespec t0, now, nap = { 0, 100 * 1000 * 1000 };
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long ticks = 0;; ticks++) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return ce_fail(ctx, CE_ERR_OTHER, "lost the installer: %s", strerror(errno));
        if (ticks % 10 == 9) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            ce_event ev = { .kind = CE_EV_ELAPSED, .item = label, .total = -1,
                            .done = (int64_t)(now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 };
            if (ctx->event) ctx->event(ctx->event_ud, &ev);
        }
        nanosleep(&nap, NULL);
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char tail[512];
        log_tail(log, tail, sizeof tail);
        char how[64];
        if (WIFEXITED(st)) snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(st));
        else snprintf(how, sizeof how, "signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        return ce_fail(ctx, CE_ERR_OTHER, "the CUDA %s installer (%s) failed with %s%s%s; its output is in %s",
                       version, label, how, tail[0] ? ": " : "", tail, log);
    }
    return ce_toolkit_check(ctx, staging, version, label);
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
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        found = stat(p, &st) == 0 && S_ISREG(st.st_mode);
    }
    closedir(d);
    return found;
}

/* MAJOR.MINOR of the toolkit in dir, "" when no version file says. */
static void toolkit_version(ce_ctx *ctx, const char *dir, char *out, size_t outsz, char *from, size_t fromsz)
{
    out[0] = '\0';
    char p[4200], *text = NULL;
    snprintf(p, sizeof p, "%s/version.json", dir);
    ce_ctx quiet = *ctx;
    if (ce_file_read(&quiet, p, 1u << 20, &text, NULL) == CE_OK) {
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
    if (ce_file_read(&quiet, p, 1u << 16, &text, NULL) == CE_OK) {
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

int ce_toolkit_check(ce_ctx *ctx, const char *dir, const char *version, const char *label)
{
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/bin/nvcc", dir);
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR))
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%s did not install bin/nvcc (no executable %s); "
                       "it is not the CUDA %s toolkit the manifest promised", label, p, version);
    snprintf(p, sizeof p, "%s/lib64", dir);
    if (!has_prefix_entry(p, "libcudart.so."))
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%s did not install lib64/libcudart.so.* (in %s); "
                       "it is not the CUDA %s toolkit the manifest promised", label, p, version);
    char have[32], from[128] = "", want[32];
    toolkit_version(ctx, dir, have, sizeof have, from, sizeof from);
    ce_version_prefix(version, 2, want, sizeof want);
    if (!have[0])
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%s installed no version.json or version.txt in %s; "
                       "cannot confirm it is CUDA %s", label, dir, version);
    if (strcmp(have, want) != 0)
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%s installed CUDA %s (%s), but the manifest promised %s; "
                       "the manifest entry is wrong", label, have, from, version);
    return CE_OK;
}
