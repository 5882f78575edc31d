/* ce_ring (core/ring.h): every slot published is consumed once, in order,
 * through rings of 2 and 7 slots (a lost, repeated or reordered slot breaks
 * the running sum); close drains what was published before it; stop
 * returns a producer waiting for room and a consumer waiting for a slot at
 * once; end frees a ring whose thread never started.  Error-checking
 * mutexes (mutex_check.h) see no unlock by a thread that does not hold. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <unistd.h>

#include "core/ring.h"

#include "mutex_check.h"

#define ITEMS 20000

typedef struct consumer {
    ce_ring *r;
    unsigned long long sum, count;
    int order_errors;
} consumer;

static void *consume(void *arg)
{
    consumer *c = arg;
    for (int i; (i = ce_ring_next(c->r)) >= 0; ce_ring_done(c->r)) {
        unsigned v;
        memcpy(&v, ce_ring_slot(c->r, i), sizeof v);
        c->order_errors += v != c->count;
        c->sum += v;
        c->count++;
    }
    return NULL;
}

static void produce_consume(unsigned slots)
{
    ce_ring *r = ce_ring_new(sizeof(unsigned), slots);
    assert_non_null(r);
    consumer c = { .r = r };
    assert_int_equal(ce_ring_start(r, consume, &c), 0);
    for (unsigned v = 0; v < ITEMS; v++) {
        int i = ce_ring_take(r);
        assert_true(i >= 0 && i < (int)slots);
        memcpy(ce_ring_slot(r, i), &v, sizeof v);
        ce_ring_publish(r);
    }
    ce_ring_end(r, false);   /* closed: the consumer drains all of them first */
    assert_int_equal(c.count, ITEMS);
    assert_int_equal(c.order_errors, 0);
    assert_true(c.sum == (unsigned long long)ITEMS * (ITEMS - 1) / 2);
}

static void test_in_order_once(void **state)
{
    (void)state;
    produce_consume(2);
    produce_consume(7);
    assert_int_equal(__atomic_load_n(&bad_unlocks, __ATOMIC_RELAXED), 0);
}

static void *stop_later(void *arg)
{
    usleep(100000);
    ce_ring_stop(arg);
    return NULL;
}

/* a producer waiting for room (the consumer holds every slot) and a
 * consumer waiting for a slot (none published) both return -1 at stop */
static void test_stop_wakes_both_sides(void **state)
{
    (void)state;
    ce_ring *r = ce_ring_new(8, 2);
    assert_non_null(r);
    for (int k = 0; k < 2; k++) {
        assert_true(ce_ring_take(r) >= 0);
        ce_ring_publish(r);
    }
    assert_true(ce_ring_start(r, stop_later, r) == 0);
    assert_int_equal(ce_ring_take(r), -1);   /* full: waits, then stopped */
    assert_int_equal(ce_ring_next(r), -1);   /* stopped: nothing more, published or not */
    ce_ring_end(r, true);

    r = ce_ring_new(8, 3);
    assert_non_null(r);
    assert_true(ce_ring_start(r, stop_later, r) == 0);
    assert_int_equal(ce_ring_next(r), -1);   /* empty: waits, then stopped */
    ce_ring_end(r, true);
}

/* close: what was published before it still comes out, then -1 */
static void test_close_drains(void **state)
{
    (void)state;
    ce_ring *r = ce_ring_new(1, 4);
    assert_non_null(r);
    for (int k = 0; k < 3; k++) {
        int i = ce_ring_take(r);
        assert_true(i >= 0);
        *ce_ring_slot(r, i) = (unsigned char)('a' + k);
        ce_ring_publish(r);
    }
    ce_ring_close(r);
    for (int k = 0; k < 3; k++) {
        int i = ce_ring_next(r);
        assert_true(i >= 0);
        assert_int_equal(*ce_ring_slot(r, i), 'a' + k);
        ce_ring_done(r);
    }
    assert_int_equal(ce_ring_next(r), -1);
    ce_ring_end(r, false);   /* no thread was started: end frees it all the same */
    assert_null(ce_ring_new(0, 4));
    assert_null(ce_ring_new(8, 1));
    assert_null(ce_ring_new((size_t)-1 / 2, 4));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order_once),
        cmocka_unit_test(test_stop_wakes_both_sides),
        cmocka_unit_test(test_close_drains),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
