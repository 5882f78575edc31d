/* The context every core call takes: configuration read once from the
 * environment and the command line, and the event callback through which the
 * core reports progress (it never prints).  The error of a failure is not
 * here but in the calling thread's status (status.h), so threads share one
 * context by pointer. */
#ifndef CE_CTX_H
#define CE_CTX_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "path.h"
#include "status.h"

typedef enum ce_event_kind {
    CE_EV_INFO,      /* a line worth showing with -v or in a log */
    CE_EV_NOTE,      /* shown unless -q */
    CE_EV_WARN,      /* always shown on stderr */
    CE_EV_STEP,      /* a pipeline step starts: "downloading", "extracting" ... */
    CE_EV_PROGRESS,  /* bytes done / total for a named item */
    CE_EV_DONE,      /* progress for an item finished */
    CE_EV_ELAPSED,   /* a step without byte counts still runs: done = ms since it began */
} ce_event_kind;

typedef struct ce_event {
    ce_event_kind kind;
    const char *item;      /* artifact or step label, may be NULL */
    const char *text;      /* message text, may be NULL */
    int64_t done, total;   /* CE_EV_PROGRESS: bytes (total -1 if unknown) */
    double rate;           /* bytes per second, 0 if unknown */
} ce_event;

typedef void (*ce_event_fn)(void *ud, const ce_event *ev);

/* The cudaenv settings (CUDAENV_*), read once by ce_ctx_init in one pass
 * over the environment (nothing parsed, nothing copied: each is the
 * environment's own string, NULL when not set).  Read them here, never with
 * getenv: the full list of what cudaenv reads is this struct.  There are no
 * test variables among them (tests act through core/fault.h); as root
 * CUDAENV_FULL is ignored (cli_exec_full): a caller's environment (sudo -E)
 * cannot pick the binary root runs. */
typedef struct ce_settings {
    const char *root;                 /* CUDAENV_ROOT as given (ctx->root is the resolved store) */
    const char *sysroot, *manifest, *mirror, *platform;   /* as given; ctx's fields hold what is used */
    const char *full;                 /* CUDAENV_FULL: path of the full binary */
    const char *ldconfig;             /* CUDAENV_LDCONFIG: "" or "none" skips it */
    const char *update_alternatives;  /* CUDAENV_UPDATE_ALTERNATIVES */
    const char *doctor_python;        /* CUDAENV_DOCTOR_PYTHON: "none" skips the framework check */
    const char *unpack_jobs;          /* CUDAENV_UNPACK_JOBS */
    const char *max_connections;      /* CUDAENV_MAX_CONNECTIONS */
    const char *stall_timeout;        /* CUDAENV_STALL_TIMEOUT (s) */
    const char *retry_delay_ms;       /* CUDAENV_RETRY_DELAY_MS */
    const char *rate_window;          /* CUDAENV_RATE_WINDOW (s) */
    const char *min_rate;             /* CUDAENV_MIN_RATE (bytes/s) */
    const char *deadline_base;        /* CUDAENV_DEADLINE_BASE (s) */
    const char *fetch_ceiling;        /* CUDAENV_FETCH_CEILING (bytes) */
    const char *runfile_timeout;      /* CUDAENV_RUNFILE_TIMEOUT (s) */
    const char *runfile_log_cap;      /* CUDAENV_RUNFILE_LOG_CAP (bytes) */
    const char *verify_no_reexec;     /* CUDAENV_VERIFY_NO_REEXEC (set by verify --deep itself) */
    const char *update_interval;      /* CUDAENV_UPDATE_INTERVAL (s): a remote manifest's copy stays fresh */
    const char *unsigned_ok;          /* CUDAENV_MANIFEST_UNSIGNED: "1" accepts an unsigned remote manifest */
    const char *driver_version;       /* CUDAENV_DRIVER_VERSION: plan for this driver (as --driver) */
    const char *registry_auth;        /* CUDAENV_REGISTRY_AUTH: USER:PASSWORD for OCI registries (oci/registry.h) */
    const char *xz_no_pipe;           /* CUDAENV_XZ_NO_PIPE: decode in the caller's thread */
} ce_settings;

typedef struct ce_ctx {
    /* what every command writes or reads first, ahead of the 4 KiB paths:
     * one page for all of them (issue 13: page faults per exec) */
    ce_settings set;      /* CUDAENV_* settings, read once */
    char platform[32];    /* linux-x86_64 / linux-sbsa (the binary's own; CUDAENV_PLATFORM) */
    bool insecure;        /* --insecure: allow http:// */
    bool offline;         /* --offline: cache only */
    bool unnamed;         /* downloads note no names (fetch.h: a mirror's work cache, never listed) */
    bool force;
    int verbose;          /* -v count */
    bool quiet;
    ce_event_fn event;
    void *event_ud;
    char root[CE_PATH_MAX];      /* CUDAENV_ROOT, default ~/.cudaenv */
    char sysroot[CE_PATH_MAX];   /* CUDAENV_SYSROOT, "" means / */
    char manifest[CE_PATH_MAX];  /* CUDAENV_MANIFEST or --manifest, "" = built-in */
    char mirror[2048];    /* CUDAENV_MIRROR, "" = none */
    char self_dir[CE_PATH_MAX];  /* directory of the running binary: read through ce_self_dir (lazy) */
    char install_from[16];        /* install --from: "" (redist where the release has it), "runfile", "redist" */
    char install_components[1024]; /* install --components "+a,-b", "" = the profile as it is */
    char driver[32];      /* --driver VER or CUDAENV_DRIVER_VERSION: the driver to plan for
                           * (another machine's), "" = this machine's own */
} ce_ctx;

/* Fill ctx from the environment (CUDAENV_ROOT, HOME, ...). */
int ce_ctx_init(ce_ctx *ctx);
/* The same for a ctx that is all zero already and lives until the process
 * ends (static storage: main's): the ~20 KiB are not cleared again, so the
 * pages of what stays unset (sysroot, manifest, mirror, self_dir) are never
 * touched, and ce_settings_now returns its settings, not a copy. */
int ce_ctx_init_zeroed(ce_ctx *ctx);

/* The settings ce_ctx_init read last (the process's environment is one),
 * for the few leaf routines that take no context (the xz decoder, curl
 * handle setup, worker counts); read once on first use if no context was
 * made. */
const ce_settings *ce_settings_now(void);
/* A number setting: value (a ce_settings string) when it is an integer >=
 * min, else dflt. */
long ce_setting_long(const char *value, long dflt, long min);

/* The home directory: $HOME when it is an absolute path, else (unset,
 * empty, relative: HOME=. must not make cudaenv write under the working
 * directory) the account's from the password database, else "/". */
const char *ce_home(void);

/* The directory of the running binary (readlink /proc/self/exe on first
 * use, then kept in ctx->self_dir; "" when unknown). */
const char *ce_self_dir(const ce_ctx *ctx);

/* Report an event (no-op without a callback, or while this thread is muted:
 * status.h). */
void ce_emit(ce_ctx *ctx, ce_event_kind kind, const char *item, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ce_progress(ce_ctx *ctx, const char *item, int64_t done, int64_t total, double rate);

/* $CUDAENV_SYSROOT joined with an absolute system path ("/usr/local/cuda"). */
void ce_sys_path(const ce_ctx *ctx, const char *abs, char *out, size_t outsz);

#endif
