#include "status.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* The message buffer is allocated at a thread's first failure, not held in
 * static TLS: ld.so zeroes static TLS at every exec of the light binary
 * (cli.bats keeps it under 4 KiB), and most runs never fail.  Each thread's
 * buffer is freed when the thread ends (a pthread key's destructor).  When
 * even that allocation fails the code is kept and the message is lost (the
 * CLI then prints the code's name). */
static _Thread_local int tl_code;
static _Thread_local char *tl_msg;      /* CE_STATUS_MSG bytes, NULL until the first message */
static _Thread_local bool tl_muted;

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;

static void make_key(void)
{
    pthread_key_create(&key, free);
}

static char *msg_buf(void)
{
    if (!tl_msg) {
        char *b = calloc(1, CE_STATUS_MSG);
        if (!b) return NULL;
        pthread_once(&key_once, make_key);
        pthread_setspecific(key, b);
        tl_msg = b;
    }
    return tl_msg;
}

/* msg may point into the buffer itself */
static void set(int code, const char *msg)
{
    tl_code = code;
    size_t n = strnlen(msg, CE_STATUS_MSG - 1);
    char *b = n ? msg_buf() : tl_msg;
    if (!b) return;
    memmove(b, msg, n);
    b[n] = '\0';
}

const char *ce_errmsg(void)
{
    return tl_msg ? tl_msg : "";
}

int ce_errcode(void)
{
    return tl_code;
}

int ce_status_vset(int code, const char *fmt, va_list ap)
{
    char buf[CE_STATUS_MSG];   /* formatted aside: an argument may be ce_errmsg() itself */
    vsnprintf(buf, sizeof buf, fmt, ap);
    set(code, buf);
    return code;
}

int ce_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ce_status_vset(code, fmt, ap);
    va_end(ap);
    return code;
}

void ce_status_clear(void)
{
    set(CE_OK, "");
}

void ce_status_take(ce_status *out)
{
    out->code = tl_code;
    snprintf(out->msg, sizeof out->msg, "%s", ce_errmsg());
    ce_status_clear();
}

void ce_status_put(const ce_status *st)
{
    set(st->code, st->msg);
}

void ce_quiet_begin(ce_quiet *q, bool mute_events)
{
    q->saved.code = tl_code;
    const char *m = ce_errmsg();   /* copied by hand: quiet scopes are on every use/env/cd hook's path */
    size_t n = strlen(m);
    if (n >= sizeof q->saved.msg) n = sizeof q->saved.msg - 1;
    memcpy(q->saved.msg, m, n);
    q->saved.msg[n] = '\0';
    q->muted = tl_muted;
    if (mute_events) tl_muted = true;
}

void ce_quiet_end(ce_quiet *q)
{
    set(q->saved.code, q->saved.msg);
    tl_muted = q->muted;
}

void ce_quiet_keep(ce_quiet *q)
{
    tl_muted = q->muted;
}

bool ce_mute(bool on)
{
    bool was = tl_muted;
    tl_muted = on;
    return was;
}

bool ce_muted(void)
{
    return tl_muted;
}
