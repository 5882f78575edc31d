/* cudaenv list-remote [tf|torch|jax|cuda|cudnn] [--json] (alias ls-remote):
 * what the manifest offers, newest first.  tf (the default) shows each
 * TensorFlow release with its CUDA + cuDNN pair; torch and jax each CUDA build
 * of a release (its spec, the toolchain it resolves to, the wheels' own
 * CUDA + cuDNN); cuda and cudnn show the releases with the platforms the
 * manifest has files for.  --names: bare specs, one a line. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "machine/target.h"
#include "manifest/manifest.h"

enum { OPT_JSON = 1, OPT_NAMES };

static const cli_opt cmd_list_remote_opts[] = {
    { "json", 0, false, OPT_JSON },
    { "names", 0, false, OPT_NAMES },
    { 0 },
};

typedef enum { WHAT_TF, WHAT_CUDA, WHAT_CUDNN, WHAT_TORCH, WHAT_JAX } what_t;

static const char *fw_of(what_t what) { return what == WHAT_TORCH ? "torch" : what == WHAT_JAX ? "jax" : NULL; }

/* torch-2.5 for the default build, torch-2.5+cu121 for the others */
static void fw_spec(char *out, size_t n, const char *fw, const ce_fw *f, const ce_fw_build *b)
{
    if (strcmp(b->tag, f->deflt)) snprintf(out, n, "%s-%s+%s", fw, f->version, b->tag);
    else snprintf(out, n, "%s-%s", fw, f->version);
}

static cJSON *fw_json(const ce_manifest *m, const char *fw)
{
    cJSON *arr = cJSON_CreateArray();
    size_t n;
    const ce_fw *list = ce_manifest_fws(m, fw, &n);
    char spec[64];
    for (size_t i = n; i-- > 0;) {
        const ce_fw *f = &list[i];
        cJSON *o = cJSON_CreateObject();
        cli_json_add_str(o, "version", f->version);
        cli_json_add_str(o, "default_build", f->deflt);
        cli_json_add_str(o, "python", f->python);
        cJSON *bs = cJSON_AddArrayToObject(o, "builds");
        for (size_t k = 0; k < f->n_builds; k++) {
            const ce_fw_build *b = &f->builds[k];
            cJSON *j = cJSON_CreateObject();
            fw_spec(spec, sizeof spec, fw, f, b);
            cli_json_add_str(j, "build", b->tag);
            cli_json_add_str(j, "spec", spec);
            cli_json_add_str(j, "cuda", b->cuda);
            cli_json_add_str(j, "cudnn", b->cudnn);
            cli_json_add_str(j, "wheel_cuda", b->wheel_cuda);
            cli_json_add_str(j, "wheel_cudnn", b->wheel_cudnn);
            cli_json_add_str(j, "channel", b->channel);
            cJSON_AddBoolToObject(j, "installable", b->not_installable == NULL);
            cli_json_add_str(j, "not_installable", b->not_installable);
            cJSON_AddItemToArray(bs, j);
        }
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static void fw_text(const ce_manifest *m, const char *fw)
{
    size_t n;
    const ce_fw *list = ce_manifest_fws(m, fw, &n);
    char spec[64], wheel[64];
    cli_print("%-19s %-10s %-11s %-24s %s\n", "SPEC", "CUDA", "cuDNN", "WHEELS (CUDA, cuDNN)", "");
    for (size_t i = n; i-- > 0;) {
        const ce_fw *f = &list[i];
        const ce_fw_build *d = ce_fw_build_for(f, NULL);
        for (size_t k = 0; k <= f->n_builds; k++) {   /* the default build first */
            const ce_fw_build *b = k == 0 ? d : &f->builds[k - 1];
            if (k > 0 && b == d) continue;
            fw_spec(spec, sizeof spec, fw, f, b);
            /* JAX's plugin pins minimums (>=), PyTorch's wheels exact releases */
            const char *ge = strcmp(fw, "jax") ? "" : ">=";
            snprintf(wheel, sizeof wheel, "%s%s, %s%s", ge, b->wheel_cuda ? b->wheel_cuda : "?", ge,
                     b->wheel_cudnn ? b->wheel_cudnn : "?");
            cli_print("%-19s %-10s %-11s %-24s %s%s\n", spec, b->cuda, b->cudnn ? b->cudnn : "-", wheel,
                      b->not_installable ? "not installable: " : "", b->not_installable ? b->not_installable : "");
        }
    }
}

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

/* cuda: each release against the planned driver (--driver) or this
 * machine's, and this machine's GPUs (target.h) */
static ce_target g_target;

static ce_runs cuda_runs(const ce_cuda *c)
{
    return ce_target_runs(&g_target, c->version, c->min_driver, c->min_driver_compat, c->sm_min, c->sm_max, NULL, 0);
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
        cli_json_add_str(o, "runs", ce_runs_word(cuda_runs(c)));
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
    static const char *const keys[] = { "tensorflow", "cuda", "cudnn", "torch", "jax" };
    cJSON *o = cJSON_CreateObject();
    cli_json_add_str(o, "manifest", m->origin);
    cli_json_add_str(o, "updated", m->updated);
    cJSON_AddItemToObject(o, keys[what], fw_of(what) ? fw_json(m, fw_of(what)) : what == WHAT_TF ? tf_json(m)
                                         : what == WHAT_CUDA ? cuda_json(m) : cudnn_json(m));
    return cli_json_print(o);
}

/* --names: the bare specs install accepts, one a line, newest first (for
 * completions and scripts); TF rows the manifest cannot install are left out. */
static void print_names(const ce_manifest *m, what_t what)
{
    if (fw_of(what)) {
        size_t n;
        const ce_fw *list = ce_manifest_fws(m, fw_of(what), &n);
        char spec[64];
        for (size_t i = n; i-- > 0;)
            for (size_t k = 0; k < list[i].n_builds; k++) {
                if (list[i].builds[k].not_installable) continue;
                fw_spec(spec, sizeof spec, fw_of(what), &list[i], &list[i].builds[k]);
                cli_print("%s\n", spec);
            }
    } else if (what == WHAT_TF) {
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
    if (fw_of(what)) {
        fw_text(m, fw_of(what));
    } else if (what == WHAT_TF) {
        cli_print("%-10s %-10s %-11s %-14s %s\n", "SPEC", "CUDA", "cuDNN", "PYTHON", "");
        for (size_t i = m->n_tf; i-- > 0;) {
            const ce_tf *t = &m->tf[i];
            snprintf(buf, sizeof buf, "tf-%s", t->version);
            cli_print("%-10s %-10s %-11s %-14s %s%s\n", buf, t->cuda, t->cudnn ? t->cudnn : "-",
                   t->python ? t->python : "-", t->not_installable ? "not installable: " : "",
                   t->not_installable ? t->not_installable : "");
        }
    } else if (what == WHAT_CUDA) {
        char on[1024];
        ce_target_text(&g_target, on, sizeof on);
        cli_print("%s: for %s\n  (yes; compat: minor-version compatibility only; jit: PTX JIT only; driver, gpu: too old; "
                  "?: unknown)\n\n", g_target.planned ? "THERE" : "HERE", on);
        cli_print("%-10s %-12s %-8s %-13s %-7s %s\n", "CUDA", "MIN DRIVER", "MAX GCC", "GPUs (sm)",
                  g_target.planned ? "THERE" : "HERE", "PLATFORMS");
        for (size_t i = m->n_cuda; i-- > 0;) {
            const ce_cuda *c = &m->cuda[i];
            char gcc[16], sm[32];
            snprintf(gcc, sizeof gcc, c->max_gcc ? "%d" : "-", c->max_gcc);
            snprintf(sm, sizeof sm, "%s-%s", c->sm_min ? c->sm_min : "?", c->sm_max ? c->sm_max : "?");
            platforms_text(buf, sizeof buf, c->runfiles, c->n_runfiles);
            cli_print("%-10s %-12s %-8s %-13s %-7s %s\n", c->version, c->min_driver ? c->min_driver : "-", gcc, sm,
                      ce_runs_word(cuda_runs(c)), buf);
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

static int cmd_list_remote(cli *c, const cli_args *a)
{
    const char *arg = a->n ? a->pos[0] : "tf";
    bool names = cli_on(a, OPT_NAMES);
    what_t what;
    c->json = cli_on(a, OPT_JSON);
    if (!strcmp(arg, "tf") || !strcmp(arg, "tensorflow")) what = WHAT_TF;
    else if (!strcmp(arg, "cuda")) what = WHAT_CUDA;
    else if (!strcmp(arg, "cudnn")) what = WHAT_CUDNN;
    else if (!strcmp(arg, "torch") || !strcmp(arg, "pytorch")) what = WHAT_TORCH;
    else if (!strcmp(arg, "jax")) what = WHAT_JAX;
    else return cli_usage_error(c->cmd, "'%s': list tf, torch, jax, cuda or cudnn", arg);
    ce_manifest *m;
    int rc = cli_load_manifest(c, &m);
    if (rc) return cli_fail(c, rc);
    int out = 0;
    if (what == WHAT_CUDA && !names) ce_target_read(&c->ctx, &g_target);
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

const cli_cmd cli_cmd_list_remote = {
    .name = "list-remote", .alias = "ls-remote", .run = cmd_list_remote,
    .summary = "what the manifest offers",
    .usage =
        "usage: cudaenv list-remote [tf|torch|jax|cuda|cudnn] [--json | --names]\n"
        "\n"
        "What the manifest offers, newest first (alias ls-remote):\n"
        "  tf      TensorFlow releases with their CUDA + cuDNN pair and Python range (default);\n"
        "          rows the manifest cannot install are marked with the reason\n"
        "  torch   PyTorch releases, one line per CUDA build: the spec (torch-2.5 is the\n"
        "          build pip installs from PyPI, torch-2.5+cu121 another), the toolchain it\n"
        "          resolves to, the CUDA + cuDNN the wheels were built with\n"
        "  jax     JAX releases, one line per CUDA plugin (jax-0.4.30, jax-0.7.2+cuda13)\n"
        "  cuda    CUDA releases: min driver, max gcc, GPU architectures, platforms\n"
        "  cudnn   cuDNN releases: the CUDA majors and platforms they have tarballs for\n"
        "\n"
        "  --json   one JSON document\n"
        "  --names  the bare specs, one per line (installable rows only), for scripts\n",
    .opts = cmd_list_remote_opts, .max_pos = 1,
};
