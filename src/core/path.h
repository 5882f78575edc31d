/* Path strings without a context: the leaf every module may use (ctx.c
 * normalises CUDAENV_ROOT with it before any error can be recorded). */
#ifndef CE_PATH_H
#define CE_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* The one path buffer size (PATH_MAX): a join that does not fit is an error,
 * never a cut-short path. */
#define CE_PATH_MAX 4096

/* Remove trailing slashes (keeps "/"). */
void ce_path_strip_trailing(char *p);
/* out = a "/" b, failing (CE_ERR_OTHER) when it does not fit. */
int ce_path_join(char *out, size_t outsz, const char *a, const char *b);
/* out = root followed by the absolute path abs ("" root: abs itself): the
 * one sysroot join (ce_sys_path, ce_machine_path).  Cut short when it does
 * not fit, as the callers' buffers allow. */
void ce_path_under(const char *root, const char *abs, char *out, size_t outsz);
/* Absolute, with no "." or ".." component, no "//" and no trailing slash
 * ("/" itself is plain): with no symlink on
 * the way either (a chain walk that passed says so), such a path is
 * already what realpath would return. */
bool ce_path_plain(const char *p);

/* The file name a URL names, for a label: its last path segment without
 * query or fragment (a token in a query never reaches a label), copied to
 * out; false when it is empty, does not fit in outsz or holds a control
 * byte (a line of cache/.cudaenv-names cannot carry it). */
bool ce_url_file_name(const char *url, char *out, size_t outsz);

#endif
