/* The error status (core/status.h): one per thread, quiet scopes for
 * cleanup, the hand-off from a worker to the joining thread, and the
 * internal "download stopped, retry" code that never becomes an exit status. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/ctx.h"
#include "core/error.h"
#include "core/status.h"


/* ---- one status per thread ---- */

typedef struct worker {
    pthread_barrier_t *bar;
    int code;
    const char *what;
    int start_code, quiet_code, got_code, after_take;
    char start[8], quiet[8], got[64];
    ce_status taken;
} worker;

static void *fail_then_read(void *arg)
{
    worker *w = arg;   /* no asserts here: cmocka's longjmp belongs to the main thread */
    w->start_code = ce_errcode();
    snprintf(w->start, sizeof w->start, "%s", ce_errmsg());
    ce_quiet q;                                  /* a quiet failure leaves a clean thread clean */
    ce_quiet_begin(&q, false);
    ce_fail(CE_ERR_IO, "cleanup failed");
    ce_quiet_end(&q);
    w->quiet_code = ce_errcode();
    snprintf(w->quiet, sizeof w->quiet, "%s", ce_errmsg());
    ce_fail(w->code, "%s failed in %s", w->what, "a worker");
    pthread_barrier_wait(w->bar);                /* both have failed before either reads */
    w->got_code = ce_errcode();
    snprintf(w->got, sizeof w->got, "%s", ce_errmsg());
    ce_status_take(&w->taken);                   /* for the joining thread */
    w->after_take = ce_errcode();
    return NULL;
}

static void test_per_thread(void **state)
{
    (void)state;
    ce_status_clear();
    ce_fail(CE_ERR_PERM, "the main thread's own error");
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, 2);
    worker a = { .bar = &bar, .code = CE_ERR_DOWNLOAD, .what = "download" };
    worker b = { .bar = &bar, .code = CE_ERR_INTEGRITY, .what = "unpack" };
    pthread_t ta, tb;
    assert_int_equal(pthread_create(&ta, NULL, fail_then_read, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, fail_then_read, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    pthread_barrier_destroy(&bar);
    /* a new thread starts clean; taking the status clears it */
    assert_int_equal(a.start_code, CE_OK);
    assert_string_equal(a.start, "");
    assert_int_equal(a.quiet_code, CE_OK);
    assert_string_equal(a.quiet, "");
    assert_int_equal(a.after_take, CE_OK);
    assert_int_equal(b.after_take, CE_OK);
    assert_int_equal(a.got_code, CE_ERR_DOWNLOAD);
    assert_string_equal(a.got, "download failed in a worker");
    assert_int_equal(b.got_code, CE_ERR_INTEGRITY);
    assert_string_equal(b.got, "unpack failed in a worker");
    /* the workers did not touch this thread's status */
    assert_int_equal(ce_errcode(), CE_ERR_PERM);
    assert_string_equal(ce_errmsg(), "the main thread's own error");
    /* the hand-off: the joiner takes the worker's failure explicitly */
    ce_status_put(&b.taken);
    assert_int_equal(ce_errcode(), CE_ERR_INTEGRITY);
    assert_string_equal(ce_errmsg(), "unpack failed in a worker");
    ce_status_clear();
    assert_int_equal(ce_errcode(), CE_OK);
    assert_string_equal(ce_errmsg(), "");
}

/* ---- quiet scopes ---- */

static void test_quiet_keeps_first_error(void **state)
{
    (void)state;
    ce_status_clear();
    assert_int_equal(ce_fail(CE_ERR_SPACE, "no space in %s", "/root"), CE_ERR_SPACE);
    ce_quiet q;
    ce_quiet_begin(&q, false);
    assert_string_equal(ce_errmsg(), "no space in /root");   /* the scope starts with the status as it was */
    ce_fail(CE_ERR_IO, "cannot remove /root/staging");
    assert_string_equal(ce_errmsg(), "cannot remove /root/staging"); /* readable inside */
    ce_quiet inner;
    ce_quiet_begin(&inner, false);
    ce_fail(CE_ERR_NOTFOUND, "nested");
    ce_quiet_end(&inner);
    assert_string_equal(ce_errmsg(), "cannot remove /root/staging");
    ce_quiet_end(&q);
    assert_int_equal(ce_errcode(), CE_ERR_SPACE);
    assert_string_equal(ce_errmsg(), "no space in /root");

    /* keep: the failure inside the scope becomes the error to report */
    ce_quiet_begin(&q, false);
    ce_fail(CE_ERR_USAGE, "bad profile");
    ce_quiet_keep(&q);
    assert_int_equal(ce_errcode(), CE_ERR_USAGE);
    assert_string_equal(ce_errmsg(), "bad profile");
    ce_status_clear();
}

/* ce_fail may quote the status it replaces (activate.c's annotate) */
static void test_fail_quotes_itself(void **state)
{
    (void)state;
    ce_fail(CE_ERR_NOTFOUND, "cuda-12.2 is not installed");
    ce_fail(CE_ERR_NOTFOUND, "%s (%s %s)", ce_errmsg(), "named by", "/p/.cuda-version");
    assert_string_equal(ce_errmsg(), "cuda-12.2 is not installed (named by /p/.cuda-version)");
    char big[6000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ce_fail(CE_ERR_IO, "%s", big);            /* truncated, terminated */
    assert_int_equal(strlen(ce_errmsg()), CE_STATUS_MSG - 1);
    ce_status_clear();
}

static int events;
static void count_event(void *ud, const ce_event *ev)
{
    (void)ud;
    (void)ev;
    __atomic_add_fetch(&events, 1, __ATOMIC_SEQ_CST);
}

static void *emit_once(void *arg)
{
    ce_emit(arg, CE_EV_NOTE, NULL, "from a thread that is not muted");
    return NULL;
}

static void test_quiet_mutes_this_thread(void **state)
{
    (void)state;
    ce_ctx c = { .event = count_event };
    events = 0;
    ce_emit(&c, CE_EV_NOTE, NULL, "heard");
    assert_int_equal(events, 1);
    ce_quiet q;
    ce_quiet_begin(&q, true);
    ce_emit(&c, CE_EV_WARN, NULL, "muted");
    ce_progress(&c, "x", 1, 2, 0);
    assert_int_equal(events, 1);
    pthread_t t;   /* the callback stays for the other threads */
    assert_int_equal(pthread_create(&t, NULL, emit_once, &c), 0);
    pthread_join(t, NULL);
    assert_int_equal(events, 2);
    ce_quiet_end(&q);
    ce_emit(&c, CE_EV_NOTE, NULL, "heard again");
    assert_int_equal(events, 3);
    assert_false(ce_mute(true));
    assert_true(ce_muted());
    assert_true(ce_mute(false));
    assert_false(ce_muted());
}

/* ---- "download stopped, retry" is internal ---- */

static void test_retry_never_an_exit_status(void **state)
{
    (void)state;
    for (int e = CE_ERR_OTHER; e >= CE_ERR_LOCKED; e--)
        assert_int_not_equal(e, CE_ERR_RETRY);
    assert_int_equal(ce_err_public(CE_ERR_RETRY), CE_ERR_DOWNLOAD);
    assert_int_equal(ce_exit_code(CE_ERR_RETRY), ce_exit_code(CE_ERR_DOWNLOAD));
    assert_int_equal(ce_exit_code(CE_ERR_RETRY), 4);
    assert_string_equal(ce_err_name(CE_ERR_RETRY), ce_err_name(CE_ERR_DOWNLOAD));
    for (int e = CE_OK; e >= CE_ERR_LOCKED; e--) {
        assert_int_equal(ce_err_public(e), e);      /* the public codes map to themselves */
        int x = ce_exit_code(e);
        assert_true(x >= 0 && x <= 8);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_per_thread),
        cmocka_unit_test(test_quiet_keeps_first_error),
        cmocka_unit_test(test_fail_quotes_itself),
        cmocka_unit_test(test_quiet_mutes_this_thread),
        cmocka_unit_test(test_retry_never_an_exit_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
