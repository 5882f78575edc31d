#include "walk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dirscan.h"

#define DIR_FLAGS (O_RDONLY | O_NONBLOCK | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* A directory entered: its entries (read whole when it is entered, so its
 * descriptor may be closed while a deeper one is walked) are names[start..end),
 * each with its NUL. */
typedef struct frame {
    size_t start, cur, end;
    size_t pathlen, base;   /* path's length for it, where its name starts */
    int fd;                 /* -1: closed while a deeper directory is walked */
    struct stat st;
} frame;

typedef struct walker {
    ce_walk_fn fn;
    void *arg;
    char *path;
    size_t plen, pcap;
    char *names;
    size_t nused, ncap;
    frame *f;
    size_t n, fcap;
    size_t lo;      /* the shallowest frame whose descriptor is open */
    ce_dirscan scan;
} walker;

static int grow(void *pp, size_t *cap, size_t need, size_t each)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    void *p = realloc(*(void **)pp, c * each);
    if (!p) { errno = ENOMEM; return CE_WALK_FAIL; }
    *(void **)pp = p;
    *cap = c;
    return 0;
}

/* path += "/" name; *base says where name starts */
static int path_push(walker *w, const char *name, size_t *base)
{
    size_t nl = strlen(name);
    bool slash = w->plen && w->path[w->plen - 1] != '/';
    if (grow(&w->path, &w->pcap, w->plen + slash + nl + 1, 1)) return CE_WALK_FAIL;
    if (slash) w->path[w->plen++] = '/';
    *base = w->plen;
    memcpy(w->path + w->plen, name, nl + 1);
    w->plen += nl;
    return 0;
}

static void path_cut(walker *w, size_t len)
{
    w->plen = len;
    w->path[len] = '\0';
}

/* Every entry of fd but "." and ".." onto names; CE_WALK_FAIL with errno. */
static int read_entries(walker *w, int fd)
{
    ce_dirscan_fd(&w->scan, fd);
    const char *name;
    for (;;) {
        errno = 0;
        if (!(name = ce_dirscan_next(&w->scan, NULL))) return errno ? CE_WALK_FAIL : 0;
        if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))) continue;
        size_t nl = strlen(name) + 1;
        if (grow(&w->names, &w->ncap, w->nused + nl, 1)) return CE_WALK_FAIL;
        memcpy(w->names + w->nused, name, nl);
        w->nused += nl;
    }
}

static int report(walker *w, int dirfd, size_t base, const struct stat *st, int depth, ce_walk_kind kind, int err)
{
    ce_walk_entry e = { w->path, w->path + base, dirfd, st, depth, kind, err };
    return w->fn(&e, w->arg);
}

/* Enter the directory name of dirfd (path already names it): a new frame
 * and its pre-order report, or its CE_WALK_ERR report. */
static int descend(walker *w, int dirfd, const char *name, size_t base, const struct stat *lst, int depth)
{
    int fd = openat(dirfd, name, DIR_FLAGS);
    struct stat st;
    size_t start = w->nused;
    if (fd < 0 || fstat(fd, &st) != 0 || read_entries(w, fd) != 0) {
        int err = errno;
        if (fd >= 0) close(fd);
        w->nused = start;
        if (err == ENOMEM) return CE_WALK_FAIL;   /* errno kept */
        return report(w, dirfd, base, lst, depth, CE_WALK_ERR, err);
    }
    if (grow(&w->f, &w->fcap, w->n + 1, sizeof *w->f)) {
        close(fd);
        return CE_WALK_FAIL;
    }
    w->f[w->n++] = (frame){ start, start, w->nused, w->plen, base, fd, st };
    if (w->n - w->lo > CE_WALK_FDS) {   /* the shallowest open one is closed until the walk is back */
        close(w->f[w->lo].fd);
        w->f[w->lo++].fd = -1;
    }
    return report(w, dirfd, base, &st, depth, CE_WALK_DIR, 0);
}

/* The deepest frame is done: its parent opened again when it was closed,
 * its post-order report, and back to the parent. */
static int ascend(walker *w)
{
    frame *f = &w->f[w->n - 1], *up = w->n > 1 ? f - 1 : NULL;
    if (up && up->fd < 0) {
        int fd = openat(f->fd, "..", DIR_FLAGS);
        struct stat st;
        if (fd < 0) return CE_WALK_FAIL;
        if (fstat(fd, &st) != 0 || st.st_dev != up->st.st_dev || st.st_ino != up->st.st_ino) {
            close(fd);
            errno = ESTALE;   /* moved while walked: not the directory left */
            return CE_WALK_FAIL;
        }
        up->fd = fd;
        w->lo = w->n - 2;
    }
    int rc = report(w, up ? up->fd : AT_FDCWD, f->base, &f->st, (int)w->n - 1, CE_WALK_DIR_POST, 0);
    close(f->fd);
    w->nused = f->start;
    w->n--;
    if (up) path_cut(w, up->pathlen);
    return rc;
}

/* The deepest frame's next entry. */
static int step(walker *w)
{
    frame *f = &w->f[w->n - 1];
    const char *name = w->names + f->cur;
    f->cur += strlen(name) + 1;
    size_t base, pathlen = f->pathlen, n = w->n;
    if (path_push(w, name, &base)) return CE_WALK_FAIL;
    int depth = (int)w->n, dirfd = f->fd, rc;
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        rc = report(w, dirfd, base, NULL, depth, CE_WALK_ERR, errno);
    else if (S_ISDIR(st.st_mode)) {
        rc = descend(w, dirfd, name, base, &st, depth);
        if (w->n > n) return rc;   /* entered: its frame keeps the path */
    } else {
        rc = report(w, dirfd, base, &st, depth, CE_WALK_ENTRY, 0);
    }
    path_cut(w, pathlen);
    return rc;
}

int ce_walk(const char *top, ce_walk_fn fn, void *arg)
{
    walker w = { .fn = fn, .arg = arg };
    struct stat st;
    size_t base = 0;
    if (fstatat(AT_FDCWD, top, &st, AT_SYMLINK_NOFOLLOW) != 0) return CE_WALK_FAIL;
    if (path_push(&w, top, &base)) return CE_WALK_FAIL;
    int rc = S_ISDIR(st.st_mode) ? descend(&w, AT_FDCWD, top, 0, &st, 0)
                                 : report(&w, AT_FDCWD, 0, &st, 0, CE_WALK_ENTRY, 0);
    while (rc == 0 && w.n) {
        frame *f = &w.f[w.n - 1];
        rc = f->cur < f->end ? step(&w) : ascend(&w);
    }
    int e = errno;
    for (size_t i = 0; i < w.n; i++)
        if (w.f[i].fd >= 0) close(w.f[i].fd);
    free(w.f);
    free(w.names);
    free(w.path);
    errno = e;
    return rc;
}
