#include "json.h"

#include <stdio.h>

const char *ce_json_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

void ce_json_copy(const cJSON *o, const char *key, char *out, size_t n)
{
    const char *s = ce_json_str(o, key);
    if (n > 0) snprintf(out, n, "%s", s ? s : "");
}
