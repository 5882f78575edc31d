#include "status.h"

#include <stdio.h>
#include <string.h>

#include "error.h"

static _Thread_local ce_status tl_status;
static _Thread_local bool tl_muted;

/* a status copied by its used part only: saving the (usually empty) status
 * around a cleanup costs a few bytes, not 4 KiB */
static void copy_status(ce_status *dst, const ce_status *src)
{
    dst->code = src->code;
    size_t n = strnlen(src->msg, sizeof src->msg - 1);
    memcpy(dst->msg, src->msg, n);
    dst->msg[n] = '\0';
}

const char *ce_errmsg(void)
{
    return tl_status.msg;
}

int ce_errcode(void)
{
    return tl_status.code;
}

int ce_status_vset(int code, const char *fmt, va_list ap)
{
    char buf[CE_STATUS_MSG];   /* formatted aside: an argument may be ce_errmsg() itself */
    vsnprintf(buf, sizeof buf, fmt, ap);
    size_t n = strlen(buf);
    memcpy(tl_status.msg, buf, n + 1);
    tl_status.code = code;
    return code;
}

void ce_status_clear(void)
{
    tl_status.code = CE_OK;
    tl_status.msg[0] = '\0';
}

void ce_status_take(ce_status *out)
{
    copy_status(out, &tl_status);
    ce_status_clear();
}

void ce_status_put(const ce_status *st)
{
    copy_status(&tl_status, st);
}

void ce_quiet_begin(ce_quiet *q, bool mute_events)
{
    copy_status(&q->saved, &tl_status);
    q->muted = tl_muted;
    if (mute_events) tl_muted = true;
}

void ce_quiet_end(ce_quiet *q)
{
    copy_status(&tl_status, &q->saved);
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
