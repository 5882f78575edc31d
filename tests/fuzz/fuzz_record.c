/* libFuzzer target: a wheel's RECORD (archive/wheel.h).  Input: the text.
 * Besides not crashing, a RECORD that parses must have rows with a path,
 * sorted and unique (ce_record_find finds each), a sha256 that is 64 hex
 * digits exactly when the algorithm is sha256, and a size >= -1: checked
 * here again, independently of the parser's own code. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "archive/wheel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ce_record r;
    char why[320];
    if (ce_record_parse((const char *)data, size, &r, why, sizeof why) != CE_OK) {
        if (r.v || r.n) abort();
        return 0;
    }
    for (size_t i = 0; i < r.n; i++) {
        const ce_record_row *row = &r.v[i];
        if (!row->path[0] || row->size < -1) abort();
        if (i && strcmp(r.v[i - 1].path, row->path) >= 0) abort();
        if (ce_record_find(&r, row->path) != row) abort();
        bool sha = strcmp(row->algo, "sha256") == 0;
        if (sha != (strlen(row->sha256) == 64) || strspn(row->sha256, "0123456789abcdef") != strlen(row->sha256))
            abort();
    }
    ce_record_free(&r);
    return 0;
}
