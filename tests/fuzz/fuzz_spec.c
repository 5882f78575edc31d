/* libFuzzer target: spec parsing and toolchain names. */
#include <stdint.h>
#include <string.h>

#include "manifest/resolve.h"
#include "store/store.h"
#include "core/version.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[256];
    if (size >= sizeof s) size = sizeof s - 1;
    memcpy(s, data, size);
    s[size] = '\0';
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ce_spec spec;
    ce_spec_parse(s, &spec);
    ce_toolchain t;
    ce_toolchain_parse_name(s, &t);
    ce_version_valid(s);
    ce_version_cmp(s, "11.8.0");
    return 0;
}
