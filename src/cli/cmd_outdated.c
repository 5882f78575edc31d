/* cudaenv outdated [--json]: installed toolchains the manifest now has
 * something newer for: a patch release of the same CUDA X.Y, a newer cuDNN
 * of the same X.Y built for its CUDA major, or a TensorFlow release this
 * toolchain was installed for (its receipt's "tensorflow") whose tested
 * pair moved.  Reads the manifest a command uses (a remote one's local copy). */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/file.h"
#include "core/version.h"
#include "manifest/manifest.h"
#include "store/receipt.h"
#include "store/store.h"

enum { OPT_JSON = 1 };

static const cli_opt cmd_outdated_opts[] = {
    { "json", 0, false, OPT_JSON },
    { 0 },
};

typedef struct finding {
    const char *toolchain, *kind;   /* "cuda", "cudnn", "tf" */
    char from[128], to[128], hint[192];
} finding;

typedef struct findings { finding *v; size_t n, cap; } findings;

static finding *add(findings *f, const char *tc, const char *kind)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 8;
        finding *v = realloc(f->v, cap * sizeof *v);
        if (!v) return NULL;
        f->v = v;
        f->cap = cap;
    }
    finding *x = &f->v[f->n++];
    memset(x, 0, sizeof *x);
    x->toolchain = tc;
    x->kind = kind;
    return x;
}


/* The TensorFlow releases the receipt of t says it was installed for. */
static cJSON *receipt_tf(const ce_toolchain *t, cJSON **doc)
{
    char path[4300], *data = NULL;
    size_t len = 0;
    *doc = NULL;
    snprintf(path, sizeof path, "%s/" CE_RECEIPT_NAME, t->prefix);
    ce_quiet q;
    ce_quiet_begin(&q, true);
    int rc = ce_file_read(path, 4u << 20, &data, &len);
    ce_quiet_end(&q);
    if (rc) return NULL;
    *doc = cJSON_ParseWithLength(data, len);
    free(data);
    cJSON *tf = cJSON_GetObjectItemCaseSensitive(*doc, "tensorflow");
    return cJSON_IsArray(tf) ? tf : NULL;
}

static void check(cli *c, const ce_manifest *m, const ce_toolchain *t, findings *f)
{
    char mm[32];
    ce_version_prefix(t->cuda, 2, mm, sizeof mm);
    const ce_cuda *newest = NULL;
    for (size_t i = 0; i < m->n_cuda; i++)
        if (ce_version_matches(mm, m->cuda[i].version) && ce_version_cmp(m->cuda[i].version, t->cuda) > 0 &&
            (!newest || ce_version_cmp(m->cuda[i].version, newest->version) > 0))
            newest = &m->cuda[i];
    finding *x;
    if (newest && (x = add(f, t->name, "cuda"))) {
        snprintf(x->from, sizeof x->from, "CUDA %s", t->cuda);
        snprintf(x->to, sizeof x->to, "CUDA %s (patch release)", newest->version);
        snprintf(x->hint, sizeof x->hint, "cudaenv install %s%s%s", newest->version, t->cudnn[0] ? " --cudnn " : "",
                 t->cudnn);
    }
    if (t->cudnn[0]) {
        char dm[32];
        ce_version_prefix(t->cudnn, 2, dm, sizeof dm);
        const ce_cudnn *nd = NULL;
        for (size_t i = 0; i < m->n_cudnn; i++)
            if (ce_version_matches(dm, m->cudnn[i].version) && ce_version_cmp(m->cudnn[i].version, t->cudnn) > 0 &&
                ce_cudnn_archive(&m->cudnn[i], ce_version_major(t->cuda), c->ctx.platform) &&
                (!nd || ce_version_cmp(m->cudnn[i].version, nd->version) > 0))
                nd = &m->cudnn[i];
        if (nd && (x = add(f, t->name, "cudnn"))) {
            snprintf(x->from, sizeof x->from, "cuDNN %s", t->cudnn);
            snprintf(x->to, sizeof x->to, "cuDNN %s", nd->version);
            snprintf(x->hint, sizeof x->hint, "cudaenv install %s --cudnn %s", t->cuda, nd->version);
        }
    }
    cJSON *doc, *tfs = receipt_tf(t, &doc);
    for (cJSON *e = tfs ? tfs->child : NULL; e; e = e->next) {
        if (!cJSON_IsString(e) || !e->valuestring) continue;
        const ce_tf *row = ce_manifest_tf(m, e->valuestring);
        if (!row || row->not_installable) continue;
        bool same = !strcmp(row->cuda, t->cuda) && !strcmp(row->cudnn ? row->cudnn : "", t->cudnn);
        if (same || !(x = add(f, t->name, "tf"))) continue;
        snprintf(x->from, sizeof x->from, "tf-%.20s: CUDA %s%s%s", row->version, t->cuda, t->cudnn[0] ? " + cuDNN " : "",
                 t->cudnn);
        snprintf(x->to, sizeof x->to, "CUDA %s%s%s (tested pair now)", row->cuda, row->cudnn ? " + cuDNN " : "",
                 row->cudnn ? row->cudnn : "");
        snprintf(x->hint, sizeof x->hint, "cudaenv install tf-%.20s", row->version);
    }
    cJSON_Delete(doc);
}

static int cmd_outdated(cli *c, const cli_args *a)
{
    c->json = cli_on(a, OPT_JSON);
    ce_toolchain *v = NULL;
    size_t n = 0;
    int rc = ce_store_list(&c->ctx, &v, &n);
    if (rc) return cli_fail(c, rc);
    ce_manifest *m = NULL;
    if ((rc = cli_load_manifest(c, &m))) {
        free(v);
        return cli_fail(c, rc);
    }
    findings f = { 0 };
    for (size_t i = 0; i < n; i++)
        if (!strchr(v[i].name, '@')) check(c, m, &v[i], &f);   /* adopted toolkits are not cudaenv's to update */
    int out = 0;
    if (c->json) {
        cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "outdated");
        cli_json_add_str(o, "manifest", m->origin);
        cli_json_add_str(o, "manifest_updated", m->updated);
        for (size_t i = 0; i < f.n; i++) {
            cJSON *e = cJSON_CreateObject();
            cli_json_add_str(e, "toolchain", f.v[i].toolchain);
            cli_json_add_str(e, "kind", f.v[i].kind);
            cli_json_add_str(e, "installed", f.v[i].from);
            cli_json_add_str(e, "available", f.v[i].to);
            cli_json_add_str(e, "hint", f.v[i].hint);
            cJSON_AddItemToArray(arr, e);
        }
        out = cli_json_print(o);
    } else if (!f.n) {
        cli_print("%s\n", n ? "every installed toolchain is current with the manifest" : "no toolchains installed");
    } else {
        for (size_t i = 0; i < f.n; i++)
            cli_print("%-24s %s -> %s: %s\n", f.v[i].toolchain, f.v[i].from, f.v[i].to,
                   f.v[i].hint);
    }
    free(f.v);
    ce_manifest_free(m);
    free(v);
    return out;
}

const cli_cmd cli_cmd_outdated = {
    .name = "outdated", .run = cmd_outdated,
    .summary = "installed toolchains the manifest has newer releases for",
    .usage =
        "usage: cudaenv outdated [--json]\n"
        "\n"
        "Installed toolchains for which the manifest (see cudaenv update) now has a CUDA\n"
        "patch release of the same X.Y, a newer cuDNN of the same X.Y built for its CUDA\n"
        "major, or, for a TensorFlow release it was installed for, another tested pair.\n"
        "Each line names what to install; nothing is changed.  Exit 0 either way.\n"
        "\n"
        "  --json   one JSON document: {\"outdated\": [{toolchain, kind, installed, available, hint}]}\n",
    .opts = cmd_outdated_opts,
};
