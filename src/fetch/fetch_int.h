/* Internal to src/fetch/fetch*.c: one download's state (dl) and the
 * steps of its state machine that the transfer loop (fetch.c) drives and
 * the .part side (fetch_part.c) implements.  Not for other modules. */
#ifndef CE_FETCH_INT_H
#define CE_FETCH_INT_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>

#include "digest.h"
#include "fetch.h"

#define WBUF (1u * 1024 * 1024)  /* bytes gathered before one write + hash */

typedef enum { DL_PENDING, DL_ACTIVE, DL_DONE } dl_state;

/* How long a download may take (fetch.h: bounded downloads). */
typedef struct limits {
    double stall_s;         /* no byte for this long: drop the connection, retry */
    double window_s;        /* the average rate is checked over windows this long */
    double min_rate;        /* bytes/s a window must average, else the download fails */
    double deadline_base;   /* each artifact gets this many seconds ... */
    double deadline_rate;   /* ... plus its size (or the ceiling) at this many bytes/s */
    long long ceiling;      /* bytes accepted when the manifest gives no size */
} limits;

typedef struct dl {
    ce_fetch_item *it;
    dl_state state;
    char part[4200];
    int fd;
    ce_sha256 *h;          /* digest of bytes [0, on_disk) */
    unsigned char *buf;    /* bytes [on_disk, have) not yet written */
    size_t blen;
    long long on_disk, have;
    long long kicked;      /* bytes [0, kicked) of the .part sent to the disk (dl_flush) */
    long long start;       /* offset asked for by the current attempt */
    long long run_start;   /* have when this run began (for the rate) */
    long long attempt_have;
    int failures;          /* failed attempts in a row without progress */
    double next_try, t0;
    bool body_started, local_file;
    bool tried;            /* an attempt began in this run (dl_start) */
    const limits *lim;
    double last_data;      /* when the last body byte arrived */
    double win_start;      /* the current rate window began ... */
    long long win_have;    /* ... with this many bytes */
    double deadline;       /* 0 until the first attempt starts */
    long long cr_start, cr_total; /* Content-Range of the last response */
    CURL *easy;
    char errbuf[CURL_ERROR_SIZE];
    int fatal;             /* ce_err recorded in msg, 0 if none */
    char msg[4096];
    /* Held (recursive) while the buffer, the .part or fd change: on_body,
     * dl_flush, dl_restart, dl_finish, the deletes, the close.  Ctrl-C
     * takes it for good (ce_fetch_stop_all) once it has written the buffer. */
    pthread_mutex_t mu;
    struct dl *reg_prev, *reg_next; /* the open .part files (dl_register) */
    bool registered;
} dl;

/* fetch.c: record a fatal error for an item (d->fatal, d->msg); returns code */
int dl_fail(dl *d, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* fetch_part.c: write and hash the buffered bytes; drop everything received
 * (the server started over); the first body byte of an attempt (status,
 * Content-Range, Content-Length checked); verify and rename the complete
 * .part (strict=false: a mismatch is returned, not recorded); cache hit,
 * offline miss, or open the .part and hash what it holds; start an attempt
 * (Range from the bytes held) in the multi handle. */
int dl_flush(dl *d);
/* fetch_part.c: the lock (dl_init), the list of open .part files that
 * ce_fetch_stop_all walks: a .part joins it once opened and hashed
 * (dl_prepare), leaves it before its fd closes (dl_release); dl_close
 * closes the fd under the lock. */
void dl_init(dl *d);
void dl_unregister(dl *d);
void dl_close(dl *d);
int dl_restart(dl *d);
int dl_begin_body(dl *d);
int dl_finish(ce_ctx *ctx, dl *d, bool strict);
int dl_prepare(ce_ctx *ctx, dl *d);
int dl_start(dl *d, CURLM *m);

#endif
