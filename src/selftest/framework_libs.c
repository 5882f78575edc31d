/* The per-family account of verify --framework (issue 37): for each CUDA
 * library family the framework's process mapped (cudart, cublas, cudnn with
 * all its sub-libraries, nccl, nvrtc, nvjitlink, cufft, cusparse, ...), the
 * file, where it lies (the toolchain, the framework's own wheels or conda
 * env, elsewhere) and why the loader took it (framework.py's loader_trace:
 * opened by path, NEEDED or dlopen by name from which library, found
 * through RUNPATH/RPATH of a file, LD_LIBRARY_PATH, ld.so.cache, the system
 * directories).  A family mapped from two directories is the real mix
 * (framework.family-mixed; cuDNN's own code is framework.cudnn-mixed). */
#include "framework.h"

#include <cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/json.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

static const char *base_of(const char *p)
{
    const char *b = p ? strrchr(p, '/') : NULL;
    return b ? b + 1 : p ? p : "";
}

bool ce_fw_own_mode(const ce_fw_target *tc, const ce_fw_report *r)
{
    if (!tc->prefix[0] || !r->doc) return false;
    const char *ld = ce_json_str(cJSON_GetObjectItemCaseSensitive(r->doc, "env"), "LD_LIBRARY_PATH");
    char lib[sizeof tc->prefix + 8], real[PATH_MAX], ent[PATH_MAX];
    snprintf(lib, sizeof lib, "%s/lib64", tc->prefix);
    if (!realpath(lib, real)) snprintf(real, sizeof real, "%s", lib);
    for (const char *p = ld; p && *p;) {
        size_t k = strcspn(p, ":");
        snprintf(ent, sizeof ent, "%.*s", (int)(k < sizeof ent ? k : sizeof ent - 1), p);
        char er[PATH_MAX];
        if (!strcmp(ent, lib) || (realpath(ent, er) && !strcmp(er, real))) return false;
        p += k + (p[k] == ':');
    }
    return true;
}

const char *ce_fw_lib_source(const ce_fw_target *tc, const char *path, char *out, size_t n)
{
    char root[PATH_MAX], dir[PATH_MAX], meta[PATH_MAX + 16];
    struct stat st;
    size_t rl = tc->prefix[0] && realpath(tc->prefix, root) ? strlen(root) : 0;
    if (rl && !strncmp(path, root, rl) && path[rl] == '/') return snprintf(out, n, "toolchain"), out;
    const char *nv = strstr(path, "/nvidia/");
    if (nv && strstr(nv + 8, "/lib/")) return snprintf(out, n, "framework (pip wheel)"), out;
    if (strstr(path, "/torch/lib/")) return snprintf(out, n, "framework (bundled in torch/lib)"), out;
    snprintf(dir, sizeof dir, "%s", path);
    char *sl = strrchr(dir, '/');
    if (sl) *sl = '\0';
    snprintf(meta, sizeof meta, "%s/../conda-meta", dir);
    if (stat(meta, &st) == 0) return snprintf(out, n, "framework (conda environment)"), out;
    return snprintf(out, n, "other"), out;
}

const char *ce_fw_lib_why(const cJSON *lib, char *out, size_t n)
{
    const char *how = ce_json_str(lib, "how"), *by = ce_json_str(lib, "by"), *via = ce_json_str(lib, "via"),
               *from = ce_json_str(lib, "from"), *name = ce_json_str(lib, "name");
    if (!how) return snprintf(out, n, "not traced (the loader's account was not available)"), out;
    if (!strcmp(how, "LD_PRELOAD")) return snprintf(out, n, "LD_PRELOAD"), out;
    if (!strcmp(how, "path")) return snprintf(out, n, "preloaded by path by %s", by ? base_of(by) : "?"), out;
    char found[PATH_MAX + 64];
    if (via && from && (!strcmp(via, "RUNPATH") || !strcmp(via, "RPATH")))
        snprintf(found, sizeof found, "the %s of %s", via, base_of(from));
    else if (via && !strcmp(via, "system"))
        snprintf(found, sizeof found, "the system directories");
    else
        snprintf(found, sizeof found, "%s", via ? via : "?");
    if (!strcmp(how, "needed"))
        snprintf(out, n, "NEEDED %s by %s, found through %s", name ? name : "", by ? base_of(by) : "?", found);
    else
        snprintf(out, n, "dlopen(\"%s\") by %s, found through %s", name ? name : "", by ? base_of(by) : "?", found);
    return out;
}

/* A family (other than cuDNN, checked as framework.cudnn-mixed) mapped from
 * two directories: two copies of one library in one process. */
void ce_fw_check_families(const ce_fw_target *tc, ce_fw_report *r,
                          void (*add)(ce_fw_report *, const char *, ce_fw_sev, const char *, const char *,
                                      const char *))
{
    (void)tc;
    const cJSON *libs = cJSON_GetObjectItemCaseSensitive(r->doc, "libs");
    for (const cJSON *l = libs ? libs->child : NULL; l; l = l->next) {
        const char *fam = ce_json_str(l, "family"), *file = ce_json_str(l, "file");
        if (!fam || !file || !strcmp(fam, "cudnn")) continue;
        bool earlier = false, mixed = false;   /* the family's first entry reports it */
        for (const cJSON *m = libs->child; m != l && !earlier; m = m->next)
            earlier = ce_json_str(m, "family") && !strcmp(ce_json_str(m, "family"), fam);
        if (earlier) continue;
        size_t dl = strlen(file) - strlen(base_of(file));
        char ev[8192] = "", why[PATH_MAX + 256];
        size_t used = 0;
        for (const cJSON *m = l; m; m = m->next) {
            const char *f2 = ce_json_str(m, "family"), *p2 = ce_json_str(m, "file");
            if (!f2 || !p2 || strcmp(f2, fam)) continue;
            size_t d2 = strlen(p2) - strlen(base_of(p2));
            if (d2 != dl || strncmp(p2, file, dl)) mixed = true;
            used += (size_t)snprintf(ev + used, used < sizeof ev ? sizeof ev - used : 0, "%s%s: %s",
                                     used ? "\n" : "", p2, ce_fw_lib_why(m, why, sizeof why));
            if (used >= sizeof ev) used = sizeof ev - 1;
        }
        if (!mixed) continue;
        char sum[512];
        snprintf(sum, sizeof sum, "%s maps %s from two directories: two copies of one library in one process",
                 r->module, fam);
        add(r, "framework.family-mixed", CE_FW_ERROR, sum, ev,
            "keep one copy: run the framework with its own libraries alone (cudaenv exec --for PYTHON -- ..., "
            "cudaenv use --for PYTHON), or remove the framework's copies and use --libs toolchain");
    }
}
