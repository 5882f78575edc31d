/* The doctor runner: find the active toolchain and what it needs, probe the
 * machine once, then run the layers in the order of the troubleshooting
 * chain (device before driver before libraries before environment). */
#include "doctor.h"
#include "doctor_int.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/activate.h"
#include "manifest/source.h"
#include "core/clock.h"
#include "core/file.h"
#include "core/json.h"
#include "manifest/index.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"
#include "store/store.h"
#include "core/version.h"

void ce_doctor_free(ce_doctor *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->f[i].summary);
        free(d->f[i].evidence);
        free(d->f[i].fix);
    }
    free(d->f);
    d->f = NULL;
    d->n = d->cap = 0;
    doc_ld_free(d);
}

/* Receipt fields (store.h): min_driver, min_driver_compat, max_gcc, sm {min,max}. */
static void read_receipt(ce_doc_active *a)
{
    char p[CE_PATH_MAX];
    if (ce_path_join(p, sizeof p, a->prefix, CE_RECEIPT_NAME) != CE_OK) return;
    FILE *f = fopen(p, "r");
    if (!f) return;
    char *buf = malloc(1u << 20);
    size_t len = buf ? fread(buf, 1, (1u << 20) - 1, f) : 0;
    fclose(f);
    if (!buf) return;
    buf[len] = '\0';
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    const cJSON *md = cJSON_GetObjectItemCaseSensitive(j, "min_driver");
    const cJSON *mc = cJSON_GetObjectItemCaseSensitive(j, "min_driver_compat");
    const cJSON *mg = cJSON_GetObjectItemCaseSensitive(j, "max_gcc");
    const cJSON *sm = cJSON_GetObjectItemCaseSensitive(j, "sm");
    const cJSON *lo = cJSON_GetObjectItemCaseSensitive(sm, "min"), *hi = cJSON_GetObjectItemCaseSensitive(sm, "max");
    if (cJSON_IsString(md)) snprintf(a->min_driver, sizeof a->min_driver, "%s", md->valuestring);
    if (cJSON_IsString(mc)) snprintf(a->min_driver_compat, sizeof a->min_driver_compat, "%s", mc->valuestring);
    if (cJSON_IsNumber(mg)) a->max_gcc = mg->valueint;
    if (cJSON_IsString(lo)) snprintf(a->sm_min, sizeof a->sm_min, "%s", lo->valuestring);
    if (cJSON_IsString(hi)) snprintf(a->sm_max, sizeof a->sm_max, "%s", hi->valuestring);
    cJSON_Delete(j);
}

/* The object of member inner (dotted: or the first inner.*) of the top-level object member outer,
 * found without parsing the manifest (core/json.h), then parsed alone; NULL when
 * either is missing or no object.  text is NUL-terminated and writable. */
static cJSON *sub_object(char *text, size_t len, const char *outer, const char *inner, bool dotted)
{
    size_t k, v, e, k2, v2, e2;
    if (ce_json_top_member(text, len, outer, &k, &v, &e) != 1 || text[v] != '{') return NULL;
    char keep = text[e];
    text[e] = '\0';   /* the inner scan stays inside the outer object */
    int r = dotted ? ce_json_top_member_dotted(text + v, e - v, inner, &k2, &v2, &e2)
                   : ce_json_top_member(text + v, e - v, inner, &k2, &v2, &e2);
    text[e] = keep;
    if (r != 1 || text[v + v2] != '{') return NULL;
    return cJSON_ParseWithLength(text + v + v2, e2 - v2);
}

static const char *obj_str(const cJSON *o, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(x) ? x->valuestring : NULL;
}

static void copy_if(char *dst, size_t n, const char *v)
{
    if (!dst[0] && v) snprintf(dst, n, "%s", v);
}

/* What the receipt does not say, the manifest may: a system toolkit has
 * no receipt, and the Python range of a TF release lives only there.  For
 * a CUDA release known only as X.Y the oldest X.Y.* entry gives the least
 * strict driver minimum, so doctor never errs on the strict side.  Only the
 * rows doctor needs are parsed (issue 43: doctor's cost does not grow with
 * the manifest). */
static void from_manifest(ce_ctx *ctx, ce_doc_active *a)
{
    bool need = !a->min_driver[0] || !a->max_gcc || !a->sm_min[0] || a->tf[0];
    if (!need) return;
    /* the resolution index carries these facts (its row/tfpy records): the
     * same answer at any manifest size; else the scan below */
    ce_index_facts f;
    if (ce_store_index_facts(ctx, a->cuda, a->tf, &f)) {
        copy_if(a->min_driver, sizeof a->min_driver, f.min_driver[0] ? f.min_driver : NULL);
        copy_if(a->min_driver_compat, sizeof a->min_driver_compat, f.min_driver_compat[0] ? f.min_driver_compat : NULL);
        if (!a->max_gcc && f.max_gcc > 0) a->max_gcc = f.max_gcc;
        copy_if(a->sm_min, sizeof a->sm_min, f.sm_min[0] ? f.sm_min : NULL);
        copy_if(a->sm_max, sizeof a->sm_max, f.sm_max[0] ? f.sm_max : NULL);
        if (a->tf[0]) copy_if(a->python, sizeof a->python, f.python[0] ? f.python : NULL);
        return;
    }
    char path[4200];
    if (ce_manifest_location(ctx, path, sizeof path) != CE_OK) return;
    if (!strncmp(path, "http://", 7) || !strncmp(path, "https://", 8)) return;
    char *text = NULL;
    size_t len = 0;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int lrc = ce_file_read(path, CE_MANIFEST_MAX, &text, &len);
    ce_quiet_end(&q);
    if (lrc != CE_OK || !text) return;
    /* the exact release, else (a release known as X.Y) the first X.Y.* row: the oldest */
    cJSON *c = a->cuda[0] ? sub_object(text, len, "cuda", a->cuda, false) : NULL;
    if (!c && a->cuda[0]) c = sub_object(text, len, "cuda", a->cuda, true);
    if (c) {
        copy_if(a->min_driver, sizeof a->min_driver, obj_str(c, "min_driver"));
        copy_if(a->min_driver_compat, sizeof a->min_driver_compat, obj_str(c, "min_driver_compat"));
        const cJSON *g = cJSON_GetObjectItemCaseSensitive(c, "max_gcc");
        if (!a->max_gcc && cJSON_IsNumber(g)) a->max_gcc = (int)g->valuedouble;
        const cJSON *sm = cJSON_GetObjectItemCaseSensitive(c, "sm");
        copy_if(a->sm_min, sizeof a->sm_min, obj_str(sm, "min"));
        copy_if(a->sm_max, sizeof a->sm_max, obj_str(sm, "max"));
        cJSON_Delete(c);
    }
    if (a->tf[0]) {
        cJSON *tf = sub_object(text, len, "tensorflow", a->tf, false);
        copy_if(a->python, sizeof a->python, obj_str(tf, "python"));
        cJSON_Delete(tf);
    }
    free(text);
}

/* The selection (activate.h: shell > .cuda-version > global > system) and
 * what the chosen toolchain needs.  "system" is the machine's
 * /usr/local/cuda, read through the machine seam. */
static void find_active(ce_doctor *d)
{
    ce_ctx *ctx = d->ctx;
    ce_doc_active *a = &d->act;
    ce_active_info info;
    memset(&info, 0, sizeof info);
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = ce_active(ctx, NULL, &info);
    snprintf(a->origin, sizeof a->origin, "%s", ce_origin_name(info.origin));
    snprintf(a->spec, sizeof a->spec, "%s", info.spec);
    if (rc != CE_OK) {
        snprintf(a->problem, sizeof a->problem, "%s", ce_errmsg()[0] ? ce_errmsg() : "cannot determine the selection");
        ce_quiet_end(&q);
        return;
    }
    if (info.is_system) {
        ce_quiet_end(&q);
        char res[4096];
        if (ce_machine_resolve(&d->m, "/usr/local/cuda", res, sizeof res) != 0 || !ce_machine_is_dir(&d->m, res))
            return;
        a->present = a->system = true;
        ce_machine_path(&d->m, res, a->prefix, sizeof a->prefix);
        snprintf(a->name, sizeof a->name, "system");
        doc_toolkit_version(a->prefix, a->cuda, sizeof a->cuda);
        from_manifest(ctx, a);
        return;
    }
    ce_spec spec;
    if (ce_spec_parse(a->spec, &spec) == CE_OK && spec.kind == CE_SPEC_TF)
        snprintf(a->tf, sizeof a->tf, "%s", spec.version);
    ce_quiet_end(&q);
    a->present = true;
    snprintf(a->name, sizeof a->name, "%s", info.tc.name);
    snprintf(a->cuda, sizeof a->cuda, "%s", info.tc.cuda);
    snprintf(a->cudnn, sizeof a->cudnn, "%s", info.tc.cudnn);
    snprintf(a->prefix, sizeof a->prefix, "%s", info.tc.prefix);
    read_receipt(a);
    from_manifest(ctx, a);
}

static void check_selection(ce_doctor *d)
{
    const ce_doc_active *a = &d->act;
    char ev[8192], sum[512], fix[512];
    if (a->present || !a->problem[0]) return;
    /* a spec is shown only when typed (CUDAENV_VERSION); what a file names
     * stays in the file (activate.h), the problem names the file */
    bool shown = a->spec[0] != '\0';
    doc_add(d, "env.selection-not-installed", CE_SEV_ERROR,
            shown ? doc_fmt(sum, sizeof sum, "the selected toolchain %s is not installed", a->spec)
                  : doc_fmt(sum, sizeof sum, "the %s selection names no installed toolchain", a->origin),
            doc_fmt(ev, sizeof ev, "selected by %s%s: %s", a->origin,
                    !strcmp(a->origin, "shell") ? " (CUDAENV_VERSION)" : "", a->problem),
            shown ? doc_fmt(fix, sizeof fix, "cudaenv install %s", a->spec)
                  : doc_fmt(fix, sizeof fix, "see what the file names (cat it), then cudaenv install that, or "
                            "pin an installed toolchain (cudaenv local VERSION / cudaenv global VERSION)"));
}

int ce_doctor_run(ce_ctx *ctx, ce_doctor *d, ce_doctor_fw fw)
{
    double t0 = ce_mono_ms();
    memset(d, 0, sizeof *d);
    d->ctx = ctx;
    d->fw_mode = fw;
    ce_machine_init(&d->m, ctx);
    ce_probe_platform(&d->m, &d->probe);
    ce_probe_gpu(&d->m, &d->probe, true);
    find_active(d);

    doc_check_gpu(d);
    doc_check_container(d);
    doc_check_wsl(d);
    doc_check_driver_toolkit(d);
    doc_check_mig(d);
    doc_check_libs(d);
    check_selection(d);
    doc_check_env(d);
    doc_check_compat(d);
    doc_check_framework(d);
    doc_check_pylibs(d);
    doc_check_perf(d);

    d->elapsed_ms = ce_mono_ms() - t0;
    return d->refused ? d->refused : CE_OK;
}
