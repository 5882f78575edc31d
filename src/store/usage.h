/* <prefix>/.cudaenv-usage: every regular file's (dev, inode, size) and the
 * prefix's own (dev, inode), written with the receipt (install, adopt) so that
 * list (cache.h: ce_store_usage) costs a read per toolchain instead of a walk
 * of its thousands of files; a tree copied elsewhere (other inodes) is walked
 * again.  A cache: never a reason for a command to fail. */
#ifndef CE_USAGE_H
#define CE_USAGE_H

#include <stddef.h>
#include <stdint.h>

#include "core/ctx.h"

#define CE_USAGE_NAME ".cudaenv-usage"

typedef struct ce_usage_rec { uint64_t dev, ino; int64_t size; } ce_usage_rec;

/* Walk prefix and write its record (the record itself not counted). */
int ce_usage_record(const char *prefix);
/* The record of prefix when it is there and names this very directory;
 * malloc'ed, *n entries; NULL otherwise. */
ce_usage_rec *ce_usage_read(const char *prefix, size_t *n);

#endif
