/* Streaming SHA-256 through OpenSSL EVP (SHA-NI when the CPU has it:
 * ~1.5 GB/s a core, ~6x Debian's sha256sum).  Full binary only (libcrypto). */
#ifndef CE_DIGEST_H
#define CE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"

#define CE_SHA256_HEX 65 /* 64 lowercase hex digits + NUL */

typedef struct ce_sha256 ce_sha256;

/* NULL when out of memory. */
ce_sha256 *ce_sha256_new(void);
/* Start over (a server that ignored Range resent the file from byte 0). */
void ce_sha256_reset(ce_sha256 *h);
void ce_sha256_update(ce_sha256 *h, const void *data, size_t len);
/* Write the digest as 64 lowercase hex digits + NUL.  The state is reset after. */
void ce_sha256_final(ce_sha256 *h, char hex[CE_SHA256_HEX]);
void ce_sha256_free(ce_sha256 *h);

/* Hash len bytes read from fd starting at its current position (len < 0:
 * until EOF) into h, in 4 MiB blocks.  Returns CE_ERR_IO on a read error or
 * when the file is shorter than len; path names the file in the message. */
int ce_sha256_fd(ce_sha256 *h, int fd, long long len, const char *path);
/* sha256 of a whole file. */
int ce_sha256_file(const char *path, char hex[CE_SHA256_HEX]);
/* true when s is exactly 64 lowercase hex digits (a cache file name). */
bool ce_sha256_valid(const char *s);

#endif
