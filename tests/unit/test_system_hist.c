/* The system switch's rollback history and original-state record (issue 11):
 * push skips the current target and the top, drops the oldest beyond
 * CE_SYS_HISTORY, pop walks back; the record round-trips through JSON; an
 * older record (no "history") starts with its one prev_* slot; nested keys
 * never repeat the top-level "target"/"lib"/"name". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "system/system.h"

static ce_sys_record r, back;

static void set_cur(ce_sys_record *x, const char *t)
{
    snprintf(x->target, sizeof x->target, "%s", t);
    snprintf(x->lib, sizeof x->lib, "%s/lib64", t);
}

static void push(ce_sys_record *x, const char *t)
{
    char lib[4200];
    snprintf(lib, sizeof lib, "%s/lib64", t);
    ce_sys_hist_push(x, "n", t, lib);
}

static void test_push_pop(void **state)
{
    (void)state;
    memset(&r, 0, sizeof r);
    /* switch A (from "/orig"), B, A, A: [B, A, /orig] */
    set_cur(&r, "/A"); push(&r, "/orig");
    set_cur(&r, "/B"); push(&r, "/A");
    set_cur(&r, "/A"); push(&r, "/B");
    set_cur(&r, "/A"); push(&r, "/A");          /* the same target: nothing */
    assert_int_equal(r.nhistory, 3);
    push(&r, "/B");                             /* already on top: nothing */
    assert_int_equal(r.nhistory, 3);
    ce_sys_entry e;
    assert_true(ce_sys_hist_pop(&r, &e)); assert_string_equal(e.target, "/B");
    assert_string_equal(e.lib, "/B/lib64");
    assert_true(ce_sys_hist_pop(&r, &e)); assert_string_equal(e.target, "/A");
    assert_true(ce_sys_hist_pop(&r, &e)); assert_string_equal(e.target, "/orig");
    assert_false(ce_sys_hist_pop(&r, &e));
}

static void test_bounded(void **state)
{
    (void)state;
    memset(&r, 0, sizeof r);
    char t[32];
    for (int i = 0; i < CE_SYS_HISTORY + 5; i++) {
        snprintf(t, sizeof t, "/t%d", i);
        set_cur(&r, "/cur");
        push(&r, t);
    }
    assert_int_equal(r.nhistory, CE_SYS_HISTORY);
    assert_string_equal(ce_sys_hist_str(&r, 0, 1), "/t20");
    snprintf(t, sizeof t, "/t%d", 5);
    assert_string_equal(ce_sys_hist_str(&r, CE_SYS_HISTORY - 1, 1), t);   /* t0..t4 dropped */
}

static void test_roundtrip(void **state)
{
    (void)state;
    memset(&r, 0, sizeof r);
    set_cur(&r, "/A");
    push(&r, "");
    r.original.present = true;
    r.original.kind = CE_SYS_ORIG_ALTERNATIVES;
    snprintf(r.original.target, sizeof r.original.target, "/usr/local/cuda-12.4");
    r.original.alt_manual = true;
    snprintf(r.original.alt_list, sizeof r.original.alt_list, "/usr/local/cuda-12.4\n/usr/local/cuda-13.0\n");
    r.original.conf_present = true;
    snprintf(r.original.conf_text, sizeof r.original.conf_text, "# x\n/opt/y\n");
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "target", r.target);
    ce_sys_hist_write(j, &r);
    char *text = cJSON_Print(j);
    /* one "target": line only, whatever the nesting */
    int n = 0;
    for (const char *p = text; (p = strstr(p, "\"target\":")); p++) n++;
    assert_int_equal(n, 1);
    memset(&back, 0, sizeof back);
    ce_sys_hist_read(j, &back);
    assert_true(back.original.present);
    assert_int_equal(back.original.kind, CE_SYS_ORIG_ALTERNATIVES);
    assert_string_equal(back.original.target, "/usr/local/cuda-12.4");
    assert_true(back.original.alt_manual);
    assert_string_equal(back.original.alt_list, r.original.alt_list);
    assert_true(back.original.conf_present);
    assert_string_equal(back.original.conf_text, "# x\n/opt/y\n");
    assert_int_equal(back.nhistory, 1);
    assert_string_equal(ce_sys_hist_str(&back, 0, 1), "");
    free(text);
    cJSON_Delete(j);
    /* absent cudaenv.conf is null, not "" */
    r.original.conf_present = false;
    j = cJSON_CreateObject();
    ce_sys_hist_write(j, &r);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "original"), "cudaenv_conf")));
    memset(&back, 0, sizeof back);
    ce_sys_hist_read(j, &back);
    assert_false(back.original.conf_present);
    cJSON_Delete(j);
}

/* ce_system_record zeroes a record only up to its history (the pool is
 * ~130 KiB): a history read into a pool holding another record's bytes
 * must still read back whole, every string ended where it ends. */
static void test_read_into_used_pool(void **state)
{
    (void)state;
    static const char *const tg[] = { "/opt/a", "/opt/cudaenv/versions/11.8.0", "", "/b" };
    cJSON *j = cJSON_CreateObject(), *h = cJSON_AddArrayToObject(j, "history");
    for (size_t i = 0; i < sizeof tg / sizeof *tg; i++) {
        cJSON *e = cJSON_CreateObject();
        char lib[64];
        snprintf(lib, sizeof lib, "%s%s", tg[i], tg[i][0] ? "/lib64" : "");
        cJSON_AddStringToObject(e, "toolchain", tg[i][0] ? "name" : "");
        cJSON_AddStringToObject(e, "link_target", tg[i]);
        cJSON_AddStringToObject(e, "lib_dir", lib);
        cJSON_AddItemToArray(h, e);
    }
    memset(&back, 0xa5, sizeof back);
    memset(&back, 0, offsetof(ce_sys_record, hoff));
    ce_sys_hist_read(j, &back);
    assert_int_equal(back.nhistory, 4);
    for (int i = 0; i < 4; i++) {
        char lib[64];
        snprintf(lib, sizeof lib, "%s%s", tg[i], tg[i][0] ? "/lib64" : "");
        assert_string_equal(ce_sys_hist_str(&back, i, 0), tg[i][0] ? "name" : "");
        assert_string_equal(ce_sys_hist_str(&back, i, 1), tg[i]);
        assert_string_equal(ce_sys_hist_str(&back, i, 2), lib);
    }
    cJSON_Delete(j);
}

static void test_older_record(void **state)
{
    (void)state;
    memset(&r, 0, sizeof r);
    set_cur(&r, "/B");
    snprintf(r.prev_target, sizeof r.prev_target, "/A");
    snprintf(r.prev_lib, sizeof r.prev_lib, "/A/lib64");
    cJSON *j = cJSON_CreateObject();   /* no "history", no "original" */
    ce_sys_hist_read(j, &r);
    assert_false(r.original.present);
    assert_int_equal(r.nhistory, 1);
    assert_string_equal(ce_sys_hist_str(&r, 0, 1), "/A");
    cJSON_Delete(j);
}

/* The packed history: many pushes and pops on one record with paths of
 * the largest size the fields keep (4095 bytes, longer ones cut) fill the
 * pool over and over; every entry still reads back whole and in order. */
static void test_pool(void **state)
{
    (void)state;
    memset(&r, 0, sizeof r);
    static char t[5000];
    set_cur(&r, "/cur");
    for (int i = 0; i < 200; i++) {
        memset(t, 'a' + i % 26, sizeof t - 1);
        t[0] = '/';
        t[sizeof t - 1] = '\0';
        char num[16];   /* i's digits (0..199) at t[1..5]: every target differs */
        snprintf(num, sizeof num, "%05d", i);
        memcpy(t + 1, num, 5);
        t[6] = 'x';
        ce_sys_hist_push(&r, "name-that-is-long-enough", t, t);
        if (i % 3 == 2) {
            ce_sys_entry e;
            assert_true(ce_sys_hist_pop(&r, &e));
            assert_int_equal(strlen(e.target), 4095);
        }
        assert_true(r.hlen <= sizeof r.hpool);
    }
    assert_int_equal(r.nhistory, CE_SYS_HISTORY);
    for (int i = 0; i < r.nhistory; i++) {
        assert_int_equal(strlen(ce_sys_hist_str(&r, i, 1)), 4095);
        assert_string_equal(ce_sys_hist_str(&r, i, 0), "name-that-is-long-enough");
        assert_string_equal(ce_sys_hist_str(&r, i, 1), ce_sys_hist_str(&r, i, 2));
        if (i) assert_true(strcmp(ce_sys_hist_str(&r, i - 1, 1), ce_sys_hist_str(&r, i, 1)) > 0);   /* newest first */
    }
}

/* The pool is packed before a push that would not fit: never one byte
 * past it, whatever the lengths.  Short entries of every length fill the
 * pool many times, so some push lands within a few bytes of its end. */
static void test_pool_edge(void **state)
{
    (void)state;
    memset(&r, 0, sizeof r);
    set_cur(&r, "/cur");
    static const char xs[] = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
    char t[128];
    for (long i = 0; i < 25000; i++) {
        /* lengths i % 97: push 20158 ends within 3 bytes of the pool's end */
        snprintf(t, sizeof t, "/%ld%.*s", i, (int)(i % 97), xs);
        push(&r, t);
        assert_true(r.hlen <= sizeof r.hpool);
    }
    assert_int_equal(r.nhistory, CE_SYS_HISTORY);
    snprintf(t, sizeof t, "/%ld%.*s", 24999L, (int)(24999L % 97), xs);
    assert_string_equal(ce_sys_hist_str(&r, 0, 1), t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_push_pop),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_read_into_used_pool),
        cmocka_unit_test(test_older_record),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_pool_edge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
