/* --json output: one document on stdout, built with cJSON. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

void cli_json_add_str(struct cJSON *o, const char *key, const char *val)
{
    if (val && *val) cJSON_AddStringToObject(o, key, val);
    else cJSON_AddNullToObject(o, key);
}

int cli_json_print(struct cJSON *doc)
{
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text) {
        fprintf(stderr, "cudaenv: error: out of memory writing JSON\n");
        return 1;
    }
    puts(text);
    free(text);
    return fflush(stdout) == 0 ? 0 : 1;
}
