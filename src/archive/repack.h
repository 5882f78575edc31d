/* Repacking an archive for a site's LAN (issue 41 item 3): NVIDIA's .tar.xz
 * decoded and written again as .tar.zst (zstd, multithreaded through
 * libarchive's "zstd:threads=N") or as the plain .tar.  The tar stream
 * itself is copied byte for byte (libarchive's raw format on both sides, no
 * blocking or padding added), so whatever unpacks the repack gets NVIDIA's
 * exact entries: the installed tree cannot differ.  Full binary only. */
#ifndef CE_REPACK_H
#define CE_REPACK_H

#include "core/ctx.h"
#include "fetch/digest.h"

typedef enum { CE_REPACK_NONE = 0, CE_REPACK_ZSTD, CE_REPACK_TAR } ce_repack_fmt;

/* "zstd" / "tar" -> the format; CE_REPACK_NONE for anything else. */
ce_repack_fmt ce_repack_parse(const char *name);
const char *ce_repack_name(ce_repack_fmt f);
/* The repack's suffix: ".tar.zst" or ".tar". */
const char *ce_repack_suffix(ce_repack_fmt f);

/* Decode the archive read from in_fd (any compression libarchive reads:
 * xz, gzip, bzip2, zstd, none) and write its tar stream to out_fd in fmt
 * with threads compressing (zstd; 0: the cores).  label names the input in
 * errors.  *size and sha256 (hex): the bytes written.  A zstd repack is
 * then read back from out_fd (opened for reading too) and decoded: its tar
 * stream must be the input's, byte for byte (zstd's frames carry no
 * checksum here, and the site signs what was written).  CE_ERR_INTEGRITY
 * when the input does not decode or the read-back differs, CE_ERR_IO /
 * CE_ERR_SPACE when writing fails. */
int ce_repack_fd(int in_fd, const char *label, ce_repack_fmt fmt, int threads, int out_fd,
                 long long *size, char sha256[CE_SHA256_HEX]);

#endif
