/* Extraction (unpack.h): every entry through the policy (unpack_policy.c)
 * and the declared-size ceiling before libarchive writes it (an entry of
 * unknown size, a streamed zip's, counted as it is read), write errors
 * named by errno, each file hashed as it is written for the package index
 * and, from a wheel, for its RECORD (wheel.h); the archive's bytes come from
 * the reader (unpack_read.c, unpack_int.h). */
#include "unpack_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "fetch/digest.h"
#include "hashq.h"
#include "pkgindex.h"
#include "wheel.h"
#include "xzmt.h"

/* ---- extraction ---- */

static int refuse(const ce_unpack_src *s, const char *entry, const char *why)
{
    if (!entry) entry = "(unnamed)";
    int n = strlen(entry) > 200 ? 200 : (int)strlen(entry); /* a 4 KiB name would hide the reason */
    return ce_fail(CE_ERR_INTEGRITY,
                   "unsafe entry '%.*s%s' in %s: %s; nothing was installed from this archive "
                   "(the archive or its manifest entry is wrong: report it to whoever publishes it)",
                   n, entry, entry[n] ? "..." : "", s->label, why);
}

/* The names a full or failing disk gives, for messages that say which. */
static const char *errno_name(int e)
{
    switch (e) {
    case ENOSPC: return "ENOSPC";
    case EDQUOT: return "EDQUOT";
    case EIO: return "EIO";
    case EROFS: return "EROFS";
    case EFBIG: return "EFBIG";
    case ENOMEM: return "ENOMEM";
    default: return NULL;
    }
}

/* libarchive reports a failed write(2) as ARCHIVE_WARN: every write error
 * is fatal here, named by its errno e (why: what the writer said, if more),
 * and nothing is committed. */
static int write_errno(const ce_unpack_src *s, int e, const char *why, const char *rel,
                       const char *what)
{
    const char *name = e > 0 ? errno_name(e) : NULL;
    char detail[160] = "";
    if (e > 0) snprintf(detail, sizeof detail, " (%s%s%s)", strerror(e), name ? ", " : "", name ? name : "");
    return ce_fail(e == ENOSPC || e == EDQUOT ? CE_ERR_SPACE : CE_ERR_IO,
                   "cannot %s %s from %s: %s%s; nothing was installed from it%s", what, rel, s->label,
                   why ? why : "write error", detail,
                   e == ENOSPC || e == EDQUOT ? " (free some space under CUDAENV_ROOT and rerun)" : "");
}

static int write_failed(const ce_unpack_src *s, struct archive *w, const char *rel, const char *what)
{
    return write_errno(s, archive_errno(w), archive_error_string(w), rel, what);
}

static bool disk_errno(int e)
{
    return e == ENOSPC || e == EDQUOT || e == EIO || e == EROFS || e == EFBIG;
}

/* ---- one-pass per-file sha256 (src->hash_index, a wheel's RECORD) ----
 * Each regular file's data blocks are hashed as they are written (holes as
 * the zeros they read back as), so the unpacked tree is never read again to
 * build its pkgs/<name>.sha256.json (pkgindex.h), and a wheel's members are
 * checked against its RECORD by the bytes written (wheel.h).  For the index
 * alone (not a wheel) the digests are made on a thread of their own
 * (hashq.h) while this one writes. */
typedef struct file_hash {
    ce_sha256 *md;
    ce_pkgindex_list *list; /* NULL: no index (a wheel without src->hash_index) */
    long long pos;          /* bytes of the current file hashed so far */
    ce_hashq *q;            /* set: the hashing thread digests and fills list */
} file_hash;

static void fh_update(file_hash *fh, const void *buf, size_t n)
{
    if (fh->q) ce_hashq_data(fh->q, buf, n);
    else ce_sha256_update(fh->md, buf, n);
}

static void fh_block(file_hash *fh, const void *buf, size_t size, long long off)
{
    static const unsigned char zeros[65536];
    while (fh->pos < off) {
        size_t n = off - fh->pos < (long long)sizeof zeros ? (size_t)(off - fh->pos) : sizeof zeros;
        fh_update(fh, zeros, n);
        fh->pos += (long long)n;
    }
    if (size) fh_update(fh, buf, size);
    fh->pos += (long long)size;
}

/* After the entry of size bytes (-1: unknown, what was read) was written:
 * its sha256 in hex (not with the hashing thread: "" then), and (inode,
 * size, sha256) of rel in the index.  The
 * file must hold exactly the bytes hashed: the index, the receipt and a
 * wheel's RECORD check all stand for them. */
static int fh_end(const ce_unpack_src *s, file_hash *fh, const char *rel, long long size,
                  char hex[CE_SHA256_HEX])
{
    if (size > fh->pos) fh_block(fh, NULL, 0, size);
    hex[0] = '\0';
    if (!fh->q) ce_sha256_final(fh->md, hex);
    struct stat st;
    bool reg = lstat(rel, &st) == 0 && S_ISREG(st.st_mode);
    if (!reg || st.st_size != fh->pos)
        return ce_fail(CE_ERR_IO, "cannot write %s from %s: %lld bytes were written, the file holds %lld; "
                       "nothing was installed from it", rel, s->label, fh->pos, reg ? (long long)st.st_size : -1ll);
    if (fh->q) {
        ce_hashq_end(fh->q, (unsigned long long)st.st_ino, (long long)st.st_size);
        return CE_OK;
    }
    if (fh->list && ce_pkgindex_list_add(fh->list, (unsigned long long)st.st_ino, (long long)st.st_size, hex) != 0)
        return ce_fail(CE_ERR_NOMEM, "out of memory hashing %s", rel);
    return CE_OK;
}

/* The .xz decoder writes a big regular file itself (xzmt.h, ce_xzmt_sink):
 * the file libarchive just created, opened again, empty and not through a
 * symlink.  -1: not so (libarchive writes it), else as ce_xzmt_sink. */
static int sink_open(ce_xzmt *x, const char *rel, const void *first, long long size)
{
    int fd = open(rel, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    int rc = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 && st.st_nlink == 1
                 ? ce_xzmt_sink(x, first, fd, (unsigned long long)size)
                 : -1;
    close(fd);
    return rc;
}

/* 0, or -1 when reading failed (archive_error_string(in)), -2 when writing
 * did (archive_errno(out)), -3 when the decoder's writing of the file did
 * (*werr), -4 when an entry of unknown size went past cap bytes (before a
 * byte past them is written).  sink: the decoder may write this entry of
 * size bytes (rel).  *got: where the entry's data ended (or would have). */
static int copy_data(struct archive *in, struct archive *out, file_hash *fh, ce_xzmt *sink, const char *rel,
                     long long total, double cap, long long *got, int *werr)
{
    const void *buf;
    size_t size;
    la_int64_t off;
    long long next = 0;   /* sunk: the file's bytes come in order, without holes */
    int sunk = -1, rc = 0;   /* sunk: sink_open's answer at the first block (-1: libarchive writes) */
    *got = 0;
    for (bool first = true;; first = false) {
        int r = archive_read_data_block(in, &buf, &size, &off);
        if (r == ARCHIVE_EOF) break;
        if (r < ARCHIVE_WARN) {
            rc = -1;
            break;
        }
        if ((long long)off + (long long)size > *got) *got = (long long)off + (long long)size;
        if (cap >= 0 && (double)*got > cap) {
            rc = -4;
            break;
        }
        if (sink && first && off == 0 && size > 0 && (sunk = sink_open(sink, rel, buf, total)) > 0) {
            *werr = sunk;
            rc = -3;
            break;
        }
        if (sunk == 0) {
            if (off != next || (long long)size > total - next) {
                *werr = EINVAL;   /* libarchive gave what a plain entry does not */
                rc = -3;
                break;
            }
            next += (long long)size;
        } else if (archive_write_data_block(out, buf, size, off) < ARCHIVE_OK) {
            rc = -2;
            break;
        }
        if (fh) fh_block(fh, buf, size, off);
    }
    if (sunk >= 0) {
        int e = ce_xzmt_sink_end(sink);   /* a failed write of the decoder's is the error */
        if (e && rc != -2) {
            *werr = e;
            rc = -3;
        } else if (rc == 0 && next != total) {
            *werr = EIO;
            rc = -3;
        }
    }
    return rc;
}

/* Big plain files of .xz input are written by the decoder (sink_open). */
#define SINK_MIN (1ll << 20)

/* Modes as a package tree wants them, whatever the archive says: directories
 * 0755, files 0755 or 0644 by the owner's x bit (so 0000 becomes readable,
 * group/other never get write). */
static void normalise_mode(struct archive_entry *e)
{
    mode_t t = archive_entry_filetype(e);
    if (t == AE_IFDIR) archive_entry_set_perm(e, 0755);
    else if (t == AE_IFREG) archive_entry_set_perm(e, (archive_entry_perm(e) & S_IXUSR) ? 0755 : 0644);
}

/* Free bytes where the tree goes, -1 unknown. */
static double free_bytes(const char *dir)
{
    struct statvfs vs;
    if (statvfs(dir, &vs) != 0) return -1;
    return (double)vs.f_bavail * (double)vs.f_frsize;
}

/* What the entries may declare in all: CE_UNPACK_RATIO x the archive's
 * size when the manifest gives it (at least CE_UNPACK_FLOOR), else
 * CE_UNPACK_CEILING. */
static double ceiling_of(const ce_unpack_src *s)
{
    double ceiling = s->size >= 0 ? (double)s->size * CE_UNPACK_RATIO : (double)CE_UNPACK_CEILING;
    return s->size >= 0 && ceiling < (double)CE_UNPACK_FLOOR ? (double)CE_UNPACK_FLOOR : ceiling;
}

/* Before a byte is written: the sizes the entries declare (a sparse entry
 * counts its whole length; one of unknown size, what it gave so far) must
 * fit in the free space and under the ceiling (ceiling_of), so an xz,
 * sparse-file or zip bomb fails at its header or as it is read. */
static int check_declared(const ce_unpack_src *s, const char *entry, double declared, double avail)
{
    double ceiling = ceiling_of(s);
    if (declared > ceiling)
        return ce_fail(CE_ERR_INTEGRITY, "%s expands to more than %.0f bytes (at '%s'), past the %.0f "
                       "cudaenv accepts for it: an archive bomb? nothing was installed from it", s->label,
                       declared, entry, ceiling);
    if (avail >= 0 && declared > avail)
        return ce_fail(CE_ERR_SPACE, "%s expands to more than %.0f bytes (at '%s') and only %.0f are free "
                       "under CUDAENV_ROOT (ENOSPC); nothing was installed from it: free some space and rerun",
                       s->label, declared, entry, avail);
    return CE_OK;
}

/* The wheel's RECORD, read into memory for the check after the last entry
 * (wheel.h).  CE_ERR_OTHER: libarchive could not read it (the caller says). */
static int read_record(const ce_unpack_src *s, struct archive *a, ce_wheel *wh)
{
    size_t cap = 0, n = 0;
    char *text = NULL;
    for (;;) {
        if (cap - n < 4096) {
            char *t = cap < CE_WHEEL_RECORD_MAX ? realloc(text, cap ? cap * 2 : 16384) : NULL;
            if (!t) {
                free(text);
                return cap < CE_WHEEL_RECORD_MAX
                           ? ce_fail(CE_ERR_NOMEM, "out of memory reading the RECORD of %s", s->label)
                           : ce_fail(CE_ERR_INTEGRITY, "%s: its RECORD is larger than %u bytes; nothing "
                                     "was installed from it", s->label, CE_WHEEL_RECORD_MAX);
            }
            text = t;
            cap = cap ? cap * 2 : 16384;
        }
        la_ssize_t k = archive_read_data(a, text + n, cap - n);
        if (k == 0) break;
        if (k < 0) {
            free(text);
            return CE_ERR_OTHER;
        }
        n += (size_t)k;
    }
    if (!ce_wheel_record(wh, text, n))
        return ce_fail(CE_ERR_INTEGRITY, "%s holds more than one *.dist-info/RECORD: which one vouches for "
                       "its files is not clear; nothing was installed from it", s->label);
    return CE_OK;
}

/* A wheel's entry path: CE_OK with *rest the part taken (only_under
 * stripped), 1 when it is not taken (skipped, or its RECORD read), else
 * the error. */
static int wheel_entry(const ce_unpack_src *s, struct archive *a, struct archive_entry *e,
                       const char *path, ce_wheel *wh, const char **rest)
{
    if (ce_wheel_is_record(path)) {
        int rc = read_record(s, a, wh);
        return rc ? rc : 1;
    }
    if (!(*rest = ce_wheel_takes(path, s->only_under))) {
        /* the wheel's Python side (dist-info, __init__.py): not the library */
        return archive_read_data_skip(a) < ARCHIVE_WARN ? CE_ERR_OTHER : 1;
    }
    if (archive_entry_hardlink(e)) return refuse(s, path, "hardlink in a wheel");
    return CE_OK;
}

/* One regular file's data into rel; an entry of unknown size (a streamed
 * zip's) is read to its end, counted against the bound as it is read, and
 * its length comes back in *len. */
static int entry_data(const ce_unpack_src *s, struct archive *a, struct archive *w,
                      struct archive_entry *e, file_hash *fh, const reader *rd, const char *rel, double *declared,
                      double avail, long long *len)
{
    bool sized = archive_entry_size_is_set(e), hl = archive_entry_hardlink(e) != NULL;
    long long size = sized ? (long long)archive_entry_size(e) : -1;
    *len = size;
    if (sized ? size <= 0 : archive_entry_filetype(e) != AE_IFREG || hl) return CE_OK;
    double room = ceiling_of(s);
    if (avail >= 0 && avail < room) room = avail;
    bool plain = sized && archive_entry_filetype(e) == AE_IFREG && !hl && archive_entry_sparse_count(e) == 0 &&
                 size >= SINK_MIN;
    int werr = 0;
    long long got = 0;
    double cap = sized ? -1 : room > *declared ? room - *declared : 0;
    int c = copy_data(a, w, fh, plain && rd ? rd->xz : NULL, rel, size, cap, &got, &werr);
    if (c == -1) return CE_ERR_OTHER;
    if (c == -2) return write_failed(s, w, rel, "write");
    if (c == -3) return write_errno(s, werr, NULL, rel, "write");
    if (c == -4) {
        int rc = check_declared(s, rel, *declared + (double)got, avail);
        return rc ? rc : ce_fail(CE_ERR_INTEGRITY, "%s: '%s' is larger than it may be", s->label, rel);
    }
    if (!sized) {
        *declared += (double)got;
        *len = got;
    }
    return CE_OK;
}

static int extract(const ce_unpack_src *s, struct archive *a, struct archive *w, file_hash *hash,
                   const reader *rd, ce_wheel *wh)
{
    char top[256] = "";
    char rel[PATH_MAX], hrel[PATH_MAX], member[PATH_MAX];
    struct archive_entry *e;
    bool any = false;
    double avail = free_bytes("."), declared = 0;
    for (;;) {
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF) break;
        if (r < ARCHIVE_WARN) return CE_ERR_OTHER; /* reported by the caller */
        const char *path = archive_entry_pathname(e);
        if (!path) return refuse(s, NULL, "path not representable");
        const char *rest = path;
        if (s->only_under) {
            int wrc = wheel_entry(s, a, e, path, wh, &rest);
            if (wrc == 1) continue;
            if (wrc) return wrc;
        } else if (s->strip_top) {
            if (ce_strip_top(path, top, sizeof top, &rest) != 0)
                return refuse(s, path, top[0] ? "outside the archive's single top directory"
                                                   : "no top directory");
            if (!*rest) continue; /* the top directory itself */
        }
        if (strlen(rest) >= sizeof rel || (wh && strlen(path) >= sizeof member))
            return refuse(s, path, "path longer than PATH_MAX");
        snprintf(rel, sizeof rel, "%s", rest);
        if (wh) snprintf(member, sizeof member, "%s", path);   /* for RECORD: the entry's name changes below */
        const char *hl = archive_entry_hardlink(e);
        const char *hrest = NULL;
        if (hl) {
            hrest = hl;
            if (s->strip_top && (ce_strip_top(hl, top, sizeof top, &hrest) != 0 || !*hrest))
                return refuse(s, path, "hardlink target outside the tree");
            if (strlen(hrest) >= sizeof hrel) return refuse(s, path, "hardlink target longer than PATH_MAX");
            snprintf(hrel, sizeof hrel, "%s", hrest);
        }
        ce_entry ent = { .path = rel, .mode = archive_entry_mode(e),
                         .symlink = archive_entry_symlink(e), .hardlink = hl ? hrel : NULL };
        const char *why = ce_entry_refusal(&ent);
        if (why) return refuse(s, path, why);
        if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0) {
            declared += (double)archive_entry_size(e);
            int rc = check_declared(s, rel, declared, avail);
            if (rc != CE_OK) return rc;
        }
        normalise_mode(e);
        archive_entry_set_pathname(e, rel);
        if (hl) archive_entry_set_hardlink(e, hrel);
        struct stat old;   /* a path given twice: the file it replaces leaves the index */
        if (hash && hash->list && lstat(rel, &old) == 0 && S_ISREG(old.st_mode) && old.st_nlink == 1) {
            if (hash->q) ce_hashq_drop(hash->q, (unsigned long long)old.st_ino);
            else ce_pkgindex_list_drop(hash->list, (unsigned long long)old.st_ino);
        }
        if (archive_write_header(w, e) < ARCHIVE_WARN) {
            if (disk_errno(archive_errno(w))) return write_failed(s, w, rel, "create");
            return refuse(s, path, archive_error_string(w) ? archive_error_string(w) : "refused by libarchive");
        }
        file_hash *fh = hash && !hl && archive_entry_filetype(e) == AE_IFREG ? hash : NULL;
        if (fh) fh->pos = 0;
        long long len;
        int rc = entry_data(s, a, w, e, fh, rd, rel, &declared, avail, &len);
        if (rc) return rc;
        if (archive_write_finish_entry(w) < ARCHIVE_OK) return write_failed(s, w, rel, "finish");
        char hex[CE_SHA256_HEX];
        if (fh && (rc = fh_end(s, fh, rel, len, hex))) return rc;
        if (fh && wh && ce_wheel_took(wh, member, fh->pos, hex))
            return ce_fail(CE_ERR_NOMEM, "out of memory unpacking %s", s->label);
        any = true;
    }
    if (!any) return ce_fail(CE_ERR_INTEGRITY, "%s holds no files", s->label);
    return CE_OK;
}

int ce_unpack(ce_ctx *ctx, const ce_unpack_src *s, const char *dest)
{
    reader r = { .ctx = ctx, .src = s, .fd = -1 };
    int rc = CE_OK;
    r.trust = s->part && s->watch && s->size >= 0;
    if (r.trust) r.gen0 = __atomic_load_n(&s->watch->gen, __ATOMIC_SEQ_CST);
    r.buf = malloc(READ_BLOCK);
    r.md = ce_sha256_new();
    if (!r.buf || !r.md) {
        free(r.buf);
        ce_sha256_free(r.md);
        return ce_fail(CE_ERR_NOMEM, "out of memory unpacking %s", s->label);
    }
    if ((rc = unpack_reader_open(&r)) != CE_OK) {
        free(r.buf);
        ce_sha256_free(r.md);
        return rc == CE_ERR_RETRY ? ce_fail(rc, "%s: download stopped before it began", s->label) : rc;
    }

    /* Extraction works relative to dest: libarchive's SECURE_NOABSOLUTEPATHS
     * refuses absolute names, and SECURE_SYMLINKS would otherwise also
     * inspect the components of dest itself. */
    int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cwd < 0 || chdir(dest) != 0) {
        rc = ce_fail(CE_ERR_IO, "cannot enter %s: %s", dest, strerror(errno));
        if (cwd >= 0) close(cwd);
        close(r.fd);
        free(r.buf);
        ce_sha256_free(r.md);
        return rc;
    }

    file_hash hash = { 0 };
    if (s->hash_index && (!(hash.md = ce_sha256_new()) || !(hash.list = ce_pkgindex_list_new()))) {
        ce_sha256_free(hash.md);   /* no one-pass index: compose hashes the tree instead */
        hash.md = NULL;
    }
    /* a wheel's members are hashed for its RECORD, index or not */
    ce_wheel *wh = s->only_under ? ce_wheel_new() : NULL;
    if (s->only_under && (!wh || (!hash.md && !(hash.md = ce_sha256_new()))))
        rc = ce_fail(CE_ERR_NOMEM, "out of memory unpacking %s", s->label);
    struct archive *a = archive_read_new();
    struct archive *w = archive_write_disk_new();
    /* compressions the tarballs use; no support_filter_all: that can spawn
     * external programs (lrzip, lzop, grzip). */
    archive_read_support_filter_xz(a);
    archive_read_support_filter_gzip(a);
    archive_read_support_filter_bzip2(a);
    archive_read_support_filter_zstd(a);
    archive_read_support_format_tar(a);
    /* wheels are zips; read only for them, as a stream (the download may still be running) */
    if (s->only_under) archive_read_support_format_zip_streamable(a);
    /* No ARCHIVE_EXTRACT_OWNER, and deliberately no
     * archive_write_disk_set_standard_lookup: uid/gname lookups through NSS
     * cost minutes on big archives and ownership is not ours to restore. */
    archive_write_disk_set_options(w, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                      ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                      ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
    if (rc != CE_OK) {
        /* said above */
    } else if (archive_read_open2(a, &r, NULL, unpack_read_cb, NULL, NULL) != ARCHIVE_OK) {
        rc = r.incomplete ? CE_ERR_RETRY : CE_ERR_OTHER;
    } else {
        /* the index's digests on their own thread, the ring from the decoders'
         * memory; not for .xz (its first block is read by now): xz's decoder
         * threads fill the cores, and the ring's copy of every byte made the
         * 16-core install from loopback 2-10 % slower (H100, 3 paired rounds;
         * one 540 MB .tar.xz on 2 cores: 7.13 s with it, 7.02 s without) */
        if (hash.md && !s->only_under && !r.xz && unpack_mem_take(&r, (long long)CE_HASHQ_SLOT * CE_HASHQ_SLOTS))
            hash.q = ce_hashq_new(hash.list, CE_HASHQ_SLOT, CE_HASHQ_SLOTS);
        rc = extract(s, a, w, hash.md ? &hash : NULL, s->only_under ? NULL : &r, wh);
        if (rc == CE_OK && unpack_xz_rest(a, &r) != 0) rc = CE_ERR_OTHER;   /* the xz index and footer */
    }
    unpack_reader_stop(&r);   /* the decoding threads joined: they may be waiting for bytes */
    if (hash.q && rc != CE_OK) ce_hashq_free(hash.q);   /* the index is not saved */
    else if (hash.q && ce_hashq_finish(hash.q) != 0)
        rc = ce_fail(CE_ERR_NOMEM, "out of memory hashing the files of %s", s->label);
    hash.q = NULL;
    char unreadable[512] = "";
    if (rc == CE_ERR_OTHER) {
        /* libarchive could not read it: whether the file is the manifest's
         * (then the published archive is broken) or not (a corrupt cache or
         * a download that started over) is for the digest to say, below */
        rc = r.incomplete ? CE_ERR_RETRY : CE_ERR_INTEGRITY;
        snprintf(unreadable, sizeof unreadable, "%s",
                 archive_error_string(a) ? archive_error_string(a) : "unknown error");
    }
    /* close applies deferred directory permissions and times */
    if (archive_write_close(w) != ARCHIVE_OK && rc == CE_OK)
        rc = ce_fail(CE_ERR_IO, "cannot finish unpacking %s into %s: %s", s->label, dest,
                     archive_error_string(w));
    archive_write_free(w);
    archive_read_free(a);
    if (s->slots) ce_slots_done(s->slots, s->slot_id, s->size);   /* its decoder memory back */
    if (fchdir(cwd) != 0 && rc == CE_OK)
        rc = ce_fail(CE_ERR_IO, "cannot return to the working directory: %s", strerror(errno));
    close(cwd);

    if (rc == CE_OK) rc = unpack_finish_digest(&r);
    if (rc == CE_OK && wh) rc = ce_wheel_check(wh, s->label, s->only_under);   /* the bytes the manifest pins */
    ce_wheel_free(wh);
    if (rc == CE_ERR_INTEGRITY && unreadable[0] && (rc = unpack_finish_digest(&r)) == CE_OK)
        rc = ce_fail(CE_ERR_INTEGRITY, "%s is not a readable archive: %s; its size and sha256 match the "
                     "manifest, so the published file itself is broken: report it to whoever publishes "
                     "the manifest", s->label, unreadable);
    if (rc == CE_ERR_RETRY)
        ce_fail(rc, "%s: the download stopped before the archive was complete", s->label);
    unpack_slot_give(&r);
    close(r.fd);
    free(r.buf);
    ce_sha256_free(r.md);
    if (rc == CE_OK) rc = ce_unpack_check_links(dest, s->label);
    if (rc == CE_OK && hash.list) {
        /* verified: save the index (a cache: failing to, compose hashes the tree) */
        ce_quiet q;
        ce_quiet_begin(&q, false);
        ce_pkgindex_list_save(hash.list, dest, s->hash_index);
        ce_quiet_end(&q);
    }
    ce_sha256_free(hash.md);
    ce_pkgindex_list_free(hash.list);
    return rc;
}

void ce_unpack_lost(ce_ctx *ctx, const char *label, const char *why)
{
    ce_emit(ctx, CE_EV_INFO, label, "%s: the unpacking that followed the download was lost (%s); it is unpacked "
            "again from the verified file", label, why && why[0] ? why : "no reason given");
}
