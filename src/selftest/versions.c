/* Step 2: every place a version is written agrees (the tutorials' "triple
 * check", automated): version.json, nvcc --version, CUDART_VERSION in
 * cuda_runtime_api.h, cudaRuntimeGetVersion(), nvrtcVersion(); for cuDNN
 * cudnn_version.h, the library file name, cudnnGetVersion() and the CUDA
 * major of cudnnGetCudartVersion().  Opening the libraries (by explicit path)
 * happens here because the runtime answers are part of the comparison. */
#include <cJSON.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/header.h"
#include "core/file.h"
#include "st_int.h"
#include "core/version.h"

/* The library "stem.so.*" in dir: the real file with the longest version
 * suffix (its name carries the version), and the path to dlopen (the SONAME
 * link when it exists, as the dynamic loader would pick). */
static bool find_lib(const char *dir, const char *stem, char *open_path, size_t opsz,
                     char *soname, size_t snsz, char *file_ver, size_t fvsz)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    char pre[128], best[512] = "";
    snprintf(pre, sizeof pre, "%s.so.", stem);
    size_t pl = strlen(pre);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, pre, pl) != 0 || !ce_version_valid(e->d_name + pl)) continue;
        if (strlen(e->d_name) > strlen(best)) snprintf(best, sizeof best, "%s", e->d_name);
    }
    closedir(d);
    if (!best[0]) return false;
    char real[CE_PATH_MAX];
    if (ce_path_join(real, sizeof real, dir, best) != CE_OK) return false;
    snprintf(file_ver, fvsz, "%s", best + pl);
    soname[0] = '\0';
    if (st_elf_soname(real, soname, snsz) == 0) {
        char link[CE_PATH_MAX];
        if (ce_path_join(link, sizeof link, dir, soname) == CE_OK && ce_exists(link)) {
            snprintf(open_path, opsz, "%s", link);
            return true;
        }
    }
    snprintf(open_path, opsz, "%s", real);
    return true;
}

static void *open_lib(st_step *s, const char *what, const char *path)
{
    char why[4400];
    if (st_elf_complete(path, why, sizeof why) != 0) {
        st_failf(s, "cannot load %s: %s", what, why);
        return NULL;
    }
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) st_failf(s, "cannot load %s %s: %s", what, path, dlerror());
    return h;
}

static void pick_libdir(st_state *st)
{
    static const char *subs[] = { "lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib" };
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        char d[CE_PATH_MAX], p[CE_PATH_MAX], sn[128], v[64];
        if (ce_path_join(d, sizeof d, st->r->tc.prefix, subs[i]) == CE_OK && find_lib(d, "libcudart", p, sizeof p, sn, sizeof sn, v, sizeof v)) {
            snprintf(st->libdir, sizeof st->libdir, "%s", d);
            break;
        }
    }
    if (!st->libdir[0]) snprintf(st->libdir, sizeof st->libdir, "%s/lib64", st->r->tc.prefix);
    /* cuDNN is composed into lib64; an unpacked archive keeps lib/. */
    char p[4400], sn[128], v[64];
    snprintf(st->cudnn_libdir, sizeof st->cudnn_libdir, "%s", st->libdir);
    if (!find_lib(st->cudnn_libdir, "libcudnn", p, sizeof p, sn, sizeof sn, v, sizeof v)) {
        char alt[4200];
        snprintf(alt, sizeof alt, "%s/lib", st->r->tc.prefix);
        if (find_lib(alt, "libcudnn", p, sizeof p, sn, sizeof sn, v, sizeof v))
            snprintf(st->cudnn_libdir, sizeof st->cudnn_libdir, "%s", alt);
    }
}

static void read_version_json(st_state *st, st_step *s, char *file, size_t fsz)
{
    snprintf(file, fsz, "%s/version.json", st->r->tc.prefix);
    char *data = NULL;
    size_t len = 0;
    ce_quiet q;
    ce_quiet_begin(&q, true);
    bool have = ce_exists(file) && ce_file_read(file, 1 << 20, &data, &len) == CE_OK;
    ce_quiet_end(&q);
    if (have) {
        cJSON *j = cJSON_ParseWithLength(data, len);
        free(data);
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "cuda"), "version");
        if (cJSON_IsString(v))
            snprintf(st->r->v.version_json, sizeof st->r->v.version_json, "%s", v->valuestring);
        else
            st_failf(s, "%s has no cuda.version", file);
        cJSON_Delete(j);
        return;
    }
    /* Up to CUDA 11.0 the tree has version.txt: "CUDA Version 11.0.221". */
    snprintf(file, fsz, "%s/version.txt", st->r->tc.prefix);
    FILE *f = fopen(file, "r");
    char line[256];
    if (f && fgets(line, sizeof line, f) && sscanf(line, "CUDA Version %31s", st->r->v.version_json) == 1) {
        fclose(f);
        return;
    }
    if (f) fclose(f);
    file[0] = '\0';
    st_note(s, "no version.json or version.txt in %s (not every packaging ships one)", st->r->tc.prefix);
}

static void read_nvcc(st_state *st, st_step *s, char *nvcc, size_t nsz)
{
    snprintf(nvcc, nsz, "%s/bin/nvcc", st->r->tc.prefix);
    if (!ce_exists(nvcc)) { nvcc[0] = '\0'; return; }
    char out[4096];
    ce_proc_result res;
    char *argv[] = { nvcc, "--version", NULL };
    if (ce_proc_output(NULL, argv, NULL, 30, out, sizeof out, &res) != CE_OK || res.code != 0) {
        st_failf(s, "%s --version failed (status %d): %.200s", nvcc, res.code, out);
        return;
    }
    const char *p = strstr(out, "release ");
    if (p && sscanf(p, "release %31[0-9.]", st->r->v.nvcc) == 1) {
        size_t l = strlen(st->r->v.nvcc);
        if (l && st->r->v.nvcc[l - 1] == '.') st->r->v.nvcc[l - 1] = '\0';
        return;
    }
    st_failf(s, "cannot read the release from `%s --version`: %.200s", nvcc, out);
}

/* One CUDA source against the reference; both values and files named. */
static void agree(st_step *s, const char *ref_what, const char *ref_mm, const char *what, const char *mm,
                  const char *file)
{
    if (!mm[0]) return;
    if (strcmp(ref_mm, mm) == 0) {
        st_note(s, "%s: %s (%s)", what, mm, file);
        return;
    }
    st_failf(s, "%s says CUDA %s (%s) but %s says %s", what, mm, file, ref_what, ref_mm);
}

/* NVRTC dlopen()s libnvrtc-builtins by SONAME when it compiles, so without
 * the toolchain on LD_LIBRARY_PATH the loader would take ld.so.cache's copy
 * (another CUDA's).  Load the toolchain's by path first, as `cudaenv use` /
 * `exec` make the loader do; step 3 shows which file is mapped. */
static void preload_builtins(st_state *st, st_step *s)
{
    char p[4400], ver[64];
    if (!find_lib(st->libdir, "libnvrtc-builtins", p, sizeof p, st->nv_builtins_soname,
                  sizeof st->nv_builtins_soname, ver, sizeof ver))
        return;
    char why[4400];
    if (st_elf_complete(p, why, sizeof why) != 0) {
        st_failf(s, "NVRTC's builtins are damaged: %s", why);
        return;
    }
    if (dlopen(p, RTLD_NOW | RTLD_LOCAL))
        st_note(s, "NVRTC finds %s by name; loaded the toolchain's %s first", st->nv_builtins_soname, p);
}

static void cuda_versions(st_state *st, st_step *s)
{
    st_versions *v = &st->r->v;
    snprintf(v->cuda_expected, sizeof v->cuda_expected, "%s", st->r->tc.cuda);
    char ref[32], ref_what[160], mm[32];
    ce_version_prefix(st->r->tc.cuda, 2, ref, sizeof ref);
    snprintf(ref_what, sizeof ref_what, "the toolchain %s", st->r->tc.name);

    char file[4200];
    read_version_json(st, s, file, sizeof file);
    if (v->version_json[0]) {
        ce_version_prefix(v->version_json, 2, mm, sizeof mm);  /* "12.1.20230222": major.minor only */
        agree(s, ref_what, ref, "version.json", mm, file);
    }
    char nvcc[4200];
    read_nvcc(st, s, nvcc, sizeof nvcc);
    if (v->nvcc[0]) agree(s, ref_what, ref, "nvcc --version", v->nvcc, nvcc);

    char hdr[4200];
    snprintf(hdr, sizeof hdr, "%s/include/cuda_runtime_api.h", st->r->tc.prefix);
    long h = ce_header_define(hdr, "CUDART_VERSION");
    if (h > 0) {
        v->cudart_header = (int)h;
        st_cuda_decode((int)h, mm, sizeof mm);
        agree(s, ref_what, ref, "CUDART_VERSION", mm, hdr);
    } else {
        st_failf(s, "no CUDART_VERSION in %s", hdr);
    }

    char p[4400], ver[64];
    if (!find_lib(st->libdir, "libcudart", p, sizeof p, st->rt.soname, sizeof st->rt.soname, ver, sizeof ver)) {
        st_failf(s, "no libcudart.so.* in %s", st->libdir);
    } else if ((st->rt.h = open_lib(s, "the CUDA runtime", p))) {
        snprintf(st->rt.path, sizeof st->rt.path, "%s", p);
        char miss[512] = "";
        st_bind(st->rt.h, "cudaRuntimeGetVersion", &st->rt.RuntimeGetVersion, miss, sizeof miss);
        int rv = 0;
        if (st->rt.RuntimeGetVersion && st->rt.RuntimeGetVersion(&rv) == 0) {
            v->cudart_runtime = rv;
            st_cuda_decode(rv, mm, sizeof mm);
            agree(s, ref_what, ref, "cudaRuntimeGetVersion()", mm, p);
        } else {
            st_failf(s, "cudaRuntimeGetVersion() %s in %s", miss[0] ? "is missing" : "failed", p);
        }
    }
    if (!find_lib(st->libdir, "libnvrtc", p, sizeof p, st->nv.soname, sizeof st->nv.soname, ver, sizeof ver)) {
        st_failf(s, "no libnvrtc.so.* in %s (NVRTC is needed for the kernel test)", st->libdir);
    } else if ((st->nv.h = open_lib(s, "NVRTC", p))) {
        snprintf(st->nv.path, sizeof st->nv.path, "%s", p);
        preload_builtins(st, s);
        st_bind(st->nv.h, "nvrtcVersion", &st->nv.Version, NULL, 0);
        int a = 0, b = 0;
        if (st->nv.Version && st->nv.Version(&a, &b) == 0) {
            v->nvrtc_major = a;
            v->nvrtc_minor = b;
            snprintf(mm, sizeof mm, "%d.%d", a, b);
            agree(s, ref_what, ref, "nvrtcVersion()", mm, p);
        } else {
            st_failf(s, "nvrtcVersion() is missing or failed in %s", p);
        }
    }
}

static void cudnn_versions(st_state *st, st_step *s)
{
    st_versions *v = &st->r->v;
    char p[4400], libver[64] = "";
    bool have = find_lib(st->cudnn_libdir, "libcudnn", p, sizeof p, st->dnn.soname, sizeof st->dnn.soname,
                         libver, sizeof libver);
    if (!have && !st->r->tc.cudnn[0]) return;  /* a toolkit without cuDNN */
    v->has_cudnn = true;
    snprintf(v->cudnn_expected, sizeof v->cudnn_expected, "%s", st->r->tc.cudnn);
    char hdr[4200];
    snprintf(hdr, sizeof hdr, "%s/include/cudnn_version.h", st->r->tc.prefix);
    if (!ce_exists(hdr)) snprintf(hdr, sizeof hdr, "%s/include/cudnn.h", st->r->tc.prefix); /* <= 7 */
    long M = ce_header_define(hdr, "CUDNN_MAJOR"), m = ce_header_define(hdr, "CUDNN_MINOR"),
         pl = ce_header_define(hdr, "CUDNN_PATCHLEVEL");
    if (M < 0 || m < 0 || pl < 0) st_failf(s, "no CUDNN_MAJOR/MINOR/PATCHLEVEL in %s", hdr);
    else snprintf(v->cudnn_header, sizeof v->cudnn_header, "%ld.%ld.%ld", M, m, pl);

    /* Reference: the release the toolchain says it holds, else the header. */
    char ref[32], ref_what[4400];
    if (st->r->tc.cudnn[0]) {
        ce_version_prefix(st->r->tc.cudnn, 3, ref, sizeof ref);
        snprintf(ref_what, sizeof ref_what, "the toolchain %s", st->r->tc.name);
        if (v->cudnn_header[0]) {
            if (strcmp(ref, v->cudnn_header) == 0) st_note(s, "cudnn_version.h: %s (%s)", v->cudnn_header, hdr);
            else st_failf(s, "%s says cuDNN %s but %s says %s", hdr, v->cudnn_header, ref_what, ref);
        }
    } else {
        snprintf(ref, sizeof ref, "%s", v->cudnn_header);
        snprintf(ref_what, sizeof ref_what, "%s", hdr);
        st_note(s, "cudnn_version.h: %s (%s)", v->cudnn_header, hdr);
    }
    if (!have) {
        st_failf(s, "no libcudnn.so.* in %s", st->cudnn_libdir);
        return;
    }
    /* The file name: libcudnn.so.9.19.0 (a bare .so.9 carries only the major). */
    char real[4400];
    if (!realpath(p, real)) snprintf(real, sizeof real, "%s", p);
    const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    const char *dot = strstr(base, ".so.");
    if (dot && ce_version_valid(dot + 4)) snprintf(libver, sizeof libver, "%s", dot + 4);
    if (strchr(libver, '.')) {
        char lv3[32];
        ce_version_prefix(libver, 3, lv3, sizeof lv3);
        snprintf(v->cudnn_lib, sizeof v->cudnn_lib, "%s", lv3);
        if (ref[0] && strcmp(lv3, ref) != 0)
            st_failf(s, "the library file %s says cuDNN %s but %s says %s", real, lv3, ref_what, ref);
        else
            st_note(s, "library file: %s (%s)", lv3, real);
    } else if (ref[0] && ce_version_major(ref) != ce_version_major(libver)) {
        st_failf(s, "the library %s is cuDNN %s but %s says %s", real, libver, ref_what, ref);
    }
    /* cuDNN loads its parts (libcudnn_cnn ...) later, from this directory. */
    char why[4400];
    if (st_elf_dir_complete(st->cudnn_libdir, "libcudnn", why, sizeof why) != 0) {
        st_failf(s, "cuDNN is damaged: %s", why);
        return;
    }
    if (!(st->dnn.h = open_lib(s, "cuDNN", p))) return;
    snprintf(st->dnn.path, sizeof st->dnn.path, "%s", p);
    st_bind(st->dnn.h, "cudnnGetVersion", &st->dnn.GetVersion, NULL, 0);
    st_bind(st->dnn.h, "cudnnGetCudartVersion", &st->dnn.GetCudartVersion, NULL, 0);
    if (!st->dnn.GetVersion) {
        st_failf(s, "cudnnGetVersion() is missing from %s", p);
    } else {
        v->cudnn_runtime = (long)st->dnn.GetVersion();
        st_cudnn_decode(v->cudnn_runtime, v->cudnn_runtime_str, sizeof v->cudnn_runtime_str);
        if (ref[0] && strcmp(v->cudnn_runtime_str, ref) != 0)
            st_failf(s, "cudnnGetVersion() in %s says cuDNN %s (%ld) but %s says %s", p, v->cudnn_runtime_str,
                     v->cudnn_runtime, ref_what, ref);
        else
            st_note(s, "cudnnGetVersion(): %s (%ld)", v->cudnn_runtime_str, v->cudnn_runtime);
    }
    if (st->dnn.GetCudartVersion) {
        v->cudnn_cudart = (long)st->dnn.GetCudartVersion();
        int want = ce_version_major(st->r->tc.cuda);
        long got = v->cudnn_cudart / 1000;
        if (want > 0 && got != want)
            st_failf(s, "cuDNN %s was built for CUDA %ld (cudnnGetCudartVersion() = %ld in %s) but the toolkit is CUDA %s; "
                     "install the cuDNN build for CUDA %d", v->cudnn_runtime_str, got, v->cudnn_cudart, p,
                     st->r->tc.cuda, want);
        else
            st_note(s, "cudnnGetCudartVersion(): %ld (CUDA %ld, matches the toolkit)", v->cudnn_cudart, got);
    }
}

void st_versions_step(st_state *st)
{
    st_step *s = &st->r->steps[ST_VERSIONS];
    pick_libdir(st);
    cuda_versions(st, s);
    cudnn_versions(st, s);
    if (s->status == ST_FAILED) return;
    const st_versions *v = &st->r->v;
    char cu[32];
    ce_version_prefix(st->r->tc.cuda, 2, cu, sizeof cu);
    if (v->has_cudnn)
        st_pass(s, "CUDA %s and cuDNN %s everywhere they are written", cu,
                v->cudnn_runtime_str[0] ? v->cudnn_runtime_str : v->cudnn_header);
    else
        st_pass(s, "CUDA %s everywhere it is written (no cuDNN in this toolchain)", cu);
}
