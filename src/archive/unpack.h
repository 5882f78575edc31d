/* Unpacking archives (cuDNN tarballs) into an empty staging directory with
 * libarchive, under the entry policy of ARCHITECTURE.md.  Full binary only.
 *
 * The policy is a pure function (ce_entry_refusal) so it is unit-tested on
 * its own; ce_unpack applies it to every entry before libarchive writes
 * anything, and also sets libarchive's own SECURE_* flags as a second line.
 *
 * ce_unpack can read an archive that is still being downloaded ("follow"
 * mode): it tails the growing cache/<sha256>.part, hashes every byte it
 * hands to libarchive, and succeeds only when the bytes it consumed have the
 * manifest's size and sha256.  So download, sha256 and unpack overlap in one
 * pass, and nothing unverified is used: the caller commits the staging
 * directory only after a CE_OK.  Running out of written bytes is never the
 * end of the archive: the end is the manifest's size, or (with or without
 * one) the writer renaming the .part to its final name after it verified;
 * a writer that stops without that makes the read fail (CE_ERR_RETRY).
 * A writer that starts over (a server ignoring Range) shows as a digest or
 * format failure: the caller then unpacks the verified file once more.
 *
 * With the writer's ce_fetch_watch (fetch.h) and a size, follow mode does not
 * hash: the download hashed those bytes as they arrived (each archive is
 * hashed once).  It then succeeds only once the watch says the inode it read
 * is the verified file and was never truncated or restarted while it read;
 * anything else is CE_ERR_DOWNLOAD (the caller unpacks the verified file
 * again, hashing it).
 *
 * Follow mode waits on the download's bell (the watch's, bell.h): for the
 * .part to appear, for bytes, for the verdict; it never polls.  A follower
 * without a watch and a bell is refused (CE_ERR_OTHER).
 *
 * Decode slots: with .slots (slots.h), an unpacker holds one while it has
 * bytes to work on and gives it back while it waits for the download, so
 * archives whose bytes are there can decode.
 *
 * File blocks: the contract between the unpacker, libarchive and the xz
 * block decoder (xzmt.h ce_xzmt_sink, xzsink.c; tests/unit/test_xzsink.c).
 *  - When.  .xz input on the block decoder (its first block header records
 *    sizes), a regular entry of a known size of at least 1 MiB (SINK_MIN),
 *    not sparse, not a hardlink, at its first data block (offset 0), which
 *    libarchive hands out as a slice of the decoder's last output (when it
 *    copied, or the decoder is the sequential one, the decoder says no: -1).
 *    The file is the one libarchive just created, opened again O_RDWR |
 *    O_NOFOLLOW: regular, empty, one link, or it is not offered.  Otherwise
 *    libarchive writes the entry, as for every other input.
 *  - While the sink is on, the decoder writes each byte of the entry into
 *    the file exactly once, at its offset, and nothing outside it: a worker
 *    block whose plain bytes lie wholly inside the entry (a "file block")
 *    decodes straight into the file and holds no plain buffer; a block
 *    planned across either end of the entry never does (its bytes come
 *    through memory); every byte that is not a file block's (the block the
 *    decoding thread streams, blocks planned before the reader reached the
 *    entry, the blocks at its two ends) is written, clipped to the entry,
 *    when it is handed to the reader.  The unpacker writes none of it.
 *  - The reader still sees every byte of the entry, in order and without
 *    holes (libarchive's data blocks; an offset out of turn or past the
 *    size is EINVAL), a file block's read back from the file, and hashes
 *    them: the per-file digest (hash_index, a wheel's RECORD) is of what the
 *    file holds, not of what the decoder meant to write.  After the entry's
 *    last data block ce_xzmt_sink_end; the entry must have given exactly its
 *    size (else EIO), and the file must hold exactly the bytes hashed.
 *  - Errors.  The first write into the file (or read back from it) that
 *    fails is kept: the next ce_xzmt_read fails with its errno and
 *    ce_xzmt_sink_end returns it, so ce_unpack fails CE_ERR_SPACE (ENOSPC,
 *    EDQUOT) or CE_ERR_IO naming the file, never a corrupt archive; a block
 *    of the entry that does not decode fails the read (CE_ERR_INTEGRITY).
 *    The file may then hold part of its bytes: as after every failure,
 *    dest is partial and the caller removes it, nothing is committed.  The
 *    decoder's own descriptor of the file (a dup) is closed once the last
 *    file block was read back, or at ce_xzmt_free. */
#ifndef CE_UNPACK_H
#define CE_UNPACK_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "fetch/fetch.h"
#include "slots.h"

/* One archive entry as the policy sees it; paths relative to the tree
 * (the archive's single top directory already stripped). */
typedef struct ce_entry {
    const char *path;       /* "lib/libcudnn.so.8" */
    unsigned mode;          /* st_mode: file type and permission bits */
    const char *symlink;    /* symlink target, NULL if not a symlink */
    const char *hardlink;   /* hardlink target relative to the tree, or NULL */
} ce_entry;

/* NULL when the entry may be written, else why not ("absolute path", ...).
 * Refused: empty, absolute or ".."-containing paths; device nodes, FIFOs,
 * sockets; setuid/setgid bits; symlinks that are absolute or whose target,
 * taken relative to the entry's directory, leaves the tree; hardlinks whose
 * target is not a safe path inside the tree. */
const char *ce_entry_refusal(const ce_entry *e);

/* Strip the single top directory of an archive path.  *top is "" before the
 * first entry and is set from it.  Leading "./" are ignored.  Returns 0 and
 * the rest in *rest ("" for the top directory itself), or -1 when the path
 * is not under the top directory. */
int ce_strip_top(const char *path, char *top, size_t topsz, const char **rest);

/* What an archive may declare before a byte is written (sparse entries
 * count their whole length; an entry of unknown size, a streamed zip's, its
 * bytes as they are read): at most CE_UNPACK_RATIO times its size when
 * the manifest gives one (never less than CE_UNPACK_FLOOR), else
 * CE_UNPACK_CEILING; and never more than the free space. */
#define CE_UNPACK_RATIO 32.0
#define CE_UNPACK_FLOOR (256.0 * 1024 * 1024)
#define CE_UNPACK_CEILING (16.0 * 1024 * 1024 * 1024)

typedef struct ce_unpack_src {
    const char *path;       /* the archive; in follow mode the final cache path */
    const char *part;       /* follow mode: the .part being written, else NULL */
    const volatile int *writer_done; /* follow mode: set non-zero when the download stopped */
    const int *cancel;      /* optional: set non-zero (atomically) when the install failed: the
                               next read fails, CE_ERR_RETRY (the caller drops the tree) */
    const char *label;      /* URL or name used in messages */
    const char *sha256;     /* when set, the bytes read must have this digest ... */
    long long size;         /* ... and this size (-1: unknown) */
    bool strip_top;         /* strip the archive's single top directory */
    const char *only_under; /* a wheel (zip): take only the entries under this prefix
                               ("nvidia/nccl/"), the prefix stripped; skip the rest and
                               the Python side (*.py, *.pyc, __pycache__/); every entry
                               taken must be what its RECORD says (wheel.h) */
    const char *hash_index; /* when set: each file's sha256, computed from the bytes as they
                               are written, saved there once the archive verified
                               (pkgs/<name>.sha256.json, pkgindex.h) */
    const ce_fetch_watch *watch; /* follow mode: the download's (see above), with its bell; its
                               verdict is trusted with a size (else the bytes are hashed here) */
    bool cache_entry;       /* path is a cache file named after its sha256 that nobody hashed
                               yet (fetch.h reader_hashes_cache): a mismatch deletes it */
    ce_slots *slots;        /* optional decode slots (see above), taken as slot_id */
    int slot_id;
} ce_unpack_src;

/* Extract src into dest (an existing, empty directory).  On failure dest
 * holds a partial tree that the caller removes.  Returns CE_ERR_INTEGRITY for
 * an unsafe entry, a corrupt archive, a digest mismatch (naming the entry
 * and the archive), sizes past the ceiling or a wheel member its RECORD does
 * not vouch for, CE_ERR_RETRY in follow mode
 * when the download stopped before the archive was complete (unpack the
 * verified file again; never reported to the user), CE_ERR_SPACE (sizes past the free space, ENOSPC, EDQUOT)
 * or CE_ERR_IO (any other write error, EIO...) naming the file. */
int ce_unpack(ce_ctx *ctx, const ce_unpack_src *src, const char *dest);

/* A follow-mode pass of archive label was lost (CE_ERR_RETRY, or a
 * CE_ERR_INTEGRITY the verified file decides): not an error, but time lost,
 * so -v (CE_EV_INFO) says it and why (why: its failure message, or "")
 * before the verified file is unpacked again. */
void ce_unpack_lost(ce_ctx *ctx, const char *label, const char *why);

/* After extraction: every symlink under dir that resolves must resolve inside
 * dir (catches chains of individually harmless links).  CE_ERR_INTEGRITY. */
int ce_unpack_check_links(const char *dir, const char *label);

#endif
