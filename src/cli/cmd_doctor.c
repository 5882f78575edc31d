/* cudaenv doctor [--json] [--framework | --no-framework]: run the checks,
 * draw the findings grouped by layer (or one JSON document), exit 7 when any
 * finding is an error.  The framework layer's probe is kept between runs
 * (doctor_fwcache.c); --framework probes again, --no-framework skips it. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "doctor/doctor.h"

enum { OPT_JSON = 1, OPT_FRAMEWORK, OPT_NO_FRAMEWORK };

static const cli_opt cmd_doctor_opts[] = {
    { "json", 0, false, OPT_JSON },
    { "framework", 0, false, OPT_FRAMEWORK },
    { "no-framework", 0, false, OPT_NO_FRAMEWORK },
    { 0 },
};

static const char *const fw_states[] = { "ran", "cached", "skipped" };

static int print_json(const ce_doctor *d)
{
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "findings");
    for (const char *const *l = ce_doctor_layers; *l; l++) {
        size_t ln = strlen(*l);
        for (size_t i = 0; i < d->n; i++) {
            const ce_finding *f = &d->f[i];
            if (strncmp(f->code, *l, ln) || f->code[ln] != '.') continue;
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "code", f->code);
            cJSON_AddStringToObject(o, "layer", *l);
            cJSON_AddStringToObject(o, "severity", ce_severity_name(f->sev));
            cJSON_AddStringToObject(o, "summary", f->summary);
            cJSON_AddStringToObject(o, "evidence", f->evidence);
            cJSON_AddStringToObject(o, "fix", f->fix);
            cJSON_AddItemToArray(arr, o);
        }
    }
    const ce_probe *p = &d->probe;
    cJSON *s = cJSON_AddObjectToObject(root, "summary");
    cJSON_AddNumberToObject(s, "errors", d->errors);
    cJSON_AddNumberToObject(s, "warnings", d->warnings);
    cJSON_AddNumberToObject(s, "info", d->infos);
    cJSON_AddBoolToObject(s, "ok", d->errors == 0);
    cJSON_AddNumberToObject(s, "elapsed_ms", (double)(long)(d->elapsed_ms * 10) / 10);
    cli_json_add_str(s, "driver", (p->driver[0] ? p->driver : p->module_version));
    char cv[32] = "";
    if (p->cuda_version > 0) snprintf(cv, sizeof cv, "%d.%d", p->cuda_version / 1000, p->cuda_version % 1000 / 10);
    cli_json_add_str(s, "driver_cuda", cv);
    cJSON_AddNumberToObject(s, "pci_devices", p->n_pci);
    cJSON *gs = cJSON_AddArrayToObject(s, "gpus");
    for (int i = 0; i < p->n_gpus; i++) {
        const ce_gpu *g = &p->gpus[i];
        cJSON *o = cJSON_CreateObject();
        char cc[16] = "";
        if (g->cc_major >= 0) snprintf(cc, sizeof cc, "%d.%d", g->cc_major, g->cc_minor);
        cJSON_AddNumberToObject(o, "index", i);
        cJSON_AddStringToObject(o, "name", g->name);
        cli_json_add_str(o, "uuid", g->uuid);
        cli_json_add_str(o, "compute_capability", cc);
        cJSON_AddNumberToObject(o, "memory_total_mib", (double)(g->mem_total >> 20));
        cJSON_AddNumberToObject(o, "memory_used_mib", (double)(g->mem_used >> 20));
        cJSON_AddBoolToObject(o, "mig", g->mig == 1);
        cJSON_AddItemToArray(gs, o);
    }
    cli_json_add_str(s, "container", p->container);
    cJSON_AddBoolToObject(s, "wsl", p->wsl);
    cJSON *fw = cJSON_AddObjectToObject(s, "frameworks");
    cJSON_AddStringToObject(fw, "probe", fw_states[d->fw_state]);
    cli_json_add_str(fw, "python", d->fw_python);
    char at[32] = "";
    time_t t = (time_t)d->fw_probed_at;
    struct tm tm;
    if (d->fw_probed_at && gmtime_r(&t, &tm)) strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", &tm);
    cli_json_add_str(fw, "probed_at", at);
    cJSON_AddStringToObject(fw, "note", d->fw_note);
    if (d->act.present) {
        cJSON *a = cJSON_AddObjectToObject(s, "active");
        cJSON_AddStringToObject(a, "name", d->act.name);
        cJSON_AddStringToObject(a, "origin", d->act.origin);
        cli_json_add_str(a, "cuda", d->act.cuda);
        cli_json_add_str(a, "cudnn", d->act.cudnn);
        cJSON_AddStringToObject(a, "prefix", d->act.prefix);
    } else {
        cJSON_AddNullToObject(s, "active");
    }
    return cli_json_print(root);
}

static void print_human(const cli *c, const ce_doctor *d)
{
    bool color = isatty(1) && !(getenv("NO_COLOR") && *getenv("NO_COLOR"));
    const ce_probe *p = &d->probe;
    const char *red = color ? "\033[31m" : "", *yel = color ? "\033[33m" : "", *cyan = color ? "\033[36m" : "",
               *bold = color ? "\033[1m" : "", *off = color ? "\033[0m" : "";
    const char *drv = p->driver[0] ? p->driver : p->module_version;
    printf("%sMachine%s\n", bold, off);
    if (drv[0]) {
        cli_print("  driver %s", drv);
        if (p->cuda_version > 0) cli_print(" (CUDA %d.%d)", p->cuda_version / 1000, p->cuda_version % 1000 / 10);
        cli_print("\n");
    } else {
        cli_print("  driver: none\n");
    }
    for (int i = 0; i < p->n_gpus; i++) {
        const ce_gpu *g = &p->gpus[i];
        cli_print("  GPU %d: %s", i, g->name);
        if (g->cc_major >= 0) cli_print(", sm_%d%d", g->cc_major, g->cc_minor);
        if (g->mem_total) {
            char total[32], used[32];
            cli_size(total, sizeof total, (double)g->mem_total);
            cli_size(used, sizeof used, (double)g->mem_used);
            cli_print(", %s (%s in use)", total, used);
        }
        if (g->mig == 1) cli_print(", MIG");
        cli_print("\n");
    }
    if (!p->n_gpus) cli_print("  GPUs: %d NVIDIA PCI device(s), none usable through the driver\n", p->n_pci);
    if (p->container[0]) cli_print("  container: %s\n", p->container);
    if (p->wsl) cli_print("  WSL2: %s\n", p->osrelease);
    if (d->act.present)
        cli_print("  active: %s (CUDA %s%s%s, %s) at %s\n", d->act.name, d->act.cuda[0] ? d->act.cuda : "?",
               d->act.cudnn[0] ? ", cuDNN " : "", d->act.cudnn, d->act.origin, d->act.prefix);
    else
        cli_print("  active: none%s%s\n", d->act.spec[0] ? " installed for " : "", d->act.spec);
    if (d->fw_note[0]) cli_print("  frameworks: %s\n", d->fw_note);

    for (const char *const *l = ce_doctor_layers; *l; l++) {
        size_t ln = strlen(*l);
        bool header = false;
        for (size_t i = 0; i < d->n; i++) {
            const ce_finding *f = &d->f[i];
            if (strncmp(f->code, *l, ln) || f->code[ln] != '.') continue;
            if (!header) { printf("\n%s%s%s\n", bold, ce_doctor_layer_title(f->code), off); header = true; }
            const char *col = f->sev == CE_SEV_ERROR ? red : f->sev == CE_SEV_WARNING ? yel : cyan;
            printf("  %s%-7s%s", col, ce_severity_name(f->sev), off);
            cli_print(" %s: %s\n", f->code, f->summary);
            cli_print("          evidence: %s\n", f->evidence);
            cli_print("          fix: %s\n", f->fix);
        }
    }
    cli_print("\n%d error%s, %d warning%s, %d info", d->errors, d->errors == 1 ? "" : "s", d->warnings,
           d->warnings == 1 ? "" : "s", d->infos);
    if (!d->n) cli_print(": nothing wrong found");
    cli_print("\n");
    if (c->ctx.verbose) fprintf(stderr, "cudaenv: doctor took %.1f ms\n", d->elapsed_ms);
}

static int cmd_doctor(cli *c, const cli_args *a)
{
    c->json = cli_on(a, OPT_JSON);
    if (cli_on(a, OPT_FRAMEWORK) && cli_on(a, OPT_NO_FRAMEWORK))
        return cli_usage_error(c->cmd, "--framework (probe the frameworks again) and --no-framework (skip them) "
                                       "exclude each other");
    ce_doctor_fw fw = cli_on(a, OPT_FRAMEWORK) ? CE_DOCTOR_FW_PROBE : cli_on(a, OPT_NO_FRAMEWORK) ? CE_DOCTOR_FW_SKIP
                                                                                                 : CE_DOCTOR_FW_AUTO;
    ce_doctor d;
    int rc = ce_doctor_run(&c->ctx, &d, fw);
    if (rc != CE_OK) {
        ce_doctor_free(&d);
        return cli_fail(c, rc);
    }
    if (c->json) rc = print_json(&d);
    else print_human(c, &d);
    int errors = d.errors;
    ce_doctor_free(&d);
    if (rc) return 1;
    return errors ? ce_exit_code(CE_ERR_CHECK) : 0;
}

const cli_cmd cli_cmd_doctor = {
    .name = "doctor", .run = cmd_doctor,
    .summary = "diagnose driver, runtime, cuDNN, device, environment",
    .usage =
        "usage: cudaenv doctor [--json] [--framework | --no-framework]\n"
        "\n"
        "Walk the troubleshooting chain and name the fix for each problem.  Exit 0 when\n"
        "there are no errors, 7 when there are.\n"
        "\n"
        "The framework layer imports PyTorch and TensorFlow in python3 (seconds for a\n"
        "large install); its result is kept in ${XDG_CACHE_HOME:-~/.cache}/cudaenv and\n"
        "used until the interpreter, the environment or anything it imports from\n"
        "changes.  The report's \"frameworks:\" line says which.\n"
        "\n"
        "  --json           one JSON document\n"
        "  --framework      probe the frameworks again (the kept result is not used)\n"
        "  --no-framework   skip the framework layer\n",
    .opts = cmd_doctor_opts,
};
