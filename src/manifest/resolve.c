#include "resolve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/version.h"
#include "machine/probe.h"

void ce_toolchain_name(char *out, unsigned outsz, const char *cuda, const char *cudnn)
{
    if (cudnn && *cudnn)
        snprintf(out, outsz, "%s+cudnn%s", cuda, cudnn);
    else
        snprintf(out, outsz, "%s", cuda);
}

static int bad_spec(const char *text)
{
    return ce_fail(CE_ERR_NOTFOUND,
                   "'%s' is not a version spec; use tf-2.14, tensorflow-2.14.1, torch-2.5, torch-2.5+cu121, "
                   "jax-0.4.30, 11.8, 11.8.0, cuda-11.8 (optionally +cudnn8.7); see: cudaenv list-remote", text);
}

const char *ce_spec_fw_name(ce_spec_kind kind)
{
    return kind == CE_SPEC_TORCH ? "torch" : kind == CE_SPEC_JAX ? "jax" : NULL;
}

const char *ce_spec_kind_label(ce_spec_kind kind)
{
    switch (kind) {
    case CE_SPEC_TF: return "TensorFlow";
    case CE_SPEC_TORCH: return "PyTorch";
    case CE_SPEC_JAX: return "JAX";
    default: return "CUDA";
    }
}

/* A framework's CUDA build as typed after '+': "cu121", "cuda12". */
static bool build_tag_valid(const char *s)
{
    size_t n = strlen(s);
    if (n < 3 || n >= 16 || s[0] != 'c' || s[1] != 'u') return false;
    for (size_t i = 2; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9'))) return false;
    return s[n - 1] >= '0' && s[n - 1] <= '9';
}

/* s starts with the lowercase ASCII prefix p, in any case (what strncasecmp
 * says in the C locale, without its code and table pages to fault in on
 * every env/use: issue 13). */
static bool prefix_icase(const char *s, const char *p)
{
    for (; *p; s++, p++) {
        char c = *s >= 'A' && *s <= 'Z' ? (char)(*s - 'A' + 'a') : *s;
        if (c != *p) return false;
    }
    return true;
}

int ce_spec_parse(const char *text, ce_spec *out)
{
    memset(out, 0, sizeof *out);
    if (!text || !*text || strlen(text) >= sizeof out->text)
        return bad_spec(text ? text : "");
    snprintf(out->text, sizeof out->text, "%s", text);
    if (strcmp(text, "system") == 0) {
        out->kind = CE_SPEC_SYSTEM;
        return CE_OK;
    }
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    char *plus = strstr(buf, "+cudnn");
    if (plus) {
        *plus = '\0';
        const char *cv = plus + 6;
        if (*cv == '-' || *cv == '=') cv++;
        if (!ce_version_valid(cv) || strlen(cv) >= sizeof out->cudnn)
            return bad_spec(text);
        memcpy(out->cudnn, cv, strlen(cv) + 1);   /* length checked above */
    }
    const char *v = buf;
    out->kind = CE_SPEC_CUDA;
    static const struct { const char *p; ce_spec_kind k; } fw_prefixes[] = {
        { "tensorflow==", CE_SPEC_TF }, { "tensorflow-", CE_SPEC_TF }, { "tensorflow", CE_SPEC_TF },
        { "tf-", CE_SPEC_TF }, { "tf", CE_SPEC_TF },
        { "pytorch==", CE_SPEC_TORCH }, { "pytorch-", CE_SPEC_TORCH }, { "torch==", CE_SPEC_TORCH },
        { "torch-", CE_SPEC_TORCH }, { "torch", CE_SPEC_TORCH },
        { "jax==", CE_SPEC_JAX }, { "jax-", CE_SPEC_JAX }, { "jax", CE_SPEC_JAX } };
    static const char *cuda_prefixes[] = { "cuda-", "cuda" };
    for (size_t i = 0; i < sizeof fw_prefixes / sizeof *fw_prefixes; i++) {
        if (prefix_icase(v, fw_prefixes[i].p)) {
            v += strlen(fw_prefixes[i].p);
            out->kind = fw_prefixes[i].k;
            break;
        }
    }
    if (out->kind == CE_SPEC_TORCH || out->kind == CE_SPEC_JAX) {
        /* torch-2.5.1+cu121 (pip's local version), jax-0.4.30+cuda12: the CUDA build */
        char *b = strchr(buf, '+');
        if (b) {
            *b++ = '\0';
            for (char *q = b; *q; q++) *q = *q >= 'A' && *q <= 'Z' ? (char)(*q - 'A' + 'a') : *q;
            if (!build_tag_valid(b)) return bad_spec(text);
            memcpy(out->build, b, strlen(b) + 1);   /* length checked above */
        }
    }
    if (out->kind == CE_SPEC_CUDA) {
        for (size_t i = 0; i < sizeof cuda_prefixes / sizeof *cuda_prefixes; i++) {
            if (prefix_icase(v, cuda_prefixes[i])) {
                v += strlen(cuda_prefixes[i]);
                break;
            }
        }
    }
    if (!strcmp(v, "latest")) {   /* tf-latest, latest, cuda-latest: aliases (resolve.h) */
        memcpy(out->version, "latest", 7);
        return CE_OK;
    }
    if (!ce_version_valid(v) || strlen(v) >= sizeof out->version)
        return bad_spec(text);
    if (out->kind == CE_SPEC_TF || out->kind == CE_SPEC_TORCH) {
        /* TensorFlow and PyTorch keys are MAJOR.MINOR: 2.14.1 -> 2.14; tf-2: the newest 2.x */
        ce_version_prefix(v, 2, out->version, sizeof out->version);
    } else {
        memcpy(out->version, v, strlen(v) + 1);   /* length checked above */
    }
    return CE_OK;
}

/* ---- did you mean ---------------------------------------------------------- */

static int levenshtein(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 31 || lb > 31) return 99;
    int d[32][32];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

int ce_edit_distance(const char *a, const char *b)
{
    return levenshtein(a, b);
}

static int count_parts(const char *v)
{
    int n = 1;
    for (; *v; v++) n += *v == '.';
    return n;
}

/* |a - b| over the first two components, to order equally-near candidates. */
static long numeric_gap(const char *a, const char *b)
{
    char *e;
    long am = strtol(a, &e, 10), an = *e == '.' ? strtol(e + 1, NULL, 10) : 0;
    long bm = strtol(b, &e, 10), bn = *e == '.' ? strtol(e + 1, NULL, 10) : 0;
    return labs((am * 1000 + an) - (bm * 1000 + bn));
}

typedef struct cand { char spec[48]; int score; long gap; } cand;

static int cand_cmp(const void *x, const void *y)
{
    const cand *a = x, *b = y;
    if (a->score != b->score) return a->score - b->score;
    return a->gap < b->gap ? -1 : a->gap > b->gap;
}

static void add_cand(cand *c, size_t *n, size_t cap, const char *prefix, const char *ver,
                     const char *typed, int bonus)
{
    char spec[48];
    snprintf(spec, sizeof spec, "%s%s", prefix, ver);
    for (size_t i = 0; i < *n; i++)
        if (strcmp(c[i].spec, spec) == 0) return;
    if (*n >= cap) return;
    cand *k = &c[(*n)++];
    snprintf(k->spec, sizeof k->spec, "%s", spec);
    k->score = levenshtein(typed, ver) + bonus;
    k->gap = numeric_gap(typed, ver);
}

/* "did you mean tf-2.14?" naming up to three nearest valid specs: the other
 * kind with the same version first (2.14 typed as CUDA is probably TF 2.14),
 * then the nearest by edit distance, then by numeric distance. */
static void suggest(const ce_manifest *m, const ce_spec *spec, char *out, size_t outsz)
{
    size_t nfw = 0;
    const char *fw = ce_spec_fw_name(spec->kind);
    const ce_fw *fws = ce_manifest_fws(m, fw, &nfw);
    size_t cap = m->n_tf + 2 * m->n_cuda + nfw + 1, n = 0;
    cand *c = calloc(cap, sizeof *c);
    out[0] = '\0';
    if (!c) return;
    const char *typed = spec->version;
    char mm[32], pre[16];
    snprintf(pre, sizeof pre, "%s-", fw ? fw : "");
    for (size_t i = nfw; i-- > 0;)   /* a PyTorch or JAX spec: its own releases only */
        add_cand(c, &n, cap, pre, fws[i].version, typed, 0);
    for (size_t i = 0; !fw && i < m->n_tf; i++) {
        bool same = ce_version_matches(m->tf[i].version, typed) || ce_version_matches(typed, m->tf[i].version);
        add_cand(c, &n, cap, "tf-", m->tf[i].version, typed,
                 spec->kind == CE_SPEC_TF ? 0 : (same ? -100 : 3));
    }
    bool full = count_parts(typed) >= 3;
    for (size_t i = fw ? 0 : m->n_cuda; i-- > 0;) {
        const char *v = m->cuda[i].version;
        ce_version_prefix(v, 2, mm, sizeof mm);
        bool same = ce_version_matches(typed, v) || ce_version_matches(mm, typed);
        /* the short form is what users type; the full one when they typed X.Y.Z */
        add_cand(c, &n, cap, "", full ? v : mm, typed, spec->kind == CE_SPEC_CUDA ? 0 : (same ? -100 : 3));
    }
    qsort(c, n, sizeof *c, cand_cmp);
    size_t k = n < 3 ? n : 3;
    while (k > 1 && c[k - 1].score > c[0].score + 1) k--;
    size_t len = 0;
    for (size_t i = 0; i < k && len < outsz; i++)
        len += (size_t)snprintf(out + len, outsz - len, "%s%s", i == 0 ? "" : (i + 1 == k ? " or " : ", "), c[i].spec);
    free(c);
}

/* ---- resolve ---------------------------------------------------------------- */

/* The cuDNN archive of release d usable with CUDA release cuda on platform:
 * a build for its major, and for old per-minor builds ("for_cuda") that minor. */
static const ce_artifact *usable_archive(const ce_cudnn *d, const ce_cuda *cuda, const char *platform)
{
    const ce_artifact *a = ce_cudnn_archive(d, ce_version_major(cuda->version), platform);
    if (a && a->for_cuda && !ce_version_matches(a->for_cuda, cuda->version)) return NULL;
    return a;
}

static int unknown_spec(const ce_manifest *m, const ce_spec *spec)
{
    char hint[256];
    suggest(m, spec, hint, sizeof hint);
    const char *fw = ce_spec_fw_name(spec->kind);
    return ce_fail(CE_ERR_NOTFOUND, "no %s release %s in the manifest (%s)%s%s%s; see: cudaenv list-remote %s",
                   ce_spec_kind_label(spec->kind), spec->text,
                   m->origin ? m->origin : "built-in", *hint ? "; did you mean " : "", hint, *hint ? "?" : "",
                   fw ? fw : spec->kind == CE_SPEC_TF ? "tf" : "cuda");
}

/* An explicit cuDNN choice ("8.9" or "8.9.7.29"): the newest matching release
 * with a build for this CUDA release and platform. */
static int pick_cudnn(ce_ctx *ctx, const ce_manifest *m, const ce_cuda *cuda, const char *want,
                      ce_resolved *out)
{
    bool any = false;
    for (size_t i = m->n_cudnn; i-- > 0;) {
        const ce_cudnn *d = &m->cudnn[i];
        if (!ce_version_matches(want, d->version)) continue;
        any = true;
        const ce_artifact *a = usable_archive(d, cuda, ctx->platform);
        if (a) {
            out->cudnn = d;
            out->cudnn_archive = a;
            return CE_OK;
        }
    }
    if (any)
        return ce_fail(CE_ERR_NOTFOUND, "cuDNN %s has no %s build for CUDA %s in the manifest; "
                       "pick another with --cudnn (see: cudaenv list-remote cudnn) or use --no-cudnn",
                       want, ctx->platform, cuda->version);
    /* nearest cuDNN releases by version, newest first */
    char hint[256] = "";
    size_t len = 0, k = 0;
    for (size_t i = m->n_cudnn; i-- > 0 && k < 3;) {
        const ce_cudnn *d = &m->cudnn[i];
        if (ce_version_major(d->version) != ce_version_major(want) || !usable_archive(d, cuda, ctx->platform)) continue;
        len += (size_t)snprintf(hint + len, sizeof hint - len, "%s%s", k++ ? ", " : "", d->version);
    }
    return ce_fail(CE_ERR_NOTFOUND, "no cuDNN %s in the manifest%s%s%s; see: cudaenv list-remote cudnn",
                   want, k ? "; did you mean " : "", hint, k ? "?" : "");
}

/* torch-2.5[+cu121], jax-0.4.30[+cuda12]: the release, its build, the build's CUDA release. */
static int resolve_fw(const ce_manifest *m, const ce_spec *spec, ce_resolved *out)
{
    const char *label = ce_spec_kind_label(spec->kind);
    out->fw_name = ce_spec_fw_name(spec->kind);
    out->fw = ce_manifest_fw_pick(m, out->fw_name, spec->version, spec->build);
    if (!out->fw) {
        /* an alias with no installable release, or a build that no release has: say so plainly */
        const ce_fw *any = ce_manifest_fw_pick(m, out->fw_name, spec->version, "");
        if (!any || !spec->build[0]) return unknown_spec(m, spec);
        out->fw = any;
    }
    out->fw_build = ce_fw_build_for(out->fw, spec->build);
    if (!out->fw_build) {
        char have[256] = "";
        size_t len = 0;
        for (size_t i = 0; i < out->fw->n_builds && len < sizeof have; i++)
            len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", i ? ", " : "", out->fw->builds[i].tag);
        return ce_fail(CE_ERR_NOTFOUND, "%s %s has no CUDA build %s in the manifest (it has: %s; the default: "
                       "%s); see: cudaenv info %s-%s", label, out->fw->version, spec->build, have, out->fw->deflt,
                       out->fw_name, out->fw->version);
    }
    const ce_fw_build *b = out->fw_build;
    out->cuda = ce_manifest_cuda(m, b->cuda);
    ce_toolchain_name(out->name, sizeof out->name, b->cuda, b->cudnn);
    if (b->not_installable || !out->cuda)
        return ce_fail(CE_ERR_NOTFOUND, "%s %s (%s: CUDA %s, cuDNN %s) cannot be installed from this manifest: "
                       "%s; see: cudaenv info %s-%s for its other CUDA builds", label, out->fw->version, b->tag,
                       b->cuda, b->cudnn ? b->cudnn : "none",
                       b->not_installable ? b->not_installable : "its CUDA release is missing", out->fw_name,
                       out->fw->version);
    return CE_OK;
}

int ce_resolve(ce_ctx *ctx, const ce_manifest *m, const ce_spec *spec,
               const char *cudnn_override, bool no_cudnn, ce_resolved *out)
{
    memset(out, 0, sizeof *out);
    if (spec->kind == CE_SPEC_SYSTEM)
        return ce_fail(CE_ERR_NOTFOUND, "'system' is the machine's own CUDA, not a release in the manifest; "
                       "name a release (tf-2.14, 11.8)");
    const char *want = cudnn_override && *cudnn_override ? cudnn_override : spec->cudnn;
    if (*want && !ce_version_valid(want))
        return ce_fail(CE_ERR_USAGE, "'%s' is not a cuDNN version (e.g. 8.9 or 8.9.7.29)", want);

    if (spec->kind == CE_SPEC_TF) {
        out->tf = ce_manifest_tf_pick(m, spec->version);
        if (!out->tf) return unknown_spec(m, spec);
        out->cuda = ce_manifest_cuda(m, out->tf->cuda);
        ce_toolchain_name(out->name, sizeof out->name, out->tf->cuda, out->tf->cudnn);
        if (out->tf->not_installable || !out->cuda)
            return ce_fail(CE_ERR_NOTFOUND, "TensorFlow %s (CUDA %s, cuDNN %s) cannot be installed from this "
                           "manifest: %s", out->tf->version, out->tf->cuda, out->tf->cudnn ? out->tf->cudnn : "none",
                           out->tf->not_installable ? out->tf->not_installable : "its CUDA release is missing");
    } else if (ce_spec_fw_name(spec->kind)) {
        int rc = resolve_fw(m, spec, out);
        if (rc) return rc;
    } else {
        /* "11.8" -> the newest 11.8.* ; "11.8.0" -> exactly that; latest: the newest this driver runs */
        if (!strcmp(spec->version, "latest")) {
            char drv[64];
            out->cuda = ce_manifest_cuda_latest(m, ctx->platform, ce_driver_version(ctx, drv, sizeof drv) ? drv : NULL);
        }
        for (size_t i = m->n_cuda; i-- > 0 && !out->cuda;)
            if (ce_version_matches(spec->version, m->cuda[i].version)) out->cuda = &m->cuda[i];
        if (!out->cuda) return unknown_spec(m, spec);
    }

    const ce_cuda *cuda = out->cuda;
    int rc = CE_OK;
    /* a framework row names its cuDNN: TensorFlow's tested one, the one a PyTorch/JAX build resolves to */
    const char *row_cudnn = out->tf ? out->tf->cudnn : out->fw_build ? out->fw_build->cudnn : NULL;
    const char *row_version = out->tf ? out->tf->version : out->fw ? out->fw->version : NULL;
    if (no_cudnn) {
        /* the toolkit alone */
    } else if (*want) {
        rc = pick_cudnn(ctx, m, cuda, want, out);
    } else if (row_version) {
        if (row_cudnn) {
            out->cudnn = ce_manifest_cudnn(m, row_cudnn);
            out->cudnn_archive = usable_archive(out->cudnn, cuda, ctx->platform);
            if (out->fw_build) {
                out->cudnn_why = out->fw_build->cudnn_why;
                out->cudnn_passed_over = out->fw_build->cudnn_passed_over;
            }
            if (!out->cudnn_archive)
                rc = ce_fail(CE_ERR_NOTFOUND, "%s %s needs cuDNN %s, which the manifest has no %s "
                             "build of for CUDA %s; use --no-cudnn or --cudnn VER", ce_spec_kind_label(spec->kind),
                             row_version, row_cudnn, ctx->platform, cuda->version);
        }
    } else if ((out->cudnn_choice = ce_cuda_cudnn_choice(cuda, ctx->platform)) != NULL) {
        /* the generator's resolution rule: the newest cuDNN on firm ground (tools/gen_pick.py) */
        const ce_cudnn_choice *ch = out->cudnn_choice;
        out->cudnn = ch->cudnn ? ce_manifest_cudnn(m, ch->cudnn) : NULL;
        out->cudnn_archive = usable_archive(out->cudnn, cuda, ctx->platform);
        if (!out->cudnn_archive) out->cudnn = NULL;
        if (ch->cudnn && !out->cudnn)
            rc = ce_fail(CE_ERR_INTEGRITY, "the manifest's cuda.\"%s\".cudnn_default names cuDNN %s, which it "
                         "has no %s build of for CUDA %d; the manifest is inconsistent", cuda->version, ch->cudnn,
                         ctx->platform, ce_version_major(cuda->version));
        out->cudnn_why = ch->why;
        out->cudnn_passed_over = ch->passed_over;
    } else {
        /* An older manifest: a bare CUDA release gets the newest cuDNN built
         * for it (NVIDIA builds cuDNN per CUDA major, and newer cuDNN releases
         * support the older minors of that major). */
        for (size_t i = m->n_cudnn; i-- > 0 && !out->cudnn;) {
            const ce_artifact *a = usable_archive(&m->cudnn[i], cuda, ctx->platform);
            if (a) {
                out->cudnn = &m->cudnn[i];
                out->cudnn_archive = a;
            }
        }
    }
    out->runfile = ce_artifact_for(cuda->runfiles, cuda->n_runfiles, ctx->platform);
    if (out->tf && out->tf->nccl) {
        out->nccl = ce_manifest_nccl(m, out->tf->nccl);
        out->nccl_archive = ce_cudnn_archive(out->nccl, ce_version_major(cuda->version), ctx->platform);
    }
    ce_toolchain_name(out->name, sizeof out->name, cuda->version, out->cudnn ? out->cudnn->version : NULL);
    /* tf-2.14+cudnn9, --cudnn, --no-cudnn: the user leaves TF's tested pair */
    if (!rc && out->tf && out->tf->cudnn && (!out->cudnn || strcmp(out->cudnn->version, out->tf->cudnn)))
        ce_emit(ctx, CE_EV_WARN, NULL, "TensorFlow %s was tested with CUDA %s + cuDNN %s; %s is not that pair "
                "(for the tested one: cudaenv install tf-%s)", out->tf->version, out->tf->cuda, out->tf->cudnn,
                out->name, out->tf->version);
    if (!rc && out->fw_build && out->fw_build->cudnn && (!out->cudnn || strcmp(out->cudnn->version, out->fw_build->cudnn)))
        ce_emit(ctx, CE_EV_WARN, NULL, "%s %s (%s) pairs CUDA %s with cuDNN %s; %s is not that pair "
                "(for it: cudaenv install %s-%s+%s)", ce_spec_kind_label(spec->kind), out->fw->version,
                out->fw_build->tag, out->fw_build->cuda, out->fw_build->cudnn, out->name, out->fw_name,
                out->fw->version, out->fw_build->tag);
    /* no toolkit for this platform is the more fundamental problem */
    if (rc && (out->runfile || cuda->redist)) return rc;
    if (!out->runfile && !cuda->redist) { /* redist: installs from NVIDIA's components */
        char have[128] = "";
        size_t len = 0;
        for (size_t i = 0; i < cuda->n_runfiles; i++)
            len += (size_t)snprintf(have + len, sizeof have - len, "%s%s", i ? ", " : "", cuda->runfiles[i].platform);
        return ce_fail(CE_ERR_NOTFOUND, "CUDA %s has no runfile for %s in the manifest (it has: %s); "
                       "pick a release that does (cudaenv list-remote cuda)",
                       cuda->version, ctx->platform, *have ? have : "none");
    }
    return CE_OK;
}

/* "+nccl"/"nccl" 1, "-nccl" -1, not named 0; the last mention wins */
static int nccl_wish(const char *adjust)
{
    int wish = 0;
    for (const char *s = adjust ? adjust : ""; *s;) {
        size_t n = strcspn(s, ", ");
        const char *t = s + (*s == '+' || *s == '-');
        if (n && (size_t)(s + n - t) == 4 && strncmp(t, "nccl", 4) == 0) wish = *s == '-' ? -1 : 1;
        s += n;
        s += strspn(s, ", ");
    }
    return wish;
}

int ce_resolve_nccl(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, const char *adjust,
                    const ce_cudnn **lib, const ce_artifact **art)
{
    int wish = nccl_wish(adjust);
    *lib = wish < 0 ? NULL : r->nccl;
    *art = wish < 0 ? NULL : r->nccl_archive;
    if (wish > 0 && !*art && r->cuda) {
        int major = ce_version_major(r->cuda->version);
        *lib = ce_manifest_nccl_for(m, major, ctx->platform);
        *art = ce_cudnn_archive(*lib, major, ctx->platform);
        if (!*art)
            return ce_fail(CE_ERR_USAGE, "--components +nccl: the manifest %s has no NCCL built for CUDA %d "
                           "on %s", m->origin, major, ctx->platform);
    }
    if (!*art) *lib = NULL;
    return CE_OK;
}

int ce_driver_version(ce_ctx *ctx, char *out, size_t n)
{
    if (ctx->driver[0]) {   /* --driver / CUDAENV_DRIVER_VERSION: planned for another machine */
        snprintf(out, n, "%s", ctx->driver);
        return 1;
    }
    ce_machine m;   /* the machine under CUDAENV_SYSROOT: its module's version */
    ce_machine_init(&m, ctx);
    if (ce_machine_driver_version(&m, out, n) <= 0 || !ce_version_valid(out)) {
        out[0] = '\0';
        return 0;
    }
    return 1;
}
