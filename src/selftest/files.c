/* Step 1: the receipt (store.h) against the tree, and the toolchain facts
 * the later steps check against (min_driver, max_gcc, sm range): from the
 * receipt, else from the manifest entry of the same CUDA release. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/bytes.h"
#include "core/file.h"
#include "core/json.h"
#include "manifest/source.h"
#include "manifest/manifest.h"
#include "st_int.h"
#include "store/adopt.h"
#include "store/receipt.h"
#include "store/store.h"

#define RECEIPT_MAX (64u * 1024 * 1024)
#define MAX_LISTED 12

static cJSON *load_receipt(st_state *st, char *path, size_t pathsz)
{
    char *data = NULL;
    size_t len = 0;
    if (ce_path_join(path, pathsz, st->r->tc.prefix, CE_RECEIPT_NAME) != CE_OK || !ce_exists(path)) return NULL;
    if (ce_file_read(path, RECEIPT_MAX, &data, &len) != CE_OK) return NULL;
    cJSON *j = cJSON_ParseWithLength(data, len);
    free(data);
    return j;
}

int st_toolchain_facts(st_state *st)
{
    st_toolchain *tc = &st->r->tc;
    char path[4200];
    cJSON *j = load_receipt(st, path, sizeof path);
    if (j) {
        ce_json_copy(j, "cuda", tc->cuda, sizeof tc->cuda);
        ce_json_copy(j, "cudnn", tc->cudnn, sizeof tc->cudnn);
        ce_json_copy(j, "min_driver", tc->min_driver, sizeof tc->min_driver);
        ce_json_copy(j, "min_driver_compat", tc->min_driver_compat, sizeof tc->min_driver_compat);
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(j, "max_gcc");
        if (cJSON_IsNumber(g)) tc->max_gcc = g->valueint;
        const cJSON *sm = cJSON_GetObjectItemCaseSensitive(j, "sm");
        ce_json_copy(sm, "min", tc->sm_min, sizeof tc->sm_min);
        ce_json_copy(sm, "max", tc->sm_max, sizeof tc->sm_max);
        snprintf(tc->facts_from, sizeof tc->facts_from, "receipt");
        /* NCCL's version from its wheel's name: nvidia_nccl_cu12-2.25.1-py3-none-... */
        const cJSON *src;
        cJSON_ArrayForEach(src, cJSON_GetObjectItemCaseSensitive(j, "sources")) {
            const cJSON *k = cJSON_GetObjectItemCaseSensitive(src, "kind"), *u = cJSON_GetObjectItemCaseSensitive(src, "url");
            const char *w = cJSON_IsString(u) ? strstr(u->valuestring, "nvidia_nccl_cu") : NULL;
            if (!cJSON_IsString(k) || strcmp(k->valuestring, "nccl") != 0 || !w || !(w = strchr(w, '-'))) continue;
            size_t n = strspn(w + 1, "0123456789.");
            if (n && n < sizeof tc->nccl) snprintf(tc->nccl, sizeof tc->nccl, "%.*s", (int)n, w + 1);
        }
        cJSON_Delete(j);
    }
    if (tc->min_driver[0] && tc->max_gcc && tc->sm_min[0]) return CE_OK;
    /* Older receipts or hand-laid trees: fill the gaps from the manifest. */
    ce_msource src;
    ce_manifest *m = NULL;
    ce_quiet q;   /* a manifest problem is no verify failure */
    ce_quiet_begin(&q, true);
    /* through the source: as root a manifest a user can change is not read (source.h) */
    int mrc = ce_manifest_source(st->ctx, &src);
    if (mrc == CE_OK && !src.remote) mrc = ce_manifest_load_source(st->ctx, &src, &m);
    ce_quiet_end(&q);
    if (mrc != CE_OK || !m) return CE_OK;
    const ce_cuda *c = ce_manifest_cuda(m, tc->cuda);
    if (c) {
        if (!tc->min_driver[0] && c->min_driver) snprintf(tc->min_driver, sizeof tc->min_driver, "%s", c->min_driver);
        if (!tc->min_driver_compat[0] && c->min_driver_compat)
            snprintf(tc->min_driver_compat, sizeof tc->min_driver_compat, "%s", c->min_driver_compat);
        if (!tc->max_gcc) tc->max_gcc = c->max_gcc;
        if (!tc->sm_min[0] && c->sm_min) snprintf(tc->sm_min, sizeof tc->sm_min, "%s", c->sm_min);
        if (!tc->sm_max[0] && c->sm_max) snprintf(tc->sm_max, sizeof tc->sm_max, "%s", c->sm_max);
        snprintf(tc->facts_from, sizeof tc->facts_from, "%s", tc->facts_from[0] ? "receipt+manifest" : "manifest");
    }
    ce_manifest_free(m);
    return CE_OK;
}

/* Receipt paths are relative and stay inside the prefix. */
static bool safe_rel(const char *p)
{
    if (!p[0] || p[0] == '/') return false;
    for (const char *s = p; (s = strstr(s, "..")); s += 2) {
        bool start = s == p || s[-1] == '/';
        bool end = s[2] == '\0' || s[2] == '/';
        if (start && end) return false;
    }
    return true;
}

void st_files(st_state *st)
{
    st_step *s = &st->r->steps[ST_FILES];
    char path[4200];
    if (!ce_exists(st->r->tc.prefix)) {
        st_failf(s, "toolchain directory %s does not exist", st->r->tc.prefix);
        return;
    }
    if (st->r->tc.adhoc) {
        st_skip(s, false, "no receipt: cudaenv neither installed nor adopted %s (record one: cudaenv adopt %s)",
                st->r->tc.prefix, st->r->tc.prefix);
        return;
    }
    cJSON *j = load_receipt(st, path, sizeof path);
    if (!j) {
        st_failf(s, "no readable receipt %s: cannot prove the files are complete; reinstall: cudaenv install %s --force",
                 path, st->r->tc.name);
        return;
    }
    const cJSON *files = cJSON_GetObjectItemCaseSensitive(j, "files");
    if (!cJSON_IsArray(files)) {
        st_failf(s, "receipt %s has no \"files\" list; reinstall: cudaenv install %s --force", path, st->r->tc.name);
        cJSON_Delete(j);
        return;
    }
    ce_receipt_tree_sha256(files, st->r->tree_sha256);
    bool deep = st->opt->deep && st->opt->sha256_file;
    if (st->opt->deep && !st->opt->sha256_file)
        st_note(s, "--deep: sha256 is not available in this binary; sizes only");
    long n = 0, missing = 0, wrong_size = 0, wrong_hash = 0, bad = 0, hashed = 0;
    long long bytes = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, files) {
        n++;
        const cJSON *jp = cJSON_GetObjectItemCaseSensitive(f, "path");
        const cJSON *js = cJSON_GetObjectItemCaseSensitive(f, "size");
        const cJSON *jh = cJSON_GetObjectItemCaseSensitive(f, "sha256");
        if (!cJSON_IsString(jp) || !cJSON_IsNumber(js) || !safe_rel(jp->valuestring)) {
            if (bad++ < MAX_LISTED) st_note(s, "receipt entry %ld is malformed", n);
            continue;
        }
        char full[CE_PATH_MAX];
        struct stat sb;
        long long want = (long long)js->valuedouble;
        if (ce_path_join(full, sizeof full, st->r->tc.prefix, jp->valuestring) != CE_OK || lstat(full, &sb) != 0 ||
            !S_ISREG(sb.st_mode)) {
            if (missing++ < MAX_LISTED) st_note(s, "missing: %s", jp->valuestring);
            continue;
        }
        bytes += (long long)sb.st_size;
        if ((long long)sb.st_size != want) {
            if (wrong_size++ < MAX_LISTED)
                st_note(s, "size differs: %s is %lld bytes, the receipt says %lld", jp->valuestring,
                        (long long)sb.st_size, want);
            continue;
        }
        if (deep && cJSON_IsString(jh)) {
            char hex[65];
            hashed++;
            if (st->opt->sha256_file(full, hex) != CE_OK || strcmp(hex, jh->valuestring) != 0) {
                if (wrong_hash++ < MAX_LISTED)
                    st_note(s, "sha256 differs: %s is %s, the receipt says %s", jp->valuestring, hex,
                            jh->valuestring);
            }
        }
    }
    cJSON_Delete(j);
    long problems = missing + wrong_size + wrong_hash + bad;
    if (problems) {
        char extra[64] = "";
        if (deep) snprintf(extra, sizeof extra, ", %ld wrong sha256", wrong_hash);
        char from[4096];
        if (ce_adopted_from(st->r->tc.prefix, from, sizeof from) == 1) {
            /* not ours to reinstall: the toolkit changed since it was adopted */
            st_failf(s, "%ld of %ld files differ from the receipt written when %s was adopted (%ld missing, "
                     "%ld wrong size%s): %s changed since; if that was intended: cudaenv uninstall %s && "
                     "cudaenv adopt %s --name %s", problems, n, st->r->tc.name, missing, wrong_size, extra, from,
                     st->r->tc.name, from, st->r->tc.name);
            return;
        }
        st_failf(s, "%ld of %ld files differ from the receipt (%ld missing, %ld wrong size%s); "
                 "reinstall: cudaenv install %s --force",
                 problems, n, missing, wrong_size, extra, st->r->tc.name);
        return;
    }
    char sz[32];
    ce_bytes_text(sz, sizeof sz, (double)bytes);
    st_pass(s, "%ld files, %s, match %s (%s)", n, sz, CE_RECEIPT_NAME,
            deep ? "sizes and sha256" : "sizes; --deep re-hashes");
    if (deep) st_note(s, "%ld files re-hashed", hashed);
}
