/* What an unpacked tree may hold (unpack.h, ARCHITECTURE.md): the entry
 * policy every archive entry passes before libarchive writes it (pure, so
 * unit-tested and fuzzed on its own), the archive's single top directory
 * stripped, and after extraction every symlink resolved inside the tree. */
#include "unpack.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static const char *g_root;
static size_t g_rootlen;
static char g_bad[PATH_MAX];

static int link_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st; (void)ftw;
    if (flag != FTW_SL && flag != FTW_SLN) return 0;
    char real[PATH_MAX];
    if (!realpath(p, real)) return 0; /* dangling: its target was checked lexically */
    if (strncmp(real, g_root, g_rootlen) != 0 || (real[g_rootlen] != '/' && real[g_rootlen] != '\0')) {
        snprintf(g_bad, sizeof g_bad, "%s", p + g_rootlen + (p[g_rootlen] == '/'));
        return 1;
    }
    return 0;
}

int ce_unpack_check_links(ce_ctx *ctx, const char *dir, const char *label)
{
    char root[PATH_MAX];
    if (!realpath(dir, root)) return ce_fail(ctx, CE_ERR_IO, "cannot resolve %s: %s", dir, strerror(errno));
    /* nftw has no user pointer; this runs once per unpack, never concurrently */
    g_root = root;
    g_rootlen = strlen(root);
    g_bad[0] = '\0';
    char walk[PATH_MAX];
    snprintf(walk, sizeof walk, "%s", root);
    int r = nftw(walk, link_one, 32, FTW_PHYS);
    if (r == 1)
        return ce_fail(ctx, CE_ERR_INTEGRITY, "unsafe entry '%s' in %s: symlink resolving outside the tree; "
                       "nothing was installed from this archive", g_bad, label);
    return CE_OK;
}
