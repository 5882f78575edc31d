/* cudaenv info SPEC [--json] [--cudnn VER] [--no-cudnn]: what SPEC resolves
 * to and everything the manifest says about it (driver, gcc, GPUs, Python,
 * URLs, sizes, sha256s, sources), without downloading anything.
 * A release the manifest lists but cannot install here (a TensorFlow row
 * marked not_installable, no file for this platform) is still shown, with
 * the reason; unknown specs exit 3 with the nearest valid ones. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/bytes.h"
#include "core/file.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"
#include "core/version.h"
#include "install/redist.h"
#include "machine/target.h"
#include "store/layout.h"
#include "store/receipt.h"
#include "store/store.h"

enum { OPT_JSON = 1, OPT_CUDNN, OPT_NO_CUDNN, OPT_COMPONENTS };

static const cli_opt cmd_info_opts[] = {
    { "json", 0, false, OPT_JSON },
    { "cudnn", 0, true, OPT_CUDNN },
    { "no-cudnn", 0, false, OPT_NO_CUDNN },
    { "components", 0, true, OPT_COMPONENTS },
    { 0 },
};

static cJSON *artifact_json(const ce_artifact *a)
{
    if (!a) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cli_json_add_str(o, "platform", a->platform);
    cli_json_add_str(o, "url", a->url);
    cli_json_add_str(o, "sha256", a->sha256);
    if (a->size >= 0) cJSON_AddNumberToObject(o, "size", (double)a->size); else cJSON_AddNullToObject(o, "size");
    cli_json_add_str(o, "for_cuda", a->for_cuda);
    return o;
}

/* The release's components as install would take them, NULL when it
 * installs from the runfile (or the JSON could not be read: *why says). */
static cJSON *components_json(const ce_redist *red, const char *profile, const char *url)
{
    if (!red) return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject(), *list = cJSON_CreateArray();
    cli_json_add_str(o, "profile", profile);
    cli_json_add_str(o, "redist", url);
    long long total = 0;
    for (size_t i = 0; i < red->n; i++) {
        const ce_component *c = &red->comps[i];
        if (!c->selected) continue;
        cJSON *j = cJSON_CreateObject();
        cli_json_add_str(j, "name", c->name);
        cli_json_add_str(j, "version", c->version);
        cJSON_AddNumberToObject(j, "size", (double)c->size);
        cli_json_add_str(j, "url", c->url);
        cli_json_add_str(j, "sha256", c->sha256);
        cJSON_AddItemToArray(list, j);
        total += c->size;
    }
    cJSON_AddItemToObject(o, "list", list);
    cJSON_AddNumberToObject(o, "total", (double)total);
    return o;
}

static const ce_redist *g_red;      /* set by cmd_info for the printers */
static const ce_receipt_held *g_held;   /* the toolchain installed under the name, NULL if none */
static char g_prefix[4200];
static const char *g_profile;
static const ce_cudnn *g_nccl;          /* the NCCL install would take, NULL for none */
static const ce_artifact *g_nccl_art;
static ce_target g_target;               /* the driver and GPUs the release is judged against */

/* "runs here": the release against the planned driver (--driver) or this
 * machine's, and this machine's GPUs (the "no kernel image" class, before
 * the download). */
static const char *runs_phrase(ce_runs r)
{
    switch (r) {
    case CE_RUNS_YES: return "yes";
    case CE_RUNS_COMPAT: return "only in minor-version compatibility mode";
    case CE_RUNS_JIT: return "through PTX JIT only";
    case CE_RUNS_DRIVER: return "no, the driver is too old";
    case CE_RUNS_GPU: return "no, the GPU is too old";
    default: return "unknown";
    }
}

static ce_runs cuda_runs(const ce_cuda *c, char *why, size_t n)
{
    return ce_target_runs(&g_target, c->version, c->min_driver, c->min_driver_compat, c->sm_min, c->sm_max, why, n);
}

static void target_json(cJSON *j, const ce_cuda *c)
{
    char why[256];
    ce_runs r = cuda_runs(c, why, sizeof why);
    cJSON *t = cJSON_AddObjectToObject(j, "target");
    cli_json_add_str(t, "driver", g_target.driver[0] ? g_target.driver : NULL);
    cli_json_add_str(t, "driver_from", !g_target.driver[0] ? NULL : g_target.planned ? "--driver" : "this machine");
    cJSON *gpus = cJSON_AddArrayToObject(t, "gpus");
    for (int i = 0; i < g_target.n_gpus; i++) {
        cJSON *g = cJSON_CreateObject();
        cli_json_add_str(g, "name", g_target.gpu[i]);
        char sm[16];
        snprintf(sm, sizeof sm, "%d.%d", g_target.cc[i] / 10, g_target.cc[i] % 10);
        cli_json_add_str(g, "sm", g_target.cc[i] < 0 ? NULL : sm);
        cJSON_AddItemToArray(gpus, g);
    }
    cli_json_add_str(t, "runs", ce_runs_word(r));
    cli_json_add_str(t, "why", why[0] ? why : NULL);
}

/* A manifest "source" as users should see it: the public references only.
 * Citations of the maintainers' working notes ("nvidia-facts.md 7a:",
 * "(sizes.md 5.2)") are cut out, a segment ("; "-separated) left with
 * nothing but its key is dropped, and "this draft" is cudaenv. */
static bool word_ch(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '-' || ch == '_';
}

static void cut_notes(char *seg)
{
    char *m;
    while ((m = strstr(seg, ".md ")) && m[4] >= '0' && m[4] <= '9') {
        char *a = m, *b = m + 4;
        while (a > seg && word_ch(a[-1])) a--;
        while (*b && *b != ' ' && *b != ')' && *b != ';' && *b != ':') b++;
        if (*b == ':') b++;
        while (*b == ' ') b++;
        /* "( ... )" left empty: take the brackets and the space before them */
        if (a > seg && a[-1] == '(' && *b == ')') {
            a--; b++;
            if (a > seg && a[-1] == ' ') a--;
        }
        memmove(a, b, strlen(b) + 1);
    }
    char *d;
    if ((d = strstr(seg, "this draft")) || (d = strstr(seg, "a draft"))) {
        char tail[1024];
        bool art = d[0] == 'a';
        snprintf(tail, sizeof tail, "%s", d + (art ? 7 : 10));
        snprintf(d, 1024 - (size_t)(d - seg), "cudaenv%s%s", art ? "'s" : "", tail);
    }
}

static void public_source(const char *src, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    const char *p = src;
    while (*p) {
        const char *e = strstr(p, "; ");
        size_t sl = e ? (size_t)(e - p) : strlen(p);
        char seg[1024];
        snprintf(seg, sizeof seg, "%.*s", (int)sl, p);
        p += sl + (e ? 2 : 0);
        cut_notes(seg);
        size_t l = strlen(seg);
        while (l && seg[l - 1] == ' ') seg[--l] = '\0';
        if (!l || seg[l - 1] == ':') continue;   /* "sm:" with nothing left */
        if (len < n) len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "; " : "", seg);
    }
}

static void print_source(const char *src)
{
    char buf[4096];
    if (!src) return;
    public_source(src, buf, sizeof buf);
    if (buf[0]) cli_print("  %-11s %s\n", "source", buf);
}

static void json_source(cJSON *o, const char *src)
{
    char buf[4096];
    if (src) public_source(src, buf, sizeof buf);
    cli_json_add_str(o, "source", src ? buf : NULL);
}

/* "torch"/"jax": the release, the build chosen, every CUDA build it has. */
static void fw_json(cJSON *o, const ce_resolved *r)
{
    cJSON *f = cJSON_AddObjectToObject(o, "framework");
    cli_json_add_str(f, "name", r->fw_name);
    cli_json_add_str(f, "version", r->fw->version);
    cli_json_add_str(f, "build", r->fw_build->tag);
    cli_json_add_str(f, "default_build", r->fw->deflt);
    cli_json_add_str(f, "python", r->fw->python);
    json_source(f, r->fw->source);
    cli_json_add_str(f, "default_source", r->fw->default_source);
    cJSON *bs = cJSON_AddArrayToObject(f, "builds");
    for (size_t i = 0; i < r->fw->n_builds; i++) {
        const ce_fw_build *b = &r->fw->builds[i];
        cJSON *j = cJSON_CreateObject();
        cli_json_add_str(j, "build", b->tag);
        cli_json_add_str(j, "cuda", b->cuda);
        cli_json_add_str(j, "cudnn", b->cudnn);
        cli_json_add_str(j, "wheel_cuda", b->wheel_cuda);
        cli_json_add_str(j, "wheel_cudnn", b->wheel_cudnn);
        cli_json_add_str(j, "channel", b->channel);
        cli_json_add_str(j, "not_installable", b->not_installable);
        json_source(j, b->source);
        cJSON_AddItemToArray(bs, j);
    }
}

/* The framework part of info's text: the release, the build and what it resolves to, the other builds. */
static void fw_text(const ce_resolved *r)
{
    const ce_fw *f = r->fw;
    const ce_fw_build *b = r->fw_build;
    bool jax = !strcmp(r->fw_name, "jax");
    cli_print("%-13s %s (build %s%s%s%s)\n", jax ? "JAX" : "PyTorch", f->version, b->tag,
              strcmp(b->tag, f->deflt) ? "" : jax ? ": the default, jax[" : ": the default, what pip installs from PyPI",
              !strcmp(b->tag, f->deflt) && jax ? b->tag : "", !strcmp(b->tag, f->deflt) && jax ? "] in JAX's install table" : "");
    if (f->python) cli_print("  %-11s %s\n", "python", f->python);
    if (b->wheel_cuda)
        cli_print("  %-11s CUDA %s%s + cuDNN %s%s%s%s%s\n", "wheels", strcmp(r->fw_name, "jax") ? "" : ">= ",
                  b->wheel_cuda, strcmp(r->fw_name, "jax") ? "" : ">= ", b->wheel_cudnn ? b->wheel_cudnn : "?",
                  b->channel ? " (" : "", b->channel ? b->channel : "", b->channel ? ")" : "");
    cli_print("  %-11s CUDA %s + cuDNN %s\n", b->not_installable ? "needs" : "toolchain", b->cuda,
              b->cudnn ? b->cudnn : "none");
    for (size_t i = 0; i < f->n_builds; i++) {
        const ce_fw_build *o = &f->builds[i];
        cli_print("  %-11s %c %-7s CUDA %s + cuDNN %s%s  %s-%s+%s\n", i ? "" : "builds", o == b ? '*' : ' ', o->tag,
                  o->cuda, o->cudnn ? o->cudnn : "none", strcmp(o->tag, f->deflt) ? "" : " (default)", r->fw_name,
                  f->version, o->tag);
        if (o->not_installable) cli_print("  %-11s   not installable: %s\n", "", o->not_installable);
    }
    print_source(b->source);
    if (f->default_source) cli_print("  %-11s %s\n", "default", f->default_source);
}

/* What install would add to the toolchain installed under the name: the
 * selected components it lacks (by name), NCCL; into out, ", "-separated. */
static void adds_text(char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    if (!g_held || g_held->kind != CE_HELD_COMPONENTS) return;
    for (size_t i = 0; g_red && i < g_red->n; i++) {
        bool have = false;
        for (size_t k = 0; k < g_held->n && !have; k++) have = !strcmp(g_held->comps[k].name, g_red->comps[i].name);
        if (g_red->comps[i].selected && !have && len < n)
            len += (size_t)snprintf(out + len, n - len, "%s%s", len ? ", " : "", g_red->comps[i].name);
    }
    if (g_nccl_art && !g_held->nccl && len < n)
        snprintf(out + len, n - len, "%sNCCL %s", len ? ", " : "", g_nccl->version);
}

static void installed_json(cJSON *o)
{
    if (!g_held) {
        cJSON_AddNullToObject(o, "installed");
        return;
    }
    cJSON *j = cJSON_AddObjectToObject(o, "installed");
    cli_json_add_str(j, "prefix", g_prefix);
    cli_json_held(j, g_held);
    char adds[2048];
    adds_text(adds, sizeof adds);
    cJSON *a = cJSON_AddArrayToObject(j, "adds");
    for (char *t = adds, *e; a && *t; t = e ? e + 2 : t + strlen(t)) {
        if ((e = strstr(t, ", "))) *e = '\0';
        cJSON_AddItemToArray(a, cJSON_CreateString(t));
    }
}

static int print_json(const ce_manifest *m, const ce_spec *s, const ce_resolved *r, const char *platform,
                      const char *problem)
{
    cJSON *o = cJSON_CreateObject();
    cli_json_add_str(o, "spec", s->text);
    cli_json_add_str(o, "toolchain", r->name[0] ? r->name : NULL);
    cli_json_add_str(o, "platform", platform);
    cJSON_AddBoolToObject(o, "installable", problem == NULL);
    cli_json_add_str(o, "reason", problem);
    if (r->tf) {
        cJSON *t = cJSON_AddObjectToObject(o, "tensorflow");
        cli_json_add_str(t, "version", r->tf->version);
        cli_json_add_str(t, "cuda", r->tf->cuda);
        cli_json_add_str(t, "cudnn", r->tf->cudnn);
        cli_json_add_str(t, "python", r->tf->python);
        cli_json_add_str(t, "not_installable", r->tf->not_installable);
        json_source(t, r->tf->source);
    } else {
        cJSON_AddNullToObject(o, "tensorflow");
    }
    if (r->fw && r->fw_build) fw_json(o, r);
    else cJSON_AddNullToObject(o, "framework");
    if (r->cuda) {
        const ce_cuda *c = r->cuda;
        cJSON *j = cJSON_AddObjectToObject(o, "cuda");
        cli_json_add_str(j, "version", c->version);
        cli_json_add_str(j, "min_driver", c->min_driver);
        cli_json_add_str(j, "min_driver_compat", c->min_driver_compat);
        if (c->max_gcc) cJSON_AddNumberToObject(j, "max_gcc", c->max_gcc); else cJSON_AddNullToObject(j, "max_gcc");
        cJSON *sm = cJSON_AddObjectToObject(j, "sm");
        cli_json_add_str(sm, "min", c->sm_min);
        cli_json_add_str(sm, "max", c->sm_max);
        target_json(j, c);
        cJSON_AddItemToObject(j, "runfile", artifact_json(r->runfile));
        cJSON_AddItemToObject(j, "components", components_json(g_red, g_profile, c->redist ? c->redist->url : NULL));
        json_source(j, c->source);
    } else {
        cJSON_AddNullToObject(o, "cuda");
    }
    if (r->cudnn) {
        cJSON *j = cJSON_AddObjectToObject(o, "cudnn");
        cli_json_add_str(j, "version", r->cudnn->version);
        cJSON_AddNumberToObject(j, "cuda_major", r->cuda ? ce_version_major(r->cuda->version) : 0);
        cJSON_AddItemToObject(j, "archive", artifact_json(r->cudnn_archive));
        json_source(j, r->cudnn->source);
    } else {
        cJSON_AddNullToObject(o, "cudnn");
    }
    if (r->cudnn_why) { /* an implicit cuDNN: why this one, which newer ones were passed over */
        cJSON *j = cJSON_AddObjectToObject(o, "cudnn_choice");
        cli_json_add_str(j, "cudnn", r->cudnn ? r->cudnn->version : NULL);
        cli_json_add_str(j, "why", r->cudnn_why);
        cli_json_add_str(j, "passed_over", r->cudnn_passed_over);
    }
    if (g_nccl_art) {
        cJSON *j = cJSON_AddObjectToObject(o, "nccl");
        cli_json_add_str(j, "version", g_nccl->version);
        cJSON_AddItemToObject(j, "wheel", artifact_json(g_nccl_art));
        json_source(j, g_nccl->source);
    } else {
        cJSON_AddNullToObject(o, "nccl");
    }
    installed_json(o);
    cli_json_add_str(o, "manifest", m->origin);
    cli_json_add_str(o, "manifest_updated", m->updated);
    return cli_json_print(o);
}

static void human(char *out, size_t n, long long bytes)
{
    if (bytes < 0) { snprintf(out, n, "unknown"); return; }
    char t[32];
    ce_bytes_text(t, sizeof t, (double)bytes);
    if (bytes < 1024) snprintf(out, n, "%s", t);
    else snprintf(out, n, "%s (%lld bytes)", t, bytes);
}

static void print_artifact(const char *label, const ce_artifact *a, const char *platform)
{
    if (!a) {
        cli_print("  %-11s none for %s in the manifest\n", label, platform);
        return;
    }
    char sz[64];
    human(sz, sizeof sz, a->size);
    cli_print("  %-11s %s\n", label, a->url);
    cli_print("  %-11s %s\n", "size", sz);
    cli_print("  %-11s %s\n", "sha256", a->sha256);
    if (a->for_cuda) cli_print("  %-11s CUDA %s only\n", "built for", a->for_cuda);
}

static void print_text(const ce_spec *s, const ce_resolved *r, const char *platform, const char *problem)
{
    cli_print("%s -> %s\n", s->text, r->name[0] ? r->name : "?");
    if (r->tf) {
        cli_print("%-13s %s\n", "TensorFlow", r->tf->version);
        if (r->tf->python) cli_print("  %-11s %s\n", "python", r->tf->python);
        print_source(r->tf->source);
        if (!r->cuda) cli_print("  %-11s CUDA %s + cuDNN %s\n", "needs", r->tf->cuda, r->tf->cudnn ? r->tf->cudnn : "none");
    }
    if (r->fw && r->fw_build) fw_text(r);
    if (r->cuda) {
        const ce_cuda *c = r->cuda;
        cli_print("%-13s %s\n", "CUDA", c->version);
        cli_print("  %-11s %s", "min driver", c->min_driver ? c->min_driver : "unknown");
        if (c->min_driver_compat) cli_print(" (%s with minor-version compatibility)", c->min_driver_compat);
        putchar('\n');
        if (c->max_gcc) cli_print("  %-11s %d\n", "max gcc", c->max_gcc);
        else cli_print("  %-11s unknown\n", "max gcc");
        cli_print("  %-11s sm %s - %s\n", "GPUs", c->sm_min ? c->sm_min : "?", c->sm_max ? c->sm_max : "?");
        char why[256], on[1024];
        ce_runs runs = cuda_runs(c, why, sizeof why);
        ce_target_text(&g_target, on, sizeof on);
        cli_print("  %-11s %s%s%s (%s)\n", g_target.planned ? "runs there" : "runs here", runs_phrase(runs),
                  why[0] ? ": " : "", why, on);
        print_artifact("runfile", r->runfile, platform);
        if (g_red) {
            size_t n = 0;
            long long total = 0; /* (redist.c is in the full binary only) */
            for (size_t i = 0; i < g_red->n; i++)
                if (g_red->comps[i].selected) { n++; total += g_red->comps[i].size; }
            char sz[64];
            cli_print("  %-11s %s profile: %zu of the %zu in %s (installed instead of the runfile)\n", "components",
                   g_profile, n, g_red->n, c->redist->url);
            for (size_t i = 0; i < g_red->n; i++) {
                const ce_component *k = &g_red->comps[i];
                if (!k->selected) continue;
                human(sz, sizeof sz, k->size);
                cli_print("    %-22s %-12s %s\n", k->name, k->version, sz);
            }
            human(sz, sizeof sz, total);
            cli_print("    %-22s %-12s %s\n", "total", "", sz);
        }
        print_source(c->source);
    }
    if (r->cudnn) {
        cli_print("%-13s %s (build for CUDA %d)\n", "cuDNN", r->cudnn->version, ce_version_major(r->cuda->version));
        print_artifact("tarball", r->cudnn_archive, platform);
        print_source(r->cudnn->source);
    } else if (r->cuda) {
        cli_print("%-13s none\n", "cuDNN");
    }
    if (r->cudnn_why) {
        cli_print("  %-11s %s\n", "chosen", r->cudnn_why);
        if (r->cudnn_passed_over) cli_print("  %-11s %s\n", "passed over", r->cudnn_passed_over);
    }
    if (g_nccl_art) {
        cli_print("%-13s %s (multi-GPU collectives; leave out: --components -nccl)\n", "NCCL", g_nccl->version);
        print_artifact("wheel", g_nccl_art, platform);
        print_source(g_nccl->source);
    }
    if (g_held) {
        char what[1200], adds[2048];
        ce_receipt_held_text(g_held, what, sizeof what);
        adds_text(adds, sizeof adds);
        cli_print("%-13s yes, in %s%s%s\n", "installed", g_prefix, what[0] ? ": " : "", what);
        if (adds[0]) cli_print("  %-11s %s (what this spec selects and it lacks)\n", "install adds", adds);
    }
    if (problem) cli_print("%-13s %s\n", "installable", problem);
    else cli_print("%-13s yes, on %s\n", "installable", platform);
}

static int cmd_info(cli *c, const cli_args *a)
{
    const char *spec_text = a->pos[0], *cudnn = a->opt[OPT_CUDNN] ? a->opt[OPT_CUDNN] : "";
    const char *components = a->opt[OPT_COMPONENTS];
    bool no_cudnn = cli_on(a, OPT_NO_CUDNN);
    c->json = cli_on(a, OPT_JSON);
    if (components) {
        if (strlen(components) >= sizeof c->ctx.install_components)
            return cli_usage_error(c->cmd, "--components: the list is too long");
        snprintf(c->ctx.install_components, sizeof c->ctx.install_components, "%s", components);
    }
    if (no_cudnn && *cudnn) return cli_usage_error(c->cmd, "--cudnn and --no-cudnn exclude each other");

    ce_spec spec;
    int rc = ce_spec_parse(spec_text, &spec);
    if (rc) return cli_fail(c, rc);
    ce_manifest *m;
    if ((rc = cli_load_manifest_for(c, &spec, cudnn, &m))) return cli_fail(c, rc);
    ce_resolved r;
    char policy[32];
    cli_cudnn_policy(c, &spec, &cudnn, &no_cudnn, policy, sizeof policy);
    rc = ce_resolve(&c->ctx, m, &spec, cudnn, no_cudnn, &r);
    /* Describable though not installable here: a TF row marked
     * not_installable, or no file for this platform.  Anything the user
     * chose wrongly (unknown spec, --cudnn) is an error. */
    bool describable = rc == CE_ERR_NOTFOUND && ((r.tf && r.tf->not_installable) ||
                                                 (r.fw_build && r.fw_build->not_installable) ||
                                                 (r.cuda && !*cudnn && !spec.cudnn[0]));
    if (rc && !describable) {
        ce_manifest_free(m);
        return cli_fail(c, rc);
    }
    if (!rc && (rc = ce_resolve_nccl(&c->ctx, m, &r, c->ctx.install_components, &g_nccl, &g_nccl_art))) {
        ce_manifest_free(m);
        return cli_fail(c, rc);
    }
    const char *problem = rc ? ce_errmsg() : NULL;
    if (problem && !c->json) cli_warn(c, "%s", problem);
    ce_redist *red = NULL;
    if (!problem && r.cuda && r.cuda->redist && ce_layout_target(c->ctx.platform)) {
        /* the components and their sizes come from the release's JSON:
         * fetched (or taken from the cache) by the full binary */
        if (!cli_components_plan) {
            ce_manifest_free(m);
            return cli_exec_full(c);
        }
        ce_quiet q;
        ce_quiet_begin(&q, true); /* stdout/stderr stay info's own */
        int prc = cli_components_plan(&c->ctx, m, &r, &red, &g_profile);
        if (prc == CE_ERR_USAGE) {
            ce_manifest_free(m);
            ce_quiet_keep(&q);
            return cli_fail(c, prc);
        }
        if (prc) cli_warn(c, "cannot list the components: %s", ce_errmsg());
        ce_quiet_end(&q);
        g_red = red;
    }
    ce_receipt_held held;   /* the toolchain of that name, when installed: what it holds */
    char vdir[4200];
    g_held = NULL;
    if (r.name[0] && ce_store_path(&c->ctx, "versions", vdir, sizeof vdir) == CE_OK &&
        ce_path_join(g_prefix, sizeof g_prefix, vdir, r.name) == CE_OK && ce_is_dir(g_prefix)) {
        ce_receipt_held_read(g_prefix, false, &held);
        g_held = &held;
    }
    if (r.cuda) ce_target_read(&c->ctx, &g_target);
    char about[8400];
    cli_manifest_about(c, m, about, sizeof about);
    int out = c->json ? print_json(m, &spec, &r, c->ctx.platform, problem)
                      : (print_text(&spec, &r, c->ctx.platform, problem), cli_print("%-13s %s\n", "manifest", about), 0);
    if (red) cli_redist_free(red);
    if (g_held) ce_receipt_held_free(&held);
    g_red = NULL;
    g_held = NULL;
    ce_manifest_free(m);
    return out;
}

const cli_cmd cli_cmd_info = {
    .name = "info", .run = cmd_info,
    .summary = "what a spec resolves to",
    .usage =
        "usage: cudaenv info SPEC [--json] [--cudnn VER] [--no-cudnn]\n"
        "\n"
        "Show what SPEC resolves to, without downloading: CUDA, cuDNN, min driver, max gcc,\n"
        "GPU architectures, Python range, URLs, sizes, sha256s and the source of each value.\n"
        "tf-2.14 takes TensorFlow's tested CUDA + cuDNN pair; torch-2.5 the pair of the CUDA\n"
        "build pip installs from PyPI (torch-2.5+cu121: another build; info lists them all);\n"
        "jax-0.4.30 the pair its CUDA plugin's pins resolve to; 11.8 takes the newest 11.8.*\n"
        "and the newest cuDNN built for CUDA 11.  Unknown specs exit 3 with the nearest ones.\n"
        "When its toolchain is installed: what it holds and what install would add.\n"
        "\n"
        "  --cudnn VER    choose the cuDNN release (8.9 = newest 8.9.*; wins over +cudnn)\n"
        "  --no-cudnn     the CUDA toolkit alone\n"
        "  --components L with the profile adjusted as install --components L would\n"
        "  --json         one JSON document (keys: man cudaenv)\n"
        "\n"
        "Where the release installs from NVIDIA's components, info lists them with their\n"
        "sizes and the total (it reads the release's redistrib JSON: cached, else fetched).\n",
    .opts = cmd_info_opts, .min_pos = 1, .max_pos = 1,
    .missing = "which SPEC? e.g. cudaenv info tf-2.14", .extra = "one SPEC at a time (got '%s' and '%s')",
};
