#include "rmtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* Let us list and empty a directory of ours (toolkits ship read-only ones). */
static void open_up(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && (st.st_mode & S_IRWXU) != S_IRWXU) fchmod(fd, (st.st_mode & 07777) | S_IRWXU);
}

static int open_child(int dfd, const char *name)
{
    int fd = openat(dfd, name, DIR_FLAGS);
    if (fd < 0 && errno == EACCES && fchmodat(dfd, name, 0700, 0) == 0) fd = openat(dfd, name, DIR_FLAGS);
    return fd;
}

/* Unlink every non-directory in fd; the first subdirectory's name goes to
 * sub (on its device), "" when there is none left.  -1 on error (errno). */
static int sweep(int fd, dev_t dev, char *sub, size_t subsz)
{
    sub[0] = '\0';
    int dup_fd = dup(fd);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        if (dup_fd >= 0) close(dup_fd);
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        const char *n = e->d_name;
        if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]))) continue;
        struct stat st;
        if (fstatat(fd, n, &st, AT_SYMLINK_NOFOLLOW) != 0) continue; /* gone meanwhile */
        if (S_ISDIR(st.st_mode)) {
            if (st.st_dev != dev) { /* never cross into another filesystem */
                errno = EXDEV;
                rc = -1;
                break;
            }
            if (!sub[0]) snprintf(sub, subsz, "%s", n);
            continue;
        }
        if (unlinkat(fd, n, 0) != 0 && errno != ENOENT) {
            rc = -1;
            break;
        }
    }
    int e2 = errno;
    closedir(d);
    errno = e2;
    return rc;
}

/* Names of the directories entered, from the top down (no fds held). */
typedef struct stack {
    char **name;
    size_t n, cap;
} stack;

static int push(stack *s, const char *name)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        char **nn = realloc(s->name, cap * sizeof *nn);
        if (!nn) return -1;
        s->name = nn;
        s->cap = cap;
    }
    if (!(s->name[s->n] = strdup(name))) return -1;
    s->n++;
    return 0;
}

int ce_rm_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? CE_OK : ce_fail(CE_ERR_IO, "cannot stat %s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        if (unlink(path) != 0) return ce_fail(CE_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
        return CE_OK;
    }
    int fd = open(path, DIR_FLAGS);
    if (fd < 0) return ce_fail(CE_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    stack s = { 0 };
    char sub[NAME_MAX + 1];
    int rc = CE_OK;
    for (;;) {
        open_up(fd);
        if (sweep(fd, st.st_dev, sub, sizeof sub) != 0) {
            rc = ce_fail(CE_ERR_IO, "cannot remove %s (%zu levels down): %s", path, s.n, strerror(errno));
            break;
        }
        if (sub[0]) { /* go down: one fd at a time, however deep */
            int child = open_child(fd, sub);
            if (child < 0 || push(&s, sub) != 0) {
                rc = ce_fail(CE_ERR_IO, "cannot remove %s (%zu levels down): %s", path, s.n, strerror(errno));
                if (child >= 0) close(child);
                break;
            }
            close(fd);
            fd = child;
            continue;
        }
        if (s.n == 0) break; /* the top is empty */
        /* this directory is empty: go up and remove it */
        int parent = openat(fd, "..", DIR_FLAGS);
        if (parent < 0) {
            rc = ce_fail(CE_ERR_IO, "cannot remove %s (%zu levels down): %s", path, s.n, strerror(errno));
            break;
        }
        close(fd);
        fd = parent;
        s.n--;
        if (unlinkat(fd, s.name[s.n], AT_REMOVEDIR) != 0 && errno != ENOENT) {
            rc = ce_fail(CE_ERR_IO, "cannot remove %s (%zu levels down): %s", path, s.n + 1, strerror(errno));
            free(s.name[s.n]);
            break;
        }
        free(s.name[s.n]);
    }
    close(fd);
    for (size_t i = 0; i < s.n; i++) free(s.name[i]);
    free(s.name);
    if (rc == CE_OK && rmdir(path) != 0 && errno != ENOENT)
        rc = ce_fail(CE_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    return rc;
}
