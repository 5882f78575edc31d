/* The one process runner (src/core/proc.c): argv, env, cwd, the capture
 * cap (head + tail), the exit status and signal, the deadline killing the
 * whole group, a cancel flag set by another thread doing the same, a
 * missing program named in the error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/proc.h"

static int sh(const char *script, const ce_proc *base, ce_proc_result *r)
{
    char *argv[] = { "sh", "-c", (char *)script, NULL };
    ce_proc p = *base;
    p.path = "/bin/sh";
    p.argv = argv;
    return ce_proc_run(NULL, &p, r);
}

static void test_env_cwd(void **state)
{
    (void)state;
    char dir[] = "/tmp/cudaenv-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("CE_PROC_KEEP", "kept", 1);
    setenv("CE_PROC_OVER", "old", 1);
    const char *add[] = { "CE_PROC_OVER=new", "CE_PROC_ADDED=added", NULL };
    ce_proc p = { .cwd = dir, .env_add = add };
    ce_proc_result r;
    assert_int_equal(sh("pwd; echo $CE_PROC_KEEP $CE_PROC_OVER $CE_PROC_ADDED; read x || echo stdin-empty; "
                        "echo err >&2", &p, &r), CE_OK);
    char want[200];
    snprintf(want, sizeof want, "%s\nkept new added\nstdin-empty\nerr\n", dir);
    assert_string_equal(r.out, want);
    assert_int_equal(r.code, 0);
    ce_proc_result_free(&r);
    /* a whole environment replaces ours */
    char *env[] = { "ONLY=this", NULL };
    ce_proc q = { .env = env };
    assert_int_equal(sh("echo ${CE_PROC_KEEP:-unset} $ONLY", &q, &r), CE_OK);
    assert_string_equal(r.out, "unset this\n");
    ce_proc_result_free(&r);
    /* keep_stderr: only stdout is captured */
    ce_proc k = { .keep_stderr = true };
    assert_int_equal(sh("echo out; echo 'test_proc: expected stderr line' >&2", &k, &r), CE_OK);
    assert_string_equal(r.out, "out\n");
    ce_proc_result_free(&r);
    rmdir(dir);
}

static void test_status_signal(void **state)
{
    (void)state;
    ce_proc p = { 0 };
    ce_proc_result r;
    assert_int_equal(sh("exit 7", &p, &r), CE_OK);
    assert_int_equal(r.code, 7);
    assert_int_equal(r.sig, 0);
    assert_false(r.timed_out);
    ce_proc_result_free(&r);
    assert_int_equal(sh("kill -TERM $$", &p, &r), CE_OK);
    assert_int_equal(r.sig, SIGTERM);
    assert_int_equal(r.code, -SIGTERM);
    ce_proc_result_free(&r);
    /* supervised: the same answers through the supervisor */
    ce_proc s = { .supervise = true };
    assert_int_equal(sh("exit 3", &s, &r), CE_OK);
    assert_int_equal(r.code, 3);
    assert_int_equal(r.sig, 0);
    ce_proc_result_free(&r);
    assert_int_equal(sh("kill -TERM $$", &s, &r), CE_OK);
    assert_int_equal(r.sig, SIGTERM);
    ce_proc_result_free(&r);
}

/* a pid written by the child is gone (not even a zombie of someone else's) within 20 s */
static bool gone(const char *pidfile)
{
    FILE *f = fopen(pidfile, "r");
    long pid = 0;
    if (!f) return false;
    bool ok = fscanf(f, "%ld", &pid) == 1 && pid > 1;
    fclose(f);
    if (!ok) return false;
    for (int i = 0; i < 200; i++) {
        char st[64], line[512] = "";
        snprintf(st, sizeof st, "/proc/%ld/stat", pid);
        FILE *s = fopen(st, "r");
        if (!s) return true;
        bool zombie = fgets(line, sizeof line, s) && strstr(line, ") Z ");
        fclose(s);
        if (zombie) return true; /* dead, waiting for init to reap it */
        usleep(100000);
    }
    return false;
}

static void timeout_kills_group(bool supervise)
{
    char dir[] = "/tmp/cudaenv-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pidfile[200], script[400];
    snprintf(pidfile, sizeof pidfile, "%s/pid", dir);
    snprintf(script, sizeof script, "sleep 300 & echo $! > %s; echo started; sleep 300", pidfile);
    ce_proc p = { .timeout_s = 1, .group = true, .supervise = supervise };
    ce_proc_result r;
    double t0 = ce_mono_s();
    assert_int_equal(sh(script, &p, &r), CE_OK);
    assert_true(ce_mono_s() - t0 < 60); /* generous: the machine is loaded */
    assert_true(r.timed_out);
    assert_int_equal(r.sig, SIGKILL);
    assert_string_equal(r.out, "started\n");
    assert_true(gone(pidfile)); /* the grandchild went with the group */
    ce_proc_result_free(&r);
    unlink(pidfile);
    rmdir(dir);
}

static void test_timeout_kills_group(void **state)
{
    (void)state;
    timeout_kills_group(false);
    timeout_kills_group(true);
}

static void *cancel_later(void *arg)
{
    usleep(300000);
    __atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* another thread sets the flag (the install failed): the program and its
 * group are stopped as at a deadline, within the wait's 0.2 s; no flag and
 * a flag never set change nothing */
static void test_cancel_kills_group(void **state)
{
    (void)state;
    char dir[] = "/tmp/cudaenv-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pidfile[200], script[400];
    snprintf(pidfile, sizeof pidfile, "%s/pid", dir);
    snprintf(script, sizeof script, "sleep 300 & echo $! > %s; echo started; sleep 300", pidfile);
    for (int sup = 0; sup < 2; sup++) {
        int cancel = 0;
        ce_proc p = { .group = true, .supervise = sup, .cancel = &cancel, .timeout_s = 120 };
        ce_proc_result r;
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, cancel_later, &cancel), 0);
        double t0 = ce_mono_s();
        assert_int_equal(sh(script, &p, &r), CE_OK);
        pthread_join(t, NULL);
        assert_true(ce_mono_s() - t0 < 60);   /* not the 300 s, nor the deadline */
        assert_true(r.cancelled);
        assert_false(r.timed_out);
        assert_int_equal(r.sig, SIGKILL);
        assert_string_equal(r.out, "started\n");
        assert_true(gone(pidfile));
        ce_proc_result_free(&r);
        unlink(pidfile);
    }
    int never = 0;
    ce_proc p = { .cancel = &never };
    ce_proc_result r;
    assert_int_equal(sh("echo done", &p, &r), CE_OK);
    assert_false(r.cancelled);
    assert_int_equal(r.code, 0);
    assert_string_equal(r.out, "done\n");
    ce_proc_result_free(&r);
    rmdir(dir);
}

/* what a program leaves running in its group is killed when it ends */
static void test_group_left_over(void **state)
{
    (void)state;
    char dir[] = "/tmp/cudaenv-proc-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pidfile[200], script[400];
    snprintf(pidfile, sizeof pidfile, "%s/pid", dir);
    snprintf(script, sizeof script, "sleep 300 >/dev/null 2>&1 & echo $! > %s; cut -d' ' -f5 /proc/$$/stat",
             pidfile);
    ce_proc p = { .group = true };
    ce_proc_result r;
    assert_int_equal(sh(script, &p, &r), CE_OK);
    assert_int_equal(r.code, 0);
    assert_int_not_equal(atol(r.out), (long)getpgrp()); /* its own group */
    assert_true(gone(pidfile));
    ce_proc_result_free(&r);
    unlink(pidfile);
    rmdir(dir);
}

#define SPAM "i=0; while [ $i -lt 3000 ]; do echo \"line $i\"; i=$((i+1)); done"

static void test_capture_head_tail(void **state)
{
    (void)state;
    ce_proc p = { .cap_head = 100, .cap_tail = 100 };
    ce_proc_result r;
    assert_int_equal(sh(SPAM, &p, &r), CE_OK);
    assert_int_equal(r.code, 0);
    assert_true(r.out_total > 20000);
    assert_true(r.out_len < 400);
    assert_int_equal(strncmp(r.out, "line 0\nline 1\n", 14), 0);
    assert_non_null(strstr(r.out, "bytes of output left out here; the first 100 and the last 100 are kept]\n"));
    const char *end = "line 2998\nline 2999\n";
    assert_string_equal(r.out + r.out_len - strlen(end), end);
    char expect[64];
    snprintf(expect, sizeof expect, "[cudaenv: %llu bytes", r.out_total - 200);
    assert_non_null(strstr(r.out, expect));
    /* the same bytes into a file: the head as it comes, then the line and the tail */
    char path[] = "/tmp/cudaenv-proc-log-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    ce_proc q = { .out = CE_PROC_CAPTURE_FD, .fd = fd, .cap_head = 100, .cap_tail = 100 };
    ce_proc_result f;
    assert_int_equal(sh(SPAM, &q, &f), CE_OK);
    assert_null(f.out);
    close(fd);
    char buf[1024];
    FILE *in = fopen(path, "r");
    size_t n = fread(buf, 1, sizeof buf - 1, in);
    fclose(in);
    buf[n] = '\0';
    assert_string_equal(buf, r.out);
    unlink(path);
    ce_proc_result_free(&r);
    /* output under the cap is kept whole, with no line */
    ce_proc s = { .cap_head = 100, .cap_tail = 100 };
    assert_int_equal(sh("echo short", &s, &r), CE_OK);
    assert_string_equal(r.out, "short\n");
    ce_proc_result_free(&r);
}

static void test_missing_program(void **state)
{
    (void)state;
    char *argv[] = { "/nonexistent/cudaenv-no-such-tool", NULL };
    ce_proc p = { .path = argv[0], .argv = argv };
    ce_proc_result r;
    assert_int_equal(ce_proc_run(NULL, &p, &r), CE_ERR_OTHER);
    assert_non_null(strstr(r.why, "/nonexistent/cudaenv-no-such-tool"));
    assert_non_null(strstr(r.why, "No such file"));
    char out[256];
    assert_int_equal(ce_proc_output(NULL, argv, NULL, 5, out, sizeof out, &r), CE_ERR_OTHER);
    assert_non_null(strstr(out, "/nonexistent/cudaenv-no-such-tool"));
    /* a working directory that is not there is named too */
    char *sh_argv[] = { "/bin/sh", "-c", "true", NULL };
    ce_proc q = { .path = "/bin/sh", .argv = sh_argv, .cwd = "/nonexistent/cudaenv-dir" };
    assert_int_equal(ce_proc_run(NULL, &q, &r), CE_ERR_OTHER);
    assert_non_null(strstr(r.why, "/nonexistent/cudaenv-dir"));
}

static void test_start_wait_fd(void **state)
{
    (void)state;
    char path[] = "/tmp/cudaenv-proc-fd-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    char *argv[] = { "sh", "-c", "echo to-file; echo err-too >&2; exit 4", NULL };
    ce_proc p = { .path = "/bin/sh", .argv = argv, .out = CE_PROC_FD, .fd = fd, .timeout_s = 60, .group = true };
    ce_proc_child c;
    assert_int_equal(ce_proc_start(NULL, &p, &c), CE_OK);
    close(fd);
    ce_proc_result r;
    assert_int_equal(ce_proc_wait(NULL, &c, &r), CE_OK);
    assert_int_equal(r.code, 4);
    char buf[100] = "";
    FILE *in = fopen(path, "r");
    size_t n = fread(buf, 1, sizeof buf - 1, in);
    fclose(in);
    buf[n] = '\0';
    assert_string_equal(buf, "to-file\nerr-too\n");
    unlink(path);
    /* abandon: a long one stopped and reaped at once */
    char *slow[] = { "sh", "-c", "sleep 300", NULL };
    ce_proc q = { .path = "/bin/sh", .argv = slow, .out = CE_PROC_NULL, .group = true };
    assert_int_equal(ce_proc_start(NULL, &q, &c), CE_OK);
    double t0 = ce_mono_s();
    ce_proc_abandon(&c);
    assert_true(ce_mono_s() - t0 < 30);
    assert_true(c.pid <= 0);
}

static void test_which_run_line(void **state)
{
    (void)state;
    char where[4096], out[64];
    assert_true(ce_proc_which("sh", where, sizeof where));
    assert_true(where[0] == '/');
    assert_false(ce_proc_which("cudaenv-no-such-tool-on-path", where, sizeof where));
    assert_string_equal(where, "");
    char *argv[] = { "sh", "-c", "echo first; echo second", NULL };
    assert_true(ce_run_line("sh", argv, out, sizeof out, where, sizeof where));
    assert_string_equal(out, "first");
    char *bad[] = { "sh", "-c", "echo said; exit 1", NULL };
    assert_false(ce_run_line("sh", bad, out, sizeof out, NULL, 0));
}

/* A relative PATH entry names a different program in every directory: it
 * is never searched (jupyter's python, verify's gcc and nvcc, adopt). */
static void test_which_skips_relative_path(void **state)
{
    (void)state;
    char dir[] = "/tmp/cudaenv-which.XXXXXX", cwd[4096], where[4096];
    assert_non_null(mkdtemp(dir));
    assert_non_null(getcwd(cwd, sizeof cwd));
    char tool[4200];
    snprintf(tool, sizeof tool, "%s/bin", dir);
    assert_int_equal(mkdir(tool, 0755), 0);
    snprintf(tool, sizeof tool, "%s/bin/cudaenv-planted-tool", dir);
    FILE *f = fopen(tool, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\n", f);
    fclose(f);
    assert_int_equal(chmod(tool, 0755), 0);
    const char *old = getenv("PATH");
    char *saved = strdup(old ? old : "");
    assert_int_equal(chdir(dir), 0);
    setenv("PATH", "bin:/usr/bin:/bin", 1);
    assert_false(ce_proc_which("cudaenv-planted-tool", where, sizeof where));
    char abs[4200];
    snprintf(abs, sizeof abs, "%s/bin:/usr/bin", dir);
    setenv("PATH", abs, 1);
    assert_true(ce_proc_which("cudaenv-planted-tool", where, sizeof where));
    assert_string_equal(where, tool);
    setenv("PATH", saved, 1);
    free(saved);
    assert_int_equal(chdir(cwd), 0);
    unlink(tool);
    snprintf(tool, sizeof tool, "%s/bin", dir);
    rmdir(tool);
    rmdir(dir);
}

/* The cores counted are the ones the affinity mask allows (taskset). */
static void test_cpu_count_follows_affinity(void **state)
{
    (void)state;
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    assert_int_equal(ce_cpu_count(), CPU_COUNT(&all));
    int first = 0;
    while (!CPU_ISSET(first, &all)) first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    assert_int_equal(ce_cpu_count(), 1);
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_env_cwd),
        cmocka_unit_test(test_status_signal),
        cmocka_unit_test(test_timeout_kills_group),
        cmocka_unit_test(test_cancel_kills_group),
        cmocka_unit_test(test_group_left_over),
        cmocka_unit_test(test_capture_head_tail),
        cmocka_unit_test(test_missing_program),
        cmocka_unit_test(test_start_wait_fd),
        cmocka_unit_test(test_which_run_line),
        cmocka_unit_test(test_which_skips_relative_path),
        cmocka_unit_test(test_cpu_count_follows_affinity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
