#include "components.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bytes.h"
#include "core/file.h"
#include "core/proc.h"
#include "core/version.h"
#include "fetch/digest.h"
#include "fetch/fetch.h"
#include "parts.h"
#include "archive/pkgindex.h"
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
        *rc = ce_fail(CE_ERR_NOTFOUND, "CUDA %s has no redistrib JSON for %s in the manifest; "
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
        if (!ce_exists(p) || ce_sha256_file(p, hex) != CE_OK || strcmp(hex, j->sha256) != 0) continue;
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/cache", ctx->root);
        if (ce_mkdir_p(dir, 0755) == CE_OK && ce_file_read(p, CE_REDIST_MAX, &data, &len) == CE_OK &&
            (j->size < 0 || (long long)len == j->size))
            ce_file_write_atomic(cache, data, len, 0644);
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
    if ((rc = ce_file_read(it.path, CE_REDIST_MAX, &text, &len))) return rc;
    ce_redist *red = NULL;
    rc = ce_redist_parse(text, len, j->url, ctx->platform, &red);
    free(text);
    if (rc) return rc;
    if (red->release_label && strcmp(red->release_label, r->cuda->version) != 0) {
        rc = ce_fail(CE_ERR_INTEGRITY, "%s is the redistrib JSON of CUDA %s, but the manifest pins it for "
                     "CUDA %s; the manifest entry is wrong", j->url, red->release_label, r->cuda->version);
        ce_redist_free(red);
        return rc;
    }
    const char *pname = r->tf ? "tf" : "toolkit";
    const ce_profile *p = ce_manifest_profile(m, pname);
    if (!p) {
        ce_redist_free(red);
        return ce_fail(CE_ERR_NOTFOUND, "the manifest %s defines no \"%s\" profile of components; add one "
                       "(see cudaenv-manifest(5)) or install with --from runfile", m->origin, pname);
    }
    if ((rc = ce_redist_select(red, p, ctx->install_components[0] ? ctx->install_components : NULL))) {
        ce_redist_free(red);
        return rc;
    }
    size_t n = 0;
    ce_redist_selected_bytes(red, &n);
    if (n == 0) {
        ce_redist_free(red);
        return ce_fail(CE_ERR_USAGE, "no component of CUDA %s is selected; check --components",
                       r->cuda->version);
    }
    *out = red;
    if (profile) *profile = pname;
    return CE_OK;
}

/* ---- what a toolchain holds ---- */

static bool holds(const plan *pl, const char *name)
{
    for (size_t i = 0; i < pl->n; i++)
        if (!pl->parts[i].cudnn && !pl->parts[i].nccl && strcmp(pl->parts[i].name, name) == 0) return true;
    return false;
}

/* The changes from profile p to the components pl holds, into pl->adjust
 * when keep; their number. */
static size_t changes(plan *pl, const ce_profile *p, bool keep)
{
    size_t n = 0, len = 0;
    const ce_redist *red = pl->red;
    for (size_t pass = 0; pass < 2; pass++) {
        size_t count = pass ? pl->n : red->n;
        for (size_t i = 0; i < count; i++) {
            const char *name = pass ? pl->parts[i].name : red->comps[i].name;
            bool in, want;
            if (pass) {   /* what it holds that the release's JSON does not list */
                bool listed = false;
                for (size_t k = 0; k < red->n && !listed; k++) listed = strcmp(red->comps[k].name, name) == 0;
                if (listed || pl->parts[i].cudnn || pl->parts[i].nccl) continue;
                in = true, want = false;
            } else {
                if (ce_redist_driver_side(name)) continue;
                in = holds(pl, name);
                want = ce_profile_selects(p, name);
            }
            if (in == want) continue;
            n++;
            if (!keep || pl->n_adjust == sizeof pl->adjust / sizeof pl->adjust[0]) continue;
            int w = snprintf(pl->adjust_buf + len, sizeof pl->adjust_buf - len, "%c%s", in ? '+' : '-', name);
            if (w < 0 || (size_t)w >= sizeof pl->adjust_buf - len) continue;
            pl->adjust[pl->n_adjust++] = pl->adjust_buf + len;
            len += (size_t)w + 1;
        }
    }
    return n;
}

/* The manifest's profile that describes what pl holds with the fewest
 * changes (the one asked for on a tie), and those changes: the receipt says
 * "toolkit" for a toolchain completed from tf to toolkit, whatever order
 * the installs came in. */
static void describe(const ce_manifest *m, plan *pl)
{
    const ce_profile *best = ce_manifest_profile(m, pl->profile);
    size_t least = best ? changes(pl, best, false) : (size_t)-1;
    for (size_t i = 0; i < m->n_profiles; i++) {
        size_t n = changes(pl, &m->profiles[i], false);
        if (n < least) least = n, best = &m->profiles[i];
    }
    pl->n_adjust = 0;
    pl->best = best ? best->name : pl->profile;
    if (best) changes(pl, best, true);
}

void ce_components_note_installed(ce_ctx *ctx, const char *name, const char *final, const char *extra)
{
    ce_receipt_held h;
    ce_receipt_held_read(final, true, &h);
    char what[1200];
    ce_receipt_held_text(&h, what, sizeof what);
    ce_receipt_held_free(&h);
    ce_emit(ctx, CE_EV_NOTE, name, "%s is already installed in %s (%s%s%s--force reinstalls it)%s", name, final,
            what[0] ? "holds: " : "", what, what[0] ? "; " : "", extra ? extra : "");
}

/* ---- composing ---- */

static int compose(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, plan *pl, const char *added)
{
    char vdir[4200], final[4400], staging[4200];
    int rc;
    if ((rc = ce_store_path(ctx, "versions", vdir, sizeof vdir)) || (rc = ce_join(final, sizeof final, vdir, r->name)))
        return rc;
    if ((rc = ce_store_staging(ctx, "versions", staging, sizeof staging))) return rc;
    const char *target = ce_layout_target(ctx->platform);
    ce_filelist files = { 0 };
    ce_layout_version vers[MAX_PARTS];
    ce_receipt_component comps[MAX_PARTS];
    const char *trees[MAX_PARTS + 1];
    size_t nv = 0, nt = 0;
    bool nvcc = false, cudart = false;
    rc = ce_layout_begin(staging, target);
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
    if (rc == CE_OK) rc = ce_layout_version_json(staging, r->cuda->version, vers, nv, &files);
    if (rc == CE_OK && nvcc && cudart) rc = ce_toolkit_check(staging, r->cuda->version, r->cuda->redist->url);
    if (rc == CE_OK) rc = ce_pkgindex_hash_files(ctx, staging, trees, &files);

    const char *tf[64];
    const ce_artifact *j = r->cuda->redist;
    ce_receipt rec;
    ce_receipt_init(&rec, m, r, ctx->platform, &files, tf, 64);
    describe(m, pl);
    rec.profile = pl->best;
    rec.adjust = pl->adjust;
    rec.n_adjust = pl->n_adjust;
    rec.components = comps;
    rec.n_components = nv;
    rec.sources[rec.n_sources++] = (ce_receipt_source){ "redist", j->url, j->sha256, j->size, NULL };
    for (size_t i = 0; i < pl->n; i++) {
        const part *p = &pl->parts[i];
        if (p->cudnn || p->nccl)
            rec.sources[rec.n_sources++] = (ce_receipt_source){ p->cudnn ? "cudnn" : "nccl", p->url, p->sha256,
                                                               p->size, p->pkg };
        if (p->nccl) rec.nccl = p->version;
    }
    rc = ce_parts_publish(rc, staging, final, &rec);
    if (rc == CE_OK) {
        ce_emit(ctx, CE_EV_INFO, r->name, "composed %zu files (%zu hardlinked, %zu copied) from %zu components",
                files.n, files.linked, files.copied, nv);
        if (added) {
            ce_receipt_held h;
            char what[1200];
            ce_receipt_held_read(final, true, &h);
            ce_receipt_held_text(&h, what, sizeof what);
            ce_receipt_held_free(&h);
            ce_emit(ctx, CE_EV_NOTE, r->name, "added %s to %s in %s (it holds: %s)", added, r->name, final, what);
        } else {
            ce_emit(ctx, CE_EV_NOTE, r->name, "installed %s in %s", r->name, final);
        }
    }
    ce_filelist_free(&files);
    return rc;
}

/* ---- completing an installed toolchain ---- */

static bool plain_name(const char *s)
{
    return s && *s && *s != '.' && !strchr(s, '/') && strlen(s) < 160;
}

static bool sha_hex(const char *s)
{
    if (!s || strlen(s) != 64) return false;
    for (const char *c = s; *c; c++)
        if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'))) return false;
    return true;
}

/* NCCL's version from its wheel's file name (name-version-tags.whl), for
 * receipts that do not name it. */
static void wheel_version(const char *url, char *out, size_t n)
{
    const char *b = ce_parts_url_base(url), *d = strchr(b, '-');
    size_t l = d ? strcspn(d + 1, "-") : 0;
    snprintf(out, n, "%.*s", (int)l, d ? d + 1 : "");
    if (!plain_name(out)) snprintf(out, n, "unknown");
}

static int held_part(ce_ctx *ctx, plan *pl, const char *pkgs, const char *name, const ce_receipt_component *k)
{
    if (!plain_name(k->name) || !plain_name(k->version) || !sha_hex(k->sha256))
        return ce_fail(CE_ERR_INTEGRITY, "the receipt of %s lists a component that is not a plain name "
                       "with a sha256 ('%s'); reinstall it with --force", name, k->name ? k->name : "?");
    part p = { .name = k->name, .label = k->name, .version = k->version, .url = k->url, .sha256 = k->sha256,
               .size = k->size };
    snprintf(p.pkg, sizeof p.pkg, "%s-%s-%.12s", k->name, k->version, k->sha256);
    return ce_parts_add(ctx, pl, pkgs, p);
}

/* The request r's components that the toolchain (held) lacks, by name, into
 * missing; then r's selection becomes the union: what it holds is kept as it
 * is (its archive, even where the release's JSON now pins another), what
 * it lacks comes from the JSON.  Held components that the JSON lists with
 * the same archive stay selected there; the others are added to pl here. */
static int merge_held(ce_ctx *ctx, plan *pl, const char *pkgs, const char *name, const ce_receipt_held *h,
                      char *missing, size_t msz, size_t *nmissing, char *extra, size_t esz)
{
    size_t len = 0, elen = 0;
    *nmissing = 0;
    missing[0] = extra[0] = '\0';
    for (size_t i = 0; i < pl->red->n; i++) {
        const ce_component *c = &pl->red->comps[i];
        bool have = false;
        for (size_t k = 0; k < h->n && !have; k++) have = strcmp(h->comps[k].name, c->name) == 0;
        if (!c->selected || have) continue;
        (*nmissing)++;
        if (len < msz) len += (size_t)snprintf(missing + len, msz - len, "%s%s", len ? ", " : "", c->name);
    }
    /* what it holds that this request leaves out: said, never removed */
    for (size_t k = 0; k < h->n; k++) {
        bool asked = false;
        for (size_t i = 0; i < pl->red->n && !asked; i++)
            asked = pl->red->comps[i].selected && strcmp(pl->red->comps[i].name, h->comps[k].name) == 0;
        if (!asked && elen < esz)
            elen += (size_t)snprintf(extra + elen, esz - elen, "%s%s", elen ? ", " : "", h->comps[k].name);
    }
    int rc = CE_OK;
    for (size_t k = 0; rc == CE_OK && k < h->n; k++) {
        ce_component *same = NULL;
        for (size_t i = 0; i < pl->red->n; i++) {
            ce_component *c = &pl->red->comps[i];
            if (strcmp(c->name, h->comps[k].name) != 0) continue;
            if (strcmp(c->sha256, h->comps[k].sha256) == 0) same = c;
            else c->selected = false;   /* the one it holds stays */
        }
        if (same) same->selected = true;
        else rc = held_part(ctx, pl, pkgs, name, &h->comps[k]);
    }
    return rc;
}

static int run(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, const ce_receipt_held *held,
               const char *final)
{
    plan *pl = calloc(1, sizeof *pl);
    if (!pl) return ce_fail(CE_ERR_NOMEM, "out of memory");
    char pkgs[4200], missing[2048] = "", added[2200] = "", extra[2048] = "";
    size_t nmissing = 0;
    int rc = ce_store_path(ctx, "pkgs", pkgs, sizeof pkgs);
    if (rc == CE_OK) rc = ce_mkdir_p(pkgs, 0755);
    if (rc == CE_OK) rc = ce_components_plan(ctx, m, r, &pl->red, &pl->profile);
    if (rc != CE_OK && held && rc != CE_ERR_USAGE) {
        /* what it holds stays usable: an install that cannot tell what it would add changes nothing */
        char why[700];
        snprintf(why, sizeof why, "; cannot tell what this install would add to it: %s", ce_errmsg());
        ce_status_clear();
        ce_components_note_installed(ctx, r->name, final, why);
        ce_redist_free(pl->red);
        free(pl);
        return CE_OK;
    }
    const ce_cudnn *nl = NULL;
    const ce_artifact *na = NULL;
    if (rc == CE_OK) rc = ce_resolve_nccl(ctx, m, r, ctx->install_components, &nl, &na);
    bool add_nccl = na && !(held && held->nccl);
    if (rc == CE_OK && held) {
        if ((rc = merge_held(ctx, pl, pkgs, r->name, held, missing, sizeof missing, &nmissing, extra,
                             sizeof extra)) == CE_OK && nmissing == 0 && !add_nccl) {
            if (held->nccl && !na) snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%sNCCL",
                                            extra[0] ? ", " : "");
            char also[2200] = "";
            if (extra[0])
                snprintf(also, sizeof also, "; it also holds %s, which this install leaves out (kept; --force "
                         "reinstalls it with only what this install selects)", extra);
            ce_components_note_installed(ctx, r->name, final, also);
            ce_redist_free(pl->red);
            free(pl);
            return CE_OK;
        }
        if (rc == CE_OK) rc = ce_preflight_install(ctx, r->cuda);
        if (rc == CE_OK) {
            char nccl[64] = "";
            if (add_nccl) snprintf(nccl, sizeof nccl, "%sNCCL %s", nmissing ? ", " : "", nl->version);
            snprintf(added, sizeof added, "%s%s", missing, nccl);
            ce_emit(ctx, CE_EV_NOTE, r->name, "%s is installed without %s, which this install selects: adding %s",
                    r->name, added, nmissing + (add_nccl ? 1 : 0) == 1 ? "it" : "them");
        }
    } else if (rc == CE_OK) {
        size_t n = 0;
        long long bytes = ce_redist_selected_bytes(pl->red, &n);
        char sz[32];
        ce_bytes_text(sz, sizeof sz, (double)bytes);
        ce_emit(ctx, CE_EV_STEP, r->name, "CUDA %s from NVIDIA's components: %zu of %zu (%s profile), %s",
                r->cuda->version, n, pl->red->n, pl->profile, sz);
    }
    for (size_t i = 0; rc == CE_OK && pl->red && i < pl->red->n; i++) {
        const ce_component *c = &pl->red->comps[i];
        if (!c->selected) continue;
        part p = { .name = c->name, .label = c->label, .version = c->version, .url = c->url, .sha256 = c->sha256,
                   .size = c->size };
        snprintf(p.pkg, sizeof p.pkg, "%s-%s-%.12s", c->name, c->version, c->sha256);
        rc = ce_parts_add(ctx, pl, pkgs, p);
    }
    if (rc == CE_OK && r->cudnn && r->cudnn_archive) {
        part p = { .name = "cudnn", .label = "cuDNN", .version = r->cudnn->version, .url = r->cudnn_archive->url,
                   .sha256 = r->cudnn_archive->sha256, .size = r->cudnn_archive->size, .cudnn = true };
        char cpkg[160];
        ce_store_pkg_names(r->cuda->version, r->cudnn->version, cpkg, sizeof cpkg, p.pkg, sizeof p.pkg);
        rc = ce_parts_add(ctx, pl, pkgs, p);
    }
    char held_nccl[32];
    if (rc == CE_OK && held && held->nccl) {
        /* the NCCL it holds stays, whatever this install asks */
        const ce_receipt_source *s = &held->nccl_src;
        if (held->nccl_version[0]) snprintf(held_nccl, sizeof held_nccl, "%s", held->nccl_version);
        else wheel_version(s->url, held_nccl, sizeof held_nccl);
        part p = { .name = "nccl", .label = "NCCL", .version = held_nccl, .url = s->url, .sha256 = s->sha256,
                   .size = s->size, .nccl = true };
        if (!plain_name(held_nccl) || !sha_hex(s->sha256))
            rc = ce_fail(CE_ERR_INTEGRITY, "the receipt of %s names an NCCL wheel without a plain version and "
                         "sha256; reinstall it with --force", r->name);
        snprintf(p.pkg, sizeof p.pkg, "nccl-%s-cuda%d-%.12s", held_nccl, ce_version_major(r->cuda->version), s->sha256);
        if (rc == CE_OK) rc = ce_parts_add(ctx, pl, pkgs, p);
    } else if (rc == CE_OK && na) {
        part p = { .name = "nccl", .label = "NCCL", .version = nl->version, .url = na->url, .sha256 = na->sha256,
                   .size = na->size, .nccl = true };
        snprintf(p.pkg, sizeof p.pkg, "nccl-%s-cuda%d-%.12s", nl->version, ce_version_major(r->cuda->version),
                 na->sha256);
        rc = ce_parts_add(ctx, pl, pkgs, p);
    }
    if (rc == CE_OK) rc = ce_parts_get(ctx, m, pl);
    if (rc == CE_OK) {
        ce_emit(ctx, CE_EV_STEP, r->name, "composing %s", r->name);
        rc = compose(ctx, m, r, pl, held ? added : NULL);
    }
    ce_redist_free(pl->red);
    free(pl);
    return rc;
}

int ce_components_install(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r)
{
    return run(ctx, m, r, NULL, NULL);
}

int ce_components_complete(ce_ctx *ctx, const ce_manifest *m, const ce_resolved *r, const char *final)
{
    ce_receipt_held h;
    ce_receipt_held_read(final, true, &h);
    int rc = CE_OK;
    if (h.kind == CE_HELD_COMPONENTS) {
        rc = run(ctx, m, r, &h, final);
    } else {
        /* the runfile's own set (or an adopted toolkit): nothing to merge into */
        const ce_cudnn *nl = NULL;
        const ce_artifact *na = NULL;
        char extra[400] = "";
        if ((rc = ce_resolve_nccl(ctx, m, r, ctx->install_components, &nl, &na)) == CE_OK && na && !h.nccl)
            snprintf(extra, sizeof extra, "; it holds no NCCL, which this install selects: --force reinstalls it "
                     "from NVIDIA's components with NCCL %s", nl->version);
        if (rc == CE_OK) ce_components_note_installed(ctx, r->name, final, extra);
    }
    ce_receipt_held_free(&h);
    return rc;
}
