#include "unpack.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "digest.h"
#include "pkgindex.h"
#include "xzmt.h"

/* 1 MiB reads: small blocks make libarchive's xz reader crawl (PERFORMANCE.md). */
#define READ_BLOCK (1u << 20)

/* ---- the entry policy (pure) ---- */

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

/* ---- reading: a plain file, or one that is still being downloaded ---- */

typedef struct reader {
    ce_ctx *ctx;
    const ce_unpack_src *src;
    int fd;
    unsigned char *buf;
    long long done;
    ce_sha256 *md;
    bool incomplete;      /* follow mode: the writer stopped before the end */
    bool failed;
    bool started;         /* the first block was read and the format sniffed */
    bool writer_end;      /* follow mode: the file is complete, EOF is the end */
    bool trust;           /* follow mode with a watch: the writer hashes, not us */
    unsigned gen0;        /* the watch's gen before the file was opened */
    bool slot_held;
    ce_xzmt *xz;          /* .xz input: decoded here on several threads */
} reader;

static void nap(void)
{
    struct timespec ts = { 0, 2 * 1000 * 1000 };
    nanosleep(&ts, NULL);
}

/* Open the archive; in follow mode wait until the .part (or the finished
 * file) exists, or the writer gave up. */
static int reader_open(reader *r)
{
    const ce_unpack_src *s = r->src;
    for (;;) {
        r->fd = open(s->path, O_RDONLY | O_CLOEXEC);
        if (r->fd >= 0) return CE_OK;
        if (!s->part)
            return ce_fail(r->ctx, CE_ERR_IO, "cannot open %s: %s", s->path, strerror(errno));
        r->fd = open(s->part, O_RDONLY | O_CLOEXEC);
        if (r->fd >= 0) return CE_OK;
        if (*s->writer_done) {
            /* it may have been renamed between the two opens */
            r->fd = open(s->path, O_RDONLY | O_CLOEXEC);
            if (r->fd >= 0) return CE_OK;
            r->incomplete = true;
            return CE_ERR_RETRY;
        }
        nap();
    }
}

/* Follow mode: the writer renamed the very file we read to its final name,
 * which it does only after it flushed and verified every byte. */
static bool writer_finished(const reader *r)
{
    struct stat a, b;
    return fstat(r->fd, &a) == 0 && stat(r->src->path, &b) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

/* A decode slot (unpack.h): held while there is work, given back while waiting. */
static void slot_take(reader *r)
{
    if (!r->src->slots || r->slot_held) return;
    ce_slots_take(r->src->slots, r->src->slot_id, r->src->size);
    r->slot_held = true;
}

static void slot_give(reader *r)
{
    if (!r->slot_held) return;
    ce_slots_give(r->src->slots, r->src->slot_id);
    r->slot_held = false;
}

/* Follow mode, out of bytes: without the slot, until a block more is there
 * (or the rest of the file, or the writer finished or stopped).  false: the
 * xz decoding thread is being stopped, give up. */
static bool wait_bytes(reader *r)
{
    const ce_unpack_src *s = r->src;
    slot_give(r);
    long long want = READ_BLOCK;
    if (s->size >= 0 && s->size - r->done < want) want = s->size - r->done;
    for (;;) {
        if (r->xz && ce_xzmt_stopping(r->xz)) return false;
        nap();
        struct stat st;
        if (fstat(r->fd, &st) == 0 && st.st_size - r->done >= want) return true;
        if (*s->writer_done || writer_finished(r)) return true;
    }
}

/* Next bytes.  In follow mode "no bytes yet" is never the end: the end is
 * the manifest's size, or (size or not) the writer renaming the file after
 * it verified; when the writer stops without that (a failure) the read
 * fails with r->incomplete.  A writer that restarted (a server ignoring
 * Range truncates the .part) is not detected here: the digest of what was
 * read decides, and the caller unpacks the verified file again. */
static ssize_t reader_fill(reader *r)
{
    const ce_unpack_src *s = r->src;
    for (;;) {
        size_t want = READ_BLOCK;
        if (s->size >= 0) {
            if (r->done >= s->size) return 0;
            if ((long long)want > s->size - r->done) want = (size_t)(s->size - r->done);
        }
        slot_take(r);
        ssize_t n = read(r->fd, r->buf, want);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            r->failed = true;
            return -1;
        }
        if (n > 0) {
            if (!r->trust) ce_sha256_update(r->md, r->buf, (size_t)n);
            r->done += n;
            return n;
        }
        /* end of the bytes written so far */
        if (!s->part || r->writer_end) return 0;
        if (writer_finished(r)) {
            r->writer_end = true; /* its last bytes may have landed after our read */
            continue;
        }
        if (*s->writer_done) {
            /* it may have renamed the file just before it said so */
            if (writer_finished(r)) {
                r->writer_end = true;
                continue;
            }
            r->incomplete = true;
            return -1;
        }
        if (!wait_bytes(r)) return -1;
    }
}

static ssize_t xz_pull(void *ud, const unsigned char **buf)
{
    reader *r = ud;
    *buf = r->buf;
    return reader_fill(r);
}

/* Compressed bytes, or for .xz input the plain tar decoded by ce_xzmt: the
 * first block decides (libarchive then sees a tar, and its own filters
 * handle everything else).  Every compressed byte passes reader_fill, so the
 * digest is the same either way. */
static la_ssize_t read_cb(struct archive *a, void *ud, const void **buf)
{
    reader *r = ud;
    ssize_t n = 0;
    if (!r->started) {
        r->started = true;
        n = reader_fill(r);
        if (n > 0 && ce_xzmt_magic(r->buf, (size_t)n)) {
            r->xz = ce_xzmt_new(xz_pull, r, r->buf, (size_t)n, 0);
            if (!r->xz) {
                archive_set_error(a, ENOMEM, "out of memory for the xz decoder");
                return -1;
            }
        }
    } else if (!r->xz) {
        n = reader_fill(r);
    }
    if (r->xz) {
        n = ce_xzmt_read(r->xz, buf);
        if (n < 0 && !ce_xzmt_pull_failed(r->xz)) {
            archive_set_error(a, ce_xzmt_errno(r->xz), "%s", ce_xzmt_error(r->xz));
            return -1;
        }
    } else {
        *buf = r->buf;
    }
    if (n < 0) {
        archive_set_error(a, EIO, r->incomplete ? "download stopped before the end of the archive"
                                                : "read error");
        return -1;
    }
    return n;
}

/* ---- extraction ---- */

static int refuse(ce_ctx *ctx, const ce_unpack_src *s, const char *entry, const char *why)
{
    if (!entry) entry = "(unnamed)";
    int n = strlen(entry) > 200 ? 200 : (int)strlen(entry); /* a 4 KiB name would hide the reason */
    return ce_fail(ctx, CE_ERR_INTEGRITY,
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
 * is fatal here, named by its errno, and nothing is committed. */
static int write_failed(ce_ctx *ctx, const ce_unpack_src *s, struct archive *w, const char *rel, const char *what)
{
    int e = archive_errno(w);
    const char *name = e > 0 ? errno_name(e) : NULL;
    char detail[160] = "";
    if (e > 0) snprintf(detail, sizeof detail, " (%s%s%s)", strerror(e), name ? ", " : "", name ? name : "");
    return ce_fail(ctx, e == ENOSPC || e == EDQUOT ? CE_ERR_SPACE : CE_ERR_IO,
                   "cannot %s %s from %s: %s%s; nothing was installed from it%s", what, rel, s->label,
                   archive_error_string(w) ? archive_error_string(w) : "write error", detail,
                   e == ENOSPC || e == EDQUOT ? " (free some space under CUDAENV_ROOT and rerun)" : "");
}

static bool disk_errno(int e)
{
    return e == ENOSPC || e == EDQUOT || e == EIO || e == EROFS || e == EFBIG;
}

/* ---- one-pass per-file sha256 (src->hash_index) ----
 * Each regular file's data blocks are hashed as they are written (holes as
 * the zeros they read back as), so the unpacked tree is never read again to
 * build its pkgs/<name>.sha256.json (pkgindex.h). */
typedef struct file_hash {
    ce_sha256 *md;
    ce_pkgindex_list *list;
    long long pos;          /* bytes of the current file hashed so far */
} file_hash;

static void fh_block(file_hash *fh, const void *buf, size_t size, long long off)
{
    static const unsigned char zeros[65536];
    while (fh->pos < off) {
        size_t n = off - fh->pos < (long long)sizeof zeros ? (size_t)(off - fh->pos) : sizeof zeros;
        ce_sha256_update(fh->md, zeros, n);
        fh->pos += (long long)n;
    }
    ce_sha256_update(fh->md, buf, size);
    fh->pos += (long long)size;
}

/* After the entry was written: record (inode, size, sha256) of rel. */
static int fh_end(ce_ctx *ctx, file_hash *fh, const char *rel, long long size)
{
    if (size > fh->pos) fh_block(fh, NULL, 0, size);
    char hex[CE_SHA256_HEX];
    ce_sha256_final(fh->md, hex);
    struct stat st;
    if (lstat(rel, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == fh->pos &&
        ce_pkgindex_list_add(fh->list, (unsigned long long)st.st_ino, (long long)st.st_size, hex) != 0)
        return ce_fail(ctx, CE_ERR_NOMEM, "out of memory hashing %s", rel);
    return CE_OK;
}

/* 0, or -1 when reading failed (archive_error_string(in)), -2 when writing did. */
static int copy_data(struct archive *in, struct archive *out, file_hash *fh)
{
    const void *buf;
    size_t size;
    la_int64_t off;
    for (;;) {
        int r = archive_read_data_block(in, &buf, &size, &off);
        if (r == ARCHIVE_EOF) return 0;
        if (r < ARCHIVE_WARN) return -1;
        if (archive_write_data_block(out, buf, size, off) < ARCHIVE_OK) return -2;
        if (fh) fh_block(fh, buf, size, off);
    }
}

/* Modes as a package tree wants them, whatever the archive says: directories
 * 0755, files 0755 or 0644 by the owner's x bit (so 0000 becomes readable,
 * group/other never get write). */
static void normalise_mode(struct archive_entry *e)
{
    mode_t t = archive_entry_filetype(e);
    if (t == AE_IFDIR) archive_entry_set_perm(e, 0755);
    else if (t == AE_IFREG) archive_entry_set_perm(e, (archive_entry_perm(e) & S_IXUSR) ? 0755 : 0644);
}

/* Free bytes where the tree goes (CUDAENV_TEST_FREE_BYTES fakes it), -1 unknown. */
static double free_bytes(const char *dir)
{
    const char *fake = ce_settings_now()->test_free_bytes;
    if (fake && *fake) return strtod(fake, NULL);
    struct statvfs vs;
    if (statvfs(dir, &vs) != 0) return -1;
    return (double)vs.f_bavail * (double)vs.f_frsize;
}

/* Before a byte is written: the sizes the entries declare (a sparse entry
 * counts its whole length) must fit in the free space and under a ceiling
 * (CE_UNPACK_RATIO x the archive's size when the manifest gives it, else
 * CE_UNPACK_CEILING), so an xz or sparse-file bomb fails at its header. */
static int check_declared(ce_ctx *ctx, const ce_unpack_src *s, const char *entry, double declared, double avail)
{
    double ceiling = s->size >= 0 ? (double)s->size * CE_UNPACK_RATIO : (double)CE_UNPACK_CEILING;
    if (s->size >= 0 && ceiling < (double)CE_UNPACK_FLOOR) ceiling = (double)CE_UNPACK_FLOOR;
    if (declared > ceiling)
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%s expands to more than %.0f bytes (at '%s'), past the %.0f "
                       "cudaenv accepts for it: an archive bomb? nothing was installed from it", s->label,
                       declared, entry, ceiling);
    if (avail >= 0 && declared > avail)
        return ce_fail(ctx, CE_ERR_SPACE, "%s expands to more than %.0f bytes (at '%s') and only %.0f are free "
                       "under CUDAENV_ROOT (ENOSPC); nothing was installed from it: free some space and rerun",
                       s->label, declared, entry, avail);
    return CE_OK;
}

static int extract(ce_ctx *ctx, const ce_unpack_src *s, struct archive *a, struct archive *w, file_hash *hash)
{
    char top[256] = "";
    char rel[PATH_MAX], hrel[PATH_MAX];
    struct archive_entry *e;
    bool any = false;
    double avail = free_bytes("."), declared = 0;
    for (;;) {
        int r = archive_read_next_header(a, &e);
        if (r == ARCHIVE_EOF) break;
        if (r < ARCHIVE_WARN) return CE_ERR_OTHER; /* reported by the caller */
        const char *path = archive_entry_pathname(e);
        if (!path) return refuse(ctx, s, NULL, "path not representable");
        const char *rest = path;
        if (s->strip_top) {
            if (ce_strip_top(path, top, sizeof top, &rest) != 0)
                return refuse(ctx, s, path, top[0] ? "outside the archive's single top directory"
                                                   : "no top directory");
            if (!*rest) continue; /* the top directory itself */
        }
        if (strlen(rest) >= sizeof rel) return refuse(ctx, s, path, "path longer than PATH_MAX");
        snprintf(rel, sizeof rel, "%s", rest);
        const char *hl = archive_entry_hardlink(e);
        const char *hrest = NULL;
        if (hl) {
            hrest = hl;
            if (s->strip_top && (ce_strip_top(hl, top, sizeof top, &hrest) != 0 || !*hrest))
                return refuse(ctx, s, path, "hardlink target outside the tree");
            if (strlen(hrest) >= sizeof hrel) return refuse(ctx, s, path, "hardlink target longer than PATH_MAX");
            snprintf(hrel, sizeof hrel, "%s", hrest);
        }
        ce_entry ent = { .path = rel, .mode = archive_entry_mode(e),
                         .symlink = archive_entry_symlink(e), .hardlink = hl ? hrel : NULL };
        const char *why = ce_entry_refusal(&ent);
        if (why) return refuse(ctx, s, path, why);
        if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0) {
            declared += (double)archive_entry_size(e);
            int rc = check_declared(ctx, s, rel, declared, avail);
            if (rc != CE_OK) return rc;
        }
        normalise_mode(e);
        archive_entry_set_pathname(e, rel);
        if (hl) archive_entry_set_hardlink(e, hrel);
        if (archive_write_header(w, e) < ARCHIVE_WARN) {
            if (disk_errno(archive_errno(w))) return write_failed(ctx, s, w, rel, "create");
            return refuse(ctx, s, path, archive_error_string(w) ? archive_error_string(w) : "refused by libarchive");
        }
        file_hash *fh = hash && !hl && archive_entry_filetype(e) == AE_IFREG ? hash : NULL;
        if (fh) fh->pos = 0;
        if (archive_entry_size(e) > 0) {
            int c = copy_data(a, w, fh);
            if (c == -1) return CE_ERR_OTHER;
            if (c == -2) return write_failed(ctx, s, w, rel, "write");
        }
        if (archive_write_finish_entry(w) < ARCHIVE_OK) return write_failed(ctx, s, w, rel, "finish");
        int hrc = fh ? fh_end(ctx, fh, rel, (long long)archive_entry_size(e)) : CE_OK;
        if (hrc) return hrc;
        any = true;
    }
    if (!any) return ce_fail(ctx, CE_ERR_INTEGRITY, "%s holds no files", s->label);
    return CE_OK;
}

/* Trusting the writer (unpack.h): what was read is a prefix of the file it
 * verified (fetch.h: the inode read, whether .part or renamed), which it
 * never truncated since before the open; else the pass lost. */
static int await_verified(reader *r)
{
    const ce_unpack_src *s = r->src;
    slot_give(r);
    for (;;) {
        bool stopped = *s->writer_done;
        if (__atomic_load_n(&s->watch->verified, __ATOMIC_ACQUIRE)) break;
        if (stopped) {
            r->incomplete = true;
            return CE_ERR_RETRY;
        }
        nap();
    }
    if (__atomic_load_n(&s->watch->gen, __ATOMIC_SEQ_CST) != r->gen0) {
        r->incomplete = true;
        return CE_ERR_RETRY;
    }
    return CE_OK;
}

/* The digest a cache entry was named after is not its own: it goes. */
static int bad_cache_entry(ce_ctx *ctx, const ce_unpack_src *s, const char *got)
{
    unlink(s->path);
    return ce_fail(ctx, CE_ERR_INTEGRITY, "%s in the cache is not the file it is named after (%s): it was "
                   "deleted and nothing from it was installed; rerun to download %s again", s->path, got, s->label);
}

/* libarchive stops at the tar end marker; the digest covers the whole file. */
static int finish_digest(ce_ctx *ctx, reader *r)
{
    const ce_unpack_src *s = r->src;
    if (r->trust) return await_verified(r);
    for (;;) {
        ssize_t n = reader_fill(r);
        if (n == 0) break;
        if (n < 0) {
            if (r->incomplete) return CE_ERR_RETRY;
            return ce_fail(ctx, CE_ERR_IO, "cannot read %s: %s", s->path, strerror(errno));
        }
    }
    char got[CE_SHA256_HEX];
    ce_sha256_final(r->md, got);
    if (s->cache_entry && ((s->size >= 0 && r->done != s->size) || (s->sha256 && strcmp(got, s->sha256) != 0))) {
        char what[128];
        snprintf(what, sizeof what, "its sha256 is %s", got);
        return bad_cache_entry(ctx, s, what);
    }
    if (s->size >= 0 && r->done != s->size)
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%s: size %lld, the manifest says %lld; the download is corrupt "
                       "(delete it from the cache and retry)", s->label, r->done, s->size);
    if (s->sha256 && strcmp(got, s->sha256) != 0)
        return ce_fail(ctx, CE_ERR_INTEGRITY, "%s: sha256 %s, the manifest says %s; nothing was installed "
                       "(delete it from the cache and retry)", s->label, got, s->sha256);
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
        return ce_fail(ctx, CE_ERR_NOMEM, "out of memory unpacking %s", s->label);
    }
    if ((rc = reader_open(&r)) != CE_OK) {
        free(r.buf);
        ce_sha256_free(r.md);
        return rc == CE_ERR_RETRY ? ce_fail(ctx, rc, "%s: download stopped before it began", s->label) : rc;
    }

    /* Extraction works relative to dest: libarchive's SECURE_NOABSOLUTEPATHS
     * refuses absolute names, and SECURE_SYMLINKS would otherwise also
     * inspect the components of dest itself. */
    int cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (cwd < 0 || chdir(dest) != 0) {
        rc = ce_fail(ctx, CE_ERR_IO, "cannot enter %s: %s", dest, strerror(errno));
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
    struct archive *a = archive_read_new();
    struct archive *w = archive_write_disk_new();
    /* compressions the tarballs use; no support_filter_all: that can spawn
     * external programs (lrzip, lzop, grzip). */
    archive_read_support_filter_xz(a);
    archive_read_support_filter_gzip(a);
    archive_read_support_filter_bzip2(a);
    archive_read_support_filter_zstd(a);
    archive_read_support_format_tar(a);
    /* No ARCHIVE_EXTRACT_OWNER, and deliberately no
     * archive_write_disk_set_standard_lookup: uid/gname lookups through NSS
     * cost minutes on big archives and ownership is not ours to restore. */
    archive_write_disk_set_options(w, ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_PERM |
                                      ARCHIVE_EXTRACT_SECURE_NODOTDOT | ARCHIVE_EXTRACT_SECURE_SYMLINKS |
                                      ARCHIVE_EXTRACT_SECURE_NOABSOLUTEPATHS);
    if (archive_read_open2(a, &r, NULL, read_cb, NULL, NULL) != ARCHIVE_OK) {
        rc = r.incomplete ? CE_ERR_RETRY : CE_ERR_OTHER;
    } else {
        rc = extract(ctx, s, a, w, hash.md ? &hash : NULL);
    }
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
        rc = ce_fail(ctx, CE_ERR_IO, "cannot finish unpacking %s into %s: %s", s->label, dest,
                     archive_error_string(w));
    archive_write_free(w);
    archive_read_free(a);
    ce_xzmt_free(r.xz);
    r.xz = NULL;
    if (fchdir(cwd) != 0 && rc == CE_OK)
        rc = ce_fail(ctx, CE_ERR_IO, "cannot return to the working directory: %s", strerror(errno));
    close(cwd);

    if (rc == CE_OK) rc = finish_digest(ctx, &r);
    if (rc == CE_ERR_INTEGRITY && unreadable[0] && (rc = finish_digest(ctx, &r)) == CE_OK)
        rc = ce_fail(ctx, CE_ERR_INTEGRITY, "%s is not a readable archive: %s; its size and sha256 match the "
                     "manifest, so the published file itself is broken: report it to whoever publishes "
                     "the manifest", s->label, unreadable);
    if (rc == CE_ERR_RETRY)
        ce_fail(ctx, rc, "%s: the download stopped before the archive was complete", s->label);
    slot_give(&r);
    close(r.fd);
    free(r.buf);
    ce_sha256_free(r.md);
    if (rc == CE_OK) rc = ce_unpack_check_links(ctx, dest, s->label);
    if (rc == CE_OK && hash.md) {
        /* verified: save the index (a cache: failing to, compose hashes the tree) */
        ce_quiet q;
        ce_quiet_begin(&q, false);
        ce_pkgindex_list_save(ctx, hash.list, dest, s->hash_index);
        ce_quiet_end(&q);
    }
    ce_sha256_free(hash.md);
    ce_pkgindex_list_free(hash.list);
    return rc;
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
