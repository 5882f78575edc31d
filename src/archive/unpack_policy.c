/* What an unpacked tree may hold (unpack.h, ARCHITECTURE.md): the entry
 * policy every archive entry passes before libarchive writes it (pure, so
 * unit-tested and fuzzed on its own), the archive's single top directory
 * stripped, and after extraction every symlink resolved inside the tree. */
#include "unpack.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/walk.h"

/* Walk the components of p; returns the depth reached relative to the start
 * (depth0), or -1 as soon as a ".." would climb above the start. */
static int walk_depth(const char *p, int depth0, bool allow_dotdot)
{
    int depth = depth0;
    while (*p) {
        const char *s = strchr(p, '/');
        size_t n = s ? (size_t)(s - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (!allow_dotdot || --depth < 0) return -1;
        } else if (n > 0 && !(n == 1 && p[0] == '.')) {
            depth++;
        }
        p += n;
        while (*p == '/') p++;
    }
    return depth;
}

/* A name this system can create: under PATH_MAX, every component under NAME_MAX. */
static const char *length_refusal(const char *p)
{
    if (strlen(p) >= PATH_MAX) return "path longer than PATH_MAX";
    for (;;) {
        size_t n = strcspn(p, "/");
        if (n > NAME_MAX) return "path component longer than NAME_MAX";
        if (!p[n]) return NULL;
        p += n + 1;
    }
}

static const char *path_refusal(const char *p)
{
    if (!p || !*p) return "empty path";
    const char *len = length_refusal(p);
    if (len) return len;
    if (p[0] == '/') return "absolute path";
    if (walk_depth(p, 0, false) < 0) return "path with a '..' component";
    return NULL;
}

const char *ce_entry_refusal(const ce_entry *e)
{
    const char *why = path_refusal(e->path);
    if (why) return why;
    mode_t t = e->mode & S_IFMT;
    if (t == S_IFCHR || t == S_IFBLK) return "device node";
    if (t == S_IFIFO) return "FIFO";
    if (t == S_IFSOCK) return "socket";
    if (t != S_IFREG && t != S_IFDIR && t != S_IFLNK && t != 0) return "unknown file type";
    if (e->mode & (S_ISUID | S_ISGID)) return "setuid/setgid bit";
    if (e->hardlink) {
        if (path_refusal(e->hardlink)) return "hardlink target outside the tree";
    }
    if (t == S_IFLNK || e->symlink) {
        const char *tg = e->symlink;
        if (!tg || !*tg) return "symlink without a target";
        if (length_refusal(tg)) return "symlink target longer than PATH_MAX or NAME_MAX";
        if (tg[0] == '/') return "symlink to an absolute path";
        /* the link's directory: every component of its path but the last */
        int dir_depth = walk_depth(e->path, 0, false) - 1;
        if (dir_depth < 0) dir_depth = 0;
        if (walk_depth(tg, dir_depth, true) < 0) return "symlink pointing outside the tree";
    }
    return NULL;
}

int ce_strip_top(const char *path, char *top, size_t topsz, const char **rest)
{
    while (path[0] == '.' && path[1] == '/') {
        path += 2;
        while (*path == '/') path++;
    }
    const char *slash = strchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : strlen(path);
    if (n == 0 || (n == 1 && path[0] == '.') || (n == 2 && path[0] == '.' && path[1] == '.'))
        return -1;
    if (!top[0]) {
        if (n >= topsz) return -1;
        memcpy(top, path, n);
        top[n] = '\0';
    } else if (strlen(top) != n || strncmp(top, path, n) != 0) {
        return -1;
    }
    path += n;
    while (*path == '/') path++;
    *rest = path;
    return 0;
}

/* ---- after extraction: resolve every symlink ---- */

typedef struct link_walk { const char *root; size_t rootlen; char bad[CE_PATH_MAX]; } link_walk;

/* CE_ERR_INTEGRITY at the first symlink resolving outside the tree (bad
 * names it, relative to the tree) */
static int link_one(const ce_walk_entry *e, void *arg)
{
    link_walk *w = arg;
    if (e->kind != CE_WALK_ENTRY || !S_ISLNK(e->st->st_mode)) return 0;
    char real[PATH_MAX];
    const char *p = e->path;
    if (!realpath(p, real)) return 0; /* dangling: its target was checked lexically */
    if (strncmp(real, w->root, w->rootlen) != 0 || (real[w->rootlen] != '/' && real[w->rootlen] != '\0')) {
        snprintf(w->bad, sizeof w->bad, "%s", p + w->rootlen + (p[w->rootlen] == '/'));
        return CE_ERR_INTEGRITY;
    }
    return 0;
}

int ce_unpack_check_links(const char *dir, const char *label)
{
    char root[PATH_MAX];
    if (!realpath(dir, root)) return ce_fail(CE_ERR_IO, "cannot resolve %s: %s", dir, strerror(errno));
    link_walk w = { root, strlen(root), "" };
    if (ce_walk(root, link_one, &w) == CE_ERR_INTEGRITY)   /* the walk's own failure is not the archive's */
        return ce_fail(CE_ERR_INTEGRITY, "unsafe entry '%s' in %s: symlink resolving outside the tree; "
                       "nothing was installed from this archive", w.bad, label);
    return CE_OK;
}
