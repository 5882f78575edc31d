#include "compose.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"

void ce_filelist_free(ce_filelist *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i].path);
    free(l->v);
    memset(l, 0, sizeof *l);
}

int ce_filelist_add(ce_filelist *l, const char *path, long long size)
{
    if (!l) return CE_OK;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        ce_file_entry *v = realloc(l->v, cap * sizeof *v);
        if (!v) return ce_fail(CE_ERR_NOMEM, "out of memory composing the toolchain");
        l->v = v;
        l->cap = cap;
    }
    char *p = strdup(path);
    if (!p) return ce_fail(CE_ERR_NOMEM, "out of memory composing the toolchain");
    l->v[l->n].path = p;
    l->v[l->n].size = size;
    l->v[l->n].sha256[0] = '\0';
    l->n++;
    return CE_OK;
}

typedef struct composer {
    ce_ctx *ctx;
    ce_filelist *files;
    bool merge_same;     /* an existing identical file or link is fine (components) */
    char src[CE_PATH_MAX];  /* for messages */
    char rel[CE_PATH_MAX];  /* path relative to the prefix */
} composer;

static int copy_file(int sfd, const char *name, int dfd, mode_t mode)
{
    int in = openat(sfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0) return -1;
    int out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 07777);
    if (out < 0) { int e = errno; close(in); errno = e; return -1; }
    bool plain = false;
    /* heap, not a static __thread buffer: static TLS is zeroed at every exec
     * of the light binary (64 KiB = 16 page faults on the env/use path) */
    char *buf = NULL;
    for (;;) {
        ssize_t n;
        if (!plain) {
            n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
            if (n < 0 && (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)) {
                plain = true;
                if (!(buf = malloc(1 << 16))) { close(in); close(out); errno = ENOMEM; return -1; }
                continue;
            }
        } else {
            n = read(in, buf, 1 << 16);
            for (ssize_t off = 0; n > 0 && off < n;) {
                ssize_t w = write(out, buf + off, (size_t)(n - off));
                if (w < 0 && errno == EINTR) continue;
                if (w < 0) { n = -1; break; }
                off += w;
            }
        }
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int e = errno;
            free(buf);
            close(in);
            if (close(out) != 0 && n == 0) n = -1;
            errno = e;
            return n < 0 ? -1 : 0;
        }
    }
}

/* Open (creating if needed) directory name inside dfd of the destination. */
static int open_dst_dir(composer *c, int dfd, const char *name, mode_t mode)
{
    if (mkdirat(dfd, name, (mode & 07777) | S_IRWXU) != 0 && errno != EEXIST)
        return ce_fail(errno == ENOSPC ? CE_ERR_SPACE : CE_ERR_IO, "cannot create %s in the toolchain: %s",
                       c->rel, strerror(errno));
    int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) return fd;
    if (errno == ELOOP || errno == ENOTDIR) {
        char tg[PATH_MAX];
        ssize_t n = readlinkat(dfd, name, tg, sizeof tg - 1);
        if (n > 0) {
            tg[n] = '\0';
            bool safe = tg[0] != '/' && strcmp(tg, "..") != 0 && strncmp(tg, "../", 3) != 0 &&
                        !strstr(tg, "/../") && !(n >= 3 && strcmp(tg + n - 3, "/..") == 0);
            if (safe && (fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) return fd;
        }
    }
    return ce_fail(CE_ERR_IO, "cannot merge into %s of the toolchain: %s", c->rel, strerror(errno));
}

/* Same bytes?  Same inode (hardlinked from the same tree) or equal content. */
static bool same_file(int sfd, int dfd, const char *name)
{
    struct stat a, b;
    if (fstatat(sfd, name, &a, AT_SYMLINK_NOFOLLOW) != 0 || fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) != 0)
        return false;
    if (!S_ISREG(a.st_mode) || !S_ISREG(b.st_mode) || a.st_size != b.st_size) return false;
    if (a.st_dev == b.st_dev && a.st_ino == b.st_ino) return true;
    int x = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), y = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    /* heap, not static __thread: the light binary links this file and ld.so
     * would zero static TLS at every exec (cli.bats checks) */
    char *bx = malloc(1 << 16), *by = malloc(1 << 16);
    bool same = x >= 0 && y >= 0 && bx && by;
    while (same) {
        ssize_t n = read(x, bx, 1 << 16);
        if (n <= 0) { same = n == 0 && read(y, by, 1) == 0; break; }
        ssize_t got = 0;
        while (got < n) {
            ssize_t m = read(y, by + got, (size_t)(n - got));
            if (m <= 0) break;
            got += m;
        }
        same = got == n && memcmp(bx, by, (size_t)n) == 0;
    }
    free(bx);
    free(by);
    if (x >= 0) close(x);
    if (y >= 0) close(y);
    return same;
}

static bool same_link(int dfd, const char *name, const char *target)
{
    char tg[PATH_MAX];
    ssize_t n = readlinkat(dfd, name, tg, sizeof tg - 1);
    if (n < 0) return false;
    tg[n] = '\0';
    return strcmp(tg, target) == 0;
}

static int conflict(composer *c)
{
    return ce_fail(CE_ERR_INTEGRITY, "two components ship %s with different content (this one from %s); "
                   "refusing to pick one: leave one of them out with --components -NAME, or report the "
                   "release's redistrib JSON", c->rel, c->src);
}

static int compose_dir(composer *c, int sfd, int dfd)
{
    int dup_fd = dup(sfd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0) close(dup_fd);
        return ce_fail(CE_ERR_IO, "cannot read %s: %s", c->src, strerror(errno));
    }
    size_t rl = strlen(c->rel), sl = strlen(c->src);
    int rc = CE_OK;
    struct dirent *e;
    while (rc == CE_OK && (e = readdir(d))) {
        const char *nm = e->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, "..")) continue;
        snprintf(c->rel + rl, sizeof c->rel - rl, "%s%s", rl ? "/" : "", nm);
        snprintf(c->src + sl, sizeof c->src - sl, "/%s", nm);
        struct stat st;
        if (fstatat(sfd, nm, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            rc = ce_fail(CE_ERR_IO, "cannot stat %s: %s", c->src, strerror(errno));
        } else if (S_ISDIR(st.st_mode)) {
            int s2 = openat(sfd, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (s2 < 0) {
                rc = ce_fail(CE_ERR_IO, "cannot open %s: %s", c->src, strerror(errno));
            } else {
                int d2 = open_dst_dir(c, dfd, nm, st.st_mode);
                if (d2 < 0) rc = d2;
                else {
                    rc = compose_dir(c, s2, d2);
                    close(d2);
                }
                close(s2);
            }
        } else if (S_ISLNK(st.st_mode)) {
            char tg[PATH_MAX];
            ssize_t n = readlinkat(sfd, nm, tg, sizeof tg - 1);
            if (n < 0) {
                rc = ce_fail(CE_ERR_IO, "cannot read the link %s: %s", c->src, strerror(errno));
            } else {
                tg[n] = '\0';
                if (symlinkat(tg, dfd, nm) != 0) {
                    if (c->merge_same && errno == EEXIST)
                        rc = same_link(dfd, nm, tg) ? CE_OK : conflict(c);
                    else
                        rc = ce_fail(errno == EEXIST ? CE_ERR_INTEGRITY : CE_ERR_IO,
                                     "cannot create the link %s in the toolchain: %s%s", c->rel, strerror(errno),
                                     errno == EEXIST ? " (two packages provide it)" : "");
                }
            }
        } else if (S_ISREG(st.st_mode)) {
            bool copied = false;
            int r = linkat(sfd, nm, dfd, nm, 0);
            if (r != 0 && (errno == EXDEV || errno == EMLINK || errno == EPERM)) {
                r = copy_file(sfd, nm, dfd, st.st_mode);
                copied = true;
            }
            if (r != 0 && c->merge_same && errno == EEXIST)
                rc = same_file(sfd, dfd, nm) ? CE_OK : conflict(c); /* already listed once */
            else if (r != 0)
                rc = ce_fail(errno == EEXIST ? CE_ERR_INTEGRITY : errno == ENOSPC ? CE_ERR_SPACE : CE_ERR_IO,
                             "cannot link %s into the toolchain as %s: %s%s", c->src, c->rel, strerror(errno),
                             errno == EEXIST ? " (two packages provide it)" : "");
            else {
                if (copied) c->files->copied++; else c->files->linked++;
                rc = ce_filelist_add(c->files, c->rel, (long long)st.st_size);
            }
        }
        /* anything else (a FIFO a toolkit would never ship) is left out */
        c->rel[rl] = '\0';
        c->src[sl] = '\0';
    }
    closedir(d);
    return rc;
}

static int compose_tree(ce_ctx *ctx, const char *src, const char *dst, const char *sub, ce_filelist *files,
                        bool merge_same)
{
    ce_filelist scratch = { 0 };
    composer c = { .ctx = ctx, .files = files ? files : &scratch, .merge_same = merge_same };
    snprintf(c.src, sizeof c.src, "%s", src);
    snprintf(c.rel, sizeof c.rel, "%s", sub ? sub : "");
    int sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0) return ce_fail(CE_ERR_IO, "cannot open %s: %s", src, strerror(errno));
    int dfd = open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        close(sfd);
        return ce_fail(CE_ERR_IO, "cannot open %s: %s", dst, strerror(errno));
    }
    int rc = CE_OK;
    if (sub && *sub) {
        int d2 = open_dst_dir(&c, dfd, sub, 0755);
        close(dfd);
        if (d2 < 0) { close(sfd); ce_filelist_free(&scratch); return d2; }
        dfd = d2;
    }
    rc = compose_dir(&c, sfd, dfd);
    close(sfd);
    close(dfd);
    ce_filelist_free(&scratch);
    return rc;
}

int ce_compose_tree(ce_ctx *ctx, const char *src, const char *dst, const char *sub, ce_filelist *files)
{
    return compose_tree(ctx, src, dst, sub, files, false);
}

int ce_compose_merge(ce_ctx *ctx, const char *src, const char *dst, const char *sub, ce_filelist *files)
{
    return compose_tree(ctx, src, dst, sub, files, true);
}

int ce_compose_cudnn(ce_ctx *ctx, const char *tree, const char *dst, ce_filelist *files)
{
    DIR *d = opendir(tree);
    if (!d) return ce_fail(CE_ERR_IO, "cannot read %s: %s", tree, strerror(errno));
    int rc = CE_OK;
    struct dirent *e;
    while (rc == CE_OK && (e = readdir(d))) {
        const char *nm = e->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, "..")) continue;
        char sp[CE_PATH_MAX], sub[300];
        if ((rc = ce_join(sp, sizeof sp, tree, nm))) break;
        if (!strcmp(nm, "include")) snprintf(sub, sizeof sub, "include");
        else if (!strcmp(nm, "lib") || !strcmp(nm, "lib64")) snprintf(sub, sizeof sub, "lib64");
        else snprintf(sub, sizeof sub, "share/cudnn/%s", nm);
        if (ce_is_dir(sp)) {
            if (strncmp(sub, "share/", 6) == 0) {
                char p[CE_PATH_MAX];
                if ((rc = ce_join(p, sizeof p, dst, sub)) || (rc = ce_mkdir_p(p, 0755))) break;
            }
            rc = ce_compose_tree(ctx, sp, dst, sub, files);
        } else {
            /* a top-level file (LICENSE): link its directory's copy under share/cudnn */
            char p[PATH_MAX + 20];
            snprintf(p, sizeof p, "%s/share/cudnn", dst);
            if ((rc = ce_mkdir_p(p, 0755))) break;
            char one[CE_PATH_MAX];
            if ((rc = ce_join(one, sizeof one, p, nm))) break;
            bool linked = link(sp, one) == 0;
            if (linked && files) files->linked++;
            if (!linked) {
                /* small file: a copy is fine anywhere a link is not */
                char *data;
                size_t len;
                if ((rc = ce_file_read(sp, 1u << 26, &data, &len))) break;
                rc = ce_file_write_atomic(one, data, len, 0644);
                free(data);
                if (rc) break;
                if (files) files->copied++;
            }
            struct stat st;
            if (stat(one, &st) == 0) rc = ce_filelist_add(files, sub, (long long)st.st_size);
        }
    }
    closedir(d);
    return rc;
}
