/* cudaenv verify [VERSION] [--json|--report] [--all-devices] [--bench] [--deep]
 *                [--framework tf|torch [--python PATH]]:
 * run the self-test (src/selftest) and draw its report, as a table, as
 * one JSON document, or as one JSON line per node for a cluster's merge
 * (--report: contrib/slurm/cudaenv-report).  Exit 0 all passed, 7 a check failed, 8 no usable GPU.
 * --framework checks TensorFlow / PyTorch on the toolchain instead
 * (verify_framework.c). */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fault.h"
#include "store/activate.h"
#include "store/adopt.h"
#include "system/system.h"
#include "cli.h"
#include "core/trust.h"
#include "fetch/digest.h"
#include "core/file.h"
#include "oci/image.h"
#include "selftest/selftest.h"
#include "store/store.h"

enum { OPT_JSON = 1, OPT_REPORT, OPT_ALL, OPT_BENCH, OPT_DEEP, OPT_FRAMEWORK, OPT_PYTHON, OPT_LIBS };

static const cli_opt cmd_verify_opts[] = {
    { "json", 0, false, OPT_JSON },
    { "report", 0, false, OPT_REPORT },
    { "all-devices", 0, false, OPT_ALL },
    { "bench", 0, false, OPT_BENCH },
    { "deep", 0, false, OPT_DEEP },
    { "framework", 0, true, OPT_FRAMEWORK },
    { "python", 0, true, OPT_PYTHON },
    { "libs", 0, true, OPT_LIBS },            /* --framework: framework|toolchain (cli_libs_mode) */
    { 0 },
};

/* What verify checks when none is named: what is in effect.  The shell's
 * selection (use, .cuda-version, global: what `cudaenv current` says),
 * else the system switch's target (system.json, /usr/local/cuda), else the
 * machine's own /usr/local/cuda, checked as an ad-hoc adopted tree (no
 * receipt).  why says which, for the report. */
static int in_effect(cli *c, ce_toolchain *tc, bool *adhoc, char *why, size_t whysz)
{
    ce_active_info info;
    int rc = ce_active(&c->ctx, NULL, &info);
    if (rc) return rc;
    *adhoc = false;
    if (!info.is_system) {
        *tc = info.tc;
        if (info.source[0]) snprintf(why, whysz, "selected by %s (%s)", ce_origin_name(info.origin), info.source);
        else snprintf(why, whysz, "selected in this shell (cudaenv use)");
        return CE_OK;
    }
    if (ce_system_toolchain(&c->ctx, tc)) {
        snprintf(why, whysz, "nothing selected in this shell: the system switch's target (%s)", CE_SYS_LINK);
        return CE_OK;
    }
    char link[4096], real[4096];
    ce_sys_path(&c->ctx, CE_SYS_LINK, link, sizeof link);
    bool have = ce_sys_resolve(&c->ctx, link, real, sizeof real);
    if (!have)
        return ce_fail(CE_ERR_NOTFOUND, "nothing to verify: no toolchain is selected and there is no %s; "
                       "name one: cudaenv verify VERSION (cudaenv list shows them)", link);
    memset(tc, 0, sizeof *tc);
    if ((rc = ce_adopt_probe(&c->ctx, real, tc->cuda, sizeof tc->cuda, tc->cudnn, sizeof tc->cudnn))) return rc;
    snprintf(tc->name, sizeof tc->name, "system");
    snprintf(tc->prefix, sizeof tc->prefix, "%s", real);
    snprintf(why, whysz, "nothing selected: the machine's own CUDA %s at %s (%s), checked as an adopted tree",
             tc->cuda, CE_SYS_LINK, real);
    *adhoc = true;
    return CE_OK;
}

/* As `cudaenv exec NAME` would run it: the shell's LD_LIBRARY_PATH, which
 * may carry another toolchain, is the toolchain's own (what shadows it in
 * the shell becomes a warning).  *shell_lp gets a copy of the shell's. */
static int own_environment(cli *c, const ce_toolchain *tc, bool adhoc, char **shell_lp)
{
    const char *lp = getenv("LD_LIBRARY_PATH");
    *shell_lp = lp ? strdup(lp) : NULL;
    ce_active_info sel;
    memset(&sel, 0, sizeof sel);
    sel.origin = CE_ORIGIN_SHELL;
    sel.is_system = adhoc;
    if (!adhoc) sel.tc = *tc;
    ce_env env;
    int rc = ce_env_compute(&c->ctx, &sel, true, &env);
    if (rc) return rc;
    rc = ce_env_apply(&env);
    ce_env_free(&env);
    return rc;
}

static cJSON *evidence_array(const char *ev)
{
    cJSON *a = cJSON_CreateArray();
    const char *p = ev;
    while (p && *p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *line = strndup(p, n);
        if (line) cJSON_AddItemToArray(a, cJSON_CreateString(line));
        free(line);
        p = nl ? nl + 1 : NULL;
    }
    return a;
}

static void add_num_or_null(cJSON *o, const char *k, double v)
{
    if (v) cJSON_AddNumberToObject(o, k, v);
    else cJSON_AddNullToObject(o, k);
}

/* "host": the node's name in Slurm where slurmd started us (a prolog, an
 * epilog, a job's task: SLURMD_NODENAME, the name sinfo, scontrol and the
 * epilog's NODE.jsonl use; a node's hostname may differ, NodeHostname=),
 * else the hostname; "hostname" always the machine's own. */
static void add_host(cJSON *o)
{
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    const char *node = getenv("SLURMD_NODENAME");
    cli_json_add_str(o, "host", node && *node ? node : host);
    cli_json_add_str(o, "hostname", host);
}

/* The image a toolchain was installed from (install oci://: .cudaenv-oci.json
 * beside its receipt): "image": {"reference", "digest"}; nothing for one
 * installed otherwise.  Its tree_sha256 is the image's io.cudaenv.tree_sha256. */
static void add_image(cJSON *o, const char *prefix)
{
    char path[4300], *text = NULL;
    size_t len = 0;
    if (snprintf(path, sizeof path, "%s/%s", prefix, CE_OCI_ORIGIN_NAME) >= (int)sizeof path || !ce_exists(path))
        return;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = ce_file_read(path, 1u << 16, &text, &len);
    ce_quiet_end(&q);
    if (rc) return;
    cJSON *origin = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(origin, "reference");
    const cJSON *dg = cJSON_GetObjectItemCaseSensitive(origin, "digest");
    if (cJSON_IsString(ref) && cJSON_IsString(dg)) {
        cJSON *img = cJSON_AddObjectToObject(o, "image");
        cJSON_AddStringToObject(img, "reference", ref->valuestring);
        cJSON_AddStringToObject(img, "digest", dg->valuestring);
    }
    cJSON_Delete(origin);
}

/* --report: one line for this node, the facts nodes are compared on. */
static int print_report(const st_report *r, int code)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "report", 1);
    add_host(root);
    cJSON_AddStringToObject(root, "toolchain", r->tc.name);
    cJSON_AddStringToObject(root, "prefix", r->tc.prefix);
    cli_json_add_str(root, "cuda", r->tc.cuda);
    cli_json_add_str(root, "cudnn", r->tc.cudnn);
    cli_json_add_str(root, "tree_sha256", r->tree_sha256);
    add_image(root, r->tc.prefix);
    cJSON_AddItemToObject(root, "libraries", evidence_array(r->mapped));
    cli_json_add_str(root, "driver", r->v.driver_release);
    cJSON *gpus = cJSON_AddArrayToObject(root, "gpus");
    for (int i = 0; i < r->n_devices; i++) {
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", r->devices[i].cc_major, r->devices[i].cc_minor);
        cJSON *g = cJSON_CreateObject();
        cJSON_AddStringToObject(g, "name", r->devices[i].name);
        cJSON_AddStringToObject(g, "compute_capability", cc);
        cJSON_AddItemToArray(gpus, g);
    }
    cJSON *steps = cJSON_AddObjectToObject(root, "steps");
    cJSON *failed = cJSON_AddArrayToObject(root, "failed");
    for (int i = 0; i < ST_NSTEPS; i++) {
        const st_step *s = &r->steps[i];
        cJSON_AddStringToObject(steps, s->id, st_status_name(s->status));
        if (s->status != ST_FAILED) continue;
        cJSON *f = cJSON_CreateObject();
        cJSON_AddStringToObject(f, "id", s->id);
        cJSON_AddStringToObject(f, "summary", s->summary);
        cJSON_AddItemToArray(failed, f);
    }
    cJSON_AddNumberToObject(root, "exit_code", code);
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text) return 1;
    puts(text);
    free(text);
    return 0;
}

static int print_json(const st_report *r, int code, const st_options *opt)
{
    cJSON *root = cJSON_CreateObject();
    cJSON *tc = cJSON_AddObjectToObject(root, "toolchain");
    cJSON_AddStringToObject(tc, "name", r->tc.name);
    cJSON_AddStringToObject(tc, "prefix", r->tc.prefix);
    cli_json_add_str(tc, "tree_sha256", r->tree_sha256);
    add_image(tc, r->tc.prefix);
    cJSON_AddBoolToObject(tc, "adhoc", r->tc.adhoc);
    cli_json_add_str(tc, "selected_by", r->tc.selected_by);
    cli_json_add_str(tc, "cuda", r->tc.cuda);
    cli_json_add_str(tc, "cudnn", r->tc.cudnn);
    cli_json_add_str(tc, "min_driver", r->tc.min_driver);
    add_num_or_null(tc, "max_gcc", r->tc.max_gcc);
    cJSON *sm = cJSON_AddObjectToObject(tc, "sm");
    cli_json_add_str(sm, "min", r->tc.sm_min);
    cli_json_add_str(sm, "max", r->tc.sm_max);
    cli_json_add_str(tc, "facts_from", r->tc.facts_from);

    cJSON *steps = cJSON_AddArrayToObject(root, "steps");
    cJSON *timings = cJSON_CreateObject();
    for (int i = 0; i < ST_NSTEPS; i++) {
        const st_step *s = &r->steps[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "n", i + 1);
        cJSON_AddStringToObject(o, "id", s->id);
        cJSON_AddStringToObject(o, "title", s->title);
        cJSON_AddStringToObject(o, "status", st_status_name(s->status));
        cJSON_AddStringToObject(o, "summary", s->summary);
        cJSON_AddBoolToObject(o, "no_gpu", s->status == ST_SKIPPED && s->nogpu);
        cJSON_AddItemToObject(o, "evidence", evidence_array(s->evidence));
        cJSON_AddNumberToObject(o, "ms", (double)(long long)(s->ms * 100) / 100.0);
        cJSON_AddItemToArray(steps, o);
        cJSON_AddNumberToObject(timings, s->id, (double)(long long)(s->ms * 100) / 100.0);
    }
    cJSON_AddNumberToObject(timings, "total", (double)(long long)(r->total_ms * 100) / 100.0);
    if (opt->bench) cJSON_AddNumberToObject(timings, "bench", (double)(long long)(r->bench_ms * 100) / 100.0);

    const st_versions *v = &r->v;
    cJSON *vs = cJSON_AddObjectToObject(root, "versions");
    cJSON *cu = cJSON_AddObjectToObject(vs, "cuda");
    cli_json_add_str(cu, "toolchain", v->cuda_expected);
    cli_json_add_str(cu, "version_json", v->version_json);
    cli_json_add_str(cu, "nvcc", v->nvcc);
    add_num_or_null(cu, "cudart_header", v->cudart_header);
    add_num_or_null(cu, "cudart_runtime", v->cudart_runtime);
    char nv[32] = "";
    if (v->nvrtc_major) snprintf(nv, sizeof nv, "%d.%d", v->nvrtc_major, v->nvrtc_minor);
    cli_json_add_str(cu, "nvrtc", nv);
    if (v->has_cudnn) {
        cJSON *dn = cJSON_AddObjectToObject(vs, "cudnn");
        cli_json_add_str(dn, "toolchain", v->cudnn_expected);
        cli_json_add_str(dn, "header", v->cudnn_header);
        cli_json_add_str(dn, "library_file", v->cudnn_lib);
        add_num_or_null(dn, "cudnnGetVersion", (double)v->cudnn_runtime);
        cli_json_add_str(dn, "runtime", v->cudnn_runtime_str);
        add_num_or_null(dn, "cudnnGetCudartVersion", (double)v->cudnn_cudart);
    } else {
        cJSON_AddNullToObject(vs, "cudnn");
    }
    cJSON *dr = cJSON_AddObjectToObject(vs, "driver");
    add_num_or_null(dr, "cuda", v->driver_cuda);
    cli_json_add_str(dr, "release", v->driver_release);

    cJSON *devs = cJSON_AddArrayToObject(root, "devices");
    for (int i = 0; i < r->n_devices; i++) {
        const st_device *d = &r->devices[i];
        cJSON *o = cJSON_CreateObject();
        char cc[16];
        snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
        cJSON_AddNumberToObject(o, "ordinal", d->ordinal);
        cJSON_AddStringToObject(o, "name", d->name);
        cJSON_AddStringToObject(o, "compute_capability", cc);
        cJSON_AddNumberToObject(o, "memory_bytes", (double)d->total_mem);
        cJSON_AddBoolToObject(o, "supported", d->supported);
        cJSON_AddItemToArray(devs, o);
    }
    cJSON_AddItemToObject(root, "timings", timings);
    cJSON_AddItemToObject(root, "warnings", evidence_array(r->warnings));
    cJSON_AddItemToObject(root, "libraries", evidence_array(r->mapped));
    add_host(root);
    if (opt->bench) {
        const st_bench *b = &r->bench;
        cJSON *bo = cJSON_AddObjectToObject(root, "bench");
        cJSON_AddBoolToObject(bo, "ran", b->ran);
        cJSON_AddNumberToObject(bo, "copy_bytes", (double)b->copy_bytes);
        add_num_or_null(bo, "h2d_gbs", b->h2d_gbs);
        add_num_or_null(bo, "d2h_gbs", b->d2h_gbs);
        add_num_or_null(bo, "d2d_gbs", b->d2d_gbs);
        add_num_or_null(bo, "conv_tflops", b->conv_tflops);
        cli_json_add_str(bo, "conv_shape", b->conv_shape);
        add_num_or_null(bo, "allreduce_busbw_gbs", b->allreduce_busbw_gbs);
        cJSON_AddNumberToObject(bo, "allreduce_gpus", b->allreduce_gpus);
        if (b->torch) {
            cJSON *t = cJSON_AddObjectToObject(bo, "torch");
            add_num_or_null(t, "h2d_gbs", b->torch_h2d_gbs);
            add_num_or_null(t, "d2h_gbs", b->torch_d2h_gbs);
            add_num_or_null(t, "d2d_gbs", b->torch_d2d_gbs);
            add_num_or_null(t, "conv_tflops", b->torch_conv_tflops);
        } else {
            cJSON_AddNullToObject(bo, "torch");
        }
        cli_json_add_str(bo, "note", b->torch_note);
    }
    cJSON_AddNumberToObject(root, "exit_code", code);
    cli_json_print(root);
    return code;
}

static const char *status_color(st_status s)
{
    return s == ST_PASSED ? "\033[32m" : s == ST_FAILED ? "\033[31m" : "\033[33m";
}

static void print_table(cli *c, const st_report *r, int code, const st_options *opt)
{
    const char *nc = getenv("NO_COLOR");
    bool color = isatty(1) && !(nc && *nc);
    cli_print("verify %s (%s)\n", r->tc.name, r->tc.prefix);
    if (r->tc.selected_by[0]) cli_print("  %s\n", r->tc.selected_by);
    for (int i = 0; i < ST_NSTEPS; i++) {
        const st_step *s = &r->steps[i];
        printf("  %d %-9s %s%-7s%s", i + 1, s->id, color ? status_color(s->status) : "",
               st_status_name(s->status), color ? "\033[0m" : "");
        cli_print(" %7.0f ms  %s\n", s->ms, s->summary);
        /* Evidence: always for failures, for everything with -v. */
        if (s->evidence[0] && (s->status == ST_FAILED || c->ctx.verbose)) {
            const char *p = s->evidence;
            while (*p) {
                const char *nl = strchr(p, '\n');
                int n = nl ? (int)(nl - p) : (int)strlen(p);
                cli_print("                               %.*s\n", n, p);
                p = nl ? nl + 1 : p + n;
            }
        }
    }
    for (int i = 0; i < r->n_devices; i++) {
        const st_device *d = &r->devices[i];
        char mem[32];
        cli_size(mem, sizeof mem, (double)d->total_mem);
        cli_print("  GPU %d: %s, compute capability %d.%d, %s%s\n", d->ordinal, d->name, d->cc_major,
               d->cc_minor, mem, d->supported ? "" : " (not supported)");
    }
    if (opt->bench) {
        const st_bench *b = &r->bench;
        if (b->ran) {
            char cb[32];
            cli_size(cb, sizeof cb, (double)b->copy_bytes);
            cli_print("  bench (%s copies, median of 20):\n", cb);
            cli_print("    %-22s %10s %10s %7s\n", "", "cudaenv", "PyTorch", "ratio");
            const struct { const char *k; double a, t; } rows[] = {
                { "host->device GB/s", b->h2d_gbs, b->torch_h2d_gbs },
                { "device->host GB/s", b->d2h_gbs, b->torch_d2h_gbs },
                { "device->device GB/s", b->d2d_gbs, b->torch_d2d_gbs },
                { "conv TFLOP/s", b->conv_tflops, b->torch_conv_tflops },
            };
            for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
                if (b->torch && rows[k].t > 0)
                    cli_print("    %-22s %10.1f %10.1f %7.2f\n", rows[k].k, rows[k].a, rows[k].t, rows[k].a / rows[k].t);
                else
                    cli_print("    %-22s %10.1f %10s %7s\n", rows[k].k, rows[k].a, "-", "-");
            }
            if (b->conv_shape[0]) cli_print("    conv: %s\n", b->conv_shape);
        }
        if (b->allreduce_gpus)
            cli_print("    NCCL all-reduce, 256 MiB over %d GPUs: bus bandwidth %.1f GB/s\n", b->allreduce_gpus,
                   b->allreduce_busbw_gbs);
        if (b->torch_note[0]) cli_print("    %s\n", b->torch_note);
    }
    for (const char *p = r->warnings; *p;) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        cli_print("  warning: %.*s\n", n, p);
        p = nl ? nl + 1 : p + n;
    }
    cli_print("total %.0f ms: %s\n", r->total_ms,
           code == 0 ? "all checks passed"
           : code == 7 ? "a check failed"
                       : "no usable GPU/driver: the GPU checks could not run");
}

static int cmd_verify(cli *c, const cli_args *a)
{
    const cli_cmd *cmd = c->cmd;
    st_options opt = { .all_devices = cli_on(a, OPT_ALL), .bench = cli_on(a, OPT_BENCH), .deep = cli_on(a, OPT_DEEP) };
    const char *spec_arg = a->n ? a->pos[0] : NULL, *framework = a->opt[OPT_FRAMEWORK], *python = a->opt[OPT_PYTHON];
    c->json = cli_on(a, OPT_JSON);
    bool report = cli_on(a, OPT_REPORT);
    if (report && c->json) return cli_usage_error(cmd, "--json and --report are two formats: choose one");
    if (report && framework) return cli_usage_error(cmd, "--report reports the toolchain's own check, not --framework");
    if (report) c->json = true;   /* notes and errors as for --json: nothing but the line on stdout */
    if (python && !framework) return cli_usage_error(cmd, "--python goes with --framework tf|torch|jax");
    if (a->opt[OPT_LIBS] && !framework) return cli_usage_error(cmd, "--libs goes with --framework tf|torch|jax");
    if (framework && (opt.all_devices || opt.bench || opt.deep))
        return cli_usage_error(cmd, "--framework checks the framework only; --all-devices, --bench and --deep "
                                    "go with the toolchain's own check (run them separately)");
    /* digest.c is in the full binary only: NULL in the light one, where
     * --deep re-execs the full binary (cli.h: FULL_ONLY) */
    opt.sha256_file = FULL_ONLY(ce_sha256_file);
    if (opt.deep && !opt.sha256_file && !c->ctx.set.verify_no_reexec) {
        setenv("CUDAENV_VERIFY_NO_REEXEC", "1", 1);  /* never loop if the full binary lacks it too */
        return cli_exec_full(c);
    }
    /* tests: the fake libcuda.so.1 of tests/doubles drives the GPU
     * reporting paths on machines without a GPU (core/fault.h) */
    ce_fault_point("verify-libcuda", &opt.libcuda);

    /* in a re-exec (below), the shell's own CUDAENV_VERSION comes back first, so what is
     * in effect is found, and said, as the first process found it */
    const char *shell_ver = getenv("__CUDAENV_VERIFY_SHELL_VERSION");
    if (shell_ver) {
        if (*shell_ver == '=') setenv("CUDAENV_VERSION", shell_ver + 1, 1);
        else unsetenv("CUDAENV_VERSION");
        unsetenv("__CUDAENV_VERIFY_SHELL_VERSION");
    }
    char *orig_ver = getenv("CUDAENV_VERSION") ? strdup(getenv("CUDAENV_VERSION")) : NULL;
    ce_toolchain tc;
    bool adhoc = false;
    char why[sizeof ((st_toolchain *)0)->selected_by] = "";
    int rc = spec_arg ? ce_store_find(&c->ctx, spec_arg, &tc) : in_effect(c, &tc, &adhoc, why, sizeof why);
    /* as root, what verify runs and loads from the toolchain must be root's
     * (core/trust.h; proc.c checks each program it starts too) */
    if (!rc) rc = ce_trust_toolchain(tc.prefix);
    if (rc) {
        free(orig_ver);
        return cli_fail(c, rc);
    }
    if (framework) {
        free(orig_ver);
        if (why[0] && !c->json) cli_note(c, "verifying %s: %s", tc.name, why);
        return cli_verify_framework(c, &tc, framework, python, opt.libcuda, a->opt[OPT_LIBS]);
    }
    char *shell_lp = NULL;
    /* a re-exec below: the shell's LD_LIBRARY_PATH came along for the warnings */
    const char *carried = getenv("__CUDAENV_VERIFY_SHELL_LDPATH");
    char *from_shell = carried ? strdup(carried) : NULL;
    if (carried) unsetenv("__CUDAENV_VERIFY_SHELL_LDPATH");
    if ((rc = own_environment(c, &tc, adhoc, &shell_lp))) {
        free(shell_lp);
        free(from_shell);
        free(orig_ver);
        return cli_fail(c, rc);
    }
    if (from_shell) {
        free(shell_lp);
        shell_lp = from_shell;
    } else {
        /* the dynamic loader read LD_LIBRARY_PATH when this process started: what
         * cuDNN and cuBLAS dlopen by soname later would still come from the shell's
         * (another toolchain's) directories.  Start again in the toolchain's own. */
        const char *now = getenv("LD_LIBRARY_PATH");
        if (strcmp(now ? now : "", shell_lp ? shell_lp : "") != 0) {
            setenv("__CUDAENV_VERIFY_SHELL_LDPATH", shell_lp ? shell_lp : "", 1);
            char *sv = NULL;
            if (asprintf(&sv, "%s%s", orig_ver ? "=" : "-", orig_ver ? orig_ver : "") > 0)
                setenv("__CUDAENV_VERIFY_SHELL_VERSION", sv, 1);
            free(sv);
            free(orig_ver);
            free(shell_lp);
            return cli_exec_full(c);
        }
    }
    free(orig_ver);
    if (why[0] && !c->json) cli_note(c, "verifying %s: %s", tc.name, why);
    opt.shell_ld_path = shell_lp ? shell_lp : "";
    st_toolchain stc = { .adhoc = adhoc };
    snprintf(stc.selected_by, sizeof stc.selected_by, "%s", why);
    snprintf(stc.name, sizeof stc.name, "%s", tc.name);
    snprintf(stc.prefix, sizeof stc.prefix, "%s", tc.prefix);
    snprintf(stc.cuda, sizeof stc.cuda, "%s", tc.cuda);
    snprintf(stc.cudnn, sizeof stc.cudnn, "%s", tc.cudnn);

    st_report r;
    rc = st_run(&c->ctx, &stc, &opt, &r);
    free(shell_lp);
    if (rc) return cli_fail(c, rc);
    int code = st_exit_code(&r);
    if (report) print_report(&r, code);
    else if (c->json) print_json(&r, code, &opt);
    else print_table(c, &r, code, &opt);
    fflush(stdout);
    st_report_free(&r);
    return code;
}

const cli_cmd cli_cmd_verify = {
    .name = "verify", .run = cmd_verify,
    .summary = "self-test a toolchain on the GPU",
    .usage =
        "usage: cudaenv verify [VERSION] [--json|--report] [--all-devices] [--bench] [--deep]\n"
        "       cudaenv verify [VERSION] --framework tf|torch|jax [--python PATH] [--libs M] [--json]\n"
        "\n"
        "Check the files against the receipt, that all versions agree, that libraries load\n"
        "from the toolchain, then run a kernel and a cuDNN convolution on the GPU.\n"
        "VERSION is checked in its own environment, as exec VERSION runs programs (what\n"
        "shadows it in this shell's LD_LIBRARY_PATH is a warning).  Without VERSION: what\n"
        "is in effect, and it says which: this shell's selection (use, .cuda-version,\n"
        "global), else the system switch's target, else the machine's own /usr/local/cuda.\n"
        "Exit 0 all passed, 7 a check failed, 8 no usable GPU/driver.\n"
        "\n"
        "  --json          one JSON document (toolchain, steps, versions, devices, timings,\n"
        "                  warnings, libraries mapped, host)\n"
        "  --report        one JSON line for this node (host, toolchain, tree_sha256, the\n"
        "                  image it came from, the libraries mapped, each step's status,\n"
        "                  exit_code): lines from many nodes merge with\n"
        "                  contrib/slurm/cudaenv-report; tree_sha256 is the image's\n"
        "                  io.cudaenv.tree_sha256 annotation (cudaenv push)\n"
        "  --all-devices   check every GPU, not only device 0\n"
        "  --bench         add copy bandwidth and convolution throughput (vs PyTorch)\n"
        "  --deep          re-hash every file against the receipt's sha256\n"
        "  -v              show the evidence of every step, not only of failures\n"
        "  --framework F   instead: check TensorFlow (tf), PyTorch (torch) or JAX (jax) on\n"
        "                  the toolchain: in its environment (as exec), that Python reports\n"
        "                  the framework's build (CUDA, cuDNN), its GPUs, a matmul and a\n"
        "                  convolution on GPU 0 against a CPU reference, and the\n"
        "                  CUDA libraries it mapped, per family: the file, from where and\n"
        "                  why the loader took it (by path, RUNPATH, LD_LIBRARY_PATH, ...);\n"
        "                  each problem is a finding with its evidence and fix (man cudaenv)\n"
        "  --python PATH   the Python that has the framework (default: python3 on PATH)\n"
        "  --libs M        framework (default when that Python brings its own libraries: run\n"
        "                  on them, as exec --for does) or toolchain (check it on the\n"
        "                  toolchain's libraries alone)\n",
    .opts = cmd_verify_opts, .max_pos = 1, .extra = "one VERSION at most (got '%s' and '%s')",
};
