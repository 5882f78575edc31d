/* The error of the last failure: one status per thread, outside the context.
 *
 * Core functions return 0 or a negative ce_err (error.h); ce_fail (ctx.h)
 * records the message in the calling thread's status and the CLI reads it
 * back (ce_errmsg) when it reports the failure.  Because the error is not in
 * the ce_ctx, the context is read-only configuration that threads share by
 * pointer: a worker thread's failures land in its own slot, and the thread
 * that joins it takes them over explicitly (ce_status_take in the worker,
 * ce_status_put in the joiner).
 *
 * Code that runs while an error is being reported (cleanup, optional lookups
 * whose failure means "not there") runs in a quiet scope: ce_quiet_begin
 * saves the status, ce_quiet_end puts it back, so the error the user sees is
 * the first one.  A quiet scope can also mute this thread's events (the
 * context's callback stays for the other threads). */
#ifndef CE_STATUS_H
#define CE_STATUS_H

#include <stdarg.h>
#include <stdbool.h>

#define CE_STATUS_MSG 4096

/* A status as a value: what a worker hands over, what a quiet scope saves.
 * (The thread's own status is allocated at its first failure, not held in
 * static TLS, which ld.so would zero at every exec of the light binary.) */
typedef struct ce_status {
    int code;                 /* CE_OK or the ce_err of the last failure */
    char msg[CE_STATUS_MSG];  /* its message, "" if none */
} ce_status;

/* The calling thread's last failure: message ("" if none) and code. */
const char *ce_errmsg(void);
int ce_errcode(void);

/* Record a failure in the calling thread's status (ce_errmsg, ce_errcode)
 * and return code: `return ce_fail(CE_ERR_IO, "...")`.  Messages say what
 * failed, the path/URL/value, and what to do.  No context: the error is the
 * calling thread's, so functions that only fail keep their context const. */
int ce_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same with a va_list.  The arguments may point into the status (ce_errmsg()). */
int ce_status_vset(int code, const char *fmt, va_list ap);
/* Forget the calling thread's failure. */
void ce_status_clear(void);

/* Hand a failure from one thread to another: the worker takes its status
 * (which clears it) before it ends, the joiner puts it as its own. */
void ce_status_take(ce_status *out);
void ce_status_put(const ce_status *st);

/* A quiet scope: the failures inside it do not replace the error being
 * reported.  Inside, ce_errmsg() says what failed last (the scope starts
 * with the status as it was); ce_quiet_end puts the saved status back,
 * ce_quiet_keep ends the scope keeping the failure recorded inside it (for
 * a caller that decides afterwards that it is the error to report).  With
 * mute_events, ce_emit/ce_progress of this thread say nothing meanwhile.
 * Scopes nest; end each on every path out. */
typedef struct ce_quiet {
    ce_status saved;
    bool muted;               /* the mute state before the scope */
} ce_quiet;

void ce_quiet_begin(ce_quiet *q, bool mute_events);
void ce_quiet_end(ce_quiet *q);
void ce_quiet_keep(ce_quiet *q);

/* Mute this thread's events (ce_emit, ce_progress), returning the previous
 * state; ce_muted() is what ce_emit checks. */
bool ce_mute(bool on);
bool ce_muted(void);

#endif
