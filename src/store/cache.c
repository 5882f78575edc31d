#include "cache.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/path.h"
#include "core/walk.h"
#include "fetch/fetch.h"
#include "receipt.h"
#include "usage.h"

/* ---- per-toolchain usage: which toolchains link each inode ------------- */

/* open addressing on (dev, ino); owner -1 = empty slot */
typedef struct inode_use { dev_t dev; ino_t ino; int owner; bool multi; } inode_use;

/* One ce_store_usage: the table, and which toolchain and pass count now. */
typedef struct usage_walk {
    inode_use *tab;
    size_t tab_cap, tab_n;
    int cur_owner;
    bool pass_two, oom;
    ce_tc_usage *cur_usage;
} usage_walk;

static inode_use *slot(usage_walk *u, dev_t dev, ino_t ino)
{
    size_t h = ((size_t)ino * 0x9E3779B97F4A7C15ull ^ (size_t)dev) & (u->tab_cap - 1);
    while (u->tab[h].owner != -1 && !(u->tab[h].ino == ino && u->tab[h].dev == dev)) h = (h + 1) & (u->tab_cap - 1);
    return &u->tab[h];
}

static bool grow(usage_walk *u)
{
    size_t old_cap = u->tab_cap;
    inode_use *old = u->tab;
    u->tab_cap = u->tab_cap ? u->tab_cap * 2 : 4096;
    u->tab = malloc(u->tab_cap * sizeof *u->tab);
    if (!u->tab) { u->tab = old; u->tab_cap = old_cap; return false; }
    for (size_t i = 0; i < u->tab_cap; i++) u->tab[i].owner = -1;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].owner != -1) *slot(u, old[i].dev, old[i].ino) = old[i];
    free(old);
    return true;
}

/* one regular file of toolchain cur_owner: pass one marks which toolchains
 * link the inode, pass two adds its bytes to unique or shared */
static void count_file(usage_walk *w, dev_t dev, ino_t ino, long long size)
{
    if (w->oom) return;
    if (w->pass_two) {
        inode_use *u = slot(w, dev, ino);
        if (u->owner != -1 && u->multi) w->cur_usage->shared += size;
        else w->cur_usage->unique += size;
        return;
    }
    if (w->tab_n * 2 >= w->tab_cap && !grow(w)) { w->oom = true; return; }
    inode_use *u = slot(w, dev, ino);
    if (u->owner == -1) {
        *u = (inode_use){ dev, ino, w->cur_owner, false };
        w->tab_n++;
    } else if (u->owner != w->cur_owner) {
        u->multi = true;
    }
}

static int usage_one(const ce_walk_entry *e, void *arg)
{
    usage_walk *w = arg;
    /* the record itself is not counted: a walk and the record agree */
    if (e->kind == CE_WALK_ENTRY && S_ISREG(e->st->st_mode) && !(e->depth == 1 && !strcmp(e->name, CE_USAGE_NAME)))
        count_file(w, e->st->st_dev, e->st->st_ino, (long long)e->st->st_size);
    return w->oom ? CE_ERR_NOMEM : CE_OK;
}

static int usage_sums(const ce_toolchain *v, size_t n, ce_tc_usage *usage, bool fresh, bool *from_records);

typedef struct sizes_key { unsigned long long dev, ino, rino, rsize; long long ms, mns, cs, cns; } sizes_key;

/* The identity of t's usage record; false when it has none (it is walked). */
static bool sizes_key_of(const ce_toolchain *t, sizes_key *k)
{
    char p[CE_PATH_MAX];
    struct stat top, st;
    if (lstat(t->prefix, &top) != 0 || ce_path_join(p, sizeof p, t->prefix, CE_USAGE_NAME) != CE_OK ||
        lstat(p, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    *k = (sizes_key){ (unsigned long long)top.st_dev, (unsigned long long)top.st_ino, (unsigned long long)st.st_ino,
                      (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                      (long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec };
    return true;
}

/* "name dev ino rino rsize mtime ctime": the toolchain and its record */
static int key_line(char *out, size_t outsz, const ce_toolchain *t, const sizes_key *k)
{
    return snprintf(out, outsz, "%s %llu %llu %llu %llu %lld %lld %lld %lld", t->name, k->dev, k->ino, k->rino,
                    k->rsize, k->ms, k->mns, k->cs, k->cns);
}

/* ---- a kept file: sums kept under the identities they were summed from ----
 * "<magic>\n", one key line for each toolchain's usage record (its name, the
 * toolchain directory's device and inode, the record's inode, size, mtime
 * and ctime), ".\n", then one "<key> <a> <b>\n" line a thing summed.
 * Installing, re-recording, composing or removing a toolchain gives the
 * header another text, and then no line below it is used.  Two files:
 * versions/.cudaenv-sizes (each toolchain's own and shared bytes, keyed by
 * its name) and pkgs/.cudaenv-sizes (each tree's size and freeable bytes,
 * keyed by its top directory's identity).  A cache: never a reason for a
 * command to fail; a store this user cannot write is summed each time. */
typedef struct kept {
    char path[CE_PATH_MAX];
    char *old;           /* the file's lines after its header, when the header is current */
    size_t old_lines, matched;
    char *text;          /* the file as it is to be */
    size_t len, cap, head;
    bool keep, changed;  /* keep: a path, and every toolchain keyed */
} kept;

static bool kept_add(kept *t, const char *line)
{
    size_t l = strlen(line);
    if (t->len + l + 1 > t->cap) {
        size_t c = (t->cap ? t->cap * 2 : 4096) + l;
        char *nt = realloc(t->text, c);
        if (!nt) return t->keep = false;
        t->text = nt;
        t->cap = c;
    }
    memcpy(t->text + t->len, line, l + 1);
    t->len += l;
    return true;
}

/* The header v's toolchains make now, and the file's lines when its header
 * is that one.  path NULL: nothing kept (--sizes, or no one place for it). */
static void kept_open(kept *t, const char *path, const char *magic, const ce_toolchain *v, size_t n)
{
    memset(t, 0, sizeof *t);
    t->keep = path && snprintf(t->path, sizeof t->path, "%s", path) < (int)sizeof t->path && kept_add(t, magic) &&
              kept_add(t, "\n");
    for (size_t i = 0; t->keep && i < n; i++) {
        sizes_key k;
        char line[600];
        /* a name with a space or newline would make the key lines ambiguous: nothing kept */
        int w = !strpbrk(v[i].name, " \n") && sizes_key_of(&v[i], &k) ? key_line(line, sizeof line - 1, &v[i], &k) : -1;
        t->keep = w > 0 && (size_t)w < sizeof line - 1 && kept_add(t, strcat(line, "\n"));
    }
    t->keep = t->keep && kept_add(t, ".\n");
    t->head = t->len;
    char *text = NULL;
    int fd = t->keep ? open(t->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    if (fd >= 0 && ce_file_read_fd(fd, t->path, 16u << 20, &text, NULL) == CE_OK &&
        !strncmp(text, t->text, t->head)) {   /* the same toolchains with the same records */
        t->old = text;
        for (const char *p = text + t->head; *p; p++) t->old_lines += *p == '\n';
        text = NULL;
    }
    ce_quiet_end(&q);
    free(text);
    t->changed = !t->old;
}

/* *a and *b from the line whose key is key; false when there is none */
static bool kept_get(kept *t, const char *key, long long *a, long long *b)
{
    size_t kl = strlen(key);
    for (const char *p = t->old ? t->old + t->head : NULL, *nl; p && (nl = strchr(p, '\n')); p = nl + 1)
        if ((size_t)(nl - p) > kl + 1 && !strncmp(p, key, kl) && p[kl] == ' ' &&
            sscanf(p + kl + 1, "%lld %lld", a, b) == 2) {
            t->matched++;
            return true;
        }
    return false;
}

/* the line for key in the file as it is to be (a key the format cannot hold: nothing kept) */
static void kept_put(kept *t, const char *key, long long a, long long b)
{
    char line[800];
    int w = strchr(key, '\n') ? -1 : snprintf(line, sizeof line, "%s %lld %lld\n", key, a, b);
    t->keep = t->keep && w > 0 && (size_t)w < sizeof line && kept_add(t, line);
}

/* written when a line changed, came or went; then freed */
static void kept_close(kept *t)
{
    if (t->keep && (t->changed || t->matched != t->old_lines)) {
        ce_quiet q;
        ce_quiet_begin(&q, false);
        (void)ce_file_write_atomic(t->path, t->text, t->len, 0644);
        ce_quiet_end(&q);
    }
    free(t->old);
    free(t->text);
}

/* ---- each toolchain's sums kept: <versions>/.cudaenv-sizes ---------------
 * What ce_store_usage computed from the toolchains' usage records: list
 * reads this one small file and stats each record instead of reading them
 * all and hashing every inode (40,000 for ten 4,000-file toolchains: ~770
 * page faults of a 3 MiB table, issue 43).  Any difference (a toolchain
 * installed, removed, re-recorded, walked for want of a record) and the
 * sums are computed again and the file rewritten. */
#define SIZES_NAME ".cudaenv-sizes"

/* <versions>/.cudaenv-sizes, beside v's toolchains (all in one versions/) */
static bool sizes_path(const ce_toolchain *v, size_t n, char *out, size_t outsz)
{
    if (!n) return false;
    const char *slash = strrchr(v[0].prefix, '/');
    size_t dl = slash ? (size_t)(slash - v[0].prefix) : 0;
    for (size_t i = 1; i < n; i++)
        if (strncmp(v[i].prefix, v[0].prefix, dl + 1) || strchr(v[i].prefix + dl + 1, '/')) return false;
    return dl && snprintf(out, outsz, "%.*s/%s", (int)dl, v[0].prefix, SIZES_NAME) < (int)outsz;
}

int ce_store_usage(const ce_toolchain *v, size_t n, ce_tc_usage *usage, bool fresh)
{
    /* the records' identities first: a record rewritten while the sums are
     * computed leaves a key that no longer matches, never stale sums under
     * a current key */
    char path[CE_PATH_MAX];
    kept k;
    kept_open(&k, !fresh && sizes_path(v, n, path, sizeof path) ? path : NULL, "cudaenv-sizes 2", v, n);
    bool all = k.keep;
    for (size_t i = 0; all && i < n; i++)
        all = kept_get(&k, v[i].name, &usage[i].unique, &usage[i].shared);
    int rc = CE_OK;
    if (!all) {
        bool from_records = true;
        rc = usage_sums(v, n, usage, fresh, &from_records);
        k.keep = k.keep && rc == CE_OK && from_records;   /* a walked toolchain: nothing to key it by */
        k.changed = true;
        for (size_t i = 0; i < n; i++) kept_put(&k, v[i].name, usage[i].unique, usage[i].shared);
    }
    kept_close(&k);
    return rc;
}

/* usage[] from the records (fresh: walks); *from_records false when any
 * toolchain was walked. */
static int usage_sums(const ce_toolchain *v, size_t n, ce_tc_usage *usage, bool fresh, bool *from_records)
{
    usage_walk w = { 0 };
    if (!grow(&w)) return ce_fail(CE_ERR_NOMEM, "out of memory");
    ce_usage_rec **recs = calloc(n ? n : 1, sizeof *recs);
    size_t *nrec = calloc(n ? n : 1, sizeof *nrec);
    if (!recs || !nrec) w.oom = true;
    size_t total = 0;
    for (size_t i = 0; i < n && !fresh && !w.oom; i++) {
        recs[i] = ce_usage_read(v[i].prefix, &nrec[i]);
        total += nrec[i];
    }
    if (!w.oom && w.tab_cap < total * 2) {   /* sized once for what the records hold: no rehash */
        size_t cap = w.tab_cap;
        while (cap < total * 2) cap *= 2;
        inode_use *big = malloc(cap * sizeof *big);
        if (!big) w.oom = true;
        for (size_t i = 0; big && i < cap; i++) big[i].owner = -1;
        if (big) { free(w.tab); w.tab = big; w.tab_cap = cap; }   /* still empty: nothing to move */
    }
    for (int pass = 0; pass < 2 && !w.oom; pass++) {
        w.pass_two = pass == 1;
        for (size_t i = 0; i < n && !w.oom; i++) {
            w.cur_owner = (int)i;
            w.cur_usage = &usage[i];
            if (w.pass_two) usage[i].unique = usage[i].shared = 0;
            if (recs[i]) {
                for (size_t k = 0; k < nrec[i]; k++)
                    count_file(&w, (dev_t)recs[i][k].dev, (ino_t)recs[i][k].ino, (long long)recs[i][k].size);
            } else {
                *from_records = false;
                ce_walk(v[i].prefix, usage_one, &w);
            }
        }
    }
    for (size_t i = 0; recs && i < n; i++) free(recs[i]);
    free(recs);
    free(nrec);
    free(w.tab);
    if (w.oom) return ce_fail(CE_ERR_NOMEM, "out of memory");
    return CE_OK;
}

/* ---- the cache: downloads and unpacked trees ----------------------------- */

/* Bytes that removing the file would free: its blocks, when no other name
 * (a toolchain's hard link, the mirror's) keeps them. */
static long long freeable(const struct stat *st)
{
    return S_ISREG(st->st_mode) && st->st_nlink <= 1 ? (long long)st->st_blocks * 512 : 0;
}

/* an unpacked tree's bytes and what removing it would free */
static int tree_one(const ce_walk_entry *e, void *arg)
{
    ce_cache_item *it = arg;
    if (e->kind == CE_WALK_ENTRY && S_ISREG(e->st->st_mode)) {
        it->size += (long long)e->st->st_size;
        it->freeable += freeable(e->st);
    }
    return 0;
}

/* What installed toolchains' receipts name: the downloads they came from
 * (sources: runfile, cuDNN, redistrib JSON, NCCL; components[]: each
 * archive) and the pkgs/ trees they were unpacked into ("pkg" of either). */
typedef struct used_src { char sha[65]; char label[256]; bool tree; } used_src;

static bool push_used(used_src **u, size_t *cnt, size_t *cap, const char *sha, const char *url, bool tree)
{
    if (*cnt == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        used_src *nu = realloc(*u, c * sizeof *nu);
        if (!nu) return false;
        *u = nu;
        *cap = c;
    }
    used_src *e = &(*u)[(*cnt)++];
    e->tree = tree;
    snprintf(e->sha, sizeof e->sha, "%s", sha);
    if (tree) snprintf(e->label, sizeof e->label, "%s", sha);
    else if (!url || !ce_url_file_name(url, e->label, sizeof e->label)) e->label[0] = '\0';
    return true;
}

static size_t receipt_sources(ce_ctx *ctx, const ce_toolchain *v, size_t n, bool whole, used_src **out)
{
    size_t cnt = 0, cap = 0;
    used_src *u = NULL;
    ce_event_fn ev = ctx->event;
    ctx->event = NULL;
    for (size_t i = 0; i < n; i++) {
        cJSON *j = ce_receipt_read(v[i].prefix, whole);   /* what it came from */
        static const char *const lists[] = { "sources", "components" };
        for (size_t l = 0; l < 2; l++) {
            const cJSON *s;
            cJSON_ArrayForEach(s, cJSON_GetObjectItemCaseSensitive(j, lists[l])) {
                const cJSON *sha = cJSON_GetObjectItemCaseSensitive(s, "sha256");
                const cJSON *url = cJSON_GetObjectItemCaseSensitive(s, "url");
                const cJSON *pkg = cJSON_GetObjectItemCaseSensitive(s, "pkg");
                if (cJSON_IsString(sha) &&
                    !push_used(&u, &cnt, &cap, sha->valuestring, cJSON_IsString(url) ? url->valuestring : NULL, false))
                    break;
                if (cJSON_IsString(pkg) && !push_used(&u, &cnt, &cap, pkg->valuestring, NULL, true)) break;
            }
        }
        cJSON_Delete(j);
    }
    ctx->event = ev;
    *out = u;
    return cnt;
}

/* ---- the trees' sums kept: pkgs/.cudaenv-sizes ---------------------------
 * A pkgs/ tree is written once (unpacked into staging, renamed in) and only
 * removed after, so its size stays what it was.  What removing it frees
 * (the blocks of its files no other name links) changes when a toolchain
 * links or unlinks them: install, a re-compose and uninstall, each of which
 * gives the kept file's header (kept_open) another text.  One line a tree,
 * keyed by its top directory's device, inode, mtime and ctime: its size and
 * what it frees.  cache list walks a tree only when its line is missing or
 * differs, and every tree when the toolchains differ or one has no record;
 * links made outside cudaenv are counted by `cache list --sizes` (a walk of
 * every tree, nothing kept) and by prune, which always walks. */

/* it's sums from the line with this tree's key, else from a walk */
static void tree_sums(kept *t, ce_cache_item *it, const struct stat *st)
{
    char key[600];
    snprintf(key, sizeof key, "%s %llu %llu %lld %ld %lld %ld", it->name, (unsigned long long)st->st_dev,
             (unsigned long long)st->st_ino, (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
             (long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
    if (!kept_get(t, key, &it->size, &it->freeable)) {
        it->size = it->freeable = 0;
        ce_walk(it->path, tree_one, it);
        t->changed = true;
    }
    if (strpbrk(it->name, " \n")) t->keep = false;   /* a name the format cannot hold: summed each time */
    kept_put(t, key, it->size, it->freeable);
}

/* Name the downloads no receipt names from cache/.cudaenv-names (fetch.h):
 * what they were called when they were fetched, the newest line first. */
static void names_label(const char *cache, ce_cache_item *v, size_t n)
{
    size_t unnamed = 0, len = 0;
    for (size_t i = 0; i < n; i++) unnamed += !v[i].label[0] && strlen(v[i].name) >= 64;
    char path[CE_PATH_MAX], *text = NULL;
    int fd = unnamed && ce_path_join(path, sizeof path, cache, CE_CACHE_NAMES) == CE_OK
                 ? open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
    if (fd < 0) return;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    bool have = ce_file_read_fd(fd, path, CE_CACHE_NAMES_MAX, &text, &len) == CE_OK;
    ce_quiet_end(&q);
    for (size_t i = 0; have && i < n; i++) {
        if (v[i].label[0] || strlen(v[i].name) < 64) continue;
        for (const char *p = text + len, *nl; p > text; p = nl) {   /* the last line first */
            nl = p - 1;
            while (nl > text && nl[-1] != '\n') nl--;
            size_t l = (size_t)(p - nl) - (p[-1] == '\n');
            if (l > 65 && l - 65 < sizeof v[i].label && nl[64] == ' ' && !strncmp(nl, v[i].name, 64)) {
                memcpy(v[i].label, nl + 65, l - 65);
                v[i].label[l - 65] = 0;
                break;
            }
        }
    }
    free(text);
}

static int add_item(ce_cache_item **v, size_t *n, size_t *cap, const ce_cache_item *it)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        ce_cache_item *nv = realloc(*v, c * sizeof *nv);
        if (!nv) return -1;
        *v = nv;
        *cap = c;
    }
    (*v)[(*n)++] = *it;
    return 0;
}

int ce_cache_scan(ce_ctx *ctx, ce_cache_scan_how how, ce_cache_item **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    ce_toolchain *v;
    size_t n;
    int rc = ce_store_list(ctx, &v, &n);
    if (rc) return rc;
    used_src *src = NULL;
    bool fresh = how == CE_SCAN_FRESH;
    size_t nsrc = receipt_sources(ctx, v, n, fresh, &src);   /* fresh for prune: read whole */
    ce_cache_item *items = NULL, it;
    size_t cnt = 0, cap = 0;
    char dir[4200];
    DIR *d;
    struct dirent *e;
    ce_store_path(ctx, "cache", dir, sizeof dir);
    if ((d = opendir(dir))) {
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            memset(&it, 0, sizeof it);
            snprintf(it.name, sizeof it.name, "%s", e->d_name);
            if ((rc = ce_join(it.path, sizeof it.path, dir, e->d_name))) break;
            size_t l = strlen(e->d_name);
            it.kind = l > 5 && !strcmp(e->d_name + l - 5, ".part") ? CE_CACHE_PARTIAL : CE_CACHE_DOWNLOAD;
            struct stat st;
            if (lstat(it.path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
            it.size = (long long)st.st_size;
            it.freeable = freeable(&st);
            for (size_t k = 0; k < nsrc; k++)
                if (!src[k].tree && !strncmp(src[k].sha, e->d_name, 64)) {
                    snprintf(it.label, sizeof it.label, "%s", src[k].label);
                    it.used = it.kind == CE_CACHE_DOWNLOAD;
                }
            if (add_item(&items, &cnt, &cap, &it)) { rc = ce_fail(CE_ERR_NOMEM, "out of memory"); break; }
        }
        closedir(d);
        names_label(dir, items, cnt);
    }
    ce_store_path(ctx, "pkgs", dir, sizeof dir);
    kept trees;
    char kpath[CE_PATH_MAX];
    kept_open(&trees, how == CE_SCAN_KEPT && ce_store_path(ctx, "pkgs/.cudaenv-sizes", kpath, sizeof kpath) == CE_OK ? kpath : NULL,
              "cudaenv-pkgs-sizes 2", v, n);
    if (rc == CE_OK && how != CE_SCAN_DOWNLOADS && (d = opendir(dir))) {
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            memset(&it, 0, sizeof it);
            if ((rc = ce_join(it.path, sizeof it.path, dir, e->d_name))) break;
            struct stat st;
            if (lstat(it.path, &st) != 0 || !S_ISDIR(st.st_mode)) continue;   /* <tree>.sha256.json goes with its tree */
            it.kind = CE_CACHE_TREE;
            snprintf(it.name, sizeof it.name, "%s", e->d_name);
            tree_sums(&trees, &it, &st);
            for (size_t k = 0; k < nsrc && !it.used; k++)   /* a tree a receipt names, or one named for its archive */
                it.used = src[k].tree ? !strcmp(src[k].sha, e->d_name) : ce_pkg_of_sha(e->d_name, src[k].sha);
            for (size_t i = 0; i < n && !it.used; i++) {
                char a[128], b[128];
                ce_store_pkg_names(v[i].cuda, v[i].cudnn, a, sizeof a, b, sizeof b);
                it.used = !strcmp(e->d_name, a) || !strcmp(e->d_name, b);
            }
            if (add_item(&items, &cnt, &cap, &it)) { rc = ce_fail(CE_ERR_NOMEM, "out of memory"); break; }
        }
        closedir(d);
    } else {
        trees.keep = false;   /* no pkgs/: nothing to keep */
    }
    trees.keep = trees.keep && rc == CE_OK;
    kept_close(&trees);
    free(src);
    free(v);
    if (rc) { free(items); return rc; }
    *out = items;
    *n_out = cnt;
    return CE_OK;
}

int ce_cache_remove(const ce_cache_item *it)
{
    if (it->kind != CE_CACHE_TREE) {
        if (unlink(it->path) != 0) return ce_fail(CE_ERR_IO, "cannot remove %s", it->path);
        return CE_OK;
    }
    char idx[4600];
    snprintf(idx, sizeof idx, "%s.sha256.json", it->path);
    unlink(idx);
    return ce_store_remove(it->path);
}
