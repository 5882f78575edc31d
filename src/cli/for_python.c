/* --for PYTHON (issue 27): the toolchain a Python's frameworks were built
 * for.  TensorFlow, PyTorch and JAX are imported in that interpreter the way
 * verify --framework runs them (selftest/framework.h, quick: build
 * information only, no GPU work), and what each says it was built for
 * becomes a spec:
 *   TensorFlow X.Y.Z      -> tf-X.Y (the manifest's row: TF's tested pair)
 *   PyTorch, CUDA A.B, cuDNN C.D.E -> A.B+cudnnC.D (the newest A.B.* and C.D.*)
 *   JAX: its CUDA plugin's build versions, the same way (framework.py)
 * A CPU-only build decides nothing.  Two frameworks whose toolchains differ
 * in the CUDA release or the cuDNN major (one toolchain carries one of each)
 * are a usage error naming both, unless --framework chose one.  Within one
 * cuDNN major the newer minor release serves both (PyTorch and JAX refuse
 * an older minor than they were built with, never a newer one), so the
 * framework built with it decides, also over one whose own spec the
 * manifest cannot install. */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "core/pylibs.h"
#include "core/version.h"
#include "core/json.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"
#include "selftest/framework.h"
#include "store/activate.h"

typedef struct fw_want {
    bool imported;
    char version[64], cuda[32], cudnn[32];
    char spec[96];       /* "" when the build decides nothing (a CPU build) */
} fw_want;

static void prefix2(const char *v, char *out, size_t n)
{
    ce_version_prefix(v, 2, out, n);
}

static int probe(cli *c, const char *python, const char *fw, fw_want *w)
{
    memset(w, 0, sizeof *w);
    ce_fw_target tc = { 0 };
    ce_fw_options opt = { .framework = fw, .python = python, .python_opt = "--for", .quick = true, .timeout_s = 120 };
    ce_fw_report r;
    int rc = ce_fw_run(&c->ctx, &tc, &opt, &r);
    if (rc) {
        ce_fw_free(&r);
        return rc;
    }
    w->imported = r.imported && r.doc;
    const char *v = w->imported ? ce_json_str(r.doc, "version") : NULL, *cu = w->imported ? ce_json_str(r.doc, "cuda") : NULL,
               *dn = w->imported ? ce_json_str(r.doc, "cudnn") : NULL;
    if (v) snprintf(w->version, sizeof w->version, "%s", v);   /* printed through cli_note: escaped there */
    if (cu && ce_version_valid(cu)) prefix2(cu, w->cuda, sizeof w->cuda);
    if (dn && ce_version_valid(dn)) prefix2(dn, w->cudnn, sizeof w->cudnn);
    if (!strcmp(fw, "tf") && w->version[0] && ce_version_valid(w->version)) {
        char xy[32];
        prefix2(w->version, xy, sizeof xy);
        if (w->cuda[0]) snprintf(w->spec, sizeof w->spec, "tf-%s", xy);   /* a CPU build: no toolchain */
    } else if (strcmp(fw, "tf") != 0 && w->cuda[0]) {
        /* built in a local: GCC 12 at -O1 with sanitizers calls fields of one
         * struct overlapping (-Werror=restrict) */
        char spec[sizeof w->spec];
        if (w->cudnn[0]) snprintf(spec, sizeof spec, "%s+cudnn%s", w->cuda, w->cudnn);
        else snprintf(spec, sizeof spec, "%s", w->cuda);
        memcpy(w->spec, spec, sizeof spec);
    }
    ce_fw_free(&r);
    return CE_OK;
}

/* cuDNN X.Y against U.V: 0 the same (or either unknown), 2 another major,
 * 1 a newer minor release, -1 an older one. */
static int cudnn_rel(const char *a, const char *b)
{
    if (!a[0] || !b[0]) return 0;
    if (ce_version_major(a) != ce_version_major(b)) return 2;
    int d = ce_version_cmp(a, b);
    return d > 0 ? 1 : d < 0 ? -1 : 0;
}

int cli_for_python(cli *c, const char *python, const char *choice, char *spec, size_t specsz)
{
    enum { NFW = 3 };
    static const char *const fws[NFW] = { "tf", "torch", "jax" };
    static const char *const names[NFW] = { "TensorFlow", "PyTorch", "JAX" };
    const char *pick = NULL;
    if (choice && !(pick = ce_fw_name(choice)))
        return ce_fail(CE_ERR_USAGE, "--framework: '%s' is not tf, torch or jax", choice);
    ce_manifest *m = NULL;
    int lrc = cli_load_manifest(c, &m);
    if (lrc) return lrc;
    fw_want w[NFW];
    char cuda[NFW][32] = { "" }, cudnn[NFW][32] = { "" };   /* the releases each spec resolves to */
    int decided = -1, n = 0, rc = CE_OK;
    char unres[NFW][512] = { "" };   /* why the manifest cannot install a framework's own spec */
    for (int i = 0; i < NFW && rc == CE_OK; i++) {
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
        if ((rc = ce_spec_parse(w[i].spec, &sp)) || (rc = ce_resolve(&c->ctx, m, &sp, "", false, &r))) {
            snprintf(unres[i], sizeof unres[i], "%s", ce_errmsg());   /* said below, unless another serves it */
            rc = CE_OK;
            continue;
        }
        ce_version_prefix(r.cuda->version, 2, cuda[i], sizeof cuda[i]);
        if (r.cudnn) ce_version_prefix(r.cudnn->version, 2, cudnn[i], sizeof cudnn[i]);
        cli_note(c, "%s %s in %s was built for CUDA %s%s%s: %s -> %s", names[i], w[i].version, python, w[i].cuda,
                 w[i].cudnn[0] ? ", cuDNN " : "", w[i].cudnn, w[i].spec, r.name);
        if (!strcmp(fws[i], "tf") && strcmp(w[i].cuda, cuda[i]) != 0)
            cli_warn(c, "TensorFlow %s reports CUDA %s in its build information; its row in the manifest (its "
                     "tested pair) is CUDA %s, which cudaenv installs", w[i].version, w[i].cuda, cuda[i]);
        if (pick && strcmp(pick, fws[i]) != 0) continue;
        if (decided >= 0 && strcmp(cuda[decided], cuda[i]) != 0) {
            rc = ce_fail(CE_ERR_USAGE, "the frameworks in %s want different CUDA releases: %s %s %s (CUDA "
                         "%s), %s %s %s (CUDA %s); choose one with --framework %s or --framework %s (or give each "
                         "its own venv)", python, names[decided], w[decided].version, w[decided].spec,
                         cuda[decided], names[i], w[i].version, w[i].spec, cuda[i], fws[decided], fws[i]);
            break;
        }
        int rel = decided >= 0 ? cudnn_rel(cudnn[i], cudnn[decided]) : 0;
        if (rel == 1 || rel == -1) {   /* one cuDNN major: the newer minor release serves both */
            int newer = rel == 1 ? i : decided, older = rel == 1 ? decided : i;
            cli_note(c, "%s's cuDNN %s also runs %s (built with cuDNN %s: an older minor release of the same major)",
                     names[newer], cudnn[newer], names[older], cudnn[older]);
            decided = newer;
            continue;
        }
        if (rel == 2) {   /* one CUDA, another cuDNN major */
            rc = ce_fail(CE_ERR_USAGE, "the frameworks in %s want different cuDNN releases: %s %s %s (CUDA "
                         "%s, cuDNN %s), %s %s %s (CUDA %s, cuDNN %s); a toolchain carries one cuDNN: choose one with "
                         "--framework %s or --framework %s (or give each its own venv)", python, names[decided],
                         w[decided].version, w[decided].spec, cuda[decided], cudnn[decided][0] ? cudnn[decided] : "none",
                         names[i], w[i].version, w[i].spec, cuda[i], cudnn[i][0] ? cudnn[i] : "none", fws[decided],
                         fws[i]);
            break;
        }
        if (decided < 0) decided = i;   /* TensorFlow's row first: it pins the tested pair */
    }
    ce_manifest_free(m);
    if (rc) return rc;
    for (int i = 0; i < NFW; i++) {
        if (!unres[i][0] || (pick && strcmp(pick, fws[i]) != 0)) continue;
        if (decided >= 0 && !strcmp(w[i].cuda, cuda[decided]) && w[i].cudnn[0] && cudnn[decided][0] &&
            cudnn_rel(cudnn[decided], w[i].cudnn) >= 0 && cudnn_rel(cudnn[decided], w[i].cudnn) < 2)
            cli_note(c, "%s %s in %s was built for CUDA %s, cuDNN %s: %s's toolchain (CUDA %s, cuDNN %s) runs it too",
                     names[i], w[i].version, python, w[i].cuda, w[i].cudnn, names[decided], cuda[decided],
                     cudnn[decided]);
        else
            cli_warn(c, "%s %s was built for CUDA %s%s%s, which this manifest cannot install: %s", names[i],
                     w[i].version, w[i].cuda, w[i].cudnn[0] ? ", cuDNN " : "", w[i].cudnn, unres[i]);
    }
    if (decided < 0) {
        if (pick)
            return ce_fail(CE_ERR_NOTFOUND, "%s does not import %s with CUDA", python,
                           !strcmp(pick, "tf") ? "TensorFlow" : !strcmp(pick, "torch") ? "PyTorch" : "JAX");
        return ce_fail(CE_ERR_NOTFOUND, "%s imports %s: nothing to build a toolchain for (tried "
                       "tensorflow, torch and jax)", python, n ? "only CPU-only frameworks" : "no framework");
    }
    if (strlen(w[decided].spec) >= specsz) return ce_fail(CE_ERR_USAGE, "spec too long");
    snprintf(spec, specsz, "%s", w[decided].spec);
    cli_note(c, "%s decides: %s", names[decided], spec);
    return CE_OK;
}

int cli_for_version(cli *c, const cli_args *a, int opt_for, int opt_fw, char *buf, size_t n, const char **version)
{
    if (a->opt[opt_fw] && !a->opt[opt_for])
        return cli_usage_error(c->cmd, "--framework chooses between the frameworks of --for PYTHON");
    if (!a->opt[opt_for]) return 0;
    if (*version) return cli_usage_error(c->cmd, "--for PYTHON decides the toolchain: give no VERSION with it");
    int rc = cli_for_python(c, a->opt[opt_for], a->opt[opt_fw], buf, n);
    if (rc) return cli_fail(c, rc);
    *version = buf;
    return 0;
}

const char *cli_python_cmd(const char *cmd)
{
    const char *b = cmd ? strrchr(cmd, '/') : NULL;
    b = b ? b + 1 : cmd;
    if (!b || strncmp(b, "python", 6)) return NULL;
    b += 6;
    return strspn(b, "0123456789.") == strlen(b) ? cmd : NULL;
}

int cli_libs_mode(cli *c, const char *libs, const char *python, ce_active_info *sel)
{
    if (libs && strcmp(libs, "framework") && strcmp(libs, "toolchain"))
        return cli_usage_error(c->cmd, "--libs: '%s' is not framework or toolchain", libs);
    sel->libs = libs && !strcmp(libs, "framework") ? CE_LIBS_FRAMEWORK : CE_LIBS_TOOLCHAIN;
    if (sel->is_system || !python || (libs && !strcmp(libs, "framework"))) return 0;
    ce_pylibs pl;
    if (!ce_pylibs_find(python, &pl) || !pl.n) return 0;
    /* a toolchain not installed yet (local --force): assume it has them all */
    char lib[sizeof sel->tc.prefix + 8];
    snprintf(lib, sizeof lib, "%s/lib64", sel->tc.prefix);
    unsigned both = pl.all & (sel->tc.prefix[0] ? ce_pylibs_dir_families(lib) : ~0u);
    if (!both) return 0;   /* no family twice: the toolchain serves what the framework lacks */
    char fams[256], where[1200];
    ce_pylibs_names(both, fams, sizeof fams);
    if (pl.n > 1) snprintf(where, sizeof where, "%s and %zu more director%s", pl.dir[0], pl.n - 1, pl.n > 2 ? "ies" : "y");
    else snprintf(where, sizeof where, "%s", pl.dir[0]);
    const char *name = sel->tc.name[0] ? sel->tc.name : sel->spec;
    if (libs) {   /* --libs toolchain: the framework's copies load by path, whatever LD_LIBRARY_PATH says */
        char fix[1400];
        if (pl.conda)
            snprintf(fix, sizeof fix, "conda remove the CUDA packages of that environment");
        else
            snprintf(fix, sizeof fix, "%s -m pip uninstall -y %s", python, pl.wheels[0] ? pl.wheels : "nvidia-*");
        cli_error(c, "--libs toolchain: %s brings its own %s (%s), which its framework loads by path: with %s's on "
                  "LD_LIBRARY_PATH one process would load two copies. Use them (leave out --libs toolchain), or "
                  "remove them first: %s", python, fams, where, name, fix);
        return 2;
    }
    sel->libs = CE_LIBS_FRAMEWORK;
    cli_note(c, "%s brings its own %s (%s): %s's lib64 is kept off LD_LIBRARY_PATH, so its process loads one copy "
             "of each; nvcc, CUDA_HOME and LIBRARY_PATH are %s's (--libs toolchain: the toolchain's libraries "
             "instead)", python, fams, where, name, name);
    return 0;
}
