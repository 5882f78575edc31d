/* Version macros in C headers (cuda_runtime_api.h, cudnn_version.h), read
 * the same way by doctor and verify. */
#ifndef CE_HEADER_H
#define CE_HEADER_H

/* The value of "#define NAME 123" (also "# define") in the header at path;
 * -1 when the file or the macro is absent or not a number. */
long ce_header_define(const char *path, const char *name);

#endif
