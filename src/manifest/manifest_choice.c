/* cuda.<ver>."cudnn_default" (manifest.h ce_cudnn_choice): the cuDNN a bare
 * CUDA spec takes on each platform, the newer ones passed over and why, as the
 * generator's resolution rule decided (tools/gen_pick.py, cudaenv-manifest(5)):
 *   "cudnn_default": {"linux-x86_64": {"cudnn": "9.20.0.48",
 *                     "passed_over": "9.27.0.42", "why": "..."}}
 * "cudnn": null says the bare spec takes no cuDNN.  Older manifests have no
 * such member: the resolver then takes the newest cuDNN built for the major. */
#include <stdlib.h>
#include <string.h>

#include "manifest_int.h"

static int parse_choice(parser *p, const cJSON *v, ce_cudnn_choice *ch)
{
    if (!cJSON_IsObject(v)) return mf_bad(p, "expected {\"cudnn\", \"why\"}, got %s", mf_type_name(v));
    if (!(ch->platform = strdup(v->string))) return ce_fail(CE_ERR_NOMEM, "out of memory");
    int rc;
    if ((rc = mf_get_version(p, v, "cudnn", false, &ch->cudnn)) ||
        (rc = mf_get_str(p, v, "passed_over", false, &ch->passed_over)) ||
        (rc = mf_get_str(p, v, "why", true, &ch->why)))
        return rc;
    if (ch->cudnn && strlen(ch->cudnn) > CE_MANIFEST_KEY_MAX) {
        size_t n = mf_path_push(p, "cudnn");
        rc = mf_bad(p, "%zu characters; a cuDNN version key has at most %d", strlen(ch->cudnn), CE_MANIFEST_KEY_MAX);
        mf_path_pop(p, n);
    }
    return rc;
}

int mf_parse_cudnn_defaults(parser *p, const cJSON *v, ce_cuda *c)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(v, "cudnn_default");
    if (!d || cJSON_IsNull(d)) return CE_OK;
    size_t n = mf_path_push(p, "cudnn_default");
    if (!cJSON_IsObject(d)) return mf_bad(p, "expected an object of platform -> {cudnn, why}, got %s", mf_type_name(d));
    size_t count = (size_t)cJSON_GetArraySize(d);
    if (!(c->cudnn_defaults = calloc(count ? count : 1, sizeof *c->cudnn_defaults)))
        return ce_fail(CE_ERR_NOMEM, "out of memory");
    const cJSON *it;
    cJSON_ArrayForEach(it, d) {
        size_t m = mf_path_push(p, it->string);
        for (size_t i = 0; i < c->n_cudnn_defaults; i++)
            if (!strcmp(c->cudnn_defaults[i].platform, it->string)) return mf_bad(p, "duplicate key");
        int rc = parse_choice(p, it, &c->cudnn_defaults[c->n_cudnn_defaults++]);
        if (rc) return rc;
        mf_path_pop(p, m);
    }
    mf_path_pop(p, n);
    return CE_OK;
}

void mf_free_cudnn_defaults(ce_cuda *c)
{
    for (size_t i = 0; i < c->n_cudnn_defaults; i++) {
        ce_cudnn_choice *ch = &c->cudnn_defaults[i];
        free(ch->platform); free(ch->cudnn); free(ch->passed_over); free(ch->why);
    }
    free(c->cudnn_defaults);
}

const ce_cudnn_choice *ce_cuda_cudnn_choice(const ce_cuda *c, const char *platform)
{
    for (size_t i = 0; c && platform && i < c->n_cudnn_defaults; i++)
        if (!strcmp(c->cudnn_defaults[i].platform, platform)) return &c->cudnn_defaults[i];
    return NULL;
}
