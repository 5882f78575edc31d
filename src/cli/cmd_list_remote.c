/* cudaenv list-remote [tf|cuda|cudnn] [--json] (alias ls-remote): what the
 * manifest offers, newest first.  tf (the default) shows each TensorFlow
 * release with its CUDA + cuDNN pair; cuda and cudnn show the releases with
 * the platforms the manifest has files for.  --names: bare specs, one a line. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "manifest/manifest.h"

enum { OPT_JSON = 1, OPT_NAMES };

const cli_opt cmd_list_remote_opts[] = {
    { "json", 0, false, OPT_JSON },
    { "names", 0, false, OPT_NAMES },
    { 0 },
};

typedef enum { WHAT_TF, WHAT_CUDA, WHAT_CUDNN } what_t;

static cJSON *platforms_json(const ce_artifact *a, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(arr, cJSON_CreateString(a[i].platform));
    return arr;
}

/* "linux-x86_64, linux-sbsa" */
static void platforms_text(char *out, size_t n, const ce_artifact *a, size_t count)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < count && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? "," : "", a[i].platform);
}

static cJSON *tf_json(const ce_manifest *m)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = m->n_tf; i-- > 0;) {
        const ce_tf *t = &m->tf[i];
        cJSON *o = cJSON_CreateObject();
        cli_json_add_str(o, "version", t->version);
        char spec[40];
        snprintf(spec, sizeof spec, "tf-%s", t->version);
        cli_json_add_str(o, "spec", spec);
        cli_json_add_str(o, "cuda", t->cuda);
        cli_json_add_str(o, "cudnn", t->cudnn);
        cli_json_add_str(o, "python", t->python);
        cJSON_AddBoolToObject(o, "installable", t->not_installable == NULL);
        cli_json_add_str(o, "not_installable", t->not_installable);
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *cuda_json(const ce_manifest *m)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = m->n_cuda; i-- > 0;) {
        const ce_cuda *c = &m->cuda[i];
        cJSON *o = cJSON_CreateObject();
        cli_json_add_str(o, "version", c->version);
        cli_json_add_str(o, "min_driver", c->min_driver);
        if (c->max_gcc) cJSON_AddNumberToObject(o, "max_gcc", c->max_gcc); else cJSON_AddNullToObject(o, "max_gcc");
        cli_json_add_str(o, "sm_min", c->sm_min);
        cli_json_add_str(o, "sm_max", c->sm_max);
        cJSON_AddItemToObject(o, "platforms", platforms_json(c->runfiles, c->n_runfiles));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static cJSON *cudnn_json(const ce_manifest *m)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = m->n_cudnn; i-- > 0;) {
        const ce_cudnn *d = &m->cudnn[i];
        cJSON *o = cJSON_CreateObject();
        cli_json_add_str(o, "version", d->version);
        cJSON *builds = cJSON_AddArrayToObject(o, "builds");
        for (size_t b = 0; b < d->n_builds; b++) {
            cJSON *bo = cJSON_CreateObject();
            cJSON_AddNumberToObject(bo, "cuda_major", d->builds[b].cuda_major);
            cJSON_AddItemToObject(bo, "platforms", platforms_json(d->builds[b].archives, d->builds[b].n_archives));
            cJSON_AddItemToArray(builds, bo);
        }
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static int print_json(const ce_manifest *m, what_t what)
{
    static const char *const keys[] = { "tensorflow", "cuda", "cudnn" };
    cJSON *o = cJSON_CreateObject();
    cli_json_add_str(o, "manifest", m->origin);
    cli_json_add_str(o, "updated", m->updated);
    cJSON_AddItemToObject(o, keys[what], what == WHAT_TF ? tf_json(m) : what == WHAT_CUDA ? cuda_json(m) : cudnn_json(m));
    return cli_json_print(o);
}

/* --names: the bare specs install accepts, one a line, newest first (for
 * completions and scripts); TF rows the manifest cannot install are left out. */
static void print_names(const ce_manifest *m, what_t what)
{
    if (what == WHAT_TF) {
        for (size_t i = m->n_tf; i-- > 0;)
            if (!m->tf[i].not_installable) cli_print("tf-%s\n", m->tf[i].version);
    } else if (what == WHAT_CUDA) {
        for (size_t i = m->n_cuda; i-- > 0;) cli_print("%s\n", m->cuda[i].version);
    } else {
        for (size_t i = m->n_cudnn; i-- > 0;) cli_print("%s\n", m->cudnn[i].version);
    }
}

static void print_text(const ce_manifest *m, what_t what)
{
    char buf[256];
    if (what == WHAT_TF) {
        cli_print("%-10s %-10s %-11s %-14s %s\n", "SPEC", "CUDA", "cuDNN", "PYTHON", "");
        for (size_t i = m->n_tf; i-- > 0;) {
            const ce_tf *t = &m->tf[i];
            snprintf(buf, sizeof buf, "tf-%s", t->version);
            cli_print("%-10s %-10s %-11s %-14s %s%s\n", buf, t->cuda, t->cudnn ? t->cudnn : "-",
                   t->python ? t->python : "-", t->not_installable ? "not installable: " : "",
                   t->not_installable ? t->not_installable : "");
        }
    } else if (what == WHAT_CUDA) {
        cli_print("%-10s %-12s %-8s %-13s %s\n", "CUDA", "MIN DRIVER", "MAX GCC", "GPUs (sm)", "PLATFORMS");
        for (size_t i = m->n_cuda; i-- > 0;) {
            const ce_cuda *c = &m->cuda[i];
            char gcc[16], sm[32];
            snprintf(gcc, sizeof gcc, c->max_gcc ? "%d" : "-", c->max_gcc);
            snprintf(sm, sizeof sm, "%s-%s", c->sm_min ? c->sm_min : "?", c->sm_max ? c->sm_max : "?");
            platforms_text(buf, sizeof buf, c->runfiles, c->n_runfiles);
            cli_print("%-10s %-12s %-8s %-13s %s\n", c->version, c->min_driver ? c->min_driver : "-", gcc, sm, buf);
        }
    } else {
        cli_print("%-11s %s\n", "cuDNN", "BUILDS (CUDA major: platforms)");
        for (size_t i = m->n_cudnn; i-- > 0;) {
            const ce_cudnn *d = &m->cudnn[i];
            cli_print("%-11s", d->version);
            for (size_t b = 0; b < d->n_builds; b++) {
                platforms_text(buf, sizeof buf, d->builds[b].archives, d->builds[b].n_archives);
                cli_print(" cuda%d: %s%s", d->builds[b].cuda_major, buf, b + 1 < d->n_builds ? ";" : "");
            }
            putchar('\n');
        }
    }
}

int cmd_list_remote(cli *c, const cli_args *a)
{
    const char *arg = a->n ? a->pos[0] : "tf";
    bool names = cli_on(a, OPT_NAMES);
    what_t what;
    c->json = cli_on(a, OPT_JSON);
    if (!strcmp(arg, "tf") || !strcmp(arg, "tensorflow")) what = WHAT_TF;
    else if (!strcmp(arg, "cuda")) what = WHAT_CUDA;
    else if (!strcmp(arg, "cudnn")) what = WHAT_CUDNN;
    else return cli_usage_error(c->cmd, "'%s': list tf, cuda or cudnn", arg);
    ce_manifest *m;
    int rc = cli_load_manifest(c, &m);
    if (rc) return cli_fail(c, rc);
    int out = 0;
    if (c->json) out = print_json(m, what);
    else if (names) print_names(m, what);
    else {
        print_text(m, what);
        char about[8400];
        cli_manifest_about(c, m, about, sizeof about);
        cli_print("\nmanifest %s\n", about);
    }
    ce_manifest_free(m);
    return out;
}
