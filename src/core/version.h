/* Dotted version strings ("11.8.0", "8.7.0.84", "2.14"). */
#ifndef CE_VERSION_H
#define CE_VERSION_H

#include <stdbool.h>

/* Numeric compare component by component; missing components count as 0
 * for equality of length-aligned prefixes, shorter sorts first on a tie. */
int ce_version_cmp(const char *a, const char *b);
/* true when want ("11.8") names full ("11.8.0", "11.8.89") component-wise;
 * "11.8" does not match "11.80.1". */
bool ce_version_matches(const char *want, const char *full);
/* true when s is digits separated by single dots. */
bool ce_version_valid(const char *s);
/* The first component as a number ("11.8.0" -> 11), -1 if invalid. */
int ce_version_major(const char *s);
/* Copy the first n components of s into out ("11.8.0", 2 -> "11.8"). */
void ce_version_prefix(const char *s, int n, char *out, unsigned outsz);

#endif
