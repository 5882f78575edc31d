#include "components.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/file.h"
#include "core/proc.h"
#include "core/rmtree.h"
#include "core/version.h"
#include "digest.h"
#include "fetch.h"
#include "parts.h"
#include "pkgindex.h"
#include "preflight.h"
#include "redist.h"
#include "runfile.h"
#include "store/layout.h"
#include "store/receipt.h"
#include "store/store.h"

bool ce_components_apply(ce_ctx *ctx, const ce_resolved *r, int *rc)
{
    *rc = CE_OK;
    if (strcmp(ctx->install_from, "runfile") == 0) return false;
    bool can = r->cuda && r->cuda->redist && ce_layout_target(ctx->platform);
    if (!can && strcmp(ctx->install_from, "redist") == 0)
        *rc = ce_fail(ctx, CE_ERR_NOTFOUND, "CUDA %s has no redistrib JSON for %s in the manifest; "
                      "install it from the runfile (leave out --from redist)",
                      r->cuda ? r->cuda->version : "?", ctx->platform);
    return can;
}

/* ---- the JSON ---- */

/* cudaenv ships NVIDIA's JSONs it pins (data/redist/cuda, installed as
 * share/cudaenv/redist): a copy whose sha256 is the manifest's is the same
 * file, so it goes into the cache and info/install need no network for it. */
static void seed_from_bundle(ce_ctx *ctx, const ce_artifact *j)
{
    char cache[4200], dirs[3][4400], p[13300];
    if (ce_cache_path(ctx, j->sha256, cache, sizeof cache) || ce_exists(cache)) return;
    snprintf(dirs[0], sizeof dirs[0], "%s/../share/cudaenv/redist", ce_self_dir(ctx));
    snprintf(dirs[1], sizeof dirs[1], "%s/../../share/cudaenv/redist", ce_self_dir(ctx));
    snprintf(dirs[2], sizeof dirs[2], "%s/redist", CE_DATADIR);
    ce_quiet q;
    ce_quiet_begin(&q, true);
    for (size_t i = 0; i < 3; i++) {
        if (ce_path_join(p, sizeof p, dirs[i], ce_parts_url_base(j->url)) != CE_OK) continue;
        char hex[CE_SHA256_HEX];
        char *data = NULL;
        size_t len = 0;
        if (!ce_exists(p) || ce_sha256_file(ctx, p, hex) != CE_OK || strcmp(hex, j->sha256) != 0) continue;
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/cache", ctx->root);
        if (ce_mkdir_p(ctx, dir, 0755) == CE_OK && ce_file_read(ctx, p, CE_REDIST_MAX, &data, &len) == CE_OK &&
            (j->size < 0 || (long long)len == j->size))
            ce_file_write_atomic(ctx, cache, data, len, 0644);
        free(data);
        break;
    }
    ce_quiet_end(&q);
}

int ce_components_plan(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, ce_redist **out,
                       const char **profile)
{
    *out = NULL;
    const ce_artifact *j = r->cuda->redist;
    if (!ctx->force) seed_from_bundle(ctx, j);
    ce_fetch_item it = { .url = j->url, .sha256 = j->sha256, .size = j->size, .label = ce_parts_url_base(j->url),
                         .allow_http = m->local || ctx->insecure };
    int rc = ce_fetch_all(ctx, &it, 1);
    if (rc) return rc;
    char *text = NULL;
    size_t len = 0;
    if ((rc = ce_file_read(ctx, it.path, CE_REDIST_MAX, &text, &len))) return rc;
    ce_redist *red = NULL;
    rc = ce_redist_parse(ctx, text, len, j->url, ctx->platform, &red);
    free(text);
    if (rc) return rc;
    if (red->release_label && strcmp(red->release_label, r->cuda->version) != 0) {
        rc = ce_fail(ctx, CE_ERR_INTEGRITY, "%s is the redistrib JSON of CUDA %s, but the manifest pins it for "
                     "CUDA %s; the manifest entry is wrong", j->url, red->release_label, r->cuda->version);
        ce_redist_free(red);
        return rc;
    }
    const char *pname = r->tf ? "tf" : "toolkit";
    const ce_profile *p = ce_manifest_profile(m, pname);
    if (!p) {
        ce_redist_free(red);
        return ce_fail(ctx, CE_ERR_NOTFOUND, "the manifest %s defines no \"%s\" profile of components; add one "
                       "(see cudaenv-manifest(5)) or install with --from runfile", m->origin, pname);
    }
    if ((rc = ce_redist_select(ctx, red, p, ctx->install_components[0] ? ctx->install_components : NULL))) {
        ce_redist_free(red);
        return rc;
    }
    size_t n = 0;
    ce_redist_selected_bytes(red, &n);
    if (n == 0) {
        ce_redist_free(red);
        return ce_fail(ctx, CE_ERR_USAGE, "no component of CUDA %s is selected; check --components",
                       r->cuda->version);
    }
    *out = red;
    if (profile) *profile = pname;
    return CE_OK;
}

static int add_part(ce_ctx *ctx, plan *pl, const char *pkgs, part p)
{
    if (pl->n == MAX_PARTS) return ce_fail(ctx, CE_ERR_USAGE, "more than %d components", MAX_PARTS);
    int rc = ce_join(ctx, p.tree, sizeof p.tree, pkgs, p.pkg);
    if (rc) return rc;
    p.have = ce_is_dir(p.tree) && !ctx->force;
    p.pipe = -1;
    rc = ce_cache_path(ctx, p.sha256, p.cache, sizeof p.cache);
    if (rc == CE_OK) pl->parts[pl->n++] = p;
    return rc;
}

/* ---- free space: downloads not yet cached + the unpacked trees ---- */

static int space(ce_ctx *ctx, const plan *pl)
{
    double want = 0;
    for (size_t i = 0; i < pl->n; i++) {
        const part *p = &pl->parts[i];
        if (p->have || p->size < 0) continue;
        struct stat st;
        char partf[4300];
        snprintf(partf, sizeof partf, "%s.part", p->cache);
        if (stat(p->cache, &st) != 0)
            want += (double)p->size - (stat(partf, &st) == 0 && st.st_size <= p->size ? (double)st.st_size : 0);
        want += (double)p->size * CE_TARBALL_UNPACK_FACTOR;
    }
    if (want <= 0) return CE_OK;
    double avail;
    const char *fake = ctx->set.test_free_bytes;
    struct statvfs vs;
    if (fake && *fake) avail = strtod(fake, NULL);
    else if (statvfs(ctx->root, &vs) == 0) avail = (double)vs.f_bavail * (double)vs.f_frsize;
    else return CE_OK;
    if (avail >= want) return CE_OK;
    return ce_fail(ctx, CE_ERR_SPACE, "not enough free space in %s: this install needs about %.1f GiB "
                   "(component downloads plus unpacked trees) and %.1f GiB is free; free some space, or set "
                   "CUDAENV_ROOT to a larger filesystem", ctx->root, want / 1073741824.0, avail / 1073741824.0);
}

static int commit_parts(ce_ctx *ctx, plan *pl)
{
    int rc = CE_OK;
    for (size_t i = 0; rc == CE_OK && i < pl->n; i++) {
        part *p = &pl->parts[i];
        if (!p->staging[0]) continue;
        if ((rc = ce_store_commit(ctx, p->staging, p->tree)) == CE_OK) p->staging[0] = '\0';
    }
    if (rc != CE_OK) ce_parts_drop(ctx, pl);
    return rc;
}

/* ---- composing ---- */

static int compose(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, plan *pl)
{
    char vdir[4200], final[4400], staging[4200];
    int rc;
    if ((rc = ce_store_path(ctx, "versions", vdir, sizeof vdir)) || (rc = ce_join(ctx, final, sizeof final, vdir, r->name)))
        return rc;
    if ((rc = ce_store_staging(ctx, "versions", staging, sizeof staging))) return rc;
    const char *target = ce_layout_target(ctx->platform);
    ce_filelist files = { 0 };
    ce_layout_version vers[MAX_PARTS];
    ce_receipt_component comps[MAX_PARTS];
    const char *trees[MAX_PARTS + 1];
    size_t nv = 0, nt = 0;
    bool nvcc = false, cudart = false;
    rc = ce_layout_begin(ctx, staging, target);
    for (size_t i = 0; rc == CE_OK && i < pl->n; i++) {
        part *p = &pl->parts[i];
        trees[nt++] = p->tree;
        if (p->cudnn || p->nccl) {
            rc = ce_compose_cudnn(ctx, p->tree, staging, &files);
            continue;
        }
        rc = ce_layout_component(ctx, p->tree, staging, target, p->name, &files);
        vers[nv] = (ce_layout_version){ p->name, p->label, p->version };
        comps[nv] = (ce_receipt_component){ p->name, p->version, p->url, p->sha256, p->pkg, p->size };
        nv++;
        nvcc = nvcc || strcmp(p->name, "cuda_nvcc") == 0;
        cudart = cudart || strcmp(p->name, "cuda_cudart") == 0;
    }
    trees[nt] = NULL;
    if (rc == CE_OK) rc = ce_layout_version_json(ctx, staging, r->cuda->version, vers, nv, &files);
    if (rc == CE_OK && nvcc && cudart) rc = ce_toolkit_check(ctx, staging, r->cuda->version, r->cuda->redist->url);
    if (rc == CE_OK) rc = ce_pkgindex_hash_files(ctx, staging, trees, &files);

    const char *tf[64];
    const ce_artifact *j = r->cuda->redist;
    ce_receipt rec;
    ce_receipt_init(&rec, m, r, ctx->platform, &files, tf, 64);
    rec.profile = pl->profile;
    rec.components = comps;
    rec.n_components = nv;
    rec.sources[rec.n_sources++] = (ce_receipt_source){ "redist", j->url, j->sha256, j->size };
    if (r->cudnn && r->cudnn_archive)
        rec.sources[rec.n_sources++] = (ce_receipt_source){ "cudnn", r->cudnn_archive->url,
                                                           r->cudnn_archive->sha256, r->cudnn_archive->size };
    for (size_t i = 0; i < pl->n; i++)
        if (pl->parts[i].nccl)
            rec.sources[rec.n_sources++] = (ce_receipt_source){ "nccl", pl->parts[i].url, pl->parts[i].sha256,
                                                               pl->parts[i].size };
    if (rc == CE_OK) rc = ce_receipt_write(ctx, staging, &rec);
    if (rc == CE_OK) {
        ce_fsync_dir(staging);
        if (ce_parts_fault_is("before-commit")) raise(SIGKILL);
        rc = ce_store_commit(ctx, staging, final);
    }
    if (rc != CE_OK) {
        ce_quiet q;
        ce_quiet_begin(&q, false);
        ce_rm_tree(ctx, staging);   /* through directory fds: deep trees cannot wedge it */
        ce_quiet_end(&q);
    } else {
        ce_emit(ctx, CE_EV_INFO, r->name, "composed %zu files (%zu hardlinked, %zu copied) from %zu components",
                files.n, files.linked, files.copied, nv);
        ce_emit(ctx, CE_EV_NOTE, r->name, "installed %s in %s", r->name, final);
    }
    ce_filelist_free(&files);
    return rc;
}

int ce_components_install(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r)
{
    plan *pl = calloc(1, sizeof *pl);
    if (!pl) return ce_fail(ctx, CE_ERR_NOMEM, "out of memory");
    char pkgs[4200];
    int rc = ce_store_path(ctx, "pkgs", pkgs, sizeof pkgs);
    if (rc == CE_OK) rc = ce_mkdir_p(ctx, pkgs, 0755);
    if (rc == CE_OK) rc = ce_components_plan(ctx, m, r, &pl->red, &pl->profile);
    if (rc == CE_OK) {
        size_t n = 0;
        long long bytes = ce_redist_selected_bytes(pl->red, &n);
        ce_emit(ctx, CE_EV_STEP, r->name, "CUDA %s from NVIDIA's components: %zu of %zu (%s profile), %.1f MiB",
                r->cuda->version, n, pl->red->n, pl->profile, (double)bytes / 1048576.0);
    }
    for (size_t i = 0; rc == CE_OK && pl->red && i < pl->red->n; i++) {
        const ce_component *c = &pl->red->comps[i];
        if (!c->selected) continue;
        part p = { .name = c->name, .label = c->label, .version = c->version, .url = c->url, .sha256 = c->sha256,
                   .size = c->size };
        snprintf(p.pkg, sizeof p.pkg, "%s-%s-%.12s", c->name, c->version, c->sha256);
        rc = add_part(ctx, pl, pkgs, p);
    }
    if (rc == CE_OK && r->cudnn && r->cudnn_archive) {
        part p = { .name = "cudnn", .label = "cuDNN", .version = r->cudnn->version, .url = r->cudnn_archive->url,
                   .sha256 = r->cudnn_archive->sha256, .size = r->cudnn_archive->size, .cudnn = true };
        char cpkg[160];
        ce_store_pkg_names(r->cuda->version, r->cudnn->version, cpkg, sizeof cpkg, p.pkg, sizeof p.pkg);
        rc = add_part(ctx, pl, pkgs, p);
    }
    const ce_cudnn *nl = NULL;
    const ce_artifact *na = NULL;
    if (rc == CE_OK) rc = ce_resolve_nccl(ctx, m, r, ctx->install_components, &nl, &na);
    if (rc == CE_OK && na) {
        part p = { .name = "nccl", .label = "NCCL", .version = nl->version, .url = na->url, .sha256 = na->sha256,
                   .size = na->size, .nccl = true };
        snprintf(p.pkg, sizeof p.pkg, "nccl-%s-cuda%d-%.12s", nl->version, ce_version_major(r->cuda->version),
                 na->sha256);
        rc = add_part(ctx, pl, pkgs, p);
    }
    if (rc == CE_OK) rc = space(ctx, pl);
    if (rc == CE_OK) rc = ce_parts_fetch_unpack(ctx, m, pl);
    if (rc == CE_OK && ce_parts_fault_is("after-unpack")) raise(SIGKILL);
    if (rc == CE_OK) rc = commit_parts(ctx, pl);
    if (rc == CE_OK) {
        ce_emit(ctx, CE_EV_STEP, r->name, "composing %s", r->name);
        rc = compose(ctx, m, r, pl);
    }
    ce_redist_free(pl->red);
    free(pl);
    return rc;
}
