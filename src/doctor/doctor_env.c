/* Layer 4: the environment traps around a CUDA install: several toolkits in
 * PATH / LD_LIBRARY_PATH, an nvcc that is not the selected one, a
 * /usr/local/cuda link another installer moved (or left dangling, or
 * replaced by a directory), ld.so.conf.d entries for other releases,
 * CUDA_VISIBLE_DEVICES hiding every GPU, CUDA_HOME pointing elsewhere. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor_int.h"
#include "system/system.h"
#include "core/version.h"

/* The CUDA release a toolkit tree holds: version.json, version.txt, the
 * runtime header, then the directory name. */
void doc_toolkit_version(const char *root, char *out, size_t n)
{
    char p[8192], buf[65536];
    out[0] = '\0';
    snprintf(p, sizeof p, "%s/version.json", root);
    FILE *f = fopen(p, "r");
    if (f) {
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        cJSON *j = cJSON_Parse(buf);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "cuda"), "version");
        /* "12.1.20230222" is date-stamped: keep major.minor only */
        if (cJSON_IsString(v)) ce_version_prefix(v->valuestring, 2, out, (unsigned)n);
        cJSON_Delete(j);
        if (out[0]) return;
    }
    snprintf(p, sizeof p, "%s/version.txt", root);
    f = fopen(p, "r");
    if (f) {
        if (fgets(buf, sizeof buf, f)) {
            const char *s = strstr(buf, "Version ");
            if (s) { buf[strcspn(buf, "\r\n")] = '\0'; ce_version_prefix(s + 8, 2, out, (unsigned)n); }
        }
        fclose(f);
        if (out[0]) return;
    }
    snprintf(p, sizeof p, "%s/include/cuda_runtime_api.h", root);
    f = fopen(p, "r");
    if (f) {
        while (fgets(buf, sizeof buf, f)) {
            const char *s = strstr(buf, "#define CUDART_VERSION");
            if (!s) continue;
            long v = strtol(s + 22, NULL, 10);
            if (v > 0) snprintf(out, n, "%ld.%ld", v / 1000, v % 1000 / 10);
            break;
        }
        fclose(f);
        if (out[0]) return;
    }
    const char *c = strstr(root, "cuda-");
    if (c) {
        char tmp[32];
        snprintf(tmp, sizeof tmp, "%.*s", (int)strspn(c + 5, "0123456789."), c + 5);
        ce_version_prefix(tmp, 2, out, (unsigned)n);
    }
}

/* The toolkit root of a library directory (.../lib64, .../lib,
 * .../targets/<arch>/lib). */
static void lib_root(const char *dir, char *out, size_t n)
{
    snprintf(out, n, "%s", dir);
    size_t l = strlen(out);
    while (l > 1 && out[l - 1] == '/') out[--l] = '\0';
    char *s = strrchr(out, '/');
    if (!s) return;
    if (!strcmp(s, "/lib64") || !strcmp(s, "/lib")) {
        *s = '\0';
        char *t = strrchr(out, '/');
        if (t && t > out) {
            char *u = t;
            *u = '\0';
            char *v = strrchr(out, '/');
            if (v && !strcmp(v, "/targets")) { *v = '\0'; return; }
            *u = '/';
        }
    }
}

static bool has_prefix_file(const char *dir, const char *stem)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    struct dirent *e;
    bool found = false;
    size_t n = strlen(stem);
    while (!found && (e = readdir(d)))
        if (!strncmp(e->d_name, stem, n)) found = true;
    closedir(d);
    return found;
}

/* One toolkit, also when one of the two is a tree of symlinks into the
 * other (a toolchain composed over an existing install). */
static bool same_toolkit(const ce_doctor *d, const char *root)
{
    if (!d->act.present) return false;
    if (ce_same_file(root, d->act.prefix)) return true;
    char a[8192], b[8192];
    snprintf(a, sizeof a, "%s/lib64", root);
    snprintf(b, sizeof b, "%s/lib64", d->act.prefix);
    if (!ce_same_file(a, b)) return false;
    snprintf(a, sizeof a, "%s/bin", root);
    snprintf(b, sizeof b, "%s/bin", d->act.prefix);
    return ce_same_file(a, b);
}

/* A finding of the libs layer already names this directory as the reason
 * for shadowing: do not report it twice. */
static bool already_blamed(const ce_doctor *d, const char *dir)
{
    char needle[4200];
    snprintf(needle, sizeof needle, "LD_LIBRARY_PATH entry %s", dir);
    for (size_t i = 0; i < d->n; i++)
        if (!strncmp(d->f[i].code, "libs.", 5) && strstr(d->f[i].evidence, needle)) return true;
    return false;
}

/* The toolkit an nvcc on PATH belongs to, following symlinks and the
 * one-line wrapper scripts some images put in /usr/local/bin
 * ("exec /usr/local/cuda-13.0/bin/nvcc "$@""); false when it is no
 * recognizable toolkit. */
static bool nvcc_root(const char *nv, char *root, size_t n)
{
    char real[PATH_MAX], buf[4096];
    if (!realpath(nv, real)) return false;
    FILE *f = fopen(real, "r");
    if (f) {
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *hit = len > 2 && !strncmp(buf, "#!", 2) ? strstr(buf, "/bin/nvcc") : NULL;
        if (hit) {
            const char *start = hit;
            while (start > buf && start[-1] != ' ' && start[-1] != '"' && start[-1] != '\'' && start[-1] != '\n')
                start--;
            char target[4096];
            snprintf(target, sizeof target, "%.*s/bin/nvcc", (int)(hit - start), start);
            if (target[0] == '/' && strcmp(target, real) && !realpath(target, real)) return false;
        }
    }
    snprintf(root, n, "%s", real);
    for (int i = 0; i < 2; i++) {
        char *s = strrchr(root, '/');
        if (!s || s == root) return false;
        *s = '\0';
    }
    char ver[32];
    doc_toolkit_version(root, ver, sizeof ver);
    return ver[0] != '\0';
}

static void check_path(ce_doctor *d)
{
    const char *path = getenv("PATH");
    if (!path) return;
    char *copy = strdup(path), *save = NULL;
    char roots[8][4096], vers[8][32], dirs[8][1024];
    int nr = 0;
    char first[4096] = "";
    for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save)) {
        char nv[8192];
        snprintf(nv, sizeof nv, "%s/nvcc", t);
        if (access(nv, X_OK) != 0) continue;
        char root[4096];
        if (!nvcc_root(nv, root, sizeof root)) continue;
        if (!first[0]) snprintf(first, sizeof first, "%s", nv);
        bool dup = false;
        for (int i = 0; i < nr; i++) if (ce_same_file(roots[i], root)) dup = true;
        if (dup || nr == 8) continue;
        snprintf(roots[nr], sizeof roots[nr], "%s", root);
        snprintf(dirs[nr], sizeof dirs[nr], "%s", t);
        doc_toolkit_version(root, vers[nr], sizeof vers[nr]);
        nr++;
    }
    free(copy);
    char list[2048] = "", ev[4096], fix[2048];
    size_t u = 0;
    for (int i = 0; i < nr; i++)
        u += (size_t)snprintf(list + u, u < sizeof list ? sizeof list - u : 0, "%s%s/bin (CUDA %s)", i ? ", " : "",
                              roots[i], vers[i][0] ? vers[i] : "?");
    if (nr && d->act.present && !same_toolkit(d, roots[0])) {
        doc_add(d, "env.nvcc-not-active", CE_SEV_WARNING,
                "the nvcc on PATH is not the active toolchain's: builds use another CUDA",
                doc_fmt(ev, sizeof ev, "nvcc resolves to %s (CUDA %s); active: %s (%s) at %s; CUDA on PATH: %s",
                        first, vers[0][0] ? vers[0] : "?", d->act.name, d->act.origin, d->act.prefix, list),
                d->act.system ? "put /usr/local/cuda/bin first in PATH (cudaenv use system)"
                              : doc_fmt(fix, sizeof fix, "eval \"$(cudaenv env %s)\" or cudaenv use %s puts %s/bin "
                                        "first in PATH", d->act.name, d->act.name, d->act.prefix));
    } else if (nr >= 2) {
        /* only a toolkit's own bin directory is named for removal: one such
         * as /usr/local/bin that holds an nvcc link holds much else too */
        char own[2048] = "", general[2048] = "";
        size_t uo = 0, ug = 0;
        for (int i = 1; i < nr; i++) {
            char bin[4200];
            snprintf(bin, sizeof bin, "%s/bin", roots[i]);
            if (ce_same_file(bin, dirs[i]))
                uo += (size_t)snprintf(own + uo, uo < sizeof own ? sizeof own - uo : 0, "%s%s", uo ? ", " : "", dirs[i]);
            else
                ug += (size_t)snprintf(general + ug, ug < sizeof general ? sizeof general - ug : 0, "%s%s",
                                       ug ? ", " : "", dirs[i]);
        }
        char gnote[2400] = "";
        if (general[0])
            doc_fmt(gnote, sizeof gnote, "%sleave %s in PATH: it holds other programs too, and the first nvcc "
                    "on PATH is the one builds use", own[0] ? "; " : "", general);
        doc_add(d, "env.path-multiple-cuda", CE_SEV_WARNING, "several CUDA toolkits are on PATH",
                doc_fmt(ev, sizeof ev, "PATH holds %s; the first wins for nvcc, the others for tools only they have",
                        list),
                doc_fmt(fix, sizeof fix, "%s%s%s%s", own[0] ? "remove the other toolkits' bin directories (" : "",
                        own, own[0] ? ") from your shell startup files and let cudaenv use / cudaenv env manage PATH"
                                    : "", gnote));
    }
}

static void check_ldpath(ce_doctor *d)
{
    const char *lp = getenv("LD_LIBRARY_PATH");
    if (!lp || !*lp) return;
    char *copy = strdup(lp), *save = NULL;
    char foreign[2048] = "", all[2048] = "";
    size_t uf = 0, ua = 0;
    int n_roots = 0;
    char roots[8][4096];
    for (char *t = strtok_r(copy, ":;", &save); t; t = strtok_r(NULL, ":;", &save)) {
        if (!has_prefix_file(t, "libcudart.so")) continue;
        char root[4096], ver[32];
        lib_root(t, root, sizeof root);
        doc_toolkit_version(root, ver, sizeof ver);
        bool dup = false;
        for (int i = 0; i < n_roots; i++) if (ce_same_file(roots[i], root)) dup = true;
        if (!dup && n_roots < 8) snprintf(roots[n_roots++], sizeof roots[0], "%s", root);
        if (!dup)
            ua += (size_t)snprintf(all + ua, ua < sizeof all ? sizeof all - ua : 0, "%s%s (CUDA %s)", ua ? ", " : "", t,
                                   ver[0] ? ver : "?");
        if (d->act.present && !same_toolkit(d, root) && !already_blamed(d, t))
            uf += (size_t)snprintf(foreign + uf, uf < sizeof foreign ? sizeof foreign - uf : 0, "%s%s (CUDA %s)",
                                   uf ? ", " : "", t, ver[0] ? ver : "?");
    }
    free(copy);
    char ev[4096], fix[1024];
    if (d->act.present && uf) {
        doc_add(d, "env.ldpath-foreign-cuda", CE_SEV_WARNING,
                "LD_LIBRARY_PATH holds CUDA libraries of another toolkit than the active one",
                doc_fmt(ev, sizeof ev, "LD_LIBRARY_PATH entries %s; active: %s (%s) at %s", foreign, d->act.name,
                        d->act.origin, d->act.prefix),
                doc_fmt(fix, sizeof fix, "remove them from LD_LIBRARY_PATH (look in ~/.bashrc, ~/.profile, "
                        "/etc/environment, module files); cudaenv use %s strips what cudaenv added but never "
                        "touches foreign entries", d->act.system ? "system" : d->act.name));
    } else if (!d->act.present && n_roots >= 2) {
        doc_add(d, "env.ldpath-multiple-cuda", CE_SEV_WARNING,
                "LD_LIBRARY_PATH holds several CUDA toolkits' libraries",
                doc_fmt(ev, sizeof ev, "LD_LIBRARY_PATH entries %s", all),
                "keep one: select a toolchain with cudaenv use VERSION (or cudaenv global) and remove the "
                "manual LD_LIBRARY_PATH lines from your shell startup files");
    }
}

/* What cudaenv's system switch recorded (system.json, system.h). */
static bool sys_selection(ce_doctor *d, char *target, size_t tn, char *name, size_t nn)
{
    ce_sys_record rec;
    memset(&rec, 0, sizeof rec);
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = ce_system_record(d->ctx, &rec);
    ce_quiet_end(&q);
    if (rc != CE_OK || !rec.present || !rec.target[0]) return false;
    snprintf(target, tn, "%s", rec.target);
    snprintf(name, nn, "%s", rec.name);
    return true;
}

/* A system switch killed half-way (its intent system.json.pending still there): link,
 * conf and loader cache may name different toolchains. */
static void check_switch_pending(ce_doctor *d)
{
    ce_sys_record rec;
    char ev[8192], fix[1024];
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = ce_system_record(d->ctx, &rec);
    ce_quiet_end(&q);
    if (rc != CE_OK || !rec.present || !rec.pending) return;
    doc_add(d, "env.system-switch-interrupted", CE_SEV_ERROR,
            "a system switch was interrupted: /usr/local/cuda, cudaenv.conf and the loader cache may disagree",
            doc_fmt(ev, sizeof ev, "%s/etc/cudaenv/system.json.pending, a switch's intent, is still there for %s (%s, libraries %s; "
                    "before: %s)", d->m.root, rec.name[0] ? rec.name : "no toolchain",
                    rec.target[0] ? rec.target : "no link", rec.lib[0] ? rec.lib : "none",
                    rec.prev_target[0] ? rec.prev_target : "no link"),
            doc_fmt(fix, sizeof fix, "complete it: sudo cudaenv global %s --system (or undo it: sudo cudaenv "
                    "global --rollback); either repairs the interrupted switch first",
                    rec.restore ? "system" : rec.name[0] ? rec.name : "VERSION"));
}

static void check_link(ce_doctor *d)
{
    char tgt[4096], res[4096], ev[8192], fix[2048];
    int l = ce_machine_readlink(&d->m, "/usr/local/cuda", tgt, sizeof tgt);
    if (l < 0) return;
    if (l == 0) {
        if (!ce_machine_is_dir(&d->m, "/usr/local/cuda")) return;
        doc_add(d, "env.cuda-link-directory", CE_SEV_WARNING,
                "/usr/local/cuda is a real directory, not a link to a versioned toolkit",
                doc_fmt(ev, sizeof ev, "%s/usr/local/cuda is a directory (a toolkit installed straight into it, "
                        "or copied files)", d->m.root),
                "move it to its versioned name (sudo mv /usr/local/cuda /usr/local/cuda-X.Y, X.Y from "
                "/usr/local/cuda/bin/nvcc --version) and link it back (sudo ln -s cuda-X.Y /usr/local/cuda), "
                "or let cudaenv take over: sudo cudaenv global VERSION --system --force");
        return;
    }
    if (ce_machine_resolve(&d->m, "/usr/local/cuda", res, sizeof res) != 0) {
        doc_add(d, "env.cuda-link-dangling", CE_SEV_ERROR, "/usr/local/cuda points to nothing",
                doc_fmt(ev, sizeof ev, "%s/usr/local/cuda -> %s, which does not exist (%s missing)", d->m.root, tgt,
                        res),
                "point it at an installed toolkit: sudo cudaenv global VERSION --system, or "
                "sudo update-alternatives --config cuda where NVIDIA's packages manage it");
        return;
    }
    char sel[4096], name[96], sres[4096];
    if (!sys_selection(d, sel, sizeof sel, name, sizeof name)) return;
    char ha[8192], hb[8192];
    bool sel_ok = ce_machine_resolve(&d->m, sel, sres, sizeof sres) == 0;
    ce_machine_path(&d->m, res, ha, sizeof ha);
    ce_machine_path(&d->m, sres, hb, sizeof hb);
    if (sel_ok && ce_same_file(ha, hb)) return;
    doc_add(d, "env.cuda-link-moved", CE_SEV_WARNING,
            "/usr/local/cuda no longer points where cudaenv's system switch put it (another installer moved it)",
            doc_fmt(ev, sizeof ev, "%s/usr/local/cuda -> %s (resolves to %s); cudaenv recorded %s%s%s in "
                    "%s/etc/cudaenv/system.json", d->m.root, tgt, res, sel, name[0] ? " for " : "", name, d->m.root),
            doc_fmt(fix, sizeof fix, "restore it: sudo cudaenv global %s --system; or keep the new target and "
                    "record it by switching to it with cudaenv", name[0] ? name : "VERSION"));
}

static void check_ldconf(ce_doctor *d)
{
    if (!d->act.present) return;
    const char **dirs, **files;
    size_t n = doc_ld_conf_dirs(d, &dirs, &files);
    char list[2048] = "";
    size_t u = 0;
    for (size_t i = 0; i < n; i++) {
        char res[4096], host[8192], root[8192], ver[32];
        if (ce_machine_resolve(&d->m, dirs[i], res, sizeof res) != 0) continue;
        ce_machine_path(&d->m, res, host, sizeof host);
        if (!has_prefix_file(host, "libcudart.so")) continue;
        lib_root(host, root, sizeof root);
        if (same_toolkit(d, root)) continue;
        doc_toolkit_version(root, ver, sizeof ver);
        u += (size_t)snprintf(list + u, u < sizeof list ? sizeof list - u : 0, "%s%s in %s%s (CUDA %s)", u ? "; " : "",
                              dirs[i], d->m.root, files[i], ver[0] ? ver : "?");
    }
    if (!u) return;
    char ev[4096], fix[1024];
    doc_add(d, "env.ldconf-other-cuda", CE_SEV_WARNING,
            "the system library path (ld.so.conf.d) holds another CUDA release than the active toolchain",
            doc_fmt(ev, sizeof ev, "%s; active: %s (%s) at %s", list, d->act.name, d->act.origin, d->act.prefix),
            doc_fmt(fix, sizeof fix, "programs started without the toolchain's LD_LIBRARY_PATH fall back to those "
                    "libraries: remove the file (sudo rm FILE && sudo ldconfig) or make the active toolchain the "
                    "system one: sudo cudaenv global %s --system", d->act.system ? "VERSION" : d->act.name));
}

static void check_cvd(ce_doctor *d)
{
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    char ev[2048];
    if (!v) return;
    if (!*v || !strncmp(v, "-1", 2)) {
        doc_add(d, "env.cuda-visible-devices-hidden", CE_SEV_ERROR,
                "CUDA_VISIBLE_DEVICES hides every GPU from CUDA programs",
                doc_fmt(ev, sizeof ev, "CUDA_VISIBLE_DEVICES=\"%s\"%s%s", v,
                        d->probe.cuinit > 0 ? "; cuInit: " : "", d->probe.cuinit > 0 ? d->probe.cuinit_name : ""),
                "unset CUDA_VISIBLE_DEVICES (or set it to the GPU indices or UUIDs to use, e.g. 0 or GPU-...)");
        return;
    }
    if (d->probe.nvml_init != 0 || d->probe.n_gpus == 0) return;
    char *copy = strdup(v), *save = NULL;
    char bad[512] = "";
    for (char *t = strtok_r(copy, ",", &save); t && !bad[0]; t = strtok_r(NULL, ",", &save)) {
        if (!strncmp(t, "MIG-", 4)) continue;          /* doc_check_mig */
        if (!strncmp(t, "GPU-", 4)) {
            bool ok = false;
            for (int i = 0; i < d->probe.n_gpus; i++)
                if (!strncmp(d->probe.gpus[i].uuid, t, strlen(t))) ok = true;
            if (!ok) snprintf(bad, sizeof bad, "%s (no GPU has that UUID)", t);
            continue;
        }
        char *end;
        long idx = strtol(t, &end, 10);
        if (*end || end == t) snprintf(bad, sizeof bad, "%s (not an index or UUID)", t);
        else if (idx >= d->probe.n_gpus) snprintf(bad, sizeof bad, "%s (this machine has %d GPU(s))", t, d->probe.n_gpus);
    }
    free(copy);
    if (bad[0])
        doc_add(d, "env.cuda-visible-devices-invalid", CE_SEV_ERROR,
                "CUDA_VISIBLE_DEVICES names a GPU that does not exist: CUDA ignores it and every entry after it",
                doc_fmt(ev, sizeof ev, "CUDA_VISIBLE_DEVICES=%s: %s", v, bad),
                "use indices 0..N-1 or the UUIDs that nvidia-smi -L prints");
}

static void check_cuda_home(ce_doctor *d)
{
    static const char *const vars[] = { "CUDA_HOME", "CUDA_PATH" };
    char ev[8192], fix[2048];
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(vars[i]);
        if (!v || !*v) continue;
        struct stat st;
        bool exists = stat(v, &st) == 0 && S_ISDIR(st.st_mode);
        if (exists && (!d->act.present || same_toolkit(d, v))) continue;
        if (!d->act.present)
            snprintf(fix, sizeof fix, "unset %s or point it at an installed toolkit", vars[i]);
        else if (d->act.system)
            snprintf(fix, sizeof fix, "export %s=/usr/local/cuda (build systems take headers and nvcc from it)",
                     vars[i]);
        else
            snprintf(fix, sizeof fix, "eval \"$(cudaenv env %s)\" sets %s=%s (build systems take headers and "
                     "nvcc from it)", d->act.name, vars[i], d->act.prefix);
        char sum[128];
        doc_add(d, "env.cuda-home-mismatch", CE_SEV_WARNING,
                doc_fmt(sum, sizeof sum, "%s points elsewhere than the active toolchain", vars[i]),
                exists ? doc_fmt(ev, sizeof ev, "%s=%s; active: %s (%s) at %s", vars[i], v, d->act.name,
                                 d->act.origin, d->act.prefix)
                       : doc_fmt(ev, sizeof ev, "%s=%s does not exist", vars[i], v), fix);
        return;    /* one finding: CUDA_PATH usually mirrors CUDA_HOME */
    }
}

void doc_check_env(ce_doctor *d)
{
    check_path(d);
    check_ldpath(d);
    check_switch_pending(d);
    check_link(d);
    check_ldconf(d);
    check_cvd(d);
    check_cuda_home(d);
}
