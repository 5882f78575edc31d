/* Decode slots (slots.h): never more holders than slots; when one frees,
 * the largest waiting archive gets it; a dead holder's slot comes back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <time.h>

#include "archive/slots.h"

static ce_slots slots;
static int order[4], norder;
static pthread_mutex_t order_mu = PTHREAD_MUTEX_INITIALIZER;

typedef struct job { int id; long long size; } job;

static void sleep_ms(long ms)
{
    struct timespec ts = { 0, ms * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

static void *waiter(void *arg)
{
    job *j = arg;
    ce_slots_take(&slots, j->id, j->size);
    pthread_mutex_lock(&order_mu);
    order[norder++] = j->id;
    pthread_mutex_unlock(&order_mu);
    sleep_ms(20);
    ce_slots_give(&slots, j->id);
    return NULL;
}

static long long wanted(int id)
{
    pthread_mutex_lock(&slots.mu);   /* the slots' own lock (a race under make check-tsan otherwise) */
    long long w = slots.want[id];
    pthread_mutex_unlock(&slots.mu);
    return w;
}

static void wait_waiting(int id)
{
    for (int i = 0; i < 2000 && !wanted(id); i++) sleep_ms(1);
    assert_true(wanted(id) > 0);
}

static void test_largest_waiting_first(void **state)
{
    (void)state;
    assert_int_equal(ce_slots_init(&slots, 1), 0);
    norder = 0;
    ce_slots_take(&slots, 0, 5);            /* the only slot */
    job small = { 1, 10 }, big = { 2, 100 };
    pthread_t a, b;
    assert_int_equal(pthread_create(&a, NULL, waiter, &small), 0);
    wait_waiting(1);                        /* the small one waits first ... */
    assert_int_equal(pthread_create(&b, NULL, waiter, &big), 0);
    wait_waiting(2);
    sleep_ms(10);
    assert_int_equal(norder, 0);            /* nobody while the slot is held */
    ce_slots_give(&slots, 0);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert_int_equal(norder, 2);
    assert_int_equal(order[0], 2);          /* ... the big one decodes first */
    assert_int_equal(order[1], 1);
    assert_int_equal(slots.free, 1);
    ce_slots_destroy(&slots);
}

static void test_nice(void **state)
{
    (void)state;
    long long big = 1600ll << 20;                 /* libcublas */
    assert_int_equal(ce_slots_nice(big, big), 0);
    assert_int_equal(ce_slots_nice(big / 4, big), 0);     /* a quarter: still first */
    assert_int_equal(ce_slots_nice(big / 4 - 1, big), CE_SLOTS_NICE_MID);
    assert_int_equal(ce_slots_nice(big / 16, big), CE_SLOTS_NICE_MID);
    assert_int_equal(ce_slots_nice(big / 16 - 1, big), CE_SLOTS_NICE_LOW);
    assert_int_equal(ce_slots_nice(1, big), CE_SLOTS_NICE_LOW);
    assert_int_equal(ce_slots_nice(-1, big), 0);          /* no size in the manifest */
    assert_int_equal(ce_slots_nice(big, -1), 0);
    assert_true(CE_SLOTS_NICE_LOW > CE_SLOTS_NICE_MID && CE_SLOTS_NICE_MID > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_largest_waiting_first),
        cmocka_unit_test(test_nice),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
