/* --json output: one document on stdout, built with cJSON. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "store/receipt.h"

void cli_json_add_str(struct cJSON *o, const char *key, const char *val)
{
    if (val && *val) cJSON_AddStringToObject(o, key, val);
    else cJSON_AddNullToObject(o, key);
}

void cli_json_held(struct cJSON *o, const struct ce_receipt_held *h)
{
    cJSON *j = cJSON_AddObjectToObject(o, "holds");
    if (!j) return;
    cli_json_add_str(j, "from", h->kind == CE_HELD_COMPONENTS ? "components" : h->kind == CE_HELD_RUNFILE ? "runfile"
                                                                                                       : NULL);
    cli_json_add_str(j, "profile", h->profile);
    cJSON *adj = cJSON_AddArrayToObject(j, "adjust"), *names = cJSON_AddArrayToObject(j, "components");
    for (const char *a = h->adjust; adj && *a;) {
        size_t w = strcspn(a, ",");
        char one[256];
        snprintf(one, sizeof one, "%.*s", (int)w, a);
        cJSON_AddItemToArray(adj, cJSON_CreateString(one));
        a += w + (a[w] == ',');
    }
    for (size_t i = 0; names && i < h->n; i++) cJSON_AddItemToArray(names, cJSON_CreateString(h->comps[i].name));
    cli_json_add_str(j, "nccl", h->nccl ? (h->nccl_version[0] ? h->nccl_version : "unknown") : NULL);
    char text[1200];
    ce_receipt_held_text(h, text, sizeof text);
    cli_json_add_str(j, "text", text);
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
