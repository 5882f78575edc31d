/* Writing and reading a toolchain image's config and manifest (image.h). */
#include "image.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/file.h"
#include "fetch/digest.h"
#include "registry.h"
#include "store/receipt.h"
#include "store/store.h"

static void take(const cJSON *o, const char *key, char *out, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsString(v) && strlen(v->valuestring) < n) snprintf(out, n, "%s", v->valuestring);
}

int ce_oci_meta_read(const char *prefix, ce_oci_meta *m)
{
    memset(m, 0, sizeof *m);
    char path[4200], *text = NULL;
    if (ce_path_join(path, sizeof path, prefix, CE_RECEIPT_NAME)) return ce_fail(CE_ERR_OTHER, "path too long: %s", prefix);
    if (!ce_exists(path))
        return ce_fail(CE_ERR_NOTFOUND, "%s has no receipt (%s): only a toolchain cudaenv installed or adopted "
                       "can be pushed", prefix, CE_RECEIPT_NAME);
    int rc = ce_sha256_file(path, m->receipt_sha256);
    if (rc == CE_OK) rc = ce_file_read(path, 256u << 20, &text, NULL);
    if (rc) return rc;
    cJSON *o = cJSON_Parse(text);
    free(text);
    if (!o) return ce_fail(CE_ERR_INTEGRITY, "%s is not JSON: reinstall the toolchain", path);
    take(o, "name", m->name, sizeof m->name);
    take(o, "cuda", m->cuda, sizeof m->cuda);
    take(o, "cudnn", m->cudnn, sizeof m->cudnn);
    take(o, "nccl", m->nccl, sizeof m->nccl);
    take(o, "platform", m->platform, sizeof m->platform);
    take(o, "profile", m->profile, sizeof m->profile);
    ce_receipt_tree_sha256(cJSON_GetObjectItemCaseSensitive(o, "files"), m->tree_sha256);
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(o, "tensorflow")) {
        size_t l = strlen(m->tensorflow);
        if (cJSON_IsString(t) && l + strlen(t->valuestring) + 2 < sizeof m->tensorflow)
            snprintf(m->tensorflow + l, sizeof m->tensorflow - l, "%s%s", l ? "," : "", t->valuestring);
    }
    cJSON_Delete(o);
    return CE_OK;
}

static void add_ann(cJSON *o, const char *key, const char *val)
{
    if (val && *val) cJSON_AddStringToObject(o, key, val);
}

static cJSON *annotations(const ce_oci_meta *m)
{
    cJSON *a = cJSON_CreateObject();
    add_ann(a, "io.cudaenv.cuda", m->cuda);
    add_ann(a, "io.cudaenv.cudnn", m->cudnn);
    add_ann(a, "io.cudaenv.nccl", m->nccl);
    add_ann(a, "io.cudaenv.platform", m->platform);
    add_ann(a, "io.cudaenv.profile", m->profile);
    add_ann(a, "io.cudaenv.receipt.sha256", m->receipt_sha256);
    add_ann(a, "io.cudaenv.spec", m->name);
    add_ann(a, "io.cudaenv.tensorflow", m->tensorflow);
    add_ann(a, "io.cudaenv.toolchain", m->name);
    add_ann(a, "io.cudaenv.tree_sha256", m->tree_sha256);
    add_ann(a, "org.opencontainers.image.title", m->name);
    return a;
}

static char *print(cJSON *o)
{
    char *s = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return s;
}

char *ce_oci_config_json(const ce_oci_meta *m, const char *diff_id)
{
    cJSON *o = cJSON_CreateObject();
    bool arm = strstr(m->platform, "sbsa") || strstr(m->platform, "aarch64");
    cJSON_AddStringToObject(o, "architecture", arm ? "arm64" : "amd64");
    cJSON_AddStringToObject(o, "os", "linux");
    cJSON *cfg = cJSON_AddObjectToObject(o, "config");
    if (cfg) cJSON_AddItemToObject(cfg, "Labels", annotations(m));
    cJSON *rootfs = cJSON_AddObjectToObject(o, "rootfs");
    if (rootfs) {
        cJSON_AddStringToObject(rootfs, "type", "layers");
        cJSON *ids = cJSON_AddArrayToObject(rootfs, "diff_ids");
        if (ids) cJSON_AddItemToArray(ids, cJSON_CreateString(diff_id));
    }
    return print(o);
}

static cJSON *descriptor(const char *mt, const char *digest, long long size)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddStringToObject(d, "mediaType", mt);
    cJSON_AddStringToObject(d, "digest", digest);
    cJSON_AddNumberToObject(d, "size", (double)size);
    return d;
}

char *ce_oci_manifest_json(const ce_oci_meta *m, const char *config_digest, long long config_size,
                           const char *layer_digest, long long layer_size)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "schemaVersion", 2);
    cJSON_AddStringToObject(o, "mediaType", CE_OCI_MANIFEST_MT);
    cJSON_AddItemToObject(o, "config", descriptor(CE_OCI_CONFIG_MT, config_digest, config_size));
    cJSON *layers = cJSON_AddArrayToObject(o, "layers");
    if (layers) cJSON_AddItemToArray(layers, descriptor("application/vnd.oci.image.layer.v1.tar+gzip", layer_digest, layer_size));
    cJSON_AddItemToObject(o, "annotations", annotations(m));
    return print(o);
}

static bool digest_ok(const char *d)
{
    return d && strncmp(d, "sha256:", 7) == 0 && ce_sha256_valid(d + 7);
}

/* A descriptor's digest and size, checked. */
static bool blob_of(const cJSON *d, ce_oci_blob *b)
{
    const cJSON *dg = cJSON_GetObjectItemCaseSensitive(d, "digest"), *sz = cJSON_GetObjectItemCaseSensitive(d, "size");
    if (!cJSON_IsString(dg) || !digest_ok(dg->valuestring) || !cJSON_IsNumber(sz) || sz->valuedouble < 0 ||
        sz->valuedouble > 1e15)
        return false;
    snprintf(b->digest, sizeof b->digest, "%s", dg->valuestring);
    b->size = (long long)sz->valuedouble;
    return true;
}

/* A name a toolchain may have (store.h), and nothing a path could misuse. */
static bool name_ok(const char *name)
{
    ce_toolchain tc;
    return name[0] && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+@_-") == strlen(name) &&
           !strstr(name, "..") && name[0] != '.' && ce_toolchain_parse_name(name, &tc);
}

int ce_oci_manifest_parse(const char *text, const char *where, ce_oci_image *out)
{
    memset(out, 0, sizeof *out);
    cJSON *o = cJSON_Parse(text);
    int rc = CE_OK;
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(o, "mediaType");
    const char *type = cJSON_IsString(mt) ? mt->valuestring : CE_OCI_MANIFEST_MT;
    const cJSON *layers = cJSON_GetObjectItemCaseSensitive(o, "layers"), *l;
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(o, "annotations");
    if (!o) {
        rc = ce_fail(CE_ERR_INTEGRITY, "%s is not JSON", where);
    } else if (strstr(type, "index") || strstr(type, "manifest.list")) {
        rc = ce_fail(CE_ERR_INTEGRITY, "%s is an image index (%s), not a toolchain image: give the reference "
                     "of the platform's image (cudaenv push writes one manifest per toolchain)", where, type);
    } else if (strcmp(type, CE_OCI_MANIFEST_MT) != 0 &&
               strcmp(type, "application/vnd.docker.distribution.manifest.v2+json") != 0) {
        rc = ce_fail(CE_ERR_INTEGRITY, "%s has media type %s, not an image manifest", where, type);
    } else if (!blob_of(cJSON_GetObjectItemCaseSensitive(o, "config"), &out->config)) {
        rc = ce_fail(CE_ERR_INTEGRITY, "%s: the config descriptor lacks a sha256 digest or size", where);
    } else if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) < 1 || cJSON_GetArraySize(layers) > CE_OCI_MAX_LAYERS) {
        rc = ce_fail(CE_ERR_INTEGRITY, "%s: 1 to %d layers expected", where, CE_OCI_MAX_LAYERS);
    }
    const cJSON *each = rc == CE_OK ? layers : NULL;
    cJSON_ArrayForEach(l, each) {
        const cJSON *lmt = cJSON_GetObjectItemCaseSensitive(l, "mediaType");
        const char *lt = cJSON_IsString(lmt) ? lmt->valuestring : "";
        if (!strstr(lt, "tar") || strstr(lt, "foreign")) {
            rc = ce_fail(CE_ERR_INTEGRITY, "%s: layer of media type '%s' is not a tar layer", where, lt);
            break;
        }
        if (!blob_of(l, &out->layers[out->n_layers++])) {
            rc = ce_fail(CE_ERR_INTEGRITY, "%s: a layer lacks a sha256 digest or size", where);
            break;
        }
    }
    if (rc == CE_OK) {
        ce_oci_meta *m = &out->meta;
        take(ann, "io.cudaenv.toolchain", m->name, sizeof m->name);
        take(ann, "io.cudaenv.receipt.sha256", m->receipt_sha256, sizeof m->receipt_sha256);
        const cJSON *tree = cJSON_GetObjectItemCaseSensitive(ann, "io.cudaenv.tree_sha256");
        take(ann, "io.cudaenv.tree_sha256", m->tree_sha256, sizeof m->tree_sha256);
        take(ann, "io.cudaenv.cuda", m->cuda, sizeof m->cuda);
        take(ann, "io.cudaenv.cudnn", m->cudnn, sizeof m->cudnn);
        take(ann, "io.cudaenv.platform", m->platform, sizeof m->platform);
        if (!m->name[0] || !ce_sha256_valid(m->receipt_sha256))
            rc = ce_fail(CE_ERR_INTEGRITY, "%s is not a cudaenv toolchain image: no io.cudaenv.toolchain and "
                         "io.cudaenv.receipt.sha256 annotations (push it with cudaenv push)", where);
        else if (tree && !ce_sha256_valid(m->tree_sha256))
            rc = ce_fail(CE_ERR_INTEGRITY, "%s: the annotation io.cudaenv.tree_sha256 is not a sha256 digest", where);
        else if (!name_ok(m->name))
            rc = ce_fail(CE_ERR_INTEGRITY, "%s names its toolchain '%.96s', which is not a toolchain name", where,
                         m->name);
    }
    cJSON_Delete(o);
    return rc;
}
