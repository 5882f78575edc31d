/* A toolchain's files as (dev, inode, size), written with its receipt (usage.h). */
#include "usage.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/path.h"
#include "core/walk.h"


#define USAGE_MAGIC "CEUSE1\n"
typedef struct usage_head { char magic[8]; uint64_t dev, ino, n; } usage_head;   /* dev/ino: the prefix's own */

typedef struct recs { ce_usage_rec *v; size_t n, cap; } recs;

static int record_one(const ce_walk_entry *e, void *arg)
{
    recs *r = arg;
    const struct stat *st = e->st;
    if (e->kind != CE_WALK_ENTRY || !S_ISREG(st->st_mode)) return 0;
    if (r->n == r->cap) {
        size_t c = r->cap ? r->cap * 2 : 4096;
        ce_usage_rec *nv = realloc(r->v, c * sizeof *nv);
        if (!nv) return CE_ERR_NOMEM;
        r->v = nv;
        r->cap = c;
    }
    r->v[r->n++] = (ce_usage_rec){ (uint64_t)st->st_dev, (uint64_t)st->st_ino, (int64_t)st->st_size };
    return 0;
}

int ce_usage_record(const char *prefix)
{
    struct stat top;
    char path[CE_PATH_MAX];
    int rc = ce_path_join(path, sizeof path, prefix, CE_USAGE_NAME);
    if (rc) return ce_fail(CE_ERR_OTHER, "path too long: %s/%s", prefix, CE_USAGE_NAME);
    if (lstat(prefix, &top) != 0) return ce_fail(CE_ERR_IO, "cannot read %s: %s", prefix, strerror(errno));
    unlink(path);   /* never counted in itself */
    recs r = { 0 };
    if (ce_walk(prefix, record_one, &r) != 0) {
        free(r.v);
        return ce_fail(CE_ERR_NOMEM, "out of memory recording the files of %s", prefix);
    }
    usage_head h = { USAGE_MAGIC, (uint64_t)top.st_dev, (uint64_t)top.st_ino, r.n };
    size_t len = sizeof h + r.n * sizeof *r.v;
    char *buf = malloc(len);
    if (!buf) { free(r.v); return ce_fail(CE_ERR_NOMEM, "out of memory"); }
    memcpy(buf, &h, sizeof h);
    if (r.n) memcpy(buf + sizeof h, r.v, r.n * sizeof *r.v);
    free(r.v);
    rc = ce_file_write_atomic(path, buf, len, 0644);
    free(buf);
    return rc;
}

/* The record of prefix when it is there and names this very directory (a
 * copied or restored tree has other inodes: walked instead); malloc'ed. */
ce_usage_rec *ce_usage_read(const char *prefix, size_t *n)
{
    char path[CE_PATH_MAX];
    struct stat top, st;
    if (ce_path_join(path, sizeof path, prefix, CE_USAGE_NAME) != CE_OK || lstat(prefix, &top) != 0) return NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return NULL;
    usage_head h;
    ce_usage_rec *v = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, &h, sizeof h) == (ssize_t)sizeof h &&
        !memcmp(h.magic, USAGE_MAGIC, sizeof h.magic) && h.dev == (uint64_t)top.st_dev &&
        h.ino == (uint64_t)top.st_ino && h.n < (1u << 26) &&
        (uint64_t)st.st_size == sizeof h + h.n * sizeof *v && (v = malloc(h.n ? h.n * sizeof *v : 1)) &&
        (h.n == 0 || read(fd, v, h.n * sizeof *v) == (ssize_t)(h.n * sizeof *v))) {
        *n = h.n;
    } else {
        free(v);
        v = NULL;
    }
    close(fd);
    return v;
}
