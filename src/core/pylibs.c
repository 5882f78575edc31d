/* The CUDA libraries a Python environment brings (pylibs.h): directories
 * read, nothing run. */
#include "pylibs.h"

#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "path.h"

/* longer prefixes first: libcusparseLt is its own product */
static const struct { const char *prefix; int fam; } prefixes[] = {
    { "libcudart.so", 0 },   { "libcublasLt.so", 1 }, { "libcublas.so", 1 },  { "libcudnn", 2 },
    { "libnccl.so", 3 },     { "libnvrtc", 4 },       { "libnvJitLink.so", 5 }, { "libcufft", 6 },
    { "libcusparseLt", 8 },  { "libcusparse", 7 },    { "libcurand.so", 9 },  { "libcusolver", 10 },
    { "libcupti.so", 11 },
};
static const char *const names[] = { "cudart", "cublas", "cudnn", "nccl", "nvrtc", "nvjitlink", "cufft",
                                     "cusparse", "cusparselt", "curand", "cusolver", "cupti" };

int ce_pylibs_family(const char *base)
{
    if (!strstr(base, ".so")) return -1;
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++)
        if (!strncmp(base, prefixes[i].prefix, strlen(prefixes[i].prefix))) return prefixes[i].fam;
    return -1;
}

const char *ce_pylibs_family_name(int i)
{
    return i >= 0 && (size_t)i < sizeof names / sizeof *names ? names[i] : NULL;
}

unsigned ce_pylibs_dir_families(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    unsigned f = 0;
    for (struct dirent *e; (e = readdir(d));) {
        int k = ce_pylibs_family(e->d_name);
        if (k >= 0) f |= 1u << k;
    }
    closedir(d);
    return f;
}

const char *ce_pylibs_names(unsigned fams, char *out, size_t n)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; ce_pylibs_family_name(i) && used < n; i++)
        if (fams & 1u << i) used += (size_t)snprintf(out + used, n - used, "%s%s", used ? ", " : "", names[i]);
    return out;
}

static void add_dir(ce_pylibs *out, const char *dir)
{
    char real[PATH_MAX];
    if (out->n == CE_PYLIBS_DIRS || !realpath(dir, real)) return;
    for (size_t i = 0; i < out->n; i++)
        if (!strcmp(out->dir[i], real)) return;
    unsigned f = ce_pylibs_dir_families(real);
    size_t len = strlen(real);
    if (!f || len >= sizeof out->dir[0]) return;
    memcpy(out->dir[out->n], real, len + 1);   /* (snprintf: -O1's -Wformat-truncation under check-asan) */
    out->fams[out->n++] = f;
    out->all |= f;
}

/* site/nvidia/<component>/lib, site/torch/lib; the nvidia_* dist-infos */
static void scan_site(ce_pylibs *out, const char *site)
{
    char pat[PATH_MAX + 32];
    glob_t g;
    snprintf(pat, sizeof pat, "%s/nvidia/*/lib", site);
    size_t before = out->n;
    if (glob(pat, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; i++) add_dir(out, g.gl_pathv[i]);
        globfree(&g);
    }
    snprintf(pat, sizeof pat, "%s/torch/lib", site);
    add_dir(out, pat);
    if (out->n == before) return;
    snprintf(pat, sizeof pat, "%s/nvidia_*.dist-info", site);
    if (glob(pat, 0, NULL, &g) != 0) return;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *b = strrchr(g.gl_pathv[i], '/') + 1;
        char name[128];
        size_t k = strcspn(b, "-");   /* nvidia_cudnn_cu13-9.19.0.56.dist-info */
        snprintf(name, sizeof name, "%.*s", (int)(k < sizeof name ? k : sizeof name - 1), b);
        for (char *p = name; *p; p++)
            if (*p == '_') *p = '-';
        size_t used = strlen(out->wheels);
        if (!strstr(out->wheels, name) && used + strlen(name) + 2 < sizeof out->wheels)
            snprintf(out->wheels + used, sizeof out->wheels - used, "%s%s", used ? " " : "", name);
    }
    globfree(&g);
}

static void scan_glob(ce_pylibs *out, const char *pat)
{
    glob_t g;
    if (glob(pat, 0, NULL, &g) != 0) return;
    for (size_t i = 0; i < g.gl_pathc; i++) scan_site(out, g.gl_pathv[i]);
    globfree(&g);
}

static bool exists(const char *dir, const char *name)
{
    char p[PATH_MAX + 64];
    return ce_path_join(p, sizeof p, dir, name) == CE_OK && access(p, F_OK) == 0;
}

/* the site directories of prefix for pyver ("python3.12", or "python3*") */
static void scan_prefix(ce_pylibs *out, const char *prefix, const char *pyver)
{
    static const char *const forms[] = { "%s/lib/%s/site-packages", "%s/lib64/%s/site-packages",
                                         "%s/lib/%s/dist-packages", "%s/local/lib/%s/dist-packages",
                                         "%s/lib/python3/dist-packages" };
    char pat[PATH_MAX + 64];
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        snprintf(pat, sizeof pat, forms[i], prefix, pyver);
        scan_glob(out, pat);
    }
}

bool ce_pylibs_find(const char *python, ce_pylibs *out)
{
    memset(out, 0, sizeof *out);
    char py[PATH_MAX], real[PATH_MAX], prefix[PATH_MAX], pyver[64] = "python3*";
    if (!ce_proc_which(python, py, sizeof py) || !realpath(py, real)) return false;
    const char *b = strrchr(real, '/') + 1;
    if (!strncmp(b, "python3.", 8) && strspn(b + 8, "0123456789") == strlen(b + 8) && b[8])
        snprintf(pyver, sizeof pyver, "%s", b);
    const char *pp = getenv("PYTHONPATH");   /* first on sys.path */
    for (const char *p = pp; p && *p;) {
        size_t k = strcspn(p, ":");
        char ent[PATH_MAX];
        if (k && k < sizeof ent) {
            snprintf(ent, sizeof ent, "%.*s", (int)k, p);
            scan_site(out, ent);
        }
        p += k + (p[k] == ':');
    }
    /* the venv or conda environment the name sits in (bin/python, not resolved) */
    snprintf(prefix, sizeof prefix, "%s", py);
    for (int up = 0; up < 2; up++) {
        char *sl = strrchr(prefix, '/');
        if (!sl) break;
        *sl = '\0';
    }
    bool venv = exists(prefix, "pyvenv.cfg");
    if (venv || exists(prefix, "conda-meta")) {
        scan_prefix(out, prefix, pyver);
        if (exists(prefix, "conda-meta")) {
            char lib[PATH_MAX + 8];
            snprintf(lib, sizeof lib, "%s/lib", prefix);
            size_t before = out->n;
            add_dir(out, lib);
            out->conda = out->n > before;
        }
    }
    if (!venv) {
        snprintf(prefix, sizeof prefix, "%s", real);
        for (int up = 0; up < 2; up++) {
            char *sl = strrchr(prefix, '/');
            if (sl) *sl = '\0';
        }
        scan_prefix(out, prefix[0] ? prefix : "/", pyver);
        const char *home = getenv("HOME");
        if (home && *home) {
            char user[PATH_MAX + 64];
            snprintf(user, sizeof user, "%s/.local/lib/%s/site-packages", home, pyver);
            scan_glob(out, user);
        }
    }
    return true;
}

unsigned ce_pylibs_shadowed(const char *python, const char *libdir, ce_pylibs *pl)
{
    memset(pl, 0, sizeof *pl);
    const char *ld = getenv("LD_LIBRARY_PATH");
    size_t n = strlen(libdir);
    bool on = false;
    for (const char *p = ld; p && *p && !on;) {
        size_t k = strcspn(p, ":");
        on = k == n && !strncmp(p, libdir, n);
        p += k + (p[k] == ':');
    }
    if (!on || !ce_pylibs_find(python, pl) || !pl->n) return 0;
    return pl->all & ce_pylibs_dir_families(libdir);
}

void ce_pylibs_hazard_text(const char *python, const char *tc, unsigned fams, const ce_pylibs *pl, char *sum,
                           size_t sumsz, char *fix, size_t fixsz)
{
    char fnames[256];
    ce_pylibs_names(fams, fnames, sizeof fnames);
    snprintf(sum, sumsz, "%s brings its own %s (%s%s), and %s's lib64 is on LD_LIBRARY_PATH: a framework's "
             "process can load two copies of one library (the framework preloads its own by path, their "
             "sub-libraries come by name from LD_LIBRARY_PATH)", python, fnames, pl->dir[0], pl->n > 1 ? ", ..." : "",
             tc);
    snprintf(fix, fixsz, "cudaenv use --for %s (nvcc and CUDA_HOME stay %s's; the framework's libraries alone "
             "on the loader path), or run it as cudaenv exec --for %s -- %s ...", python, tc, python, python);
}
