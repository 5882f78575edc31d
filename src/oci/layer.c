/* Building a toolchain's layer (layer.h) in one pass: libarchive writes the
 * tar (pax) to a callback that hashes it (the diff_id) and hands the bytes
 * to a second archive, raw format through the gzip filter, whose output is
 * hashed (the digest) and written to the file. */
#include "layer.h"
#include "image.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fetch/digest.h"
#include "store/adopt.h"
#include "store/usage.h"

typedef struct sink {
    ce_ctx *ctx;
    struct archive *gz;      /* raw + gzip: the compressed stream */
    ce_sha256 *tar_h, *gz_h;
    int fd;
    long long size;
    int werr;                /* errno of a failed write, 0 */
} sink;

static la_ssize_t on_tar(struct archive *a, void *ud, const void *buf, size_t n)
{
    (void)a;
    sink *s = ud;
    ce_sha256_update(s->tar_h, buf, n);
    return archive_write_data(s->gz, buf, n) < 0 ? -1 : (la_ssize_t)n;
}

static la_ssize_t on_gz(struct archive *a, void *ud, const void *buf, size_t n)
{
    (void)a;
    sink *s = ud;
    ce_sha256_update(s->gz_h, buf, n);
    for (size_t off = 0; off < n;) {
        ssize_t w = write(s->fd, (const char *)buf + off, n - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            s->werr = w < 0 ? errno : EIO;
            return -1;
        }
        off += (size_t)w;
    }
    s->size += (long long)n;
    return (la_ssize_t)n;
}

/* byte order, whatever the locale */
static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int skip_dots(const struct dirent *d)
{
    return strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0;
}

typedef struct walk {
    ce_ctx *ctx;
    struct archive *tar;
    struct archive_entry *e;
    char *buf;
    long long entries;
} walk;

static int write_failed(walk *w, const char *path)
{
    return ce_fail(CE_ERR_IO, "cannot write the layer (at %s): %s", path,
                   archive_error_string(w->tar) ? archive_error_string(w->tar) : "write error");
}

static int add_file(walk *w, const char *abs, const char *rel, const struct stat *st)
{
    archive_entry_clear(w->e);
    archive_entry_set_pathname(w->e, rel);
    archive_entry_set_uid(w->e, 0);
    archive_entry_set_gid(w->e, 0);
    archive_entry_set_mtime(w->e, CE_OCI_LAYER_MTIME, 0);
    archive_entry_set_perm(w->e, st->st_mode & 0777);
    int fd = -1;
    if (S_ISDIR(st->st_mode)) {
        archive_entry_set_filetype(w->e, AE_IFDIR);
    } else if (S_ISLNK(st->st_mode)) {
        char target[4096];
        ssize_t n = readlink(abs, target, sizeof target - 1);
        if (n < 0) return ce_fail(CE_ERR_IO, "cannot read the link %s: %s", abs, strerror(errno));
        target[n] = '\0';
        archive_entry_set_filetype(w->e, AE_IFLNK);
        archive_entry_set_perm(w->e, 0777);
        archive_entry_set_symlink(w->e, target);
    } else if (S_ISREG(st->st_mode)) {
        archive_entry_set_filetype(w->e, AE_IFREG);
        archive_entry_set_size(w->e, st->st_size);
        if ((fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
            return ce_fail(CE_ERR_IO, "cannot read %s: %s", abs, strerror(errno));
    } else {
        return ce_fail(CE_ERR_OTHER, "%s is not a file, directory or symlink: a toolchain image holds "
                       "none; remove it or reinstall the toolchain", abs);
    }
    int rc = CE_OK;
    if (archive_write_header(w->tar, w->e) < ARCHIVE_WARN) rc = write_failed(w, rel);
    for (long long left = st->st_size; rc == CE_OK && fd >= 0 && left > 0;) {
        ssize_t n = read(fd, w->buf, left < (1 << 20) ? (size_t)left : (1u << 20));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            rc = ce_fail(CE_ERR_IO, "cannot read %s: %s", abs, n < 0 ? strerror(errno) : "it shrank while read");
            break;
        }
        if (archive_write_data(w->tar, w->buf, (size_t)n) != n) rc = write_failed(w, rel);
        left -= n;
    }
    if (fd >= 0) close(fd);
    w->entries++;
    return rc;
}

/* An adopted toolkit's toolchain is a directory of absolute links to the
 * toolkit's top-level entries (store/adopt.c): the layer holds what they
 * point at (a relative link there stays a link), so the image is the tree
 * itself, not links into a machine's /usr/local.  abs becomes the target. */
static int adopted_entry(char *abs, struct stat *st)
{
    char target[4096];
    ssize_t n = readlink(abs, target, sizeof target - 1);
    if (n < 0) return ce_fail(CE_ERR_IO, "cannot read the link %s: %s", abs, strerror(errno));
    target[n] = '\0';
    if (target[0] != '/') return CE_OK;
    if (lstat(target, st) != 0) return ce_fail(CE_ERR_IO, "cannot read %s (%s points there): %s", target, abs,
                                               strerror(errno));
    snprintf(abs, 4200, "%s", target);
    return CE_OK;
}

/* The entries under abs (rel: its path in the layer, "" at the top), sorted. */
static int add_dir(walk *w, const char *abs, const char *rel)
{
    struct dirent **names;
    int n = scandir(abs, &names, skip_dots, by_name);
    if (n < 0) return ce_fail(CE_ERR_IO, "cannot read the directory %s: %s", abs, strerror(errno));
    int rc = CE_OK;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char a[4200], r[4200];
        struct stat st;
        if (rc != CE_OK || (!rel[0] && (!strcmp(name, CE_USAGE_NAME) || !strcmp(name, CE_ADOPTED_NAME) ||
                                                 !strcmp(name, CE_OCI_ORIGIN_NAME)))) continue;
        if (ce_path_join(a, sizeof a, abs, name) != CE_OK ||
            snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", name) >= (int)sizeof r) {
            rc = ce_fail(CE_ERR_OTHER, "path too long under %s", abs);
        } else if (lstat(a, &st) != 0 || (!rel[0] && S_ISLNK(st.st_mode) && (rc = adopted_entry(a, &st)))) {
            rc = rc ? rc : ce_fail(CE_ERR_IO, "cannot read %s: %s", a, strerror(errno));
        } else if ((rc = add_file(w, a, r, &st)) == CE_OK && S_ISDIR(st.st_mode)) {
            rc = add_dir(w, a, r);
        }
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

int ce_oci_layer_build(ce_ctx *ctx, const char *tree, const char *dir, ce_oci_layer *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s/.oci-layer-XXXXXX", dir);
    sink s = { .ctx = ctx, .fd = mkostemp(out->path, O_CLOEXEC) };
    if (s.fd < 0) {
        out->path[0] = '\0';
        return ce_fail(CE_ERR_IO, "cannot create a file in %s: %s", dir, strerror(errno));
    }
    walk w = { .ctx = ctx, .buf = malloc(1u << 20), .e = archive_entry_new() };
    s.tar_h = ce_sha256_new();
    s.gz_h = ce_sha256_new();
    s.gz = archive_write_new();
    w.tar = archive_write_new();
    int rc = CE_OK;
    if (!w.buf || !w.e || !s.tar_h || !s.gz_h || !s.gz || !w.tar)
        rc = ce_fail(CE_ERR_NOMEM, "out of memory building the layer of %s", tree);
    struct archive_entry *raw = rc == CE_OK ? archive_entry_new() : NULL;
    if (rc == CE_OK) {
        /* no timestamp nor name in the gzip header: the same tar, the same bytes */
        archive_write_add_filter_gzip(s.gz);
        archive_write_set_filter_option(s.gz, "gzip", "timestamp", NULL);
        archive_write_set_format_raw(s.gz);
        archive_write_set_bytes_in_last_block(s.gz, 1);
        archive_write_set_format_pax_restricted(w.tar);
        if (!raw || archive_write_open(s.gz, &s, NULL, on_gz, NULL) != ARCHIVE_OK)
            rc = ce_fail(CE_ERR_OTHER, "cannot start the gzip stream: %s", archive_error_string(s.gz));
    }
    if (rc == CE_OK) {
        archive_entry_set_pathname(raw, "layer.tar");
        archive_entry_set_filetype(raw, AE_IFREG);
        archive_entry_set_perm(raw, 0644);
        if (archive_write_header(s.gz, raw) < ARCHIVE_WARN ||
            archive_write_open(w.tar, &s, NULL, on_tar, NULL) != ARCHIVE_OK)
            rc = ce_fail(CE_ERR_OTHER, "cannot start the layer: %s", archive_error_string(w.tar));
    }
    if (rc == CE_OK) rc = add_dir(&w, tree, "");
    if (w.tar && archive_write_close(w.tar) != ARCHIVE_OK && rc == CE_OK) rc = write_failed(&w, "the end");
    if (s.gz && archive_write_close(s.gz) != ARCHIVE_OK && rc == CE_OK)
        rc = ce_fail(CE_ERR_IO, "cannot write %s: %s", out->path, s.werr ? strerror(s.werr) : archive_error_string(s.gz));
    if (rc == CE_OK && fsync(s.fd) != 0 && errno != EINVAL)
        rc = ce_fail(CE_ERR_IO, "cannot write %s: %s", out->path, strerror(errno));
    if (rc == CE_OK) {
        char hex[CE_SHA256_HEX];
        ce_sha256_final(s.tar_h, hex);
        snprintf(out->diff_id, sizeof out->diff_id, "sha256:%s", hex);
        ce_sha256_final(s.gz_h, hex);
        snprintf(out->digest, sizeof out->digest, "sha256:%s", hex);
        out->size = s.size;
        out->entries = w.entries;
    }
    close(s.fd);
    if (rc != CE_OK) {
        unlink(out->path);
        out->path[0] = '\0';
    }
    if (w.tar) archive_write_free(w.tar);
    if (s.gz) archive_write_free(s.gz);
    if (raw) archive_entry_free(raw);
    if (w.e) archive_entry_free(w.e);
    ce_sha256_free(s.tar_h);
    ce_sha256_free(s.gz_h);
    free(w.buf);
    return rc;
}
