/* Layer 3: which libcudart / libcudnn (+ split libraries) / libcuda the
 * dynamic loader really picks in this environment, resolved the way ld.so
 * does it: LD_LIBRARY_PATH, then /etc/ld.so.cache, then the default
 * directories, and compared with the active toolchain.  The cache is parsed
 * (glibc's "glibc-ld.so.cache1.1" format) instead of trusting ld.so.conf,
 * because the cache is what the loader reads: a conf entry nobody ran
 * ldconfig for is exactly the kind of surprise doctor must show. */
#include <dlfcn.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "core/header.h"
#include "core/path.h"
#include "doctor_int.h"
#include "core/version.h"

typedef struct ld_entry { char *soname, *path; } ld_entry;

struct doc_ld {
    char **env;            /* LD_LIBRARY_PATH (host paths) */
    size_t n_env;
    bool has_cache;
    ld_entry *cache;       /* system paths */
    size_t n_cache;
    const char **conf;     /* ld.so.conf directories (system paths) */
    const char **conf_file;
    size_t n_conf, cap_conf;
    char triplet[32];
};

static char *dupstr(const char *s) { return strdup(s ? s : ""); }

static void add_conf(struct doc_ld *l, const char *dir, const char *file)
{
    if (l->n_conf == l->cap_conf) {
        size_t cap = l->cap_conf ? l->cap_conf * 2 : 16;
        const char **a = realloc(l->conf, cap * sizeof *a), **b;
        if (!a) return;
        l->conf = a;
        b = realloc(l->conf_file, cap * sizeof *b);
        if (!b) return;
        l->conf_file = b;
        l->cap_conf = cap;
    }
    l->conf[l->n_conf] = dupstr(dir);
    l->conf_file[l->n_conf++] = dupstr(file);
}

/* ld.so.conf: one directory per line, "include GLOB" (relative to /etc),
 * comments with '#'.  Depth-limited against include loops. */
static void read_conf(const ce_machine *m, struct doc_ld *l, const char *file, int depth)
{
    char buf[16384];
    if (depth > 4 || ce_machine_read(m, file, buf, sizeof buf) < 0) return;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char *h = strchr(line, '#');
        if (h) *h = '\0';
        while (*line == ' ' || *line == '\t') line++;
        size_t n = strlen(line);
        while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r')) line[--n] = '\0';
        if (!n) continue;
        if (!strncmp(line, "include", 7) && (line[7] == ' ' || line[7] == '\t')) {
            char *pat = line + 8;
            while (*pat == ' ' || *pat == '\t') pat++;
            char full[8192];
            if (pat[0] == '/') ce_machine_path(m, pat, full, sizeof full);
            else { char rel[4200]; snprintf(rel, sizeof rel, "/etc/%s", pat); ce_machine_path(m, rel, full, sizeof full); }
            glob_t g;
            if (glob(full, 0, NULL, &g) == 0) {
                char **names = calloc(g.gl_pathc, sizeof *names);
                size_t k = 0;
                for (size_t i = 0; names && i < g.gl_pathc; i++)
                    names[k++] = dupstr(g.gl_pathv[i] + strlen(m->root));
                globfree(&g);
                /* an empty dir marks an include, expanded later: reading it
                 * here would nest strtok */
                for (size_t i = 0; i < k; i++) {
                    add_conf(l, NULL, names[i]);
                    free(names[i]);
                }
                free(names);
            }
            continue;
        }
        add_conf(l, line, file);
    }
}

/* Expand the include markers (dir == "") breadth first. */
static void expand_includes(const ce_machine *m, struct doc_ld *l)
{
    for (int round = 0; round < 4; round++) {
        bool any = false;
        for (size_t i = 0; i < l->n_conf; i++) {
            if (l->conf[i][0]) continue;
            any = true;
            char file[4096];
            snprintf(file, sizeof file, "%s", l->conf_file[i]);
            free((char *)l->conf[i]);
            free((char *)l->conf_file[i]);
            memmove(&l->conf[i], &l->conf[i + 1], (l->n_conf - i - 1) * sizeof *l->conf);
            memmove(&l->conf_file[i], &l->conf_file[i + 1], (l->n_conf - i - 1) * sizeof *l->conf_file);
            l->n_conf--;
            size_t before = l->n_conf;
            read_conf(m, l, file, 1);
            /* move what the include added to where the include was */
            size_t added = l->n_conf - before;
            if (added) {
                const char **a = malloc(added * sizeof *a), **b = malloc(added * sizeof *b);
                if (a && b) {
                    memcpy(a, &l->conf[before], added * sizeof *a);
                    memcpy(b, &l->conf_file[before], added * sizeof *b);
                    memmove(&l->conf[i + added], &l->conf[i], (before - i) * sizeof *a);
                    memmove(&l->conf_file[i + added], &l->conf_file[i], (before - i) * sizeof *b);
                    memcpy(&l->conf[i], a, added * sizeof *a);
                    memcpy(&l->conf_file[i], b, added * sizeof *b);
                }
                free(a);
                free(b);
            }
            i--;
        }
        if (!any) break;
    }
}

static uint32_t rd32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* glibc's new cache format: header (48 bytes) then 24-byte entries whose
 * key/value are string offsets from the header.  An old-format cache
 * ("ld.so-1.7.0") may precede it. */
static void read_cache(const ce_machine *m, struct doc_ld *l, unsigned arch_flag)
{
    char p[8192];
    ce_machine_path(m, "/etc/ld.so.cache", p, sizeof p);
    FILE *f = fopen(p, "rb");
    if (!f) return;
    unsigned char *buf = malloc(8u << 20);
    size_t len = buf ? fread(buf, 1, 8u << 20, f) : 0;
    fclose(f);
    size_t off = 0;
    if (len >= 16 && !memcmp(buf, "ld.so-1.7.0", 11)) {
        off = 16 + (size_t)rd32(buf + 12) * 12;
        off = (off + 7) & ~(size_t)7;
    }
    if (len < off + 48 || memcmp(buf + off, "glibc-ld.so.cache1.1", 20) != 0) { free(buf); return; }
    l->has_cache = true;
    const unsigned char *base = buf + off;
    size_t avail = len - off;
    uint32_t n = rd32(base + 20);
    if (48 + (size_t)n * 24 > avail) { free(buf); return; }
    l->cache = calloc(n ? n : 1, sizeof *l->cache);
    for (uint32_t i = 0; l->cache && i < n; i++) {
        const unsigned char *e = base + 48 + (size_t)i * 24;
        uint32_t flags = rd32(e), key = rd32(e + 4), val = rd32(e + 8);
        if ((flags & 0xff) != 3 || (flags & 0xff00) != arch_flag) continue;
        if (key >= avail || val >= avail || !memchr(base + key, 0, avail - key) || !memchr(base + val, 0, avail - val))
            continue;
        l->cache[l->n_cache].soname = dupstr((const char *)base + key);
        l->cache[l->n_cache++].path = dupstr((const char *)base + val);
    }
    free(buf);
}

static struct doc_ld *ld_get(ce_doctor *d)
{
    if (d->ld) return d->ld;
    struct doc_ld *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    d->ld = l;
    struct utsname u;
    unsigned arch = 0x0300;    /* FLAG_X8664_LIB64 */
    snprintf(l->triplet, sizeof l->triplet, "x86_64-linux-gnu");
    if (uname(&u) == 0 && !strcmp(u.machine, "aarch64")) {
        arch = 0x0a00;         /* FLAG_AARCH64_LIB64 */
        snprintf(l->triplet, sizeof l->triplet, "aarch64-linux-gnu");
    }
    const char *e = getenv("LD_LIBRARY_PATH");
    if (e && *e) {
        char *copy = dupstr(e), *save = NULL;
        size_t cap = 1;
        for (const char *c = e; *c; c++) cap += *c == ':' || *c == ';';
        l->env = calloc(cap, sizeof *l->env);
        for (char *t = strtok_r(copy, ":;", &save); t && l->env; t = strtok_r(NULL, ":;", &save))
            l->env[l->n_env++] = dupstr(t);
        free(copy);
    }
    read_cache(&d->m, l, arch);
    read_conf(&d->m, l, "/etc/ld.so.conf", 0);
    expand_includes(&d->m, l);
    return l;
}

void doc_ld_free(ce_doctor *d)
{
    struct doc_ld *l = d->ld;
    if (!l) return;
    for (size_t i = 0; i < l->n_env; i++) free(l->env[i]);
    for (size_t i = 0; i < l->n_cache; i++) { free(l->cache[i].soname); free(l->cache[i].path); }
    for (size_t i = 0; i < l->n_conf; i++) { free((char *)l->conf[i]); free((char *)l->conf_file[i]); }
    free(l->env);
    free(l->cache);
    free(l->conf);
    free(l->conf_file);
    free(l);
    d->ld = NULL;
}

size_t doc_ld_conf_dirs(ce_doctor *d, const char ***dirs, const char ***files)
{
    struct doc_ld *l = ld_get(d);
    if (!l) return 0;
    *dirs = l->conf;
    *files = l->conf_file;
    return l->n_conf;
}

static int try_dir(const char *hostdir, const char *soname, char *out, size_t outsz)
{
    char p[CE_PATH_MAX];
    if (ce_path_join(p, sizeof p, hostdir, soname) != CE_OK || !ce_elf_usable(p)) return -1;
    snprintf(out, outsz, "%s", p);
    return 0;
}

/* Search the ld.so.conf directories: what ldconfig would put in the cache. */
static int conf_lookup(ce_doctor *d, struct doc_ld *l, const char *soname, char *out, size_t outsz)
{
    for (size_t i = 0; i < l->n_conf; i++) {
        char h[8192];
        ce_machine_path(&d->m, l->conf[i], h, sizeof h);
        if (try_dir(h, soname, out, outsz) == 0) return 0;
    }
    return -1;
}

int doc_ld_resolve(ce_doctor *d, const char *soname, char *out, size_t outsz, char *via, size_t viasz)
{
    struct doc_ld *l = ld_get(d);
    if (!l) return -1;
    for (size_t i = 0; i < l->n_env; i++)
        if (try_dir(l->env[i], soname, out, outsz) == 0) {
            snprintf(via, viasz, "LD_LIBRARY_PATH entry %s", l->env[i]);
            return 0;
        }
    if (l->has_cache) {
        for (size_t i = 0; i < l->n_cache; i++) {
            if (strcmp(l->cache[i].soname, soname)) continue;
            ce_machine_path(&d->m, l->cache[i].path, out, outsz);
            snprintf(via, viasz, "%s/etc/ld.so.cache", d->m.root);
            return 0;
        }
    } else if (conf_lookup(d, l, soname, out, outsz) == 0) {
        snprintf(via, viasz, "%s/etc/ld.so.conf (no ld.so.cache)", d->m.root);
        return 0;
    }
    const char *defs[6];
    char a[64], b[64];
    snprintf(a, sizeof a, "/lib/%s", l->triplet);
    snprintf(b, sizeof b, "/usr/lib/%s", l->triplet);
    defs[0] = a; defs[1] = b; defs[2] = "/lib64"; defs[3] = "/usr/lib64"; defs[4] = "/lib"; defs[5] = "/usr/lib";
    for (int i = 0; i < 6; i++) {
        char h[4200];
        ce_machine_path(&d->m, defs[i], h, sizeof h);
        if (try_dir(h, soname, out, outsz) == 0) {
            snprintf(via, viasz, "default directory %s", defs[i]);
            return 0;
        }
    }
    return -1;
}

/* ---- versions of files ---- */

/* "libcudart.so.11.8.89" -> "11.8.89" (stem "libcudart.so") from the file a
 * path finally names. */
static bool version_from_name(const char *hostpath, const char *stem, char *out, size_t outsz)
{
    char real[PATH_MAX];
    if (!realpath(hostpath, real)) return false;
    const char *b = strrchr(real, '/');
    b = b ? b + 1 : real;
    size_t sl = strlen(stem);
    if (strncmp(b, stem, sl) || b[sl] != '.') return false;
    const char *v = b + sl + 1;
    if (!ce_version_valid(v) || !strchr(v, '.')) return false;
    snprintf(out, outsz, "%s", v);
    return true;
}

/* The version a library reports about itself, for files named only by
 * their SONAME (NVIDIA's .deb and pip layouts). */
static bool version_from_call(const char *hostpath, bool cudnn, char *out, size_t outsz)
{
    void *h = dlopen(hostpath, RTLD_LAZY | RTLD_LOCAL);
    if (!h) return false;
    bool ok = false;
    if (cudnn) {
        size_t (*fn)(void) = (size_t (*)(void))dlsym(h, "cudnnGetVersion");
        if (fn) {
            size_t v = fn();
            if (v >= 90000) snprintf(out, outsz, "%zu.%zu.%zu", v / 10000, v % 10000 / 100, v % 100);
            else snprintf(out, outsz, "%zu.%zu.%zu", v / 1000, v % 1000 / 100, v % 100);
            ok = true;
        }
    } else {
        int (*fn)(int *) = (int (*)(int *))dlsym(h, "cudaRuntimeGetVersion");
        int v = 0;
        if (fn && fn(&v) == 0 && v > 0) {
            snprintf(out, outsz, "%d.%d", v / 1000, v % 1000 / 10);
            ok = true;
        }
    }
    dlclose(h);
    return ok;
}

/* stem: "libcudart" or "libcudnn" */
static bool lib_version(const char *hostpath, const char *stem, char *out, size_t outsz)
{
    char so[32];
    snprintf(so, sizeof so, "%s.so", stem);
    return version_from_name(hostpath, so, out, outsz) ||
           version_from_call(hostpath, !strcmp(stem, "libcudnn"), out, outsz);
}

/* The file of soname inside a toolchain prefix (lib64, lib, targets/...). */
static bool in_toolchain(const char *prefix, const char *soname, const char *triplet, char *out, size_t outsz)
{
    char tgt[64];
    snprintf(tgt, sizeof tgt, "targets/%s/lib", !strncmp(triplet, "aarch64", 7) ? "sbsa-linux" : "x86_64-linux");
    const char *subs[] = { "lib64", "lib", tgt };
    for (int i = 0; i < 3; i++) {
        char dir[CE_PATH_MAX];
        if (ce_path_join(dir, sizeof dir, prefix, subs[i]) == CE_OK && try_dir(dir, soname, out, outsz) == 0)
            return true;
    }
    return false;
}

static void cudart_soname(const char *cuda, char *out, size_t n)
{
    int maj = ce_version_major(cuda);
    if (maj <= 10) {   /* 10.x: libcudart.so.10.2 */
        char p[32];
        ce_version_prefix(cuda, 2, p, sizeof p);
        snprintf(out, n, "libcudart.so.%s", p);
    }
    else if (maj == 11) snprintf(out, n, "libcudart.so.11.0");
    else snprintf(out, n, "libcudart.so.%d", maj);
}

static void fix_for(const ce_doctor *d, char *fix, size_t n)
{
    const ce_doc_active *a = &d->act;
    if (a->system)
        snprintf(fix, n, "remove the other CUDA directories from LD_LIBRARY_PATH (cudaenv use system does it), "
                 "or run the program with: cudaenv exec system -- PROGRAM");
    else
        snprintf(fix, n, "eval \"$(cudaenv env %s)\" (or cudaenv use %s with the shell integration) puts %s/lib64 "
                 "first in LD_LIBRARY_PATH; for programs started outside a shell: cudaenv exec %s -- PROGRAM, or "
                 "cudaenv global %s --system", a->name, a->name, a->prefix, a->name, a->name);
}

/* One library of the active toolchain: not found, shadowed, or fine. */
static void check_one(ce_doctor *d, const char *what, const char *soname, const char *expect, char *got,
                      size_t gotsz)
{
    char via[4300], ev[4096], fix[2048], code[64], sum[512];
    got[0] = '\0';
    if (doc_ld_resolve(d, soname, got, gotsz, via, sizeof via) != 0) {
        fix_for(d, fix, sizeof fix);
        doc_add(d, doc_fmt(code, sizeof code, "libs.%s-not-found", what), CE_SEV_ERROR,
                doc_fmt(sum, sizeof sum, "programs cannot load %s: the loader does not find it", soname),
                doc_fmt(ev, sizeof ev, "active toolchain %s has %s; LD_LIBRARY_PATH=%s; not in the ld.so cache "
                        "or default directories", d->act.name, expect, getenv("LD_LIBRARY_PATH") ?
                        getenv("LD_LIBRARY_PATH") : "(unset)"), fix);
        return;
    }
    if (ce_same_file(got, expect)) return;
    fix_for(d, fix, sizeof fix);
    char ver[64] = "", vs[96] = "";
    if (lib_version(got, !strcmp(what, "cudnn") ? "libcudnn" : "libcudart", ver, sizeof ver))
        snprintf(vs, sizeof vs, " (version %s)", ver);
    doc_add(d, doc_fmt(code, sizeof code, "libs.%s-shadowed", what), CE_SEV_ERROR,
            doc_fmt(sum, sizeof sum, "programs load another %s than the active toolchain's", soname),
            doc_fmt(ev, sizeof ev, "the loader picks %s%s via %s; the active toolchain %s (%s) has %s", got, vs, via,
                    d->act.name, d->act.origin, expect), fix);
}

static const char *const split8[] = { "ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer",
                                      "adv_train", NULL };
static const char *const split9[] = { "graph", "engines_precompiled", "engines_runtime_compiled", "ops", "cnn",
                                      "adv", "heuristic", NULL };

/* cuDNN 8 and 9 are split: libcudnn.so.N dlopens its sub-libraries at
 * run time.  9.x finds them next to itself ($ORIGIN); 8.x has no RPATH and
 * goes through the loader again, so a half-copied cuDNN fails late. */
static void check_split(ce_doctor *d, const char *cudnn_file, int major)
{
    const char *const *names = major == 8 ? split8 : major >= 9 ? split9 : NULL;
    if (!names) return;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", cudnn_file);
    char *s = strrchr(dir, '/');
    if (s) *s = '\0';
    char missing[1024] = "", mixed[2048] = "";
    size_t nm = 0, nx = 0;
    for (int i = 0; names[i]; i++) {
        char so[96], got[8192], via[4300];
        snprintf(so, sizeof so, "libcudnn_%s.so.%d", names[i], major);
        if (try_dir(dir, so, got, sizeof got) == 0) {
            if (major != 8) continue;
            /* 8.x resolves it through the loader: that copy must be this one */
            if (doc_ld_resolve(d, so, got, sizeof got, via, sizeof via) == 0) {
                char here[CE_PATH_MAX];
                if (ce_path_join(here, sizeof here, dir, so) == CE_OK && !ce_same_file(here, got))
                    nx += (size_t)snprintf(mixed + nx, nx < sizeof mixed ? sizeof mixed - nx : 0, "%s%s -> %s",
                                           nx ? ", " : "", so, got);
            }
            continue;
        }
        if (major == 8 && doc_ld_resolve(d, so, got, sizeof got, via, sizeof via) == 0) {
            nx += (size_t)snprintf(mixed + nx, nx < sizeof mixed ? sizeof mixed - nx : 0, "%s%s -> %s",
                                   nx ? ", " : "", so, got);
            continue;
        }
        nm += (size_t)snprintf(missing + nm, nm < sizeof missing ? sizeof missing - nm : 0, "%s%s",
                               nm ? ", " : "", so);
    }
    char ev[4096], fix[1024];
    if (nm)
        doc_add(d, "libs.cudnn-split-missing", CE_SEV_ERROR,
                "cuDNN's split libraries are incomplete: convolutions fail at run time",
                doc_fmt(ev, sizeof ev, "%s is used, but %s %s missing next to it", cudnn_file, missing,
                        strchr(missing, ',') ? "are" : "is"),
                doc_fmt(fix, sizeof fix, "copy every libcudnn*.so.%d* of the cuDNN archive into %s (cp -P keeps "
                        "the symlinks), or reinstall the toolchain with cudaenv install --force", major, dir));
    if (nx)
        doc_add(d, "libs.cudnn-split-mixed", CE_SEV_ERROR,
                "cuDNN 8's split libraries come from another cuDNN copy than libcudnn.so.8",
                doc_fmt(ev, sizeof ev, "libcudnn.so.8 is %s, but the loader resolves %s", cudnn_file, mixed),
                doc_fmt(fix, sizeof fix, "put %s first in LD_LIBRARY_PATH (cuDNN 8 has no RPATH) and remove the "
                        "other copy's directory from it", dir));
}

static void check_libcuda(ce_doctor *d)
{
    const ce_probe *p = &d->probe;
    char got[8192], via[4300], ev[4096], sum[512];
    const char *names[] = { "libcuda.so.1", "libcuda.so" };
    for (int i = 0; i < 2; i++) {
        if (doc_ld_resolve(d, names[i], got, sizeof got, via, sizeof via) != 0) continue;
        if (!strstr(got, "/stubs/")) continue;
        doc_add(d, "libs.libcuda-stub", CE_SEV_ERROR,
                "the loader picks the toolkit's stub libcuda, not the driver's",
                doc_fmt(ev, sizeof ev, "%s resolves to %s via %s", names[i], got, via),
                "remove the .../lib64/stubs directory from LD_LIBRARY_PATH (stubs are for linking only; at run "
                "time they fail with CUDA_ERROR_STUB_LIBRARY)");
        return;
    }
    if (p->wsl || doc_ld_resolve(d, "libcuda.so.1", got, sizeof got, via, sizeof via) != 0) return;
    char ver[64];
    if (!p->module_version[0] || !version_from_name(got, "libcuda.so", ver, sizeof ver)) return;
    if (!strcmp(ver, p->module_version)) return;
    if (strstr(got, "compat")) {
        doc_add(d, "driver.forward-compat", CE_SEV_INFO,
                doc_fmt(sum, sizeof sum, "CUDA forward compatibility: libcuda %s runs on kernel driver %s", ver,
                        p->module_version),
                doc_fmt(ev, sizeof ev, "libcuda.so.1 resolves to %s via %s", got, via),
                "nothing to do on a data-center GPU; on GeForce/RTX forward compatibility is not supported: "
                "remove the compat directory from the library path");
        return;
    }
    doc_add(d, "libs.libcuda-mismatch", CE_SEV_ERROR,
            "the libcuda.so.1 programs load belongs to another driver than the loaded kernel module",
            doc_fmt(ev, sizeof ev, "libcuda.so.1 resolves to %s (driver %s) via %s; kernel module %s", got, ver, via,
                    p->module_version),
            "remove that copy (or its directory from LD_LIBRARY_PATH): libcuda must come from the installed "
            "driver (/usr/lib/<arch>-linux-gnu), never from a toolkit, a container image or a copied tree");
}

static void check_header(ce_doctor *d, const char *what, const char *hdr_ver, const char *lib_file,
                         const char *lib_ver, const char *hdr_path)
{
    char code[64], ev[4096], sum[256], fix[1024];
    doc_add(d, doc_fmt(code, sizeof code, "libs.%s-header-mismatch", what), CE_SEV_ERROR,
            doc_fmt(sum, sizeof sum, "the %s header and library of the active toolchain disagree", what),
            doc_fmt(ev, sizeof ev, "%s says %s; %s is %s", hdr_path, hdr_ver, lib_file, lib_ver),
            doc_fmt(fix, sizeof fix, "programs compiled against this header misbehave with that library: "
                    "reinstall the toolchain (cudaenv install --force %s) instead of copying files by hand",
                    d->act.name[0] ? d->act.name : "VERSION"));
}

/* NCCL (libnccl.so.2), what XLA and torch.distributed dlopen for multi-GPU
 * collectives: the toolchain's must be the one programs load; on a machine
 * of several GPUs a toolchain without one is named, with the way to add it */
static void check_nccl(ce_doctor *d, const char *triplet)
{
    const ce_doc_active *a = &d->act;
    char expect[8192], got[8192], via[4300], ev[4096], fix[1024];
    if (in_toolchain(a->prefix, "libnccl.so.2", triplet, expect, sizeof expect)) {
        check_one(d, "nccl", "libnccl.so.2", expect, got, sizeof got);
        return;
    }
    if (d->probe.n_gpus < 2) return;   /* collectives need two GPUs */
    bool elsewhere = doc_ld_resolve(d, "libnccl.so.2", got, sizeof got, via, sizeof via) == 0;
    doc_add(d, "libs.nccl-missing", CE_SEV_WARNING,
            "the active toolchain has no NCCL: multi-GPU collectives (TensorFlow's MirroredStrategy, "
            "torch.distributed) cannot use one from it",
            elsewhere ? doc_fmt(ev, sizeof ev, "%s has no libnccl.so.2; the loader finds a foreign one: %s via %s",
                                a->prefix, got, via)
                      : doc_fmt(ev, sizeof ev, "%s has no libnccl.so.2, and the loader finds none", a->prefix),
            doc_fmt(fix, sizeof fix, "cudaenv install %s --components +nccl --force (TensorFlow rows from 2.14 "
                    "install it by default)", a->name));
}

void doc_check_libs(ce_doctor *d)
{
    const ce_doc_active *a = &d->act;
    struct doc_ld *l = ld_get(d);
    if (!l) return;
    check_libcuda(d);
    char so[64], expect[8192], got[8192], via[4300];
    char cudnn_used[8192] = "";
    int cudnn_major = 0;
    if (a->present && a->cuda[0]) {
        cudart_soname(a->cuda, so, sizeof so);
        if (in_toolchain(a->prefix, so, l->triplet, expect, sizeof expect)) {
            check_one(d, "cudart", so, expect, got, sizeof got);
            char hp[8192], lv[64];
            snprintf(hp, sizeof hp, "%s/include/cuda_runtime_api.h", a->prefix);
            long hv = ce_header_define(hp, "CUDART_VERSION");
            if (hv > 0 && lib_version(expect, "libcudart", lv, sizeof lv)) {
                char h[32], lp[32];
                snprintf(h, sizeof h, "%ld.%ld", hv / 1000, hv % 1000 / 10);
                ce_version_prefix(lv, 2, lp, sizeof lp);
                if (ce_version_cmp(h, lp) != 0) check_header(d, "cudart", h, expect, lv, hp);
            }
        }
        for (int maj = 9; maj >= 8 && !cudnn_major; maj--) {
            snprintf(so, sizeof so, "libcudnn.so.%d", maj);
            if (a->cudnn[0] && ce_version_major(a->cudnn) != maj) continue;
            if (!in_toolchain(a->prefix, so, l->triplet, expect, sizeof expect)) continue;
            cudnn_major = maj;
            check_one(d, "cudnn", so, expect, got, sizeof got);
            snprintf(cudnn_used, sizeof cudnn_used, "%s", got[0] ? got : expect);
            char hp[8192], lv[64];
            snprintf(hp, sizeof hp, "%s/include/cudnn_version.h", a->prefix);
            long hM = ce_header_define(hp, "CUDNN_MAJOR"), hm = ce_header_define(hp, "CUDNN_MINOR"),
                 hp2 = ce_header_define(hp, "CUDNN_PATCHLEVEL");
            if (hM >= 0 && hm >= 0 && hp2 >= 0 && lib_version(expect, "libcudnn", lv, sizeof lv)) {
                char h[48], lp[48];
                snprintf(h, sizeof h, "%ld.%ld.%ld", hM, hm, hp2);
                ce_version_prefix(lv, 3, lp, sizeof lp);
                if (ce_version_cmp(h, lp) != 0) check_header(d, "cudnn", h, expect, lv, hp);
            }
        }
    }
    if (a->present && a->cuda[0]) check_nccl(d, l->triplet);
    if (!cudnn_major) {
        /* no cuDNN in the toolchain: whatever cuDNN the loader offers must
         * at least be complete */
        for (int maj = 9; maj >= 8 && !cudnn_major; maj--) {
            snprintf(so, sizeof so, "libcudnn.so.%d", maj);
            if (doc_ld_resolve(d, so, cudnn_used, sizeof cudnn_used, via, sizeof via) == 0) cudnn_major = maj;
        }
    }
    if (cudnn_major && cudnn_used[0]) check_split(d, cudnn_used, cudnn_major);
}
