/* core/trust.c and the bounded spec reader: the policies of issue 9. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/dirscan.h"
#include "core/file.h"
#include "core/rmtree.h"
#include "core/priv.h"
#include "core/proc.h"
#include "core/pyrun.h"
#include "core/trust.h"
#include "core/version.h"
#include "store/activate.h"
#include "store/store.h"

static char dir[64];

static int mk_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/ce-trust-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int rm_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_escape(void **state)
{
    (void)state;
    char out[128];
    ce_escape_into(out, sizeof out, "a\033]52;c;x\007b");
    assert_string_equal(out, "a\\x1b]52;c;x\\x07b");
    ce_escape_into(out, sizeof out, "tab\tnl\nok");
    assert_string_equal(out, "tab\tnl\nok");
    ce_escape_into(out, sizeof out, "del\x7f csi\xc2\x9b" "31m \xc3\xa9");   /* U+009B escaped, é kept */
    assert_string_equal(out, "del\\x7f csi\\xc2\\x9b31m \xc3\xa9");
    ce_escape_into(out, 6, "\033\033\033");   /* truncated at a whole escape */
    assert_string_equal(out, "\\x1b");
    /* plain text fills the buffer up to its terminator, never past it */
    memset(out, '#', sizeof out);
    ce_escape_into(out, 4, "abcdef");
    assert_string_equal(out, "abc");
    assert_int_equal(out[4], '#');
    char *d = ce_escape_dup("\r");
    assert_string_equal(d, "\\x0d");
    free(d);
}

static void test_stat_reason(void **state)
{
    (void)state;
    struct stat st;
    memset(&st, 0, sizeof st);
    st.st_mode = S_IFDIR | 0755;
    assert_null(ce_trust_stat_reason(&st, false));
    st.st_mode = S_IFDIR | 0775;
    assert_string_equal(ce_trust_stat_reason(&st, false), "writable by group or others");
    st.st_mode = S_IFDIR | 01777;
    assert_null(ce_trust_stat_reason(&st, true));
    assert_non_null(ce_trust_stat_reason(&st, false));
    st.st_mode = S_IFREG | 0644;
    st.st_uid = 1000;
    assert_string_equal(ce_trust_stat_reason(&st, false), "owned by uid 1000, not root");
    st.st_uid = 0;
    st.st_mode = S_IFLNK | 0777;
    assert_string_equal(ce_trust_stat_reason(&st, false), "a symlink");
}

static void test_root_absolute(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    snprintf(ctx.root, sizeof ctx.root, "~/.cudaenv");
    assert_int_equal(ce_trust_root(&ctx), CE_ERR_USAGE);
    assert_non_null(strstr(ce_errmsg(), "a quoted ~ is not expanded"));
    snprintf(ctx.root, sizeof ctx.root, "rel");
    assert_int_equal(ce_trust_root(&ctx), CE_ERR_USAGE);
}

static void test_store_open_no_symlinks(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    snprintf(ctx.root, sizeof ctx.root, "%s", dir);
    char p[256], victim[256];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(p, sizeof p, "%s/.lock", dir);
    assert_int_equal(symlink(victim, p), 0);
    assert_true(ce_store_open(&ctx, ".lock", O_RDWR | O_CREAT, 0644) < 0);
    assert_int_equal(access(victim, F_OK), -1);
    /* a symlinked directory on the way is refused too */
    snprintf(p, sizeof p, "%s/logs", dir);
    assert_int_equal(symlink("/tmp", p), 0);
    assert_true(ce_store_open(&ctx, "logs/x.log", O_WRONLY | O_CREAT, 0644) < 0);
    assert_true(ce_store_open(&ctx, "../x", O_RDONLY, 0) < 0);
    int fd = ce_store_open(&ctx, "plain", O_RDWR | O_CREAT, 0644);
    if (geteuid() == 0 || fd >= 0) {
        assert_true(fd >= 0);
        close(fd);
    }
    /* a new file gets the mode asked for (umask aside), and O_EXCL creates it once */
    mode_t um = umask(022);
    fd = ce_store_open(&ctx, "fresh", O_WRONLY | O_CREAT | O_EXCL, 0640);
    umask(um);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    close(fd);
    assert_true(ce_store_open(&ctx, "fresh", O_WRONLY | O_CREAT | O_EXCL, 0640) < 0);
}

static void write_file(const char *name, const char *data, size_t n)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    fwrite(data, 1, n, f);
    fclose(f);
}

static void test_spec_file_bounded(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char p[256], spec[128];
    write_file("ok", "# pin\n\n  11.8  \n", 16);
    snprintf(p, sizeof p, "%s/ok", dir);
    assert_int_equal(ce_spec_file_read(p, spec, sizeof spec), CE_OK);
    assert_string_equal(spec, "11.8");
    /* a secret is not a spec and is never echoed */
    write_file("secret", "https://u:TOKEN@host\n", 21);
    snprintf(p, sizeof p, "%s/secret", dir);
    assert_int_equal(ce_spec_file_read(p, spec, sizeof spec), CE_ERR_NOTFOUND);
    assert_non_null(strstr(ce_errmsg(), "no such toolchain or spec (content not shown)"));
    assert_null(strstr(ce_errmsg(), "TOKEN"));
    /* a first line longer than the 256 bytes read */
    char big[1000];
    memset(big, '1', sizeof big);
    write_file("big", big, sizeof big);
    snprintf(p, sizeof p, "%s/big", dir);
    assert_int_equal(ce_spec_file_read(p, spec, sizeof spec), CE_ERR_NOTFOUND);
    /* "11.7", blanks to byte 256, then more: not the spec "11.7" (issue 24) */
    memset(big, ' ', sizeof big);
    memcpy(big, "11.7", 4);
    memcpy(big + 300, "junk\n", 5);
    write_file("long", big, 305);
    snprintf(p, sizeof p, "%s/long", dir);
    assert_int_equal(ce_spec_file_read(p, spec, sizeof spec), CE_ERR_NOTFOUND);
    /* the same line ending within the bytes read is the spec */
    big[200] = '\n';
    write_file("long", big, 305);
    assert_int_equal(ce_spec_file_read(p, spec, sizeof spec), CE_OK);
    assert_string_equal(spec, "11.7");
    /* procfs: made up on reading, may block (/proc/kmsg) */
    assert_int_equal(ce_spec_file_read("/proc/self/comm", spec, sizeof spec), CE_ERR_IO);
    assert_non_null(strstr(ce_errmsg(), "kernel interface"));
    /* a FIFO is refused without blocking */
    snprintf(p, sizeof p, "%s/fifo", dir);
    assert_int_equal(mkfifo(p, 0644), 0);
    assert_int_equal(ce_spec_file_read(p, spec, sizeof spec), CE_ERR_IO);
    assert_non_null(strstr(ce_errmsg(), "not a regular file"));
}

static void test_rm_tree_no_follow(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char cmd[512], p[256];
    /* a tree with a read-only directory and symlinks out to a victim */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && mkdir -p victim t/a/ro t/b && echo keep > victim/f && echo x > t/a/ro/f && chmod 555 t/a/ro "
             "&& ln -s ../../victim t/b/dirlink && ln -s ../victim/f t/filelink", dir);
    assert_int_equal(system(cmd), 0);
    snprintf(p, sizeof p, "%s/t", dir);
    assert_int_equal(ce_rm_tree(p), CE_OK);
    assert_int_equal(access(p, F_OK), -1);
    snprintf(p, sizeof p, "%s/victim/f", dir);
    assert_int_equal(access(p, F_OK), 0);
}

/* core/dirscan: every entry, across many getdents64 calls (its buffer holds
 * ~60 of these names), with the type the file system reports. */
static void test_dirscan_all(void **state)
{
    (void)state;
    char p[256];
    int files = 0;
    for (int i = 0; i < 300; i++) {
        snprintf(p, sizeof p, "%s/entry-with-a-longish-name-%03d", dir, i);
        if (i % 3 == 0) assert_int_equal(mkdir(p, 0755), 0);
        else { write_file(p + strlen(dir) + 1, "x", 1); files++; }
    }
    ce_dirscan d;
    assert_int_equal(ce_dirscan_open(&d, AT_FDCWD, dir), 0);
    const char *name;
    unsigned char type;
    int n = 0, dots = 0, dirs = 0, regs = 0;
    while ((name = ce_dirscan_next(&d, &type))) {
        if (!strcmp(name, ".") || !strcmp(name, "..")) { dots++; continue; }
        n++;
        dirs += type == DT_DIR;
        regs += type == DT_REG;
    }
    ce_dirscan_close(&d);
    assert_int_equal(dots, 2);
    assert_int_equal(n, 300);
    if (dirs + regs) {   /* a file system that reports types reports them right */
        assert_int_equal(dirs, 100);
        assert_int_equal(regs, files);
    }
    snprintf(p, sizeof p, "%s/missing", dir);
    assert_int_equal(ce_dirscan_open(&d, AT_FDCWD, p), -1);
}

/* ce_store_list: sorted by CUDA then cuDNN (oldest first) through its index
 * sort, over more entries than its on-stack index (64) and in the file
 * system's order; a link to a toolchain directory counts, a file or a
 * dangling link does not; each prefix is the store path. */
static void test_store_list_sorted(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    snprintf(ctx.root, sizeof ctx.root, "%s", dir);
    char p[512], real[256];
    snprintf(p, sizeof p, "%s/versions", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    int made = 0;
    for (int i = 0; i < 90; i++) {
        int minor = (i * 37) % 30, cudnn = (i * 11) % 3;
        if (cudnn) snprintf(p, sizeof p, "%s/versions/1%d.%d.%d+cudnn8.%d.0", dir, minor % 3, minor, i % 3, cudnn);
        else snprintf(p, sizeof p, "%s/versions/1%d.%d.%d", dir, minor % 3, minor, i % 3);
        if (mkdir(p, 0755) == 0) made++;
    }
    snprintf(real, sizeof real, "%s/elsewhere", dir);
    assert_int_equal(mkdir(real, 0755), 0);
    snprintf(p, sizeof p, "%s/versions/9.0.0", dir);
    assert_int_equal(symlink(real, p), 0);
    snprintf(p, sizeof p, "%s/versions/9.1.0", dir);
    assert_int_equal(symlink("/nonexistent", p), 0);
    write_file("versions/9.2.0", "x", 1);
    ce_toolchain *v;
    size_t n;
    assert_int_equal(ce_store_list(&ctx, &v, &n), CE_OK);
    assert_int_equal(n, (size_t)made + 1);
    assert_string_equal(v[0].name, "9.0.0");
    for (size_t i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/versions/%s", dir, v[i].name);
        assert_string_equal(v[i].prefix, p);
        if (!i) continue;
        int c = ce_version_cmp(v[i - 1].cuda, v[i].cuda);
        assert_true(c <= 0);
        if (c == 0 && v[i - 1].cudnn[0] && v[i].cudnn[0]) assert_true(ce_version_cmp(v[i - 1].cudnn, v[i].cudnn) <= 0);
        if (c == 0) assert_false(v[i - 1].cudnn[0] && !v[i].cudnn[0]);   /* no cuDNN first */
    }
    free(v);
}

/* As root, a plain store path is checked in place (one lstat per component)
 * and stays as given; one reached through a symlink or with "." in it is
 * replaced by its resolved path, as before. */
static void test_trust_root_paths(void **state)
{
    (void)state;
    if (geteuid() != 0) skip();
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char store[128], link[512], real[4096];
    snprintf(store, sizeof store, "%s/store", dir);
    assert_int_equal(mkdir(store, 0755), 0);
    assert_non_null(realpath(store, real));   /* the test directory's own resolved path */
    snprintf(ctx.root, sizeof ctx.root, "%s", real);
    assert_int_equal(ce_trust_root(&ctx), CE_OK);
    assert_string_equal(ctx.root, real);
    snprintf(link, sizeof link, "%s/link", dir);
    assert_int_equal(symlink(store, link), 0);
    snprintf(ctx.root, sizeof ctx.root, "%s", link);
    assert_int_equal(ce_trust_root(&ctx), CE_OK);
    assert_string_equal(ctx.root, real);
    snprintf(ctx.root, sizeof ctx.root, "%s/./store", dir);
    assert_int_equal(ce_trust_root(&ctx), CE_OK);
    assert_string_equal(ctx.root, real);
    /* a store writable by others is refused either way, with the fix */
    assert_int_equal(chmod(store, 0777), 0);
    snprintf(ctx.root, sizeof ctx.root, "%s", real);
    assert_int_equal(ce_trust_root(&ctx), CE_ERR_PERM);
    assert_non_null(strstr(ce_errmsg(), "writable by group or others"));
    assert_non_null(strstr(ce_errmsg(), "chmod -R go-w"));
    assert_int_equal(chmod(store, 0755), 0);
    /* an entry inside it too */
    snprintf(link, sizeof link, "%s/versions", store);
    assert_int_equal(mkdir(link, 0777), 0);
    assert_int_equal(chmod(link, 0777), 0);
    assert_int_equal(ce_trust_root(&ctx), CE_ERR_PERM);
    assert_non_null(strstr(ce_errmsg(), "/versions is writable by group or others"));
    assert_non_null(strstr(ce_errmsg(), "Use a root-owned store"));
}

/* core/priv.h: as root, a program (or a path) whose resolved path has a
 * directory a user owns or others may write is refused, and proc.c does
 * not start it; openat beneath a directory never follows a link; a
 * sticky TMPDIR is fine, a group-writable one is not. */
static void test_priv_program(void **state)
{
    (void)state;
    if (geteuid() != 0) skip();
    char d[128], prog[160], link[160], why[1024];
    snprintf(d, sizeof d, "%s/bin", dir);
    assert_int_equal(mkdir(d, 0755), 0);
    snprintf(prog, sizeof prog, "%s/prog", d);
    FILE *f = fopen(prog, "w");
    assert_non_null(f);
    fputs("#!/bin/sh\nexit 0\n", f);
    fclose(f);
    assert_int_equal(chmod(prog, 0755), 0);
    assert_int_equal(ce_priv_program(prog, why, sizeof why), 0);
    assert_true(ce_priv_path_ok(prog));
    /* a link to it is judged by what it resolves to */
    snprintf(link, sizeof link, "%s/link", dir);
    assert_int_equal(symlink(prog, link), 0);
    assert_int_equal(ce_priv_program(link, why, sizeof why), 0);
    /* a user's directory on the way */
    assert_int_equal(chown(d, 65534, 65534), 0);
    assert_int_equal(ce_priv_program(link, why, sizeof why), -1);
    assert_non_null(strstr(why, "owned by uid 65534"));
    assert_non_null(strstr(why, d));
    assert_false(ce_priv_path_ok(prog));
    char *argv[] = { prog, NULL };
    ce_proc p = { .path = prog, .argv = argv, .out = CE_PROC_NULL };
    ce_proc_result r;
    assert_int_equal(ce_proc_run(NULL, &p, &r), CE_ERR_PERM);
    assert_non_null(strstr(r.why, "unsafe for cudaenv run as root"));
    /* a group-writable one (root's) */
    assert_int_equal(chown(d, 0, 0), 0);
    assert_int_equal(chmod(prog, 0775), 0);
    assert_int_equal(ce_priv_program(prog, why, sizeof why), -1);
    assert_non_null(strstr(why, "writable by group or others"));
    /* a path not there yet: its nearest existing parent */
    snprintf(link, sizeof link, "%s/not/yet", d);
    assert_true(ce_priv_path_ok(link));
    /* openat beneath: no link followed, no way out */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    assert_true(ce_priv_openat(dfd, "link", O_RDONLY, 0) < 0);
    assert_true(ce_priv_openat(dfd, "../etc/passwd", O_RDONLY, 0) < 0);
    assert_true(ce_priv_openat(dfd, "/etc/passwd", O_RDONLY, 0) < 0);
    int fd = ce_priv_openat(dfd, "bin/prog", O_RDONLY, 0);
    assert_true(fd >= 0);
    close(fd);
    /* nor a relative link that stays beneath: as the last component, as a
     * directory on the way, and inside a subdirectory */
    char rel[200];
    snprintf(rel, sizeof rel, "%s/rel", dir);
    assert_int_equal(symlink("bin/prog", rel), 0);
    snprintf(rel, sizeof rel, "%s/reldir", dir);
    assert_int_equal(symlink("bin", rel), 0);
    snprintf(rel, sizeof rel, "%s/bin/rel", dir);
    assert_int_equal(symlink("prog", rel), 0);
    errno = 0;
    assert_true(ce_priv_openat(dfd, "rel", O_RDONLY, 0) < 0);
    assert_int_equal(errno, ELOOP);
    assert_true(ce_priv_openat(dfd, "reldir/prog", O_RDONLY, 0) < 0);
    assert_true(ce_priv_openat(dfd, "bin/rel", O_RDONLY, 0) < 0);
    assert_true(ce_priv_openat(dfd, "reldir", O_RDONLY | O_DIRECTORY, 0) < 0);
    /* a tree handle: a user's directory refused, root's held by fd */
    ce_priv_tree t;
    assert_int_equal(ce_priv_tree_open(&t, dir, why, sizeof why), 0);
    assert_true(t.fd >= 0);
    ce_priv_tree_close(&t);
    assert_int_equal(chown(d, 65534, 65534), 0);
    assert_int_equal(ce_priv_tree_open(&t, d, why, sizeof why), -1);
    assert_non_null(strstr(why, "owned by uid 65534"));
    close(dfd);
    /* TMPDIR: a sticky root directory is fine, a user's is not */
    setenv("TMPDIR", d, 1);
    assert_string_equal(ce_priv_tmpdir(), "/tmp");
    setenv("TMPDIR", "/tmp", 1);
    assert_string_equal(ce_priv_tmpdir(), "/tmp");
    /* a sticky one of root's is honoured; a sticky one a user owns is not,
     * nor a sticky one of root's under a user's directory */
    char sticky[200];
    snprintf(sticky, sizeof sticky, "%s/rtmp", dir);
    assert_int_equal(mkdir(sticky, 0700), 0);
    assert_int_equal(chmod(sticky, 01777), 0);
    setenv("TMPDIR", sticky, 1);
    assert_string_equal(ce_priv_tmpdir(), sticky);
    snprintf(sticky, sizeof sticky, "%s/utmp", dir);
    assert_int_equal(mkdir(sticky, 0700), 0);
    assert_int_equal(chmod(sticky, 01777), 0);
    assert_int_equal(chown(sticky, 65534, 65534), 0);
    setenv("TMPDIR", sticky, 1);
    assert_string_equal(ce_priv_tmpdir(), "/tmp");
    snprintf(sticky, sizeof sticky, "%s/tmp", d);   /* d: the user's (65534) */
    assert_int_equal(mkdir(sticky, 0700), 0);
    assert_int_equal(chmod(sticky, 01777), 0);
    setenv("TMPDIR", sticky, 1);
    assert_string_equal(ce_priv_tmpdir(), "/tmp");
    unsetenv("TMPDIR");
}

/* core/pyrun.h: -I, the script as a file in a private 0700 directory that
 * is removed afterwards; as root a PYTHONPATH entry a user owns is left out */
/* ce_priv_file_open: the file and its directory's chain, checked on the fd. */
static void test_priv_file_open(void **state)
{
    (void)state;
    if (geteuid() != 0) skip();
    char u[128], f[160], link[160], real[4096], why[1024];
    snprintf(f, sizeof f, "%s/k.pem", dir);
    FILE *o = fopen(f, "w");
    assert_non_null(o);
    fputs("key\n", o);
    fclose(o);
    int fd = ce_priv_file_open(f, false, real, sizeof real, why, sizeof why);
    assert_true(fd >= 0);
    close(fd);
    assert_string_equal(real, f);
    /* a symlink at the end: refused unless followed; followed, judged by its target */
    snprintf(link, sizeof link, "%s/link.pem", dir);
    assert_int_equal(symlink(f, link), 0);
    assert_int_equal(ce_priv_file_open(link, false, real, sizeof real, why, sizeof why), -1);
    assert_int_equal(errno, ELOOP);
    assert_non_null(strstr(why, "is a symlink"));
    fd = ce_priv_file_open(link, true, real, sizeof real, why, sizeof why);
    assert_true(fd >= 0);
    close(fd);
    assert_string_equal(real, f);
    /* a user's file, a writable one, one in a user's directory */
    assert_int_equal(chown(f, 65534, 65534), 0);
    assert_int_equal(ce_priv_file_open(link, true, real, sizeof real, why, sizeof why), -1);
    assert_int_equal(errno, EPERM);
    assert_non_null(strstr(why, "owned by uid 65534, not root"));
    assert_int_equal(chown(f, 0, 0), 0);
    assert_int_equal(chmod(f, 0666), 0);
    assert_int_equal(ce_priv_file_open(f, false, real, sizeof real, why, sizeof why), -1);
    assert_non_null(strstr(why, "writable by group or others"));
    assert_int_equal(chmod(f, 0644), 0);
    snprintf(u, sizeof u, "%s/u", dir);
    assert_int_equal(mkdir(u, 0755), 0);
    snprintf(f, sizeof f, "%s/u/k.pem", dir);
    o = fopen(f, "w");
    assert_non_null(o);
    fclose(o);
    assert_int_equal(chown(u, 65534, 65534), 0);
    assert_int_equal(ce_priv_file_open(f, true, real, sizeof real, why, sizeof why), -1);
    assert_non_null(strstr(why, u));
    /* missing: ENOENT, no refusal */
    snprintf(f, sizeof f, "%s/none.pem", dir);
    assert_int_equal(ce_priv_file_open(f, false, real, sizeof real, why, sizeof why), -1);
    assert_int_equal(errno, ENOENT);
}

/* ce_priv_dir_make: walked from /, created where missing, a user's
 * directory or a link in one refused, root's own link followed. */
static void test_priv_dir_make(void **state)
{
    (void)state;
    if (geteuid() != 0) skip();
    char p[256], u[160], v[160], why[1024];
    ce_priv_tree t;
    snprintf(p, sizeof p, "%s/a/b/c", dir);
    assert_int_equal(ce_priv_dir_make(&t, p, 0755, why, sizeof why), 0);
    assert_string_equal(t.path, p);
    struct stat st;
    assert_int_equal(fstat(t.fd, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    ce_priv_tree_close(&t);
    /* a relative link root made in root's directory: followed */
    snprintf(v, sizeof v, "%s/victim", dir);
    assert_int_equal(mkdir(v, 0755), 0);
    snprintf(u, sizeof u, "%s/rl", dir);
    assert_int_equal(symlink("victim", u), 0);
    snprintf(p, sizeof p, "%s/rl/x", dir);
    assert_int_equal(ce_priv_dir_make(&t, p, 0755, why, sizeof why), 0);
    snprintf(p, sizeof p, "%s/victim/x", dir);
    assert_string_equal(t.path, p);
    ce_priv_tree_close(&t);
    /* a user's directory holding a link to root's: refused, nothing made */
    snprintf(u, sizeof u, "%s/u", dir);
    assert_int_equal(mkdir(u, 0755), 0);
    snprintf(p, sizeof p, "%s/u/l", dir);
    assert_int_equal(symlink(v, p), 0);
    assert_int_equal(lchown(p, 65534, 65534), 0);
    assert_int_equal(chown(u, 65534, 65534), 0);
    snprintf(p, sizeof p, "%s/u/l/y", dir);
    assert_int_equal(ce_priv_dir_make(&t, p, 0755, why, sizeof why), -1);
    assert_int_equal(errno, EPERM);
    assert_non_null(strstr(why, "owned by uid 65534"));
    assert_int_equal(t.fd, -1);
    snprintf(p, sizeof p, "%s/victim/y", dir);
    assert_int_equal(access(p, F_OK), -1);
    /* a world-writable sticky directory is a parent, never the last */
    snprintf(p, sizeof p, "%s/tmpish", dir);
    assert_int_equal(mkdir(p, 0755), 0);
    assert_int_equal(chmod(p, 01777), 0);
    assert_int_equal(ce_priv_dir_make(&t, p, 0755, why, sizeof why), -1);
    snprintf(p, sizeof p, "%s/tmpish/mine", dir);
    assert_int_equal(ce_priv_dir_make(&t, p, 0755, why, sizeof why), 0);
    /* and the file written beneath it */
    assert_int_equal(ce_file_write_atomic_at(t.fd, p, "f.json", "{}\n", 3, 0644), CE_OK);
    ce_priv_tree_close(&t);
    snprintf(p, sizeof p, "%s/tmpish/mine/f.json", dir);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal((int)st.st_size, 3);
    assert_int_equal(st.st_mode & 07777, 0644);
}

/* out = head + "/0000..." (200-character components) + "/fff..." + "/" +
 * last, exactly n characters; returns n. */
static size_t long_path(char *out, size_t n, const char *head, const char *last)
{
    size_t len = (size_t)sprintf(out, "%s", head), sl = strlen(last);
    while (len + 201 + 3 + sl <= n) len += (size_t)sprintf(out + len, "/%0200d", 0);
    size_t fill = n - len - 2 - sl;   /* 1..201 */
    out[len++] = '/';
    memset(out + len, 'f', fill);
    len += fill;
    len += (size_t)sprintf(out + len, "/%s", last);
    return len;
}

/* ce_priv_dir_make's bounds: a path of PATH_MAX characters, or one that a
 * root-owned link makes PATH_MAX long, is refused (ENAMETOOLONG) before the
 * last directory is made, never made under a name cut short; one less fits. */
static void test_priv_dir_make_long(void **state)
{
    (void)state;
    if (geteuid() != 0) skip();
    static char p[PATH_MAX + 8], tg[PATH_MAX + 8];
    char head[128], why[1024], link[160], rel[160];
    ce_priv_tree t;
    snprintf(head, sizeof head, "%s/long", dir);
    assert_int_equal(long_path(p, PATH_MAX, head, "last"), (size_t)PATH_MAX);
    assert_int_equal(ce_priv_dir_make(&t, p, 0755, why, sizeof why), -1);
    assert_int_equal(errno, ENAMETOOLONG);
    assert_int_equal(t.fd, -1);
    assert_int_equal(access(head, F_OK), -1);   /* nothing made, not even the first */
    /* through a relative link dir/ln: the path is short, what it names is not */
    snprintf(link, sizeof link, "%s/ln", dir);
    int d = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(d >= 0);
    for (int extra = 0; extra < 2; extra++) {
        const char *last = extra ? "lastdir" : "lastdi";
        /* dir/ln/LAST resolves to tg = dir/T/LAST, PATH_MAX - 1 + extra characters */
        long_path(tg, PATH_MAX - 1 + (size_t)extra, dir, last);
        const char *below = tg + strlen(dir) + 1;   /* T/LAST */
        char target[PATH_MAX];
        snprintf(target, sizeof target, "%.*s", (int)(strlen(below) - 1 - strlen(last)), below);
        unlink(link);
        assert_int_equal(symlink(target, link), 0);
        snprintf(rel, sizeof rel, "%s/ln/%s", dir, last);
        int r = ce_priv_dir_make(&t, rel, 0755, why, sizeof why);
        if (!extra) {
            assert_int_equal(r, 0);
            assert_int_equal(strlen(t.path), (size_t)PATH_MAX - 1);
            assert_string_equal(t.path, tg);
            ce_priv_tree_close(&t);
            assert_int_equal(faccessat(d, below, F_OK, 0), 0);
        } else {
            assert_int_equal(r, -1);
            assert_int_equal(errno, ENAMETOOLONG);
            assert_int_equal(t.fd, -1);
            assert_int_equal(faccessat(d, below, F_OK, 0), -1);   /* the last one not made */
        }
    }
    close(d);
}

static void test_pyrun(void **state)
{
    (void)state;
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char good[160], bad[160];
    snprintf(good, sizeof good, "%s/good", dir);
    snprintf(bad, sizeof bad, "%s/bad", dir);
    assert_int_equal(mkdir(good, 0755), 0);
    assert_int_equal(mkdir(bad, 0755), 0);
    if (geteuid() == 0) assert_int_equal(chown(bad, 65534, 65534), 0);
    char pp[400];
    snprintf(pp, sizeof pp, "%s:relative:%s", good, bad);
    setenv("PYTHONPATH", pp, 1);
    const char *args[] = { "a1" };
    ce_py py;
    assert_int_equal(ce_py_prepare(&py, "/usr/bin/python3", "print(1)\n", args, 1), CE_OK);
    assert_string_equal(py.argv[0], "/usr/bin/python3");
    assert_string_equal(py.argv[1], "-I");
    assert_string_equal(py.argv[2], py.script);
    assert_string_equal(py.argv[3], "a1");
    assert_null(py.argv[4]);
    struct stat st;
    assert_int_equal(stat(py.dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_int_equal(stat(py.script, &st), 0);
    assert_non_null(strstr(py.env_add[0], good));
    assert_null(strstr(py.env_add[0], "relative"));
    if (geteuid() == 0) assert_null(strstr(py.env_add[0], bad));
    char d2[4096];
    snprintf(d2, sizeof d2, "%s", py.dir);
    ce_py_done(&py);
    assert_int_not_equal(stat(d2, &st), 0);
    ce_py_done(&py);   /* twice is fine */
    unsetenv("PYTHONPATH");
    /* a TMPDIR whose template would be cut by one byte: refused as too long
     * (not a truncated template mkdtemp rejects) */
    char deep[4200];
    size_t dl = (size_t)snprintf(deep, sizeof deep, "%s", dir);
    while (dl < 4096 - 18) {
        size_t k = 4096 - 18 - dl > 200 ? 200 : 4096 - 18 - dl;
        deep[dl] = '/';
        memset(deep + dl + 1, 'd', k - 1);
        deep[dl + k] = '\0';
        dl += k;
        assert_int_equal(mkdir(deep, 0755), 0);
    }
    assert_int_equal(strlen(deep), 4096 - 18);   /* + "/cudaenv-py.XXXXXX" = sizeof py.dir */
    setenv("TMPDIR", deep, 1);
    assert_int_equal(ce_py_prepare(&py, "/usr/bin/python3", "print(1)\n", NULL, 0), CE_ERR_OTHER);
    assert_non_null(strstr(ce_errmsg(), "TMPDIR too long"));
    unsetenv("TMPDIR");
    if (geteuid() != 0) return;
    /* as root, the private directory goes to /tmp when TMPDIR is a user's
     * (sticky: mkdtemp would succeed there, and the user could swap it) */
    snprintf(d2, sizeof d2, "%s/utmp", dir);
    assert_int_equal(mkdir(d2, 0700), 0);
    assert_int_equal(chmod(d2, 01777), 0);
    assert_int_equal(chown(d2, 65534, 65534), 0);
    setenv("TMPDIR", d2, 1);
    assert_int_equal(ce_py_prepare(&py, "/usr/bin/python3", "print(1)\n", NULL, 0), CE_OK);
    assert_int_equal(strncmp(py.dir, "/tmp/cudaenv-py.", 16), 0);
    ce_py_done(&py);
    /* and when it is root's, under a user's directory */
    snprintf(d2, sizeof d2, "%s/tmp", bad);
    assert_int_equal(mkdir(d2, 0700), 0);
    assert_int_equal(chmod(d2, 01777), 0);
    setenv("TMPDIR", d2, 1);
    assert_int_equal(ce_py_prepare(&py, "/usr/bin/python3", "print(1)\n", NULL, 0), CE_OK);
    assert_int_equal(strncmp(py.dir, "/tmp/cudaenv-py.", 16), 0);
    ce_py_done(&py);
    /* a root-owned one is used */
    snprintf(d2, sizeof d2, "%s/tmp", good);
    assert_int_equal(mkdir(d2, 0700), 0);
    setenv("TMPDIR", d2, 1);
    assert_int_equal(ce_py_prepare(&py, "/usr/bin/python3", "print(1)\n", NULL, 0), CE_OK);
    assert_int_equal(strncmp(py.dir, d2, strlen(d2)), 0);
    ce_py_done(&py);
    unsetenv("TMPDIR");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_stat_reason),
        cmocka_unit_test(test_root_absolute),
        cmocka_unit_test_setup_teardown(test_store_open_no_symlinks, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_spec_file_bounded, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_rm_tree_no_follow, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_dirscan_all, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_store_list_sorted, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_trust_root_paths, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_priv_program, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_priv_file_open, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_priv_dir_make, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_priv_dir_make_long, mk_dir, rm_dir),
        cmocka_unit_test_setup_teardown(test_pyrun, mk_dir, rm_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
