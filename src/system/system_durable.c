/* The durable writes of the system switch's transaction (system.c):
 * the intent created in place, the staged files and directories fsync'ed
 * after the trust walk, the changed directories while ldconfig runs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "system_int.h"

int ce_sys_wrong_type(const char *path)
{
    struct stat st;
    const char *what = "not a regular file";
    if (lstat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) what = "a directory";
        else if (S_ISLNK(st.st_mode)) what = "a symlink";
        else if (S_ISFIFO(st.st_mode)) what = "a FIFO";
        else if (S_ISSOCK(st.st_mode)) what = "a socket";
        else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) what = "a device";
    }
    return ce_fail(CE_ERR_OTHER, "%s is %s, not the file cudaenv keeps there; cudaenv does not write through "
                   "it or remove it for you: remove it (sudo rm -r '%s') and run the command again", path, what, path);
}

int ce_sys_names_check(ce_ctx *ctx)
{
    static const struct { const char *name; mode_t type; } names[] = {
        { CE_SYS_CONF, S_IFREG }, { CE_SYS_LINK_SPARE, S_IFLNK },
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char p[4200];
        struct stat st;
        ce_sys_path(ctx, names[i].name, p, sizeof p);
        if (lstat(p, &st) == 0 && (st.st_mode & S_IFMT) != names[i].type) return ce_sys_wrong_type(p);
    }
    return CE_OK;
}

/* fsync the directory holding the sysroot path p (inside). */
void ce_sys_sync_parent(ce_ctx *ctx, const char *p)
{
    char dir[4200];
    ce_sys_path(ctx, p, dir, sizeof dir);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) *slash = '\0';
    ce_fsync_dir(dir);
}

/* The directory holding each sysroot path p[i] (inside) opened into fds; how
 * many opened (one that cannot be opened is left out, as ce_fsync_dir does). */
static size_t open_parents(const ce_ctx *ctx, const char *const *p, size_t n, int *fds)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char dir[4200];
        ce_sys_path(ctx, p[i], dir, sizeof dir);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) *slash = '\0';
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) fds[k++] = fd;
    }
    return k;
}

/* fsync the staged files st[0..n) (their writeback was started when they
 * were written, so the trust walk ran while it did), then with dir the
 * directory that already holds one's final name, one after the other (on a
 * journalling file system the first commits them all; a thread per
 * descriptor cost more CPU than the waits it overlapped on a busy
 * machine), then close them; on failure all are dropped. */
int ce_sys_sync_staged(ce_ctx *ctx, ce_staged *st, size_t n, const char *dir)
{
    int fds[4], e = 0;
    size_t k = 0, nd = 0;
    for (size_t i = 0; i < n && k < 3; i++) fds[k++] = st[i].fd;
    if (dir) k += nd = open_parents(ctx, &dir, 1, fds + k);
    for (size_t i = 0; i < k && !e; i++)
        while (fsync(fds[i]) != 0 && !e)
            if (errno != EINTR) e = errno;
    if (nd) close(fds[k - 1]);
    for (size_t i = 0; i < n; i++) {
        if (close(st[i].fd) != 0 && !e) e = errno;
        st[i].fd = -1;
    }
    if (!e) return CE_OK;
    for (size_t i = 0; i < n; i++) ce_file_stage_drop(&st[i]);
    return ce_fail(CE_ERR_IO, "cannot finish %s: %s", st[0].path, strerror(e));
}

/* fsync the directories of the link and the conf, one after the other
 * (ldconfig runs meanwhile: no thread needed to overlap the waits). */
void ce_sys_sync_changed(ce_ctx *ctx)
{
    ce_sys_sync_parent(ctx, CE_SYS_LINK);
    ce_sys_sync_parent(ctx, CE_SYS_CONF);
}

/* *fd, open at path (a name cudaenv writes in place), is a regular file
 * of its own: anything else is refused (ce_sys_wrong_type); one with
 * another name sharing its inode (a hard link: written in place, that file
 * would change too) is unlinked, *fd -1 and errno ENOENT: a new file takes
 * the name. */
static int regular_own(const char *path, int *fd)
{
    struct stat sb;
    if (fstat(*fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(*fd);
        *fd = -1;
        return ce_sys_wrong_type(path);
    }
    if (sb.st_nlink <= 1) return CE_OK;
    close(*fd);
    *fd = -1;
    if (unlink(path) != 0) return ce_fail(CE_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    errno = ENOENT;
    return CE_OK;
}

/* text over what fd holds, from offset 0, then the file cut to its length
 * when it was longer: 0 or the errno.  Never truncated to 0 first: that
 * frees the file's block only for the write to allocate one again, and on
 * a file system mounted with discard (this VM's ext4) the free is a
 * synchronous discard to the device: ftruncate(fd, 0) took 0.5-4.6 ms of a
 * switch, more than the intent's fsync.  A crash before the fsync leaves
 * what truncate-and-write could leave too (the same block, reused, partly
 * the text before): not JSON, or ignored by its lower gen. */
static int overwrite(int fd, const char *text, size_t len)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) return errno;
    int e = ce_pwrite_all(fd, text, len, 0);
    if (!e && sb.st_size > (off_t)len && ftruncate(fd, (off_t)len) != 0) e = errno;
    return e;
}

/* Write the intent into path in place (overwritten: it holds the record
 * before system.json's, of a lower gen, left there by the last switch's
 * exchange; created, O_EXCL, only when absent: *created, and then its
 * directory needs an fsync too), its writeback started; st is set up so
 * that ce_file_stage_drop removes it (nothing has changed while it is not
 * yet durable).  Not staged and renamed: its one fsync makes it durable (no
 * new inode, no directory fsync), and a copy cut short by a crash is not
 * JSON, which ce_system_record ignores. */
int ce_sys_journal_write(const char *path, const char *text, ce_staged *st, bool *created)
{
    int rc;
    st->tmp[0] = '\0';
    *created = false;
    snprintf(st->path, sizeof st->path, "%s", path);
    /* O_NONBLOCK: a FIFO there must not hang the open (refused below) */
    st->fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (st->fd >= 0 && (rc = regular_own(path, &st->fd))) return rc;
    if (st->fd < 0 && errno == ENOENT) {
        st->fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        *created = st->fd >= 0;
    }
    if (st->fd < 0 && (errno == ELOOP || errno == EISDIR)) return ce_sys_wrong_type(path);
    if (st->fd < 0)
        return ce_fail(errno == EACCES ? CE_ERR_PERM : CE_ERR_IO, "cannot create %s: %s", path, strerror(errno));
    snprintf(st->tmp, sizeof st->tmp, "%s", path);
    int e = overwrite(st->fd, text, strlen(text));
    if (e) {
        ce_file_stage_drop(st);
        return ce_fail(e == ENOSPC ? CE_ERR_SPACE : CE_ERR_IO, "cannot write %s: %s", path, strerror(e));
    }
    /* the umask may have narrowed a new one; readable is only nicer */
    if (*created && fchmod(st->fd, 0644) != 0) { /* as above */ }
    sync_file_range(st->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    return CE_OK;
}

/* ---- spares: the inodes a switch back reuses ---------------------------
 * Creating an inode is the costliest step of a switch on a busy ext4
 * (~1 ms each where a rename is ~0.2 ms).  The link and the conf are
 * therefore replaced by exchanging them (renameat2 RENAME_EXCHANGE, atomic
 * like rename) with a spare in the same directory, which then holds what
 * they were: switching back to the toolchain before finds its link and its
 * conf already made.  Dot names, so no glob of ld.so.conf.d (*.conf, *)
 * and no `ls /usr/local` sees them; the restore removes them. */

/* from and to trade places; a plain rename when to does not exist or the
 * file system cannot exchange.  Only what a rename could replace is
 * exchanged: a to of another type (a real directory at /usr/local/cuda)
 * fails as the rename did, and is never moved to the spare's name. */
static int exchange_type(const char *from, const char *to, mode_t type)
{
    struct stat st;
    if (lstat(to, &st) == 0 && (st.st_mode & S_IFMT) != type) {
        errno = S_ISDIR(st.st_mode) ? EISDIR : EEXIST;
        return -1;
    }
#ifdef RENAME_EXCHANGE
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) == 0) return 0;
    if (errno != ENOENT && errno != EINVAL && errno != ENOSYS) return -1;
#endif
    return rename(from, to);
}

int ce_sys_exchange(const char *from, const char *to)
{
    return exchange_type(from, to, S_IFREG);
}

int ce_sys_link_exchange(ce_ctx *ctx, const char *link, const char *target)
{
    char spare[4200], now[4096];
    ce_sys_path(ctx, CE_SYS_LINK_SPARE, spare, sizeof spare);
    ssize_t n = readlink(spare, now, sizeof now - 1);
    if (n < 0 || (size_t)n != strlen(target) || memcmp(now, target, (size_t)n) != 0) {
        if (unlink(spare) != 0 && errno != ENOENT)
            return errno == EISDIR ? ce_sys_wrong_type(spare)
                                   : ce_fail(CE_ERR_IO, "cannot remove %s: %s", spare, strerror(errno));
        if (symlink(target, spare) != 0)
            return ce_fail(CE_ERR_IO, "cannot create %s: %s", spare, strerror(errno));
    }
    if (exchange_type(spare, link, S_IFLNK) != 0)
        return ce_fail(CE_ERR_IO, "cannot put %s in place of %s: %s", spare, link, strerror(errno));
    return CE_OK;
}

int ce_sys_conf_spare_stage(ce_ctx *ctx, const char *text, ce_staged *st, bool *written)
{
    *written = false;
    st->tmp[0] = '\0';   /* nothing to remove on failure: a spare may stay */
    ce_sys_path(ctx, CE_SYS_CONF_SPARE, st->path, sizeof st->path);
    /* O_NONBLOCK: a FIFO there must not hang the open (refused below) */
    int rc;
    st->fd = open(st->path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (st->fd >= 0 && (rc = regular_own(st->path, &st->fd))) return rc;
    if (st->fd < 0 && errno == ENOENT) st->fd = open(st->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (st->fd < 0 && (errno == ELOOP || errno == EISDIR)) return ce_sys_wrong_type(st->path);
    if (st->fd < 0)
        return ce_fail(errno == EACCES ? CE_ERR_PERM : CE_ERR_IO, "cannot open %s: %s", st->path, strerror(errno));
    char cur[4096];
    size_t len = strlen(text);
    ssize_t r = pread(st->fd, cur, sizeof cur, 0);
    if (r != (ssize_t)len || memcmp(cur, text, len) != 0) {
        /* not live: rewritten in place, made durable with the intent */
        int e = overwrite(st->fd, text, len);
        if (e) {
            close(st->fd);
            st->fd = -1;
            return ce_fail(e == ENOSPC ? CE_ERR_SPACE : CE_ERR_IO, "cannot write %s: %s", st->path, strerror(e));
        }
        sync_file_range(st->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
        *written = true;
    }
    /* root's own new file: only the umask could narrow it (a chmod of a
     * spare already 0644 would dirty its inode for the fsync to write) */
    struct stat sb;
    if ((fstat(st->fd, &sb) != 0 || (sb.st_mode & 07777) != 0644) && fchmod(st->fd, 0644) != 0) { /* readable is only nicer */ }
    return CE_OK;
}

/* A spare rewritten but never fsync'ed (the walk refused, or the fsync
 * failed) is emptied, so that no later switch takes its text for durable. */
void ce_sys_conf_spare_forget(ce_ctx *ctx)
{
    char spare[4200];
    ce_sys_path(ctx, CE_SYS_CONF_SPARE, spare, sizeof spare);
    if (truncate(spare, 0) != 0) { /* then it is rewritten only when its text differs: best effort */ }
}

int ce_sys_conf_exchange(ce_ctx *ctx)
{
    char spare[4200], conf[4200];
    ce_sys_path(ctx, CE_SYS_CONF_SPARE, spare, sizeof spare);
    ce_sys_path(ctx, CE_SYS_CONF, conf, sizeof conf);
    if (exchange_type(spare, conf, S_IFREG) != 0)
        return errno == EISDIR || errno == EEXIST ? ce_sys_wrong_type(conf)
                                                  : ce_fail(CE_ERR_IO, "cannot put %s in place of %s: %s", spare, conf, strerror(errno));
    return CE_OK;
}

void ce_sys_drop_spares(ce_ctx *ctx)
{
    char p[4200];
    ce_sys_path(ctx, CE_SYS_LINK_SPARE, p, sizeof p);
    unlink(p);
    ce_sys_path(ctx, CE_SYS_CONF_SPARE, p, sizeof p);
    unlink(p);
}

/* The record before, left in system.json.pending by the final exchange:
 * its first byte ('{') becomes '#', so it is no JSON to an older cudaenv,
 * which takes any parseable system.json.pending for an interrupted switch
 * (and would re-apply the selection before); this one still reads its
 * lower "gen" and ignores it.  Not fsync'ed: lost in a crash, the file
 * is still of the lower gen. */
void ce_sys_mark_stale(const char *path)
{
    int fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    struct stat sb;
    /* a record hard-linked elsewhere (a copy someone kept) is not written
     * into: the name goes instead (the next switch creates it) */
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        if (sb.st_nlink > 1) unlink(path);
        else if (pwrite(fd, "#", 1, 0) != 1) { /* an older cudaenv would complete it: only a downgrade cares */ }
    }
    close(fd);
}
