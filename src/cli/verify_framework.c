/* cudaenv verify [VERSION] --framework tf|torch [--python PATH] [--libs M] [--json]:
 * apply the toolchain's environment (as exec --for does: a Python that
 * brings its own CUDA libraries keeps them, for_python.c cli_libs_mode),
 * run the framework check (selftest/framework.h) in that Python, draw the
 * report, the library families it mapped (which file, from where, why the
 * loader took it: selftest/framework_libs.c) and the findings.
 * Exit 0 passed, 7 a finding is an error, 8 no usable GPU. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "selftest/framework.h"
#include "store/activate.h"
#include "store/store.h"

static const char *js(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *result_line(int code)
{
    return code == 0 ? "the framework runs on the toolchain" : code == 7 ? "a check failed"
                                                                        : "no usable GPU/driver: the GPU checks could not run";
}

/* The report's libraries, each with where it lies and why the loader took it. */
static cJSON *libraries_json(const ce_fw_report *r, const ce_fw_target *t)
{
    cJSON *arr = cJSON_CreateArray();
    const cJSON *libs = r->doc ? cJSON_GetObjectItemCaseSensitive(r->doc, "libs") : NULL;
    for (const cJSON *l = libs ? libs->child : NULL; l; l = l->next) {
        const char *file = js(l, "file");
        if (!file) continue;
        char src[64], why[4400], dir[4096];
        cJSON *o = cJSON_CreateObject();
        cli_json_add_str(o, "family", js(l, "family") ? js(l, "family") : "");
        cJSON_AddStringToObject(o, "file", file);
        snprintf(dir, sizeof dir, "%s", file);
        if (strrchr(dir, '/')) *strrchr(dir, '/') = '\0';
        cJSON_AddStringToObject(o, "dir", dir);
        cJSON_AddStringToObject(o, "source", ce_fw_lib_source(t, file, src, sizeof src));
        static const char *const keys[] = { "how", "name", "by", "via", "from" };
        for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
            if (js(l, keys[k])) cJSON_AddStringToObject(o, keys[k], js(l, keys[k]));
            else cJSON_AddNullToObject(o, keys[k]);
        }
        cJSON_AddStringToObject(o, "why", ce_fw_lib_why(l, why, sizeof why));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

static int print_json(const ce_fw_report *r, const ce_toolchain *tc, const ce_fw_target *ft, int code)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *t = cJSON_AddObjectToObject(root, "toolchain");
    cJSON_AddStringToObject(t, "name", tc->name);
    cJSON_AddStringToObject(t, "prefix", tc->prefix);
    cli_json_add_str(t, "cuda", tc->cuda);
    cli_json_add_str(t, "cudnn", tc->cudnn);
    cJSON_AddStringToObject(root, "python", r->python);
    cJSON_AddItemToObject(root, "framework", r->doc ? cJSON_Duplicate(r->doc, true) : cJSON_CreateNull());
    cJSON_AddItemToObject(root, "libraries", libraries_json(r, ft));
    cJSON *d = cJSON_AddObjectToObject(root, "driver");
    cJSON_AddNumberToObject(d, "gpus", r->driver_gpus);
    char cv[32] = "";
    if (r->driver_cuda) snprintf(cv, sizeof cv, "%d.%d", r->driver_cuda / 1000, r->driver_cuda % 1000 / 10);
    cli_json_add_str(d, "cuda", cv);
    cJSON *fs = cJSON_AddArrayToObject(root, "findings");
    for (size_t i = 0; i < r->n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "code", r->f[i].code);
        cJSON_AddStringToObject(o, "severity", ce_fw_sev_name(r->f[i].sev));
        cJSON_AddStringToObject(o, "summary", r->f[i].summary);
        cJSON_AddStringToObject(o, "evidence", r->f[i].evidence);
        cJSON_AddStringToObject(o, "fix", r->f[i].fix);
        cJSON_AddItemToArray(fs, o);
    }
    cJSON_AddNumberToObject(root, "ms", (double)(long long)(r->ms * 100) / 100.0);
    cJSON_AddNumberToObject(root, "exit_code", code);
    cli_json_print(root);
    return code;
}


static void print_indented(const char *label, const char *text)
{
    const char *p = text;
    bool first = true;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        cli_print("      %-9s %.*s\n", first ? label : "", n, p);
        first = false;
        p = nl ? nl + 1 : p + n;
    }
}

static void print_table(const ce_fw_report *r, const ce_toolchain *tc, const ce_fw_target *t, int code)
{
    const char *nc = getenv("NO_COLOR");
    bool color = isatty(1) && !(nc && *nc);
    const cJSON *d = r->doc;
    cli_print("verify %s --framework %s (%s)\n", tc->name, r->framework, r->python);
    if (d && js(d, "version")) {
        const cJSON *rt = cJSON_GetObjectItemCaseSensitive(d, "cudnn_runtime");
        cli_print("  %s %s: built for CUDA %s, cuDNN %s", r->module, js(d, "version"),
               js(d, "cuda") ? js(d, "cuda") : "none", js(d, "cudnn") ? js(d, "cudnn") : "?");
        if (cJSON_IsNumber(rt)) cli_print(" (cuDNN runtime %d)", rt->valueint);
        cli_print("; toolchain: CUDA %s, cuDNN %s\n", tc->cuda, tc->cudnn[0] ? tc->cudnn : "none");
    }
    const cJSON *g = d ? cJSON_GetObjectItemCaseSensitive(d, "gpus") : NULL;
    if (cJSON_IsArray(g)) {
        cli_print("  GPUs seen by %s: %d", r->module, cJSON_GetArraySize(g));
        for (const cJSON *x = g->child; x; x = x->next)
            if (cJSON_IsString(x)) cli_print("%s%s", x == g->child ? " (" : ", ", x->valuestring);
        cli_print("%s; by the driver: %d\n", g->child ? ")" : "", r->driver_gpus < 0 ? 0 : r->driver_gpus);
    }
    const cJSON *checks = d ? cJSON_GetObjectItemCaseSensitive(d, "checks") : NULL;
    for (const cJSON *c = checks ? checks->child : NULL; c; c = c->next) {
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(c, "max_rel_err");
        bool ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok"));
        cli_print("  %-7s on GPU 0 vs float64 on the CPU: max relative error %g: %s\n", js(c, "name"),
               cJSON_IsNumber(e) ? e->valuedouble : -1.0, ok ? "passed" : "FAILED");
    }
    /* per family: the file, where it lies, why the loader took it */
    const cJSON *libs = d ? cJSON_GetObjectItemCaseSensitive(d, "libs") : NULL;
    if (libs && libs->child)
        cli_print("  libraries on %s's own%s:\n", ce_fw_own_mode(t, r) ? r->module : tc->name,
                  ce_fw_own_mode(t, r) ? " (the toolchain's lib64 is not on LD_LIBRARY_PATH)" : "");
    for (const cJSON *l = libs ? libs->child : NULL; l; l = l->next) {
        const char *file = js(l, "file");
        if (!file) continue;
        char src[64], why[4400];
        cli_print("    %-10s %s\n", js(l, "family") ? js(l, "family") : "?", file);
        cli_print("    %-10s %s; %s\n", "", ce_fw_lib_source(t, file, src, sizeof src), ce_fw_lib_why(l, why, sizeof why));
    }
    const cJSON *maps = d && !libs ? cJSON_GetObjectItemCaseSensitive(d, "maps") : NULL;
    for (const cJSON *m = maps ? maps->child : NULL; m; m = m->next)
        if (cJSON_IsString(m)) cli_print("  mapped  %s\n", m->valuestring);
    for (size_t i = 0; i < r->n; i++) {
        const ce_fw_finding *f = &r->f[i];
        const char *col = !color ? "" : f->sev == CE_FW_ERROR ? "\033[31m" : "\033[33m";
        printf("  %s%s%s", col, ce_fw_sev_name(f->sev), color ? "\033[0m" : "");
        cli_print(" %s: %s\n", f->code, f->summary);
        print_indented("evidence", f->evidence);
        print_indented("fix", f->fix);
    }
    cli_print("total %.0f ms: %s\n", r->ms, result_line(code));
}

int cli_verify_framework(cli *c, const ce_toolchain *tc, const char *framework, const char *python,
                         const char *libcuda, const char *libs)
{
    if (!ce_fw_name(framework)) return cli_usage_error(c->cmd, "unknown framework '%s' (tf, torch or jax)", framework);
    ce_active_info sel;
    memset(&sel, 0, sizeof sel);
    sel.origin = CE_ORIGIN_SHELL;
    sel.tc = *tc;
    snprintf(sel.spec, sizeof sel.spec, "%s", tc->name);
    /* the Python's own libraries when it brings them (as exec --for does);
     * --libs toolchain: checked against the toolchain's alone */
    int rc;
    if (libs && !strcmp(libs, "toolchain")) sel.libs = CE_LIBS_TOOLCHAIN;
    else if ((rc = cli_libs_mode(c, libs, python ? python : "python3", &sel))) return rc;
    ce_env env;
    rc = ce_env_compute(&c->ctx, &sel, true, &env);
    if (!rc) {
        rc = ce_env_apply(&env);
        ce_env_free(&env);
    }
    if (rc) return cli_fail(c, rc);
    ce_fw_target t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "%s", tc->name);
    snprintf(t.prefix, sizeof t.prefix, "%s", tc->prefix);
    snprintf(t.cuda, sizeof t.cuda, "%s", tc->cuda);
    snprintf(t.cudnn, sizeof t.cudnn, "%s", tc->cudnn);
    ce_fw_options opt = { .framework = framework, .python = python, .libcuda = libcuda };
    ce_fw_report r;
    if ((rc = ce_fw_run(&c->ctx, &t, &opt, &r))) {
        ce_fw_free(&r);
        return cli_fail(c, rc);
    }
    int code = ce_fw_exit_code(&r);
    if (c->json) print_json(&r, tc, &t, code);
    else print_table(&r, tc, &t, code);
    fflush(stdout);
    ce_fw_free(&r);
    return code;
}
