/* Path strings without a context: the leaf every module may use (ctx.c
 * normalises CUDAENV_ROOT with it before any error can be recorded). */
#ifndef CE_PATH_H
#define CE_PATH_H

#include <stddef.h>

/* Remove trailing slashes (keeps "/"). */
void ce_path_strip_trailing(char *p);
/* out = a "/" b, failing (CE_ERR_OTHER) when it does not fit. */
int ce_path_join(char *out, size_t outsz, const char *a, const char *b);

#endif
