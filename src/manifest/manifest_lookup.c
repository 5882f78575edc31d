/* Finding things in a loaded manifest (manifest.h): releases by version,
 * artifacts by platform, profiles by name and the components a profile
 * selects.  The parser (manifest.c) builds what these read. */
#include "manifest.h"

#include <string.h>

#include "core/version.h"

const ce_cuda *ce_manifest_cuda(const ce_manifest *m, const char *v)
{
    for (size_t i = 0; m && v && i < m->n_cuda; i++)
        if (strcmp(m->cuda[i].version, v) == 0) return &m->cuda[i];
    return NULL;
}

const ce_cudnn *ce_manifest_cudnn(const ce_manifest *m, const char *v)
{
    for (size_t i = 0; m && v && i < m->n_cudnn; i++)
        if (strcmp(m->cudnn[i].version, v) == 0) return &m->cudnn[i];
    return NULL;
}

const ce_cudnn *ce_manifest_nccl(const ce_manifest *m, const char *v)
{
    for (size_t i = 0; m && v && i < m->n_nccl; i++)
        if (strcmp(m->nccl[i].version, v) == 0) return &m->nccl[i];
    return NULL;
}

const ce_cudnn *ce_manifest_nccl_for(const ce_manifest *m, int cuda_major, const char *platform)
{
    for (size_t i = m ? m->n_nccl : 0; i-- > 0;)
        if (ce_cudnn_archive(&m->nccl[i], cuda_major, platform)) return &m->nccl[i];
    return NULL;
}

const ce_tf *ce_manifest_tf(const ce_manifest *m, const char *v)
{
    for (size_t i = 0; m && v && i < m->n_tf; i++)
        if (strcmp(m->tf[i].version, v) == 0) return &m->tf[i];
    return NULL;
}

const ce_artifact *ce_artifact_for(const ce_artifact *list, size_t n, const char *platform)
{
    for (size_t i = 0; list && platform && i < n; i++)
        if (strcmp(list[i].platform, platform) == 0) return &list[i];
    return NULL;
}

const ce_artifact *ce_cudnn_archive(const ce_cudnn *c, int cuda_major, const char *platform)
{
    for (size_t i = 0; c && i < c->n_builds; i++)
        if (c->builds[i].cuda_major == cuda_major)
            return ce_artifact_for(c->builds[i].archives, c->builds[i].n_archives, platform);
    return NULL;
}

static bool name_matches(const char *pat, const char *name)
{
    size_t n = strlen(pat);
    if (n && pat[n - 1] == '*') return strncmp(pat, name, n - 1) == 0;
    return strcmp(pat, name) == 0;
}

bool ce_profile_selects(const ce_profile *p, const char *name)
{
    if (!p || !name) return false;
    bool in = false;
    for (size_t i = 0; i < p->n_components && !in; i++) in = name_matches(p->components[i], name);
    for (size_t i = 0; i < p->n_exclude && in; i++) in = !name_matches(p->exclude[i], name);
    return in;
}

const ce_profile *ce_manifest_profile(const ce_manifest *m, const char *name)
{
    for (size_t i = 0; m && name && i < m->n_profiles; i++)
        if (strcmp(m->profiles[i].name, name) == 0) return &m->profiles[i];
    return NULL;
}

const ce_tf *ce_manifest_tf_pick(const ce_manifest *m, const char *v)
{
    const ce_tf *t = ce_manifest_tf(m, v);
    if (t || !m || !v || (strcmp(v, "latest") && strchr(v, '.'))) return t;
    bool any = !strcmp(v, "latest");
    for (size_t i = m->n_tf; i-- > 0;)   /* sorted by version: the last match is the newest */
        if (!m->tf[i].not_installable && (any || ce_version_matches(v, m->tf[i].version))) return &m->tf[i];
    return NULL;
}

const ce_cuda *ce_manifest_cuda_latest(const ce_manifest *m, const char *platform, const char *driver)
{
    for (size_t i = m ? m->n_cuda : 0; i-- > 0;) {
        const ce_cuda *c = &m->cuda[i];
        if (!ce_artifact_for(c->runfiles, c->n_runfiles, platform) && !c->redist) continue;
        if (driver && c->min_driver && ce_version_cmp(driver, c->min_driver) < 0) continue;
        return c;
    }
    return NULL;
}
