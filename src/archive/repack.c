/* NVIDIA's archives repacked for a LAN (repack.h): read raw through
 * libarchive's decompression filters, written raw through its zstd filter
 * (or none), hashed as written; a zstd repack is read back and decoded
 * before it is kept. */
#include "repack.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fault.h"
#include "core/proc.h"

ce_repack_fmt ce_repack_parse(const char *name)
{
    return !strcmp(name, "zstd") ? CE_REPACK_ZSTD : !strcmp(name, "tar") ? CE_REPACK_TAR : CE_REPACK_NONE;
}

const char *ce_repack_name(ce_repack_fmt f)
{
    return f == CE_REPACK_ZSTD ? "zstd" : f == CE_REPACK_TAR ? "tar" : "none";
}

const char *ce_repack_suffix(ce_repack_fmt f)
{
    return f == CE_REPACK_ZSTD ? ".tar.zst" : ".tar";
}

typedef struct sink {
    int fd;
    ce_sha256 *md;
    long long n;
    int err;                  /* errno of a failed write */
} sink;

static la_ssize_t sink_write(struct archive *a, void *ud, const void *buf, size_t len)
{
    sink *s = ud;
    /* tests: a compressor's or memory's fault before the bytes are hashed
     * (core/fault.h); libarchive's output buffer is its own to reuse */
    ce_fault_point("repack-out", &(ce_fault_bytes){ (unsigned char *)(uintptr_t)buf, len, s->n });
    const char *p = buf;
    size_t left = len;
    while (left) {
        ssize_t w = write(s->fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            s->err = w < 0 ? errno : EIO;
            archive_set_error(a, s->err, "%s", strerror(s->err));
            return -1;
        }
        p += w;
        left -= (size_t)w;
    }
    ce_sha256_update(s->md, buf, len);
    s->n += (long long)len;
    return (la_ssize_t)len;
}

static int out_open(struct archive *w, ce_repack_fmt fmt, int threads, sink *s)
{
    char n[16];
    snprintf(n, sizeof n, "%d", threads > 0 ? threads : (int)ce_cpu_count());
    int r = fmt == CE_REPACK_ZSTD ? archive_write_add_filter_zstd(w) : archive_write_add_filter_none(w);
    /* level 3 (zstd's default) decodes as fast as any and packs NVIDIA's
     * libraries to ~1.3x their xz size; threads only where libzstd has them */
    if (r == ARCHIVE_OK && fmt == CE_REPACK_ZSTD) {
        archive_write_set_filter_option(w, "zstd", "compression-level", "3");
        archive_write_set_filter_option(w, "zstd", "threads", n);
    }
    if (r == ARCHIVE_OK) r = archive_write_set_format_raw(w);
    if (r == ARCHIVE_OK) r = archive_write_set_bytes_per_block(w, 0);   /* the stream as it is, no padding */
    if (r == ARCHIVE_OK) r = archive_write_open(w, s, NULL, sink_write, NULL);   /* open2 is libarchive 3.6+: Debian 11 has 3.4 */
    if (r != ARCHIVE_OK)
        return ce_fail(CE_ERR_OTHER, "cannot start the %s writer: %s", ce_repack_name(fmt),
                       archive_error_string(w) ? archive_error_string(w) : "libarchive refused");
    return CE_OK;
}

static int write_failed(struct archive *w, const sink *s, const char *label)
{
    int e = s->err;
    return ce_fail(e == ENOSPC || e == EDQUOT ? CE_ERR_SPACE : CE_ERR_IO, "cannot write the repack of %s: %s",
                   label, archive_error_string(w) ? archive_error_string(w) : e ? strerror(e) : "write error");
}

/* a's one raw entry from fd: decoded by any of the compressions the
 * tarballs use (never support_filter_all: external programs), or zstd only */
static int raw_open(struct archive *a, int fd, bool zstd_only)
{
    if (!zstd_only) {
        archive_read_support_filter_xz(a);
        archive_read_support_filter_gzip(a);
        archive_read_support_filter_bzip2(a);
    }
    archive_read_support_filter_zstd(a);
    archive_read_support_format_raw(a);
    struct archive_entry *e;
    return archive_read_open_fd(a, fd, 1 << 20) == ARCHIVE_OK && archive_read_next_header(a, &e) == ARCHIVE_OK
               ? 0 : -1;
}

/* zstd writes no content checksum through libarchive, and the site signs
 * the repack's own digest: a byte the compressor (or the machine's memory)
 * got wrong would be vouched for and unpack silently on every node.  So the
 * repack is read back from out_fd and decoded; its tar stream must hash to
 * what NVIDIA's archive decoded to (want). */
static int read_back(int fd, const char *label, const char want[CE_SHA256_HEX], void *buf)
{
    struct archive *a = archive_read_new();
    ce_sha256 *md = ce_sha256_new();
    int rc = a && md ? CE_OK : ce_fail(CE_ERR_NOMEM, "out of memory reading back the repack of %s", label);
    if (!rc && lseek(fd, 0, SEEK_SET) != 0)
        rc = ce_fail(CE_ERR_IO, "cannot read back the repack of %s: %s", label, strerror(errno));
    if (!rc && raw_open(a, fd, true) != 0)
        rc = ce_fail(CE_ERR_INTEGRITY, "the zstd repack of %s does not read back: %s; nothing was kept",
                     label, archive_error_string(a) ? archive_error_string(a) : "not an archive");
    while (!rc) {
        la_ssize_t n = archive_read_data(a, buf, 1 << 20);
        if (n == 0) break;
        if (n < 0)
            rc = ce_fail(CE_ERR_INTEGRITY, "the zstd repack of %s does not decode: %s; nothing was kept", label,
                         archive_error_string(a) ? archive_error_string(a) : "read error");
        else ce_sha256_update(md, buf, (size_t)n);
    }
    char got[CE_SHA256_HEX];
    if (!rc) ce_sha256_final(md, got);
    if (!rc && strcmp(got, want))
        rc = ce_fail(CE_ERR_INTEGRITY, "the zstd repack of %s decodes to other bytes than the archive "
                     "(sha256 %s, the archive's tar %s); nothing was kept: mirror --repack again, and if it "
                     "happens twice, test this machine's memory", label, got, want);
    if (a) archive_read_free(a);
    if (md) ce_sha256_free(md);
    return rc;
}

int ce_repack_fd(int in_fd, const char *label, ce_repack_fmt fmt, int threads, int out_fd,
                 long long *size, char sha256[CE_SHA256_HEX])
{
    if (fmt != CE_REPACK_ZSTD && fmt != CE_REPACK_TAR)
        return ce_fail(CE_ERR_USAGE, "internal: no repack format for %s", label);
    sink s = { .fd = out_fd, .md = ce_sha256_new() };
    ce_sha256 *tar = ce_sha256_new();   /* the tar stream as decoded: what a read-back must give */
    struct archive *a = archive_read_new(), *w = archive_write_new();
    struct archive_entry *oe = archive_entry_new();
    void *buf = malloc(1 << 20);
    int rc = s.md && tar && a && w && oe && buf ? CE_OK : ce_fail(CE_ERR_NOMEM, "out of memory repacking %s", label);
    if (!rc && raw_open(a, in_fd, false) != 0)
        rc = ce_fail(CE_ERR_INTEGRITY, "cannot read %s to repack it: %s", label,
                     archive_error_string(a) ? archive_error_string(a) : "not an archive");
    else if (!rc && archive_filter_code(a, 0) == ARCHIVE_FILTER_NONE)
        rc = ce_fail(CE_ERR_INTEGRITY, "%s is not compressed: nothing to repack", label);
    if (!rc) rc = out_open(w, fmt, threads, &s);
    if (!rc) {
        archive_entry_set_pathname(oe, "data");
        archive_entry_set_filetype(oe, AE_IFREG);
        archive_entry_set_perm(oe, 0644);
        if (archive_write_header(w, oe) != ARCHIVE_OK) rc = write_failed(w, &s, label);
    }
    while (!rc) {
        la_ssize_t n = archive_read_data(a, buf, 1 << 20);
        if (n == 0) break;
        if (n < 0) {
            rc = ce_fail(CE_ERR_INTEGRITY, "cannot decode %s to repack it: %s", label,
                         archive_error_string(a) ? archive_error_string(a) : "read error");
            break;
        }
        ce_sha256_update(tar, buf, (size_t)n);
        if (archive_write_data(w, buf, (size_t)n) != n) rc = write_failed(w, &s, label);
    }
    if (!rc && archive_write_close(w) != ARCHIVE_OK) rc = write_failed(w, &s, label);
    if (!rc && fmt == CE_REPACK_ZSTD) {   /* a plain .tar is the stream itself, hashed as written */
        char want[CE_SHA256_HEX];
        ce_sha256_final(tar, want);
        rc = read_back(out_fd, label, want, buf);
    }
    if (!rc) {
        ce_sha256_final(s.md, sha256);
        *size = s.n;
    }
    if (a) archive_read_free(a);
    if (w) archive_write_free(w);
    if (oe) archive_entry_free(oe);
    if (s.md) ce_sha256_free(s.md);
    if (tar) ce_sha256_free(tar);
    free(buf);
    return rc;
}
