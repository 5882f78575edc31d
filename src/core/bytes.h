/* The one byte formatter for what people read: "512 B", "1.5 KiB",
 * "845.4 MiB" (binary units, one decimal above bytes). */
#ifndef CE_BYTES_H
#define CE_BYTES_H

#include <stddef.h>

void ce_bytes_text(char *out, size_t n, double bytes);

#endif
