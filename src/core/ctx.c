#include "ctx.h"

#include <limits.h>
#include <stddef.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "path.h"

#ifndef CE_DATADIR
#define CE_DATADIR "/usr/local/share/cudaenv"
#endif

/* dst is zero already (ce_ctx_init_zeroed): an unset value writes nothing,
 * so the page under dst is not touched */
static void copy_set(char *dst, size_t n, const char *v)
{
    if (v && *v) snprintf(dst, n, "%s", v);
}

extern char **environ;

#define SET(name, field) { name, sizeof name - 1, offsetof(ce_settings, field) }
static const struct { const char *name; size_t len, off; } settings[] = {
    SET("ROOT", root), SET("SYSROOT", sysroot), SET("MANIFEST", manifest), SET("MIRROR", mirror),
    SET("PLATFORM", platform), SET("FULL", full), SET("LDCONFIG", ldconfig),
    SET("UPDATE_ALTERNATIVES", update_alternatives), SET("DOCTOR_PYTHON", doctor_python),
    SET("UNPACK_JOBS", unpack_jobs), SET("MAX_CONNECTIONS", max_connections),
    SET("STALL_TIMEOUT", stall_timeout), SET("RETRY_DELAY_MS", retry_delay_ms),
    SET("RATE_WINDOW", rate_window), SET("MIN_RATE", min_rate), SET("DEADLINE_BASE", deadline_base),
    SET("FETCH_CEILING", fetch_ceiling), SET("RUNFILE_TIMEOUT", runfile_timeout),
    SET("RUNFILE_LOG_CAP", runfile_log_cap), SET("VERIFY_NO_REEXEC", verify_no_reexec),
    SET("UPDATE_INTERVAL", update_interval), SET("MANIFEST_UNSIGNED", unsigned_ok),
    SET("DRIVER_VERSION", driver_version), SET("REGISTRY_AUTH", registry_auth), SET("XZ_NO_PIPE", xz_no_pipe),
};
#undef SET

/* What ce_settings_now returns: main's static context's own settings, else
 * a copy of the last ce_ctx_init's (or of a first read with no context). */
static ce_settings process_copy;
static const ce_settings *process_settings;

/* One pass over the environment: only CUDAENV_* entries are looked at; the
 * first of a name wins, as with getenv. */
static void read_settings(ce_settings *s)
{
    memset(s, 0, sizeof *s);
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "CUDAENV_", 8) != 0) continue;
        const char *k = *e + 8, *eq = strchr(k, '=');
        if (!eq) continue;
        size_t n = (size_t)(eq - k);
        for (size_t i = 0; i < sizeof settings / sizeof *settings; i++) {
            if (settings[i].len != n || memcmp(k, settings[i].name, n) != 0) continue;
            const char **slot = (const char **)((char *)s + settings[i].off);
            if (!*slot) *slot = eq + 1;
            break;
        }
    }
}

const ce_settings *ce_settings_now(void)
{
    if (!process_settings) {
        read_settings(&process_copy);
        process_settings = &process_copy;
    }
    return process_settings;
}

long ce_setting_long(const char *value, long dflt, long min)
{
    if (!value || !*value) return dflt;
    char *end;
    long x = strtol(value, &end, 10);
    return (*end || x < min) ? dflt : x;
}

static void ctx_fill(ce_ctx *ctx);

int ce_ctx_init(ce_ctx *ctx)
{
    memset(ctx, 0, sizeof *ctx);
    ctx_fill(ctx);
    process_copy = ctx->set;
    process_settings = &process_copy;
    return CE_OK;
}

int ce_ctx_init_zeroed(ce_ctx *ctx)
{
    ctx_fill(ctx);
    process_settings = &ctx->set;   /* static storage: no copy (one page less to fault in) */
    return CE_OK;
}

static void ctx_fill(ce_ctx *ctx)
{
    read_settings(&ctx->set);
    const char *root = ctx->set.root;
    if (root && *root) {
        snprintf(ctx->root, sizeof ctx->root, "%s", root);
    } else {
        snprintf(ctx->root, sizeof ctx->root, "%s/.cudaenv", ce_home());
    }
    ce_path_strip_trailing(ctx->root);
    if (ctx->set.sysroot && *ctx->set.sysroot) {
        copy_set(ctx->sysroot, sizeof ctx->sysroot, ctx->set.sysroot);
        ce_path_strip_trailing(ctx->sysroot);
        if (strcmp(ctx->sysroot, "/") == 0)
            ctx->sysroot[0] = '\0';
    }
    copy_set(ctx->manifest, sizeof ctx->manifest, ctx->set.manifest);
    copy_set(ctx->mirror, sizeof ctx->mirror, ctx->set.mirror);

    /* the platform of this binary's own architecture: the one uname would
     * report wherever it runs (no syscall); self_dir waits for its first
     * use (ce_self_dir): most commands never need it */
#if defined(__aarch64__)
    const char *plat = "linux-sbsa";
#else
    const char *plat = "linux-x86_64";
#endif
    const char *override = ctx->set.platform;
    snprintf(ctx->platform, sizeof ctx->platform, "%s", override && *override ? override : plat);
}

const char *ce_home(void)
{
    const char *home = getenv("HOME");
    if (home && home[0] == '/') return home;
    /* unset, empty or relative (HOME=. would put the store and the global
     * file under the working directory): the account's own */
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : "/";
}

const char *ce_self_dir(const ce_ctx *ctx)
{
    /* filled on first use; a cache, so const callers may ask */
    char *dir = ((ce_ctx *)ctx)->self_dir;
    if (dir[0]) return dir;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        size_t l = slash ? (size_t)(slash - exe) : (size_t)n;
        if (l >= sizeof ctx->self_dir) l = 0;   /* too long to use: unknown */
        memcpy(dir, exe, l);
        dir[l] = '\0';
    }
    return dir;
}

void ce_emit(ce_ctx *ctx, ce_event_kind kind, const char *item, const char *fmt, ...)
{
    if (!ctx->event || ce_muted())
        return;
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ce_event ev = { .kind = kind, .item = item, .text = buf, .total = -1 };
    ctx->event(ctx->event_ud, &ev);
}

void ce_progress(ce_ctx *ctx, const char *item, int64_t done, int64_t total, double rate)
{
    if (!ctx->event || ce_muted())
        return;
    ce_event ev = { .kind = CE_EV_PROGRESS, .item = item, .done = done, .total = total, .rate = rate };
    ctx->event(ctx->event_ud, &ev);
}

void ce_sys_path(const ce_ctx *ctx, const char *abs, char *out, size_t outsz)
{
    ce_path_under(ctx->sysroot, abs, out, outsz);
}
