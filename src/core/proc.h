/* Running a small helper program and reading its answer (gcc -dumpversion,
 * python3 --version).  No context: the caller decides what a failure means. */
#ifndef CE_PROC_H
#define CE_PROC_H

#include <stdbool.h>
#include <stddef.h>

/* Run prog (found through PATH unless it holds a '/') with argv, stdout and
 * stderr captured; the first line of the output in out.  where (may be NULL)
 * gets the path that was run ("" when none was found).  true when it exited
 * 0 and printed something.  Tests put fake gcc/python3 first in PATH. */
bool ce_run_line(const char *prog, char *const argv[], char *out, size_t outsz, char *where, size_t wsz);

#endif
