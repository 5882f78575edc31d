/* The findings of the framework layer, from the report framework.py wrote:
 * each with a stable code (listed in cudaenv(1)), the evidence and the fix.
 *   framework.script-failed      the check script reported nothing
 *   framework.not-importable     the Python has no such framework
 *   framework.library-missing    a library the framework needs cannot be loaded
 *   framework.import-failed      importing raised something else
 *   framework.cpu-only-build     torch+cpu, tensorflow-cpu, ...
 *   framework.cuda-mismatch      built for CUDA X, the toolchain has Y
 *   framework.cudnn-mismatch     built for cuDNN X, the toolchain has Y
 *   framework.cudnn-missing      built with cuDNN, the toolchain has none
 *   framework.foreign-library    a CUDA library mapped from outside the toolchain (and,
 *                                when the process ran on the framework's own libraries,
 *                                from outside those too)
 *   framework.cudnn-mixed        cuDNN's parts mapped from two directories
 *   framework.family-mixed       another family mapped from two directories (framework_libs.c)
 *   framework.no-gpu             the framework sees no GPU (and why)
 *   framework.compute-failed     the matmul / convolution raised
 *   framework.wrong-result       ... or gave a wrong answer */
#include "framework.h"

#include <cJSON.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/pip.h"
#include "manifest/manifest.h"
#include "manifest/source.h"
#include "core/version.h"
#include "core/json.h"
#include "selftest.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

typedef struct fw_an {
    ce_ctx *ctx;
    const ce_fw_target *tc;
    const ce_fw_options *opt;
    ce_fw_report *r;
    const char *py;            /* the interpreter, for fixes */
    bool torch, jax;           /* else TensorFlow */
    char fwcuda[32], fwcudnn[32], version[64];
} fw_an;

static void add(ce_fw_report *r, const char *code, ce_fw_sev sev, const char *summary, const char *evidence,
                const char *fix)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 8;
        ce_fw_finding *f = realloc(r->f, cap * sizeof *f);
        if (!f) return;
        r->f = f;
        r->cap = cap;
    }
    ce_fw_finding *f = &r->f[r->n++];
    snprintf(f->code, sizeof f->code, "%s", code);
    f->sev = sev;
    f->summary = strdup(summary);
    f->evidence = strdup(evidence);
    f->fix = strdup(fix);
    if (sev == CE_FW_ERROR) r->errors++;
    else if (sev == CE_FW_WARNING) r->warnings++;
}

static const char *fmt(char *buf, size_t n, const char *f, ...) __attribute__((format(printf, 3, 4)));
static const char *fmt(char *buf, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, n, f, ap);
    va_end(ap);
    return buf;
}

/* "13.0" -> {13, 0}, "8" -> {8}: the number of parts read. */
static int vparts(const char *s, int p[3])
{
    int n = 0;
    while (s && n < 3 && *s >= '0' && *s <= '9') {
        p[n++] = (int)strtol(s, (char **)&s, 10);
        if (*s != '.') break;
        s++;
    }
    return n;
}

/* Compare what the framework was built for (as precise as it says) with
 * the toolchain: 0 same, 1 other major, 2 toolchain older minor, 3 newer minor. */
static int vcompare(const char *built, const char *have)
{
    int b[3], h[3];
    int nb = vparts(built, b), nh = vparts(have, h);
    if (!nb || !nh) return 0;
    if (b[0] != h[0]) return 1;
    if (nb < 2 || nh < 2 || b[1] == h[1]) return 0;
    return h[1] < b[1] ? 2 : 3;
}

/* major.minor of a version ("9.13.0" -> "9.13"); "8" stays "8". */
static const char *majmin(const char *v, char *out, size_t n)
{
    int p[3];
    int k = vparts(v, p);
    if (k >= 2) snprintf(out, n, "%d.%d", p[0], p[1]);
    else if (k == 1) snprintf(out, n, "%d", p[0]);
    else snprintf(out, n, "%s", v ? v : "");
    return out;
}

/* The manifest, when it is a local file (a URL one would need the network
 * for a fix text; the fix then names the CUDA release instead). */
static ce_manifest *load_manifest(ce_ctx *ctx)
{
    ce_msource src;
    ce_manifest *m = NULL;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    /* through the source: as root a manifest a user can change is not read (source.h) */
    if (ce_manifest_source(ctx, &src) != CE_OK || src.remote || ce_manifest_load_source(ctx, &src, &m) != CE_OK)
        m = NULL;
    ce_quiet_end(&q);
    return m;
}

/* The install spec for the CUDA + cuDNN the framework was built for:
 * TensorFlow's row in the manifest's TF table when there is one
 * ("tf-2.14"), else "<cuda>[+cudnn<x.y>]". */
static void wanted_spec(fw_an *a, char *out, size_t n)
{
    char mm[32], dn[32];
    if (!a->torch && !a->jax && a->version[0]) {
        ce_manifest *m = load_manifest(a->ctx);
        const ce_tf *tf = m ? ce_manifest_tf(m, majmin(a->version, mm, sizeof mm)) : NULL;
        bool fits = tf && !tf->not_installable && vcompare(a->fwcuda, tf->cuda) == 0 &&
                    (!a->fwcudnn[0] || (tf->cudnn && vcompare(a->fwcudnn, tf->cudnn) == 0));
        if (fits) snprintf(out, n, "tf-%s", tf->version);
        ce_manifest_free(m);
        if (fits) return;
    }
    majmin(a->fwcuda, mm, sizeof mm);
    if (a->fwcudnn[0]) snprintf(out, n, "%s+cudnn%s", mm, majmin(a->fwcudnn, dn, sizeof dn));
    else snprintf(out, n, "%s", mm);
}

/* JAX's extra for a CUDA it does not bring itself: jax[cudaNN-local] */
static const char *jax_local(const fw_an *a, char *out, size_t n)
{
    int p[3];
    int k = vparts(a->tc->cuda[0] ? a->tc->cuda : a->fwcuda, p);
    return fmt(out, n, "'jax[cuda%d-local]'", k && p[0] >= 12 ? p[0] : 12);
}

static void check_import(fw_an *a)
{
    ce_fw_report *r = a->r;
    char sum[512], ev[8192], fix[1024], pip[768], pk[64];
    const char *ie = ce_json_str(r->doc, "import_error"), *err = ce_json_str(r->doc, "error");
    const char *text = ie ? ie : err;
    /* "libcudnn.so.8: cannot open shared object file", TF's "Could not load dynamic library 'libcudnn.so.8'" */
    const char *so = NULL;
    const char *hay[] = { text, r->log };
    for (size_t i = 0; i < 2 && !so; i++) {
        const char *p = hay[i] ? strstr(hay[i], "cannot open shared object file") : NULL;
        const char *q = hay[i] ? strstr(hay[i], "Could not load dynamic library '") : NULL;
        if (q) so = q + strlen("Could not load dynamic library '");
        else if (p) {  /* "<file>: cannot open shared object file" */
            const char *s = p;
            while (s > hay[i] && (s[-1] == ' ' || s[-1] == ':')) s--;
            while (s > hay[i] && s[-1] != ' ' && s[-1] != '\'' && s[-1] != '\n' && s[-1] != '/') s--;
            so = s;
        }
    }
    if (so) {
        char name[128];
        size_t k = strcspn(so, "': \n");
        snprintf(name, sizeof name, "%.*s", (int)(k < sizeof name ? k : sizeof name - 1), so);
        if (!a->fwcudnn[0] && !strncmp(name, "libcudnn.so.", 12)) /* the major it wants */
            snprintf(a->fwcudnn, sizeof a->fwcudnn, "%s", name + 12);
        char spec[96], have[PATH_MAX + 160];
        struct stat st;
        snprintf(have, sizeof have, "%s/lib64/%s", a->tc->prefix, name);
        if (a->tc->prefix[0] && stat(have, &st) == 0) {  /* there, but not on this process's loader path */
            add(r, "framework.library-missing", CE_FW_ERROR,
                fmt(sum, sizeof sum, "%s cannot load %s: toolchain %s has it, but it is not on the loader path",
                    r->module, name, a->tc->name),
                fmt(ev, sizeof ev, "%s\n%s exists\nLD_LIBRARY_PATH=%s", text ? text : "(in the log)", have,
                    getenv("LD_LIBRARY_PATH") ? getenv("LD_LIBRARY_PATH") : ""),
                fmt(fix, sizeof fix, "cudaenv use %s (or eval \"$(cudaenv env %s)\"), or run it as cudaenv exec %s -- "
                    "python ...; for Jupyter: cudaenv jupyter install %s", a->tc->name, a->tc->name, a->tc->name,
                    a->tc->name));
            return;
        }
        wanted_spec(a, spec, sizeof spec);
        add(r, "framework.library-missing", CE_FW_ERROR,
            fmt(sum, sizeof sum, "%s cannot load %s, which toolchain %s does not provide", r->module, name,
                a->tc->name[0] ? a->tc->name : "(none)"),
            fmt(ev, sizeof ev, "%s\nLD_LIBRARY_PATH=%s", text ? text : "(in the log)",
                getenv("LD_LIBRARY_PATH") ? getenv("LD_LIBRARY_PATH") : ""),
            a->fwcuda[0] ? fmt(fix, sizeof fix, "cudaenv install %s && cudaenv verify %s --framework %s", spec, spec,
                               r->framework)
                         : fmt(fix, sizeof fix, "install the toolchain your %s release was built for: cudaenv "
                                                "list-remote tf; cudaenv install tf-X.Y", r->module));
        return;
    }
    if (ie) {
        add(r, "framework.not-importable", CE_FW_ERROR,
            fmt(sum, sizeof sum, "%s cannot import %s", a->py, r->module),
            fmt(ev, sizeof ev, "%s", ie),
            a->torch ? fmt(fix, sizeof fix, "%s; or name the Python that has it: --python PATH",
                           ce_pip_install_cmd(a->py, "torch", pip, sizeof pip))
            : a->jax ? fmt(fix, sizeof fix, "%s (JAX on the toolchain's CUDA, no CUDA wheels); or name the Python that "
                           "has it: --python PATH", ce_pip_install_cmd(a->py, jax_local(a, pk, sizeof pk), pip, sizeof pip))
                     : fmt(fix, sizeof fix, "%s (cudaenv list-remote tf shows the pairs); or name the Python that "
                           "has it: --python PATH", ce_pip_install_cmd(a->py, "'tensorflow==X.Y.*'", pip, sizeof pip)));
        return;
    }
    const char *tb = ce_json_str(r->doc, "traceback");
    add(r, "framework.import-failed", CE_FW_ERROR, fmt(sum, sizeof sum, "importing %s failed", r->module),
        fmt(ev, sizeof ev, "%s\n%s", err ? err : "(no error text; see the log)", tb ? tb : r->log),
        fmt(fix, sizeof fix, "%s -c 'import %s' shows the whole error; cudaenv doctor checks the layers below",
            a->py, r->module));
}

static void check_cpu_only(fw_an *a)
{
    ce_fw_report *r = a->r;
    char sum[512], ev[2048], fix[1024], cu[32], pip[768], pk[160];
    const cJSON *dists = cJSON_GetObjectItemCaseSensitive(r->doc, "dists");
    const char *tfcpu = ce_json_str(dists, "tensorflow-cpu");
    int p[3];
    int k = vparts(a->tc->cuda, p);
    snprintf(cu, sizeof cu, "cu%d%d", k ? p[0] : 12, k > 1 ? p[1] : 0);
    if (a->torch)
        fmt(ev, sizeof ev, "torch %s: torch.version.cuda is None", a->version);
    else if (a->jax)
        fmt(ev, sizeof ev, "jax %s: no CUDA plugin (jax_cuda13_plugin, jax_cuda12_plugin, jaxlib.cuda) is importable%s%s",
            a->version, ce_json_str(r->doc, "plugin_error") ? ": " : "", ce_json_str(r->doc, "plugin_error") ? ce_json_str(r->doc, "plugin_error") : "");
    else
        fmt(ev, sizeof ev, "tensorflow %s: tf.sysconfig.get_build_info() has is_cuda_build False%s%s", a->version,
            tfcpu ? "; the tensorflow-cpu wheel is installed, version " : "", tfcpu ? tfcpu : "");
    char mm[32];
    add(r, "framework.cpu-only-build", CE_FW_ERROR,
        fmt(sum, sizeof sum, "%s %s is a CPU-only build: it cannot use any GPU", r->module, a->version), ev,
        a->torch ? fmt(fix, sizeof fix, "%s", ce_pip_install_cmd(a->py, fmt(pk, sizeof pk, "--force-reinstall torch "
                       "--index-url https://download.pytorch.org/whl/%s", cu), pip, sizeof pip))
        : a->jax ? fmt(fix, sizeof fix, "%s (the CUDA plugin for the toolchain's CUDA, without CUDA wheels)",
                       ce_pip_install_cmd(a->py, jax_local(a, pk, sizeof pk), pip, sizeof pip))
                 : ce_pip_externally_managed(a->py)
                       ? ce_pip_install_cmd(a->py, fmt(pk, sizeof pk, "'tensorflow==%s.*'", majmin(a->version, mm, sizeof mm)),
                                            fix, sizeof fix)
                       : fmt(fix, sizeof fix, "%s -m pip uninstall -y tensorflow-cpu && %s -m pip install 'tensorflow==%s.*'",
                             a->py, a->py, majmin(a->version, mm, sizeof mm)));
}

static void check_versions(fw_an *a)
{
    ce_fw_report *r = a->r;
    const ce_fw_target *tc = a->tc;
    char sum[512], ev[2048], fix[1024], spec[96];
    wanted_spec(a, spec, sizeof spec);
    fmt(fix, sizeof fix, "cudaenv install %s && cudaenv verify %s --framework %s", spec, spec, r->framework);
    int c = tc->cuda[0] && a->fwcuda[0] ? vcompare(a->fwcuda, tc->cuda) : 0;
    if (c == 1 || c == 2)
        add(r, "framework.cuda-mismatch", c == 1 || a->jax ? CE_FW_ERROR : CE_FW_WARNING,
            fmt(sum, sizeof sum, "%s %s was built for CUDA %s but toolchain %s has CUDA %s", r->module, a->version,
                a->fwcuda, tc->name, tc->cuda),
            fmt(ev, sizeof ev, "%s: CUDA %s\ntoolchain %s (%s): CUDA %s%s", a->torch ? "torch.version.cuda" :
                a->jax ? "the JAX CUDA plugin's cuda_runtime_build_version()" : "tf.sysconfig.get_build_info()['cuda_version']", a->fwcuda, tc->name, tc->prefix, tc->cuda,
                c == 1 ? "\nanother major release: its libcudart has another SONAME" :
                "\nan older minor release than the framework was built with"), fix);
    if (!a->fwcudnn[0] || !tc->cuda[0]) return;
    const char *src = a->torch ? "torch._C._cudnn.getCompileVersion()"
                      : a->jax ? "the JAX CUDA plugin's cudnn_build_version()" : "tf.sysconfig.get_build_info()['cudnn_version']";
    if (!tc->cudnn[0]) {
        add(r, "framework.cudnn-missing", CE_FW_ERROR,
            fmt(sum, sizeof sum, "%s %s was built with cuDNN %s but toolchain %s has no cuDNN", r->module, a->version,
                a->fwcudnn, tc->name),
            fmt(ev, sizeof ev, "%s: %s\ntoolchain %s (%s): no cuDNN", src, a->fwcudnn, tc->name, tc->prefix), fix);
        return;
    }
    int d = vcompare(a->fwcudnn, tc->cudnn);
    /* PyTorch and JAX refuse an older cuDNN minor at run time; TensorFlow loads it */
    if (d == 1 || d == 2)
        add(r, "framework.cudnn-mismatch", d == 1 || a->torch || a->jax ? CE_FW_ERROR : CE_FW_WARNING,
            fmt(sum, sizeof sum, "%s %s was built for cuDNN %s but toolchain %s has cuDNN %s", r->module, a->version,
                a->fwcudnn, tc->name, tc->cudnn),
            fmt(ev, sizeof ev, "%s: %s\ntoolchain %s (%s): cuDNN %s%s", src, a->fwcudnn, tc->name, tc->prefix,
                tc->cudnn, d == 1 ? "\nanother major release: libcudnn.so has another SONAME" :
                "\nan older minor release than the framework was built with"), fix);
}

/* The pip wheel a mapped file belongs to (its layout:
 * <site-packages>/nvidia/<component>/lib/<file>), named by pip's RECORD
 * when it lists the file, else by the component's installed distribution;
 * false when the file is no wheel's. */
static bool wheel_of(const fw_an *a, const char *path, char *wheel, size_t n)
{
    const cJSON *dists = cJSON_GetObjectItemCaseSensitive(a->r->doc, "dists");
    const char *nv = NULL;
    for (const char *q = strstr(path, "/nvidia/"); q && !nv; q = strstr(q + 1, "/nvidia/")) {
        const char *slash = strchr(q + 8, '/');
        if (slash && !strncmp(slash, "/lib/", 5)) nv = q;
    }
    if (!nv) return false;
    char comp[64];
    nv += strlen("/nvidia/");
    snprintf(comp, sizeof comp, "%.*s", (int)strcspn(nv, "/"), nv);
    if (!strcmp(comp, "cuda_runtime")) snprintf(comp, sizeof comp, "cuda-runtime");
    wheel[0] = '\0';
    for (const cJSON *d = dists ? dists->child : NULL; d; d = d->next) {
        char want[96];
        size_t wl = (size_t)snprintf(want, sizeof want, "nvidia-%s", comp);
        if (!strncmp(d->string, want, wl) && (!d->string[wl] || !strncmp(d->string + wl, "-cu", 3)))
            snprintf(wheel, n, "%s", d->string);
    }
    const char *owner = ce_json_str(cJSON_GetObjectItemCaseSensitive(a->r->doc, "owners"), path);
    if (owner) snprintf(wheel, n, "%s", owner);
    if (!wheel[0]) snprintf(wheel, n, "nvidia-%s-cuXX", comp);
    return true;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* Every wheel the process mapped a library from, sorted, space-separated:
 * the fix uninstalls them all at once. */
static void mapped_wheels(const fw_an *a, char *out, size_t n)
{
    const cJSON *maps = cJSON_GetObjectItemCaseSensitive(a->r->doc, "maps");
    char names[16][96];
    const char *sorted[16];
    size_t k = 0, used = 0;
    for (const cJSON *m = maps ? maps->child : NULL; m && k < 16; m = m->next) {
        if (!cJSON_IsString(m) || !wheel_of(a, m->valuestring, names[k], sizeof names[k])) continue;
        bool seen = false;
        for (size_t i = 0; i < k && !seen; i++) seen = !strcmp(names[i], names[k]);
        if (!seen) { sorted[k] = names[k]; k++; }
    }
    qsort(sorted, k, sizeof *sorted, cmp_str);
    out[0] = '\0';
    for (size_t i = 0; i < k && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%s", i ? " " : "", sorted[i]);
}

/* The two ways out of a framework's wheels shadowing the toolchain, as
 * commands: the wheels alone (the toolchain off the loader path), or the
 * toolchain alone (the wheels uninstalled; in a venv where PY refuses pip). */
static void wheel_fix(const fw_an *a, bool preloaded, char *fix, size_t fsz)
{
    char wheels[1024], pkg[64] = "torch", mm[32], rm[1200] = "";
    mapped_wheels(a, wheels, sizeof wheels);
    const char *fw = a->r->framework, *tc = a->tc->name;
    if (a->jax) jax_local(a, pkg, sizeof pkg);   /* the -local extra brings no CUDA wheels */
    else if (!a->torch) fmt(pkg, sizeof pkg, "'tensorflow==%s.*'", a->version[0] ? majmin(a->version, mm, sizeof mm) : "X.Y");
    int k = snprintf(fix, fsz, "%seither the wheels alone: cudaenv use --for %s (or cudaenv exec --for %s -- %s ...: "
                     "the toolchain's nvcc and CUDA_HOME, its libraries off LD_LIBRARY_PATH); or the toolchain alone: ",
                     preloaded ? "remove it from LD_PRELOAD; then " : "", a->py, a->py, a->py);
    if (k < 0 || (size_t)k >= fsz) return;
    if (ce_pip_externally_managed(a->py)) {   /* PEP 668: a venv of one's own, without the wheels */
        if (!a->jax) fmt(rm, sizeof rm, " && " CE_PIP_VENV_PY " -m pip uninstall -y %s", wheels);
        snprintf(fix + k, fsz - (size_t)k, "python3 -m venv ~/.venvs/cuda && " CE_PIP_VENV_PY " -m pip install %s%s "
                 "(%s is the system's Python, which refuses pip: PEP 668), then cudaenv verify %s --framework %s "
                 "--python " CE_PIP_VENV_PY, pkg, rm, a->py, tc, fw);
    } else {
        snprintf(fix + k, fsz - (size_t)k, "%s -m pip uninstall -y %s (pip install --no-deps keeps them out), then "
                 "cudaenv verify %s --framework %s --python %s", a->py, wheels, tc, fw, a->py);
    }
}

/* Where a library outside the toolchain comes from, and the fix. */
static void classify(fw_an *a, const char *path, char *what, size_t wsz, char *fix, size_t fsz)
{
    const char *pre = getenv("LD_PRELOAD");
    bool preloaded = pre && strstr(pre, path);
    char wheel[96];
    if (wheel_of(a, path, wheel, sizeof wheel)) {
        snprintf(what, wsz, "the pip wheel %s", wheel);
        /* PyTorch's wheels open their nvidia-* wheels' files by path (seen
         * with 2.11 on CUDA 13: an LD_PRELOADed copy does not stop it), so
         * the toolchain's copy is used only once the wheel is gone */
        wheel_fix(a, preloaded, fix, fsz);
        return;
    }
    char dir[PATH_MAX], meta[PATH_MAX + 16];
    snprintf(dir, sizeof dir, "%s", path);
    char *sl = strrchr(dir, '/');
    if (sl) *sl = '\0';
    snprintf(meta, sizeof meta, "%s/../conda-meta", dir);
    struct stat st;
    if (stat(meta, &st) == 0 || strstr(path, "/pkgs/cudatoolkit") || strstr(path, "/pkgs/cudnn")) {
        snprintf(what, wsz, "a conda package (cudatoolkit / cudnn) in %s", dir);
        snprintf(fix, fsz, "conda remove cudatoolkit cudnn (in the environment of %s), or run the framework "
                 "from a Python without them", dir);
        return;
    }
    if (!strncmp(path, "/usr/local/cuda", 15)) {
        snprintf(what, wsz, "the machine's own CUDA (%s)", dir);
        snprintf(fix, fsz, "%sremove %s from LD_LIBRARY_PATH / /etc/ld.so.conf.d (cudaenv doctor shows which)",
                 preloaded ? "remove it from LD_PRELOAD; " : "", dir);
        return;
    }
    snprintf(what, wsz, "%s", dir);
    snprintf(fix, fsz, "%sremove %s from LD_LIBRARY_PATH, LD_PRELOAD or the framework's RPATH",
             preloaded ? "remove it from LD_PRELOAD; " : "", dir);
}

static void check_maps(fw_an *a)
{
    ce_fw_report *r = a->r;
    const cJSON *maps = cJSON_GetObjectItemCaseSensitive(r->doc, "maps");
    char root[PATH_MAX];
    if (!a->tc->prefix[0] || !realpath(a->tc->prefix, root)) return;
    size_t rl = strlen(root);
    /* on the framework's own libraries (exec/env/use --for): those are expected */
    bool own = ce_fw_own_mode(a->tc, r);
    for (const cJSON *m = maps ? maps->child : NULL; m; m = m->next) {
        if (!cJSON_IsString(m)) continue;
        const char *p = m->valuestring;
        if (!strncmp(p, root, rl) && p[rl] == '/') continue;
        char src[64];
        if (own && !strncmp(ce_fw_lib_source(a->tc, p, src, sizeof src), "framework", 9)) continue;
        const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
        bool dnn = !strncmp(base, "libcudnn", 8);
        char what[1024], fix[2048], sum[1024], ev[4096];
        classify(a, p, what, sizeof what, fix, sizeof fix);
        const char *pre = getenv("LD_PRELOAD");
        add(r, "framework.foreign-library", dnn && !a->tc->cudnn[0] ? CE_FW_WARNING : CE_FW_ERROR,
            fmt(sum, sizeof sum, "%s mapped %s from %s, not from toolchain %s", r->module, base, what, a->tc->name),
            fmt(ev, sizeof ev, "/proc/self/maps of %s: %s\ntoolchain prefix: %s\nLD_LIBRARY_PATH=%s%s%s", a->py, p,
                root, getenv("LD_LIBRARY_PATH") ? getenv("LD_LIBRARY_PATH") : "", pre ? "\nLD_PRELOAD=" : "",
                pre ? pre : ""), fix);
    }
}

/* One cuDNN from two places: libcudnn.so.9 from a wheel and its
 * libcudnn_graph / _engines_* (which it dlopens by SONAME, through
 * LD_LIBRARY_PATH) from the toolchain, or the other way round. */
static void check_cudnn_mixed(fw_an *a)
{
    ce_fw_report *r = a->r;
    const cJSON *maps = cJSON_GetObjectItemCaseSensitive(r->doc, "maps");
    char first[PATH_MAX] = "", ev[8192] = "", sum[1024];
    bool mixed = false;
    size_t used = 0;
    for (const cJSON *m = maps ? maps->child : NULL; m; m = m->next) {
        const char *p = cJSON_IsString(m) ? m->valuestring : "";
        const char *base = strrchr(p, '/');
        if (!base || strncmp(base + 1, "libcudnn", 8)) continue;
        size_t dl = (size_t)(base - p);
        if (!first[0]) snprintf(first, sizeof first, "%.*s", (int)dl, p);
        else if (strlen(first) != dl || strncmp(first, p, dl)) mixed = true;
        used += (size_t)snprintf(ev + used, used < sizeof ev ? sizeof ev - used : 0, "%s%s", used ? "\n" : "", p);
        if (used >= sizeof ev) used = sizeof ev - 1;
    }
    if (!mixed) return;
    add(r, "framework.cudnn-mixed", CE_FW_ERROR,
        fmt(sum, sizeof sum, "%s runs one cuDNN made of libraries from two directories", r->module), ev,
        "keep one cuDNN: remove the other copy (the fix of framework.foreign-library), or run the framework "
        "without the toolchain on LD_LIBRARY_PATH so every part comes from the framework's own");
}

static int cuda_num(const char *v)
{
    int p[3];
    int k = vparts(v, p);
    return k ? p[0] * 1000 + (k > 1 ? p[1] * 10 : 0) : 0;
}

static void check_gpus(fw_an *a)
{
    ce_fw_report *r = a->r;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(r->doc, "gpus");
    if (!cJSON_IsArray(g)) return;
    r->framework_gpus = cJSON_GetArraySize(g);
    if (r->framework_gpus > 0) return;
    char sum[512], ev[4096], fix[1024];
    if (r->driver_gpus <= 0) {
        r->nogpu = true;
        add(r, "framework.no-gpu", CE_FW_INFO, "no usable GPU: the driver shows none, so the GPU checks did not run",
            fmt(ev, sizeof ev, "%s lists no GPU; %s", r->module,
                r->driver_gpus < 0 ? "libcuda.so.1 could not be loaded" : "cuDeviceGetCount gives 0"),
            "cudaenv doctor walks the GPU and driver layers");
        return;
    }
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES"), *gerr = ce_json_str(r->doc, "gpu_error");
    int need = cuda_num(a->fwcuda);
    if (cvd) {
        fmt(sum, sizeof sum, "%s sees no GPU while the driver shows %d: CUDA_VISIBLE_DEVICES='%s' hides them",
            r->module, r->driver_gpus, cvd);
        fmt(fix, sizeof fix, "unset CUDA_VISIBLE_DEVICES (or set it to the GPUs to use, e.g. 0)");
    } else if (need && r->driver_cuda && r->driver_cuda < need) {
        fmt(sum, sizeof sum, "%s sees no GPU: the driver supports CUDA %d.%d, %s %s was built for CUDA %s", r->module,
            r->driver_cuda / 1000, r->driver_cuda % 1000 / 10, r->module, a->version, a->fwcuda);
        ce_manifest *m = load_manifest(a->ctx);
        const char *md = NULL;
        for (size_t i = 0; m && i < m->n_cuda && !md; i++)
            if (ce_version_matches(a->fwcuda, m->cuda[i].version)) md = m->cuda[i].min_driver;
        fmt(fix, sizeof fix, "upgrade the NVIDIA driver%s%s, or install a %s build for CUDA %d.%d or older",
            md ? " to " : "", md ? md : "", r->module, r->driver_cuda / 1000, r->driver_cuda % 1000 / 10);
        ce_manifest_free(m);
    } else {
        fmt(sum, sizeof sum, "%s sees no GPU while the driver shows %d", r->module, r->driver_gpus);
        fmt(fix, sizeof fix, "cudaenv verify %s checks the toolchain itself; cudaenv doctor the layers below",
            a->tc->name);
    }
    add(r, "framework.no-gpu", CE_FW_ERROR, sum,
        fmt(ev, sizeof ev, "%s lists 0 GPUs; the driver (CUDA %d.%d) shows %d\nCUDA_VISIBLE_DEVICES=%s%s%s",
            r->module, r->driver_cuda / 1000, r->driver_cuda % 1000 / 10, r->driver_gpus, cvd ? cvd : "(unset)",
            gerr ? "\n" : "", gerr ? gerr : ""), fix);
}

static void check_compute(fw_an *a)
{
    ce_fw_report *r = a->r;
    char sum[512], ev[4096], fix[512];
    const char *ce = ce_json_str(r->doc, "compute_error"), *tb = ce_json_str(r->doc, "traceback");
    fmt(fix, sizeof fix, "cudaenv verify %s (the toolchain's own GPU self-test) and cudaenv doctor", a->tc->name);
    if (ce)
        add(r, "framework.compute-failed", CE_FW_ERROR,
            fmt(sum, sizeof sum, "%s failed running a matmul / convolution on GPU 0", r->module),
            fmt(ev, sizeof ev, "%s\n%s", ce, tb ? tb : ""), fix);
    const cJSON *checks = cJSON_GetObjectItemCaseSensitive(r->doc, "checks");
    for (const cJSON *c = checks ? checks->child : NULL; c; c = c->next) {
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "ok"))) continue;
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(c, "max_rel_err");
        add(r, "framework.wrong-result", CE_FW_ERROR,
            fmt(sum, sizeof sum, "%s on GPU 0 gave a wrong %s", r->module, ce_json_str(c, "name") ? ce_json_str(c, "name") : "result"),
            fmt(ev, sizeof ev, "largest error relative to the float64 CPU reference: %g (limit 1e-3)",
                cJSON_IsNumber(e) ? e->valuedouble : -1.0), fix);
    }
}

void ce_fw_analyse(ce_ctx *ctx, const ce_fw_target *tc, const ce_fw_options *opt, ce_fw_report *r)
{
    fw_an a = { ctx, tc, opt, r, r->python, !strcmp(r->framework, "torch"), !strcmp(r->framework, "jax"), "", "", "" };
    char sum[512], ev[8192];
    if (!r->doc) {
        add(r, "framework.script-failed", CE_FW_ERROR,
            fmt(sum, sizeof sum, "the framework check did not report (%s exited with status %d)", r->python, r->status),
            fmt(ev, sizeof ev, "%s", r->log[0] ? r->log : "(no output)"),
            "run the same Python by hand: it must be Python 3.8 or newer and able to write to $TMPDIR");
        return;
    }
    const char *v;
    if ((v = ce_json_str(r->doc, "version"))) snprintf(a.version, sizeof a.version, "%s", v);
    if ((v = ce_json_str(r->doc, "cuda"))) snprintf(a.fwcuda, sizeof a.fwcuda, "%s", v);
    if ((v = ce_json_str(r->doc, "cudnn"))) snprintf(a.fwcudnn, sizeof a.fwcudnn, "%s", v);
    /* import failed: the installed distribution still tells the release,
     * and a PyTorch wheel's local version its CUDA ("2.5.1+cu118") */
    const char *dist = ce_json_str(cJSON_GetObjectItemCaseSensitive(r->doc, "dists"), r->module);
    if (!a.version[0] && dist) snprintf(a.version, sizeof a.version, "%s", dist);
    const char *cu = a.torch ? strstr(a.version, "+cu") : NULL;
    if (!a.fwcuda[0] && cu && strlen(cu + 3) >= 3 && strlen(cu + 3) <= 4)
        snprintf(a.fwcuda, sizeof a.fwcuda, "%.*s.%c", (int)strlen(cu + 3) - 1, cu + 3, cu[strlen(cu) - 1]);
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(r->doc, "cudnn_runtime");
    if (!a.fwcudnn[0] && cJSON_IsNumber(rt) && rt->valuedouble > 0)
        st_cudnn_decode((long)rt->valuedouble, a.fwcudnn, sizeof a.fwcudnn);
    r->imported = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r->doc, "imported"));
    if (!r->imported || ce_json_str(r->doc, "error")) {
        check_import(&a);
        check_maps(&a);
        return;
    }
    if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(r->doc, "cuda_build"))) {
        check_cpu_only(&a);
        return;
    }
    check_versions(&a);
    check_maps(&a);
    check_cudnn_mixed(&a);
    ce_fw_check_families(tc, r, add);
    if (!opt->quick) {
        check_gpus(&a);
        check_compute(&a);
    }
}
