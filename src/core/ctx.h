/* The context every core call takes: configuration read once from the
 * environment and the command line, the last error message, and the event
 * callback through which the core reports progress (it never prints). */
#ifndef CE_CTX_H
#define CE_CTX_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

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

typedef struct ce_ctx {
    char root[4096];      /* CUDAENV_ROOT, default ~/.cudaenv */
    char sysroot[4096];   /* CUDAENV_SYSROOT, "" means / */
    char manifest[4096];  /* CUDAENV_MANIFEST or --manifest, "" = built-in */
    char mirror[2048];    /* CUDAENV_MIRROR, "" = none */
    char self_dir[4096];  /* directory of the running binary: read through ce_self_dir (lazy) */
    char platform[32];    /* linux-x86_64 / linux-sbsa (the binary's own; CUDAENV_PLATFORM) */
    bool insecure;        /* --insecure: allow http:// */
    bool offline;         /* --offline: cache only */
    bool force;
    int verbose;          /* -v count */
    bool quiet;
    ce_event_fn event;
    void *event_ud;
    int err_code;
    char err[4096];       /* message of the last failure */
    char install_from[16];        /* install --from: "" (redist where the release has it), "runfile", "redist" */
    char install_components[1024]; /* install --components "+a,-b", "" = the profile as it is */
} ce_ctx;

/* Fill ctx from the environment (CUDAENV_ROOT, HOME, ...). */
int ce_ctx_init(ce_ctx *ctx);

/* The directory of the running binary (readlink /proc/self/exe on first
 * use, then kept in ctx->self_dir; "" when unknown). */
const char *ce_self_dir(const ce_ctx *ctx);

/* Record a failure and return code: `return ce_fail(ctx, CE_ERR_IO, "...")`.
 * Messages say what failed, the path/URL/value, and what to do. */
int ce_fail(ce_ctx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Report an event (no-op without a callback). */
void ce_emit(ce_ctx *ctx, ce_event_kind kind, const char *item, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void ce_progress(ce_ctx *ctx, const char *item, int64_t done, int64_t total, double rate);

/* Path of the built-in manifest (next to the binary, then the install prefix). */
int ce_builtin_manifest(ce_ctx *ctx, char *out, size_t outsz);
/* The manifest cudaenv uses: --manifest/CUDAENV_MANIFEST, else built-in. */
int ce_manifest_location(ce_ctx *ctx, char *out, size_t outsz);
/* $CUDAENV_SYSROOT joined with an absolute system path ("/usr/local/cuda"). */
void ce_sys_path(const ce_ctx *ctx, const char *abs, char *out, size_t outsz);

#endif
