/* What changed between two manifests (diff.h). */
#include "diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

typedef struct list { ce_mchange *v; size_t n, cap; } list;

static ce_mchange *add(list *l, ce_mchange_kind kind, const char *what, const char *key)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        ce_mchange *v = realloc(l->v, cap * sizeof *v);
        if (!v) return NULL;
        l->v = v;
        l->cap = cap;
    }
    ce_mchange *c = &l->v[l->n++];
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->what = what;
    snprintf(c->key, sizeof c->key, "%s", key);
    return c;
}

static const char *s(const char *x) { return x ? x : "-"; }
static bool same(const char *a, const char *b) { return !strcmp(s(a), s(b)); }

/* "name a -> b" appended to detail when a and b differ. */
static void field(char *d, size_t n, const char *name, const char *a, const char *b)
{
    if (same(a, b)) return;
    size_t l = strlen(d);
    snprintf(d + l, n - l, "%s%s %s -> %s", l ? "; " : "", name, s(a), s(b));
}

static void artifacts(char *d, size_t n, const char *what, const ce_artifact *a, size_t na, const ce_artifact *b,
                      size_t nb)
{
    for (size_t i = 0; i < nb; i++) {
        const ce_artifact *o = ce_artifact_for(a, na, b[i].platform);
        char name[96], uname[96];
        snprintf(name, sizeof name, "%s %s sha256", what, b[i].platform);
        snprintf(uname, sizeof uname, "%s %s url", what, b[i].platform);
        if (!o) {
            field(d, n, name, NULL, "new");
            continue;
        }
        /* each one that moved is named (field says nothing of an equal pair): a new URL
         * with the same sha256 is where install now downloads from */
        field(d, n, name, o->sha256, b[i].sha256);
        field(d, n, uname, o->url, b[i].url);
    }
}

static void diff_tf(list *l, const ce_manifest *o, const ce_manifest *m)
{
    for (size_t i = 0; i < m->n_tf; i++) {
        const ce_tf *t = &m->tf[i], *p = ce_manifest_tf(o, t->version);
        ce_mchange *c = NULL;
        if (!p && (c = add(l, CE_MCHANGE_ADDED, "tf", t->version)))
            snprintf(c->detail, sizeof c->detail, "CUDA %s%s%s", t->cuda, t->cudnn ? " + cuDNN " : "",
                     t->cudnn ? t->cudnn : "");
        if (!p) continue;
        char d[512] = "";
        field(d, sizeof d, "cuda", p->cuda, t->cuda);
        field(d, sizeof d, "cudnn", p->cudnn, t->cudnn);
        field(d, sizeof d, "python", p->python, t->python);
        field(d, sizeof d, "not_installable", p->not_installable, t->not_installable);
        if (d[0] && (c = add(l, CE_MCHANGE_CHANGED, "tf", t->version))) snprintf(c->detail, sizeof c->detail, "%s", d);
    }
    for (size_t i = 0; o && i < o->n_tf; i++)
        if (!ce_manifest_tf(m, o->tf[i].version)) add(l, CE_MCHANGE_REMOVED, "tf", o->tf[i].version);
}

static void diff_cuda(list *l, const ce_manifest *o, const ce_manifest *m)
{
    for (size_t i = 0; i < m->n_cuda; i++) {
        const ce_cuda *t = &m->cuda[i], *p = ce_manifest_cuda(o, t->version);
        ce_mchange *c = NULL;
        if (!p && (c = add(l, CE_MCHANGE_ADDED, "cuda", t->version)))
            snprintf(c->detail, sizeof c->detail, "min driver %s", t->min_driver ? t->min_driver : "unknown");
        if (!p) continue;
        char d[512] = "", ga[16], gb[16];
        field(d, sizeof d, "min_driver", p->min_driver, t->min_driver);
        snprintf(ga, sizeof ga, "%d", p->max_gcc);
        snprintf(gb, sizeof gb, "%d", t->max_gcc);
        field(d, sizeof d, "max_gcc", ga, gb);
        field(d, sizeof d, "sm.min", p->sm_min, t->sm_min);
        field(d, sizeof d, "sm.max", p->sm_max, t->sm_max);
        artifacts(d, sizeof d, "runfile", p->runfiles, p->n_runfiles, t->runfiles, t->n_runfiles);
        if (t->redist) field(d, sizeof d, "redist sha256", p->redist ? p->redist->sha256 : NULL, t->redist->sha256);
        if (d[0] && (c = add(l, CE_MCHANGE_CHANGED, "cuda", t->version))) snprintf(c->detail, sizeof c->detail, "%s", d);
    }
    for (size_t i = 0; o && i < o->n_cuda; i++)
        if (!ce_manifest_cuda(m, o->cuda[i].version)) add(l, CE_MCHANGE_REMOVED, "cuda", o->cuda[i].version);
}

static void diff_cudnn(list *l, const ce_manifest *o, const ce_manifest *m)
{
    for (size_t i = 0; i < m->n_cudnn; i++) {
        const ce_cudnn *t = &m->cudnn[i], *p = ce_manifest_cudnn(o, t->version);
        ce_mchange *c = NULL;
        if (!p && (c = add(l, CE_MCHANGE_ADDED, "cudnn", t->version))) {
            size_t len = 0;
            for (size_t b = 0; b < t->n_builds && len < sizeof c->detail; b++)
                len += (size_t)snprintf(c->detail + len, sizeof c->detail - len, "%sfor CUDA %d", b ? ", " : "",
                                        t->builds[b].cuda_major);
        }
        if (!p) continue;
        char d[512] = "";
        for (size_t b = 0; b < t->n_builds; b++) {
            const ce_cudnn_build *nb = &t->builds[b], *ob = NULL;
            for (size_t k = 0; k < p->n_builds; k++)
                if (p->builds[k].cuda_major == nb->cuda_major) ob = &p->builds[k];
            char what[32];
            snprintf(what, sizeof what, "cuda%d", nb->cuda_major);
            if (!ob) field(d, sizeof d, what, NULL, "new");
            else artifacts(d, sizeof d, what, ob->archives, ob->n_archives, nb->archives, nb->n_archives);
        }
        if (d[0] && (c = add(l, CE_MCHANGE_CHANGED, "cudnn", t->version))) snprintf(c->detail, sizeof c->detail, "%s", d);
    }
    for (size_t i = 0; o && i < o->n_cudnn; i++)
        if (!ce_manifest_cudnn(m, o->cudnn[i].version)) add(l, CE_MCHANGE_REMOVED, "cudnn", o->cudnn[i].version);
}

/* PyTorch/JAX builds, keyed "2.5+cu124": new, removed, or another pair / default / reason. */
static void diff_fw(list *l, const char *name, const ce_manifest *o, const ce_manifest *m)
{
    size_t nm, no;
    const ce_fw *fm = ce_manifest_fws(m, name, &nm), *fo = ce_manifest_fws(o, name, &no);
    char key[40];
    for (size_t i = 0; i < nm; i++) {
        const ce_fw *f = &fm[i], *p = ce_manifest_fw_pick(o, name, f->version, NULL);
        if (p && strcmp(p->version, f->version)) p = NULL;   /* an alias match is another release */
        for (size_t k = 0; k < f->n_builds; k++) {
            const ce_fw_build *b = &f->builds[k], *q = p ? ce_fw_build_for(p, b->tag) : NULL;
            bool dflt = !strcmp(b->tag, f->deflt);
            ce_mchange *c = NULL;
            snprintf(key, sizeof key, "%s+%s", f->version, b->tag);
            if (!q && (c = add(l, CE_MCHANGE_ADDED, name, key)))
                snprintf(c->detail, sizeof c->detail, "CUDA %s%s%s%s", b->cuda, b->cudnn ? " + cuDNN " : "",
                         b->cudnn ? b->cudnn : "", dflt ? " (the default build)" : "");
            if (!q) continue;
            char d[512] = "";
            field(d, sizeof d, "cuda", q->cuda, b->cuda);
            field(d, sizeof d, "cudnn", q->cudnn, b->cudnn);
            field(d, sizeof d, "default", strcmp(q->tag, p->deflt) ? "no" : "yes", dflt ? "yes" : "no");
            field(d, sizeof d, "not_installable", q->not_installable, b->not_installable);
            if (d[0] && (c = add(l, CE_MCHANGE_CHANGED, name, key))) snprintf(c->detail, sizeof c->detail, "%s", d);
        }
    }
    for (size_t i = 0; i < no; i++)
        for (size_t k = 0; k < fo[i].n_builds; k++) {
            const ce_fw *f = ce_manifest_fw_pick(m, name, fo[i].version, NULL);
            if (f && !strcmp(f->version, fo[i].version) && ce_fw_build_for(f, fo[i].builds[k].tag)) continue;
            snprintf(key, sizeof key, "%s+%s", fo[i].version, fo[i].builds[k].tag);
            add(l, CE_MCHANGE_REMOVED, name, key);
        }
}

int ce_manifest_diff(const ce_manifest *old, const ce_manifest *new, ce_mchange **out, size_t *n)
{
    list l = { 0 };
    diff_tf(&l, old, new);
    diff_fw(&l, "torch", old, new);
    diff_fw(&l, "jax", old, new);
    diff_cuda(&l, old, new);
    diff_cudnn(&l, old, new);
    *out = l.v;
    *n = l.n;
    return CE_OK;
}
