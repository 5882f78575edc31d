/* libFuzzer target: the manifest parser must reject or accept any bytes
 * without crashing, leaking or reading out of bounds (make fuzz). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "manifest/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ce_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    ce_manifest *m = NULL;
    if (ce_manifest_parse(&ctx, text, size, "/fuzz/manifest.json", size & 1, &m) == CE_OK) {
        for (size_t i = 0; i < m->n_tf; i++) {
            ce_manifest_tf(m, m->tf[i].version);
            ce_manifest_cuda(m, m->tf[i].cuda);
        }
        ce_manifest_free(m);
    }
    free(text);
    return 0;
}
