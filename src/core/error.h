/* One error vocabulary for the whole core.  Core functions return 0 or a
 * negative ce_err; the message lives in the calling thread's status
 * (ce_fail, status.h), and the CLI turns the code into an exit status
 * (ce_exit_code). */
#ifndef CE_ERROR_H
#define CE_ERROR_H

typedef enum ce_err {
    CE_OK = 0,
    CE_ERR_OTHER = -1,     /* exit 1 */
    CE_ERR_USAGE = -2,     /* exit 2 */
    CE_ERR_NOTFOUND = -3,  /* exit 3: unknown spec, not installed */
    CE_ERR_DOWNLOAD = -4,  /* exit 4: network, HTTP error after retries */
    CE_ERR_INTEGRITY = -5, /* exit 5: size/sha256, unsafe archive, bad manifest */
    CE_ERR_PERM = -6,      /* exit 6: needs root, unsafe path */
    CE_ERR_CHECK = -7,     /* exit 7: verify/doctor found a failure */
    CE_ERR_NOGPU = -8,     /* exit 8: no usable GPU/driver */
    CE_ERR_NOMEM = -9,     /* exit 1 */
    CE_ERR_IO = -10,       /* exit 1: filesystem error */
    CE_ERR_SPACE = -11,    /* exit 1: not enough free space */
    CE_ERR_LOCKED = -12,   /* exit 1: lock held (non-blocking callers) */
    /* Internal: never an exit status.  A follow-mode unpack whose download
     * stopped before the archive was complete: unpack the verified file
     * again (the fetch reports its own failure).  Mapped to CE_ERR_DOWNLOAD
     * should one ever escape (ce_err_public). */
    CE_ERR_RETRY = -13,
} ce_err;

/* The code a user may see for err: internal codes (CE_ERR_RETRY) become the
 * public one they stand for; every other code is itself. */
int ce_err_public(int err);

/* Exit status documented in CLI.md for a core return code. */
int ce_exit_code(int err);
/* Short name of the code ("integrity", "not found", ...). */
const char *ce_err_name(int err);

#endif
