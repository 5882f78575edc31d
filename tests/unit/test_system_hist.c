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

#include "core/json.h"
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

/* rec's "original" and "history" read from the record text t (as
 * parse_record does: where the values are, found by the scanner) */
static int rd(const char *t, ce_sys_record *x)
{
    size_t k, o[2] = { 0, 0 }, h[2] = { 0, 0 };
    if (ce_json_top_member(t, strlen(t), "original", &k, &o[0], &o[1]) != 1) o[0] = o[1] = 0;
    if (ce_json_top_member(t, strlen(t), "history", &k, &h[0], &h[1]) != 1) h[0] = h[1] = 0;
    return ce_sys_hist_read(t, o, h, x);
}

/* {"target": r's target, then what ce_sys_hist_write adds} */
static char *written(const ce_sys_record *x)
{
    ce_jtext j = { 0 };
    ce_jtext_raw(&j, "{\n\t\"target\":\t");
    ce_jtext_str(&j, x->target);
    ce_jtext_raw(&j, ",\n");
    ce_sys_hist_write(&j, x);
    ce_jtext_raw(&j, "}");
    return ce_jtext_take(&j);
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
    char *text = written(&r);
    /* one "target": line only, whatever the nesting */
    int n = 0;
    for (const char *p = text; (p = strstr(p, "\"target\":")); p++) n++;
    assert_int_equal(n, 1);
    /* what an independent parser reads in it (cJSON, which wrote it before) */
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, "original");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(o, "cudaenv_conf")->valuestring, "# x\n/opt/y\n");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "alternatives")), 2);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "alt_manual")));
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "history")), 1);
    cJSON_Delete(j);
    memset(&back, 0, sizeof back);
    assert_int_equal(rd(text, &back), 0);
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
    /* absent cudaenv.conf is null, not "" */
    r.original.conf_present = false;
    text = written(&r);
    j = cJSON_Parse(text);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "original"), "cudaenv_conf")));
    cJSON_Delete(j);
    memset(&back, 0, sizeof back);
    assert_int_equal(rd(text, &back), 0);
    assert_false(back.original.conf_present);
    free(text);
}

/* Every byte a path or a conf file can hold goes through the writer and
 * back: quotes, backslashes, control characters, UTF-8; what cJSON reads
 * in the text is the same string. */
static void test_escapes(void **state)
{
    (void)state;
    static const char odd[] = "/opt/\"q\"\\b\\/x\ty\nz\r\b\f\x01\x1f/\xc3\xa9t\xc3\xa9/\xf0\x9f\x98\x80";
    memset(&r, 0, sizeof r);
    set_cur(&r, "/cur");
    push(&r, odd);
    r.original.present = true;
    r.original.conf_present = true;
    snprintf(r.original.conf_text, sizeof r.original.conf_text, "%s", odd);
    char *text = written(&r);
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "original"), "cudaenv_conf")->valuestring, odd);
    cJSON_Delete(j);
    memset(&back, 0, sizeof back);
    assert_int_equal(rd(text, &back), 0);
    assert_string_equal(back.original.conf_text, odd);
    assert_string_equal(ce_sys_hist_str(&back, 0, 1), odd);
    free(text);
    /* \u escapes another writer may use: BMP, a surrogate pair, '/' */
    const char *u = "{\"history\": [{\"link_target\": \"\\u00e9\\ud83d\\ude00\\/\\u0041\"}]}";
    memset(&back, 0, sizeof back);
    assert_int_equal(rd(u, &back), 0);
    assert_string_equal(ce_sys_hist_str(&back, 0, 1), "\xc3\xa9\xf0\x9f\x98\x80/A");
    /* refused: a lone low surrogate, a bad escape, a raw newline, \u0000, a cut string */
    static const char *const bad[] = {
        "{\"history\": [{\"link_target\": \"\\ude00\"}]}", "{\"history\": [{\"link_target\": \"\\x41\"}]}",
        "{\"history\": [{\"link_target\": \"a\nb\"}]}", "{\"history\": [{\"link_target\": \"\\u0000\"}]}",
        "{\"history\": [{\"link_target\": \"\\ud83d\"}]}", "{\"history\": [{\"link_target\": \"abc",
        "{\"history\": [{\"link_target\" \"x\"}]}", "{\"original\": {\"link_target\": \"\\q\"}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&back, 0, sizeof back);
        size_t k, h[2] = { 0, 0 }, o[2] = { 0, 0 };
        int fh = ce_json_top_member(bad[i], strlen(bad[i]), "history", &k, &h[0], &h[1]);
        int fo = ce_json_top_member(bad[i], strlen(bad[i]), "original", &k, &o[0], &o[1]);
        /* a cut text is refused by the scanner already (parse_record) */
        if (fh == 1 || fo == 1) assert_int_equal(ce_sys_hist_read(bad[i], o, h, &back), -1);
        else assert_int_equal(fh, -1);
    }
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
    char *text = cJSON_PrintUnformatted(j);   /* another layout than ours: read the same */
    memset(&back, 0xa5, sizeof back);
    memset(&back, 0, offsetof(ce_sys_record, hoff));
    assert_int_equal(rd(text, &back), 0);
    assert_int_equal(back.nhistory, 4);
    for (int i = 0; i < 4; i++) {
        char lib[64];
        snprintf(lib, sizeof lib, "%s%s", tg[i], tg[i][0] ? "/lib64" : "");
        assert_string_equal(ce_sys_hist_str(&back, i, 0), tg[i][0] ? "name" : "");
        assert_string_equal(ce_sys_hist_str(&back, i, 1), tg[i]);
        assert_string_equal(ce_sys_hist_str(&back, i, 2), lib);
    }
    free(text);
    cJSON_Delete(j);
}

static void test_older_record(void **state)
{
    (void)state;
    memset(&r, 0, sizeof r);
    set_cur(&r, "/B");
    snprintf(r.prev_target, sizeof r.prev_target, "/A");
    snprintf(r.prev_lib, sizeof r.prev_lib, "/A/lib64");
    assert_int_equal(rd("{\"target\": \"/B\"}", &r), 0);   /* no "history", no "original" */
    assert_false(r.original.present);
    assert_int_equal(r.nhistory, 1);
    assert_string_equal(ce_sys_hist_str(&r, 0, 1), "/A");
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
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_read_into_used_pool),
        cmocka_unit_test(test_older_record),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_pool_edge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
