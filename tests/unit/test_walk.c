/* core/walk: the one tree walker (adopt, cache, usage, the system switch's
 * trust walk, the hash index, the unpacked tree's symlink check): pre and
 * post order, symlinks reported and never followed, a directory it cannot
 * read reported by path, a tree deeper than its descriptors and PATH_MAX. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/ctx.h"
#include "core/error.h"
#include "core/rmtree.h"
#include "core/walk.h"

static char dir[64];

static int mk_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ce-walk-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int rm_dir(void **state)
{
    (void)state;
    return ce_rm_tree(dir) == CE_OK ? 0 : -1;
}

static void sh(const char *fmt)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s && %s", dir, fmt);
    assert_int_equal(system(cmd), 0);
}

/* every report as "KIND depth path-below-dir" */
typedef struct seen { char line[64][256]; int n; size_t skip; } seen;

static int record(const ce_walk_entry *e, void *arg)
{
    seen *s = arg;
    static const char *const kinds[] = { "ENTRY", "DIR", "POST", "ERR" };
    if (s->n == 64) return CE_ERR_OTHER;
    const char *type = !e->st ? "-" : S_ISLNK(e->st->st_mode) ? "l" : S_ISDIR(e->st->st_mode) ? "d" : "f";
    snprintf(s->line[s->n++], sizeof s->line[0], "%s %d %s %s", kinds[e->kind], e->depth, type,
             strlen(e->path) > s->skip ? e->path + s->skip : ".");
    /* name is the path's last component; dirfd holds it */
    struct stat st;
    if (e->depth > 0 && e->st) {
        assert_string_equal(e->name, strrchr(e->path, '/') + 1);
        assert_int_equal(fstatat(e->dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW), 0);
        assert_true(st.st_ino == e->st->st_ino);
    }
    return 0;
}

static int find(const seen *s, const char *line)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->line[i], line)) return i;
    fail_msg("not reported: %s", line);
    return -1;
}

/* pre-order before every entry below it, post-order after; symlinks (to a
 * directory, dangling) are entries, their targets never entered */
static void test_walk_order_no_follow(void **state)
{
    (void)state;
    sh("mkdir -p t/a/b out/deep && echo x > t/a/b/f && echo y > t/g && echo z > out/deep/secret "
       "&& ln -s ../../out t/a/tolink && ln -s nowhere t/dangling");
    char top[128];
    snprintf(top, sizeof top, "%s/t", dir);
    seen s = { .skip = strlen(top) + 1 };
    assert_int_equal(ce_walk(top, record, &s), 0);
    assert_int_equal(s.n, 10);   /* t, a, b: pre and post; f, g, two links */
    int t0 = find(&s, "DIR 0 d ."), t1 = find(&s, "POST 0 d .");
    int a0 = find(&s, "DIR 1 d a"), a1 = find(&s, "POST 1 d a");
    int b0 = find(&s, "DIR 2 d a/b"), b1 = find(&s, "POST 2 d a/b");
    int f = find(&s, "ENTRY 3 f a/b/f"), g = find(&s, "ENTRY 1 f g");
    int l = find(&s, "ENTRY 2 l a/tolink");
    find(&s, "ENTRY 1 l dangling");
    assert_int_equal(t0, 0);
    assert_int_equal(t1, s.n - 1);
    assert_true(a0 < b0 && b0 < f && f < b1 && b1 < a1 && a0 < l && l < a1);
    assert_true(g > t0 && g < t1 && (g < a0 || g > a1));
    for (int i = 0; i < s.n; i++) assert_null(strstr(s.line[i], "secret"));

    /* a top that is a symlink is reported, not entered */
    char link[128];
    snprintf(link, sizeof link, "%s/t/a/tolink", dir);
    seen s2 = { .skip = strlen(link) + 1 };
    assert_int_equal(ce_walk(link, record, &s2), 0);
    assert_int_equal(s2.n, 1);
    assert_string_equal(s2.line[0], "ENTRY 0 l .");
}

static int stop_at_file(const ce_walk_entry *e, void *arg)
{
    (*(int *)arg)++;
    return e->kind == CE_WALK_ENTRY ? CE_ERR_INTEGRITY : 0;
}

/* the callback's error stops the walk and is its return; a missing top is
 * the walk's own failure, with errno */
static void test_walk_stop_and_missing(void **state)
{
    (void)state;
    sh("mkdir -p t/d && echo 1 > t/d/x && echo 2 > t/d/y");
    char top[128];
    snprintf(top, sizeof top, "%s/t", dir);
    int calls = 0;
    assert_int_equal(ce_walk(top, stop_at_file, &calls), CE_ERR_INTEGRITY);
    assert_int_equal(calls, 3);   /* t, d, the first file */
    snprintf(top, sizeof top, "%s/missing", dir);
    errno = 0;
    assert_int_equal(ce_walk(top, stop_at_file, &calls), CE_WALK_FAIL);
    assert_int_equal(errno, ENOENT);
}

typedef struct unread { int errs; char path[256]; int err; bool below; } unread;

static int note_err(const ce_walk_entry *e, void *arg)
{
    unread *u = arg;
    if (e->kind == CE_WALK_ERR) {
        u->errs++;
        snprintf(u->path, sizeof u->path, "%s", e->path);
        u->err = e->err;
    }
    if (strstr(e->path, "closed/")) u->below = true;
    return 0;
}

/* a directory it cannot read: one CE_WALK_ERR naming it with the errno, the
 * walk goes on past it.  Root reads every directory: the walk runs as
 * nobody then, in a child. */
static void test_walk_unreadable(void **state)
{
    (void)state;
    sh("mkdir -p t/closed/in t/open && echo x > t/closed/in/f && echo y > t/open/f && chmod 0755 . "
       "&& chmod 0000 t/closed");
    if (geteuid() == 0) sh("chown -R 65534:65534 t");
    char top[128], want[160];
    snprintf(top, sizeof top, "%s/t", dir);
    snprintf(want, sizeof want, "%s/closed", top);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(10);
        unread u = { 0 };
        int rc = ce_walk(top, note_err, &u);
        _exit(rc != 0 ? 11 : u.errs != 1 ? 12 : strcmp(u.path, want) ? 13 : u.err != EACCES ? 14 : u.below ? 15 : 0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    sh("chmod 0755 t/closed");
}

typedef struct deep { int pre, post, files, maxdepth; size_t maxlen; } deep;

static int count(const ce_walk_entry *e, void *arg)
{
    deep *d = arg;
    if (e->kind == CE_WALK_DIR) d->pre++;
    if (e->kind == CE_WALK_DIR_POST) d->post++;
    if (e->kind == CE_WALK_ENTRY) d->files++;
    if (e->kind == CE_WALK_ERR) return CE_ERR_IO;
    if (e->depth > d->maxdepth) d->maxdepth = e->depth;
    if (strlen(e->path) > d->maxlen) d->maxlen = strlen(e->path);
    return 0;
}

static int open_fds(void)
{
    int n = 0;
    for (int fd = 0; fd < 1024; fd++) n += fcntl(fd, F_GETFD) != -1;
    return n;
}

/* 200 levels, a file at each, with 48 descriptors allowed: the walk holds
 * at most CE_WALK_FDS, finds its way back up through "..", reports paths
 * longer than PATH_MAX, and leaves no descriptor open */
static void test_walk_deep(void **state)
{
    (void)state;
    static const char name[] = "a-directory-name-of-thirty-two-b";
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    for (int i = 0; i < 200; i++) {
        assert_int_equal(mkdirat(fd, name, 0755), 0);
        int f = openat(fd, "file", O_WRONLY | O_CREAT, 0644);
        assert_true(f >= 0);
        close(f);
        int next = openat(fd, name, O_RDONLY | O_DIRECTORY);
        assert_true(next >= 0);
        close(fd);
        fd = next;
    }
    close(fd);
    struct rlimit was, low;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
    low = was;
    low.rlim_cur = 48;
    int before = open_fds();
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    deep d = { 0 };
    int rc = ce_walk(dir, count, &d);
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &was), 0);
    assert_int_equal(rc, 0);
    assert_int_equal(d.pre, 201);
    assert_int_equal(d.post, 201);
    assert_int_equal(d.files, 200);
    assert_int_equal(d.maxdepth, 200);   /* the deepest directory (empty) and the last file */
    assert_true(d.maxlen > 4096);
    assert_int_equal(open_fds(), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_walk_order_no_follow, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_walk_stop_and_missing, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_walk_unreadable, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_walk_deep, mk_dir, rm_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
