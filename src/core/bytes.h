/* The one byte formatter for what people read: "512 B", "1.5 KiB",
 * "845.4 MiB" (binary units, one decimal above bytes; the largest unit
 * that shows at least 1.0, so never "1024.0 KiB").  Every size printed for
 * people goes through it (cli_size in the CLI). */
#ifndef CE_BYTES_H
#define CE_BYTES_H

#include <stddef.h>

void ce_bytes_text(char *out, size_t n, double bytes);

#endif
