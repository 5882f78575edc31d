/* Wheels (PEP 427, NVIDIA's nvidia-nccl-cu* on PyPI): a zip whose
 * <name>.dist-info/RECORD lists every member with its sha256 (urlsafe
 * base64 without padding) and size.  The manifest pins the wheel's own
 * sha256; RECORD says what each member must hold, so a member cudaenv takes
 * is installed only when RECORD vouches for the very bytes written (unpack.c
 * hashes them as it writes them), whatever shape the zip has (sizes in the
 * local headers or data descriptors, zip64, stored or deflated).
 *
 * The parser and the check are pure (no libarchive, no files), so they are
 * unit-tested on their own (tests/unit/test_wheel.c).  Full binary only. */
#ifndef CE_WHEEL_H
#define CE_WHEEL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "fetch/digest.h"

/* RECORD larger than this is refused (PyTorch's, ~10k members, is ~1 MiB). */
#define CE_WHEEL_RECORD_MAX (16u << 20)

/* The part of member path a library install takes, relative to under
 * ("nvidia/nccl/lib/libnccl.so.2" under "nvidia/nccl/": "lib/libnccl.so.2"),
 * or NULL: not under it, under itself, or the Python side (*.py, *.pyc,
 * __pycache__/). */
const char *ce_wheel_takes(const char *path, const char *under);

/* path is the wheel's RECORD: "<name>.dist-info/RECORD" at the top. */
bool ce_wheel_is_record(const char *path);

/* One RECORD line: path,hash,size (the csv module's quoting). */
typedef struct ce_record_row {
    char *path;
    char algo[16];               /* "sha256", another algorithm's name, "" without a hash */
    char sha256[CE_SHA256_HEX];  /* the digest in hex when algo is sha256, else "" */
    long long size;              /* -1 when not given */
} ce_record_row;

typedef struct ce_record {
    ce_record_row *v;            /* sorted by path */
    size_t n;
} ce_record;

/* Parse RECORD's text.  CE_OK, CE_ERR_NOMEM, or CE_ERR_INTEGRITY with why
 * ("line 3: size 'x' is not a number") set: more than three fields, an
 * empty path, a hash that is not algorithm=urlsafe-base64 (a sha256 of
 * other than 32 bytes), a size that is not a number, a path listed twice. */
int ce_record_parse(const char *text, size_t len, ce_record *out, char *why, size_t whysz);
const ce_record_row *ce_record_find(const ce_record *r, const char *path);
void ce_record_free(ce_record *r);

/* What one unpack took from a wheel, checked once every entry was read. */
typedef struct ce_wheel ce_wheel;
ce_wheel *ce_wheel_new(void);
void ce_wheel_free(ce_wheel *w);
/* A member written: its path in the zip, the bytes written and their
 * sha256.  CE_OK or CE_ERR_NOMEM (no message). */
int ce_wheel_took(ce_wheel *w, const char *path, long long size, const char *sha256);
/* RECORD's bytes (text is the wheel's from now on, malloc'd).  false: the
 * wheel gave a RECORD already (text freed). */
bool ce_wheel_record(ce_wheel *w, char *text, size_t len);

/* CE_OK when the wheel had a RECORD, it parses, every member taken is in it
 * with a sha256 and (when given) the size written, and every row of it
 * ce_wheel_takes(under) would take was taken; else CE_ERR_INTEGRITY naming
 * label (the wheel's URL) and the member (CE_ERR_NOMEM). */
int ce_wheel_check(const ce_wheel *w, const char *label, const char *under);

#endif
