/* --for PYTHON (issue 27): the toolchain a Python's frameworks were built
 * for.  TensorFlow and PyTorch are imported in that interpreter the way
 * verify --framework runs them (selftest/framework.h, quick: build
 * information only, no GPU work), and what each says it was built for
 * becomes a spec:
 *   TensorFlow X.Y.Z      -> tf-X.Y (the manifest's row: TF's tested pair)
 *   PyTorch, CUDA A.B, cuDNN C.D.E -> A.B+cudnnC.D (the newest A.B.* and C.D.*)
 * A CPU-only build decides nothing.  Two frameworks that want different CUDA
 * releases are a usage error naming both, unless --framework chose one. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "core/version.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"
#include "selftest/framework.h"

typedef struct fw_want {
    bool imported;
    char version[64], cuda[32], cudnn[32];
    char spec[96];       /* "" when the build decides nothing (a CPU build) */
} fw_want;

static const char *jstr(const cJSON *doc, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void prefix2(const char *v, char *out, size_t n)
{
    ce_version_prefix(v, 2, out, n);
}

static int probe(cli *c, const char *python, const char *fw, fw_want *w)
{
    memset(w, 0, sizeof *w);
    ce_fw_target tc = { 0 };
    ce_fw_options opt = { .framework = fw, .python = python, .quick = true, .timeout_s = 120 };
    ce_fw_report r;
    int rc = ce_fw_run(&c->ctx, &tc, &opt, &r);
    if (rc) {
        ce_fw_free(&r);
        return rc;
    }
    w->imported = r.imported && r.doc;
    const char *v = w->imported ? jstr(r.doc, "version") : NULL, *cu = w->imported ? jstr(r.doc, "cuda") : NULL,
               *dn = w->imported ? jstr(r.doc, "cudnn") : NULL;
    if (v) snprintf(w->version, sizeof w->version, "%s", v);   /* printed through cli_note: escaped there */
    if (cu && ce_version_valid(cu)) prefix2(cu, w->cuda, sizeof w->cuda);
    if (dn && ce_version_valid(dn)) prefix2(dn, w->cudnn, sizeof w->cudnn);
    if (!strcmp(fw, "tf") && w->version[0] && ce_version_valid(w->version)) {
        char xy[32];
        prefix2(w->version, xy, sizeof xy);
        if (w->cuda[0]) snprintf(w->spec, sizeof w->spec, "tf-%s", xy);   /* a CPU build: no toolchain */
    } else if (!strcmp(fw, "torch") && w->cuda[0]) {
        if (w->cudnn[0]) snprintf(w->spec, sizeof w->spec, "%s+cudnn%s", w->cuda, w->cudnn);
        else snprintf(w->spec, sizeof w->spec, "%s", w->cuda);
    }
    ce_fw_free(&r);
    return CE_OK;
}

int cli_for_python(cli *c, const char *python, const char *choice, char *spec, size_t specsz)
{
    static const char *const fws[] = { "tf", "torch" };
    static const char *const names[] = { "TensorFlow", "PyTorch" };
    const char *pick = NULL;
    if (choice && !(pick = ce_fw_name(choice)))
        return ce_fail(&c->ctx, CE_ERR_USAGE, "--framework: '%s' is not tf or torch", choice);
    ce_manifest *m = NULL;
    int lrc = cli_load_manifest(c, &m);
    if (lrc) return lrc;
    fw_want w[2];
    char cuda[2][32] = { "", "" };   /* the CUDA release each spec resolves to */
    int decided = -1, n = 0, rc = CE_OK;
    for (int i = 0; i < 2 && rc == CE_OK; i++) {
        if ((rc = probe(c, python, fws[i], &w[i]))) break;
        if (!w[i].imported) continue;
        n++;
        if (!w[i].spec[0]) {
            cli_note(c, "%s %s in %s is a CPU-only build: it needs no CUDA toolchain", names[i], w[i].version,
                     python);
            continue;
        }
        ce_spec sp;
        ce_resolved r;
        if ((rc = ce_spec_parse(&c->ctx, w[i].spec, &sp)) || (rc = ce_resolve(&c->ctx, m, &sp, "", false, &r))) {
            cli_warn(c, "%s %s was built for CUDA %s%s%s, which this manifest cannot install: %s", names[i],
                     w[i].version, w[i].cuda, w[i].cudnn[0] ? ", cuDNN " : "", w[i].cudnn, ce_errmsg());
            rc = CE_OK;
            continue;
        }
        ce_version_prefix(r.cuda->version, 2, cuda[i], sizeof cuda[i]);
        cli_note(c, "%s %s in %s was built for CUDA %s%s%s: %s -> %s", names[i], w[i].version, python, w[i].cuda,
                 w[i].cudnn[0] ? ", cuDNN " : "", w[i].cudnn, w[i].spec, r.name);
        if (!strcmp(fws[i], "tf") && strcmp(w[i].cuda, cuda[i]) != 0)
            cli_warn(c, "TensorFlow %s reports CUDA %s in its build information; its row in the manifest (its "
                     "tested pair) is CUDA %s, which cudaenv installs", w[i].version, w[i].cuda, cuda[i]);
        if (pick && strcmp(pick, fws[i]) != 0) continue;
        if (decided >= 0 && strcmp(cuda[decided], cuda[i]) != 0) {
            rc = ce_fail(&c->ctx, CE_ERR_USAGE, "the frameworks in %s want different CUDA releases: %s %s %s (CUDA "
                         "%s), %s %s %s (CUDA %s); choose one with --framework tf or --framework torch (or give each "
                         "its own venv)", python, names[decided], w[decided].version, w[decided].spec,
                         cuda[decided], names[i], w[i].version, w[i].spec, cuda[i]);
            break;
        }
        if (decided < 0) decided = i;   /* TensorFlow's row first: it pins the tested pair */
    }
    ce_manifest_free(m);
    if (rc) return rc;
    if (decided < 0) {
        if (pick)
            return ce_fail(&c->ctx, CE_ERR_NOTFOUND, "%s does not import %s with CUDA", python,
                           !strcmp(pick, "tf") ? "TensorFlow" : "PyTorch");
        return ce_fail(&c->ctx, CE_ERR_NOTFOUND, "%s imports %s: nothing to build a toolchain for (tried "
                       "tensorflow and torch)", python, n ? "only CPU-only frameworks" : "no framework");
    }
    if (strlen(w[decided].spec) >= specsz) return ce_fail(&c->ctx, CE_ERR_USAGE, "spec too long");
    snprintf(spec, specsz, "%s", w[decided].spec);
    cli_note(c, "%s decides: %s", names[decided], spec);
    return CE_OK;
}
