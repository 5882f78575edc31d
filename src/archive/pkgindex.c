#include "pkgindex.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fetch/digest.h"
#include "core/file.h"
#include "core/walk.h"

typedef struct idx_entry { unsigned long long ino; long long size; char sha[65]; } idx_entry;
typedef struct idx { idx_entry *v; size_t n, cap; } idx;

static int idx_add(idx *x, unsigned long long ino, long long size, const char *sha)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 256;
        idx_entry *v = realloc(x->v, cap * sizeof *v);
        if (!v) return -1;
        x->v = v;
        x->cap = cap;
    }
    idx_entry *e = &x->v[x->n++];
    e->ino = ino;
    e->size = size;
    snprintf(e->sha, sizeof e->sha, "%s", sha);
    return 0;
}

static int by_ino(const void *a, const void *b)
{
    const idx_entry *x = a, *y = b;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

typedef struct hash_walk { ce_ctx *ctx; idx *x; } hash_walk;

static int hash_one(const ce_walk_entry *e, void *arg)
{
    hash_walk *w = arg;
    if (e->kind != CE_WALK_ENTRY || !S_ISREG(e->st->st_mode)) return 0;
    char hex[CE_SHA256_HEX];
    int rc = ce_sha256_file(e->path, hex);
    if (rc != CE_OK) return rc;
    if (idx_add(w->x, (unsigned long long)e->st->st_ino, (long long)e->st->st_size, hex) != 0)
        return ce_fail(CE_ERR_NOMEM, "out of memory indexing %s", e->path);
    return 0;
}

/* Write x->v[first..] as the index of the tree whose directory inode is tree_ino. */
static int save(const idx *x, size_t first, unsigned long long tree_ino, const char *path)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "tree_ino", (double)tree_ino);
    cJSON *fs = cJSON_AddArrayToObject(o, "files");
    for (size_t k = first; fs && k < x->n; k++) {
        cJSON *f = cJSON_CreateObject();
        cJSON_AddNumberToObject(f, "ino", (double)x->v[k].ino);
        cJSON_AddNumberToObject(f, "size", (double)x->v[k].size);
        cJSON_AddStringToObject(f, "sha256", x->v[k].sha);
        cJSON_AddItemToArray(fs, f);
    }
    char *out = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    if (!out) return ce_fail(CE_ERR_NOMEM, "out of memory writing %s", path);
    int rc = ce_file_write_atomic(path, out, strlen(out), 0644);
    free(out);
    return rc;
}

/* The index is valid only for the tree it was made from: a tree unpacked
 * again has new inodes, so the tree's own inode is recorded and compared. */
static int load_or_build(ce_ctx *ctx, const char *tree, idx *x)
{
    struct stat tst;
    if (stat(tree, &tst) != 0) return CE_OK;
    char path[4200];
    snprintf(path, sizeof path, "%s.sha256.json", tree);
    char *text = NULL;
    ce_quiet q;   /* no index: the tree is hashed */
    ce_quiet_begin(&q, false);
    int trc = ce_file_read(path, 64u << 20, &text, NULL);
    ce_quiet_end(&q);
    if (trc == CE_OK) {
        cJSON *j = cJSON_Parse(text);
        free(text);
        const cJSON *ti = cJSON_GetObjectItemCaseSensitive(j, "tree_ino");
        const cJSON *fs = cJSON_GetObjectItemCaseSensitive(j, "files");
        if (cJSON_IsNumber(ti) && (unsigned long long)ti->valuedouble == (unsigned long long)tst.st_ino &&
            cJSON_IsArray(fs)) {
            const cJSON *f;
            cJSON_ArrayForEach(f, fs) {
                const cJSON *i = cJSON_GetObjectItemCaseSensitive(f, "ino");
                const cJSON *s = cJSON_GetObjectItemCaseSensitive(f, "size");
                const cJSON *h = cJSON_GetObjectItemCaseSensitive(f, "sha256");
                if (cJSON_IsNumber(i) && cJSON_IsNumber(s) && cJSON_IsString(h) && strlen(h->valuestring) == 64)
                    idx_add(x, (unsigned long long)i->valuedouble, (long long)s->valuedouble, h->valuestring);
            }
            cJSON_Delete(j);
            return CE_OK;
        }
        cJSON_Delete(j);
    }
    ce_emit(ctx, CE_EV_STEP, NULL, "computing sha256 of every file in %s (once)", tree);
    size_t first = x->n;
    hash_walk w = { ctx, x };
    int rc = ce_walk(tree, hash_one, &w);
    if (rc != CE_OK)
        return rc != CE_WALK_FAIL ? rc : ce_fail(CE_ERR_IO, "cannot walk %s", tree);
    return save(x, first, (unsigned long long)tst.st_ino, path);
}

/* ---- gathered while unpacking (one pass) ---- */

struct ce_pkgindex_list { idx x; };

ce_pkgindex_list *ce_pkgindex_list_new(void)
{
    return calloc(1, sizeof(ce_pkgindex_list));
}

int ce_pkgindex_list_add(ce_pkgindex_list *l, unsigned long long ino, long long size, const char *sha)
{
    /* an archive may hold a path twice: the later file replaced the earlier one,
     * whose inode may be reused; keep only the last entry of an inode */
    for (size_t k = l->x.n; k-- > 0 && k + 64 >= l->x.n;)
        if (l->x.v[k].ino == ino) {
            l->x.v[k].size = size;
            snprintf(l->x.v[k].sha, sizeof l->x.v[k].sha, "%s", sha);
            return 0;
        }
    return idx_add(&l->x, ino, size, sha);
}

void ce_pkgindex_list_drop(ce_pkgindex_list *l, unsigned long long ino)
{
    for (size_t k = l->x.n; k-- > 0;)
        if (l->x.v[k].ino == ino) l->x.v[k] = l->x.v[--l->x.n];
}

int ce_pkgindex_list_save(ce_pkgindex_list *l, const char *tree, const char *path)
{
    struct stat tst;
    if (stat(tree, &tst) != 0) return ce_fail(CE_ERR_IO, "cannot stat %s", tree);
    return save(&l->x, 0, (unsigned long long)tst.st_ino, path);
}

void ce_pkgindex_list_free(ce_pkgindex_list *l)
{
    if (l) free(l->x.v);
    free(l);
}

int ce_pkgindex_hash_files(ce_ctx *ctx, const char *prefix, const char *const *trees, ce_filelist *files)
{
    idx x = { 0 };
    int rc = CE_OK;
    for (size_t t = 0; rc == CE_OK && trees[t]; t++) rc = load_or_build(ctx, trees[t], &x);
    if (rc == CE_OK && x.n) qsort(x.v, x.n, sizeof *x.v, by_ino);
    for (size_t i = 0; rc == CE_OK && i < files->n; i++) {
        ce_file_entry *f = &files->v[i];
        char p[8300];
        if (ce_path_join(p, sizeof p, prefix, f->path) != CE_OK) continue;
        struct stat st;
        if (stat(p, &st) != 0) continue;
        idx_entry key = { .ino = (unsigned long long)st.st_ino };
        idx_entry *hit = x.n ? bsearch(&key, x.v, x.n, sizeof *x.v, by_ino) : NULL;
        if (hit && hit->size == (long long)st.st_size) {
            memcpy(f->sha256, hit->sha, sizeof f->sha256);
        } else {
            rc = ce_sha256_file(p, f->sha256);
        }
    }
    free(x.v);
    return rc;
}
