#include "index_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "core/file.h"
#include "core/path.h"
#include "core/version.h"
#include "slice.h"
#include "source.h"


void ce_sha256_hex(const void *data, size_t len, char out[65])
{
    unsigned char md[32];
    unsigned int n = 0;
    static const char hex[] = "0123456789abcdef";
    if (!EVP_Digest(data, len, md, &n, EVP_sha256(), NULL) || n != 32) {
        out[0] = '\0';   /* no digest: matches no index */
        return;
    }
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[64] = '\0';
}

/* One "cuda X.Y.Z min_driver|- platforms|-" record (platforms: comma-separated, "+" for components). */
static bool parse_cuda(const char *line, char *cuda, char *drv, char *plat)
{
    char extra;
    if (sscanf(line, "cuda %31s %31s %127s %c", cuda, drv, plat, &extra) != 3) return false;
    return ce_version_valid(cuda) && (!strcmp(drv, "-") || ce_version_valid(drv));
}

/* One "fw NAME VERSION BUILD cuda cudnn|- default|-" record (a PyTorch or JAX build). */
static bool parse_fw(const char *line, char *name, char *ver, char *tag, char *cuda, char *cudnn, bool *deflt)
{
    char extra, d[16];
    if (sscanf(line, "fw %15s %31s %15s %31s %31s %15s %c", name, ver, tag, cuda, cudnn, d, &extra) != 6) return false;
    if (!strcmp(cudnn, "-")) cudnn[0] = '\0';
    *deflt = !strcmp(d, "default");
    return (*deflt || !strcmp(d, "-")) && ce_version_valid(ver) && ce_version_valid(cuda) &&
           (!cudnn[0] || ce_version_valid(cudnn)) && !strncmp(tag, "cu", 2);
}

static void dash_copy(char *dst, size_t n, const char *v)
{
    snprintf(dst, n, "%s", strcmp(v, "-") ? v : "");
}

/* One "row X.Y.Z min_driver|- min_driver_compat|- max_gcc sm_min|- sm_max|-"
 * (a CUDA release's facts, f's CUDA fields) or "tfpy X.Y python|-" record
 * (f->python): *key the release. */
static bool parse_facts(const char *line, char *key, ce_index_facts *f)
{
    char extra, a[32], b[32], c[16], d[16];
    int gcc;
    memset(f, 0, sizeof *f);
    if (!strncmp(line, "tfpy ", 5)) {
        if (sscanf(line, "tfpy %31s %31s %c", key, a, &extra) != 2) return false;
        dash_copy(f->python, sizeof f->python, a);
        for (char *p = f->python; (p = strchr(p, '%')); p++) {   /* "%20": the ranges' spaces ("2.7, 3.5-3.7") */
            if (p[1] != '2' || (p[2] != '0' && p[2] != '5')) return false;
            *p = p[2] == '0' ? ' ' : '%';
            memmove(p + 1, p + 3, strlen(p + 3) + 1);
        }
        return ce_version_valid(key);
    }
    if (sscanf(line, "row %31s %31s %31s %d %15s %15s %c", key, a, b, &gcc, c, d, &extra) != 6 || gcc < 0)
        return false;
    dash_copy(f->min_driver, sizeof f->min_driver, a);
    dash_copy(f->min_driver_compat, sizeof f->min_driver_compat, b);
    dash_copy(f->sm_min, sizeof f->sm_min, c);
    dash_copy(f->sm_max, sizeof f->sm_max, d);
    f->max_gcc = gcc;
    return ce_version_valid(key);
}

/* One "at - NAME AT END" or "at SECTION KEY AT END BUILDS" record (manifest/slice.h). */
static bool parse_at(const char *line)
{
    char sec[16], key[72], b[64], extra;
    unsigned long long a = 0, z = 0;
    int n = sscanf(line, "at %15s %71s %llu %llu %63s %c", sec, key, &a, &z, b, &extra);
    return z > a && n == (strcmp(sec, "-") ? 5 : 4);
}

/* One "tf X.Y cuda cudnn|-" record (or a valid cuda, fw, facts or at record: *tf "" then); false for anything else. */
/* snprintf(dst, n, "%s", src) without stdio. */
static void copy_str(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (!n) return;
    if (l >= n) l = n - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

static bool parse_tf(const char *line, char *tf, char *cuda, char *cudnn)
{
    char plat[128];
    if (!strncmp(line, "at ", 3)) {
        tf[0] = cuda[0] = cudnn[0] = '\0';
        return parse_at(line);
    }
    if (!strncmp(line, "cuda ", 5)) {
        tf[0] = '\0';
        return parse_cuda(line, cuda, cudnn, plat);
    }
    if (!strncmp(line, "fw ", 3)) {
        char n[16], v[32], t[16];
        bool d;
        tf[0] = '\0';
        return parse_fw(line, n, v, t, cuda, cudnn, &d);
    }
    if (!strcmp(line, "nofacts")) {
        tf[0] = cuda[0] = '\0';
        return true;
    }
    if (!strncmp(line, "row ", 4) || !strncmp(line, "tfpy ", 5)) {
        ce_index_facts f;
        tf[0] = '\0';
        return parse_facts(line, cuda, &f);
    }
    /* "tf <X.Y> <cuda> <cudnn|->": split by hand, not sscanf: every use/env/cd hook reads one */
    if (strncmp(line, "tf ", 3)) return false;
    char *field[3] = { tf, cuda, cudnn };
    const char *p = line + 3;
    for (int i = 0; i < 3; i++, p++) {
        size_t n = 0;
        while (p[n] && p[n] != ' ') n++;
        if (n == 0 || n > 31 || (i < 2 ? p[n] != ' ' : p[n] != '\0')) return false;
        memcpy(field[i], p, n);
        field[i][n] = '\0';
        p += n;
    }
    if (!strcmp(cudnn, "-")) cudnn[0] = '\0';
    return ce_version_valid(tf) && ce_version_valid(cuda) && (!cudnn[0] || ce_version_valid(cudnn));
}

int ce_index_tf(ce_ctx *ctx, const char *ipath, const char *tf, char *cuda, size_t cudasz, char *cudnn, size_t cudnnsz)
{
    char *rest, *data = ce_index_current(ctx, ipath, &rest);
    if (!data) return -1;
    int found = 0;
    /* "latest" and a major alone ("2"): the last matching row (rows are in
     * the manifest's order, oldest first) */
    bool alias = !strcmp(tf, "latest") || !strchr(tf, '.');
    size_t tl = strlen(tf);
    if (!alias) {   /* one exact row: found by its text, the records around it never split */
        char needle[48] = "\ntf ";
        if (tl > sizeof needle - 6) {
            free(data);
            return 0;   /* longer than any version */
        }
        memcpy(needle + 4, tf, tl);
        memcpy(needle + 4 + tl, " ", 2);
        char *l = !strncmp(rest, needle + 1, strlen(needle) - 1) ? rest : strstr(rest, needle);
        if (l && l != rest) l++;
        if (l) {
            char *nl = strchr(l, '\n');
            if (nl) *nl = '\0';
            char t[32], c[32], d[32];
            found = parse_tf(l, t, c, d) ? 1 : -1;   /* a corrupt row: trust none of it */
            if (found == 1) {
                copy_str(cuda, cudasz, c);
                copy_str(cudnn, cudnnsz, d);
            }
        }
        free(data);
        return found;
    }
    for (char *save = NULL, *l = strtok_r(rest, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char t[32], c[32], d[32];
        /* only the rows this lookup can use are read (issue 43: the cost of use/env stays that
         * of the one row at any manifest size): a tf record whose version is tf, or starts
         * with it for a major alone; every other record is skipped unread */
        if (!strncmp(l, "at ", 3)) break;   /* the at records come last (index_text) */
        if (strncmp(l, "tf ", 3)) continue;
        if (tf[0] != 'l' && (strncmp(l + 3, tf, tl) || (l[3 + tl] != ' ' && !(alias && l[3 + tl] == '.')))) continue;
        if (!parse_tf(l, t, c, d)) { found = -1; break; }   /* a corrupt row it would use: trust none of it */
        if (alias ? (tf[0] == 'l' || ce_version_matches(tf, t)) : (!found && !strcmp(t, tf))) {
            snprintf(cuda, cudasz, "%s", c);
            snprintf(cudnn, cudnnsz, "%s", d);
            found = 1;
        }
    }
    free(data);
    return found;
}

int ce_index_fw(ce_ctx *ctx, const char *ipath, const char *name, const char *version, const char *tag, char *cuda, size_t cudasz,
                char *cudnn, size_t cudnnsz)
{
    char *rest, *data = ce_index_current(ctx, ipath, &rest);
    if (!data) return -1;
    int found = 0;
    /* torch "2" / jax "0.4" / latest: the last matching release (oldest first), as ce_manifest_fw_pick */
    bool alias = !strcmp(version, "latest") || (!strcmp(name, "torch") && !strchr(version, '.'));
    size_t nl = strlen(name);
    char exact[32] = "";
    for (char *save = NULL, *l = strtok_r(rest, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char n[16], v[32], t[16], c[32], d[32];
        bool dflt;
        /* only this framework's builds are read (as ce_index_tf) */
        if (!strncmp(l, "at ", 3)) break;
        if (strncmp(l, "fw ", 3) || strncmp(l + 3, name, nl) || l[3 + nl] != ' ') continue;
        if (!parse_fw(l, n, v, t, c, d, &dflt)) { found = -1; break; }
        if (strcmp(n, name) || (*tag ? strcmp(t, tag) : !dflt)) continue;
        bool match = alias ? (version[0] == 'l' || ce_version_matches(version, v))
                           : !strcmp(v, version) || (!exact[0] && strcmp(name, "torch") && ce_version_matches(version, v));
        if (!match) continue;
        if (!strcmp(v, version)) snprintf(exact, sizeof exact, "%s", v);
        else if (exact[0]) continue;   /* an exact release wins over the prefix */
        snprintf(cuda, cudasz, "%s", c);
        snprintf(cudnn, cudnnsz, "%s", d);
        found = 1;
    }
    free(data);
    return found;
}

int ce_index_cuda_latest(ce_ctx *ctx, const char *ipath, const char *platform, const char *driver, char *cuda, size_t cudasz)
{
    char *rest, *data = ce_index_current(ctx, ipath, &rest);
    if (!data) return -1;
    int found = 0;
    size_t pl = strlen(platform);
    for (char *save = NULL, *l = strtok_r(rest, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char c[32], d[32], p[128];
        if (!strncmp(l, "at ", 3)) break;
        if (strncmp(l, "cuda ", 5)) continue;   /* only the CUDA records are read (as ce_index_tf) */
        if (!parse_cuda(l, c, d, p)) { found = -1; break; }
        /* platforms: "linux-x86_64,linux-sbsa", "+" = components, "-" = none */
        bool has = !strcmp(p, "+");
        for (const char *q = p; !has && (q = strstr(q, platform)); q += pl)
            has = (q == p || q[-1] == ',') && (q[pl] == ',' || q[pl] == '\0' || q[pl] == '+');
        if (!has && !strchr(p, '+')) continue;
        if (driver && strcmp(d, "-") && ce_version_cmp(driver, d) < 0) continue;
        snprintf(cuda, cudasz, "%s", c);   /* rows are oldest first: the last one wins */
        found = 1;
    }
    free(data);
    return found;
}

/* The record "KIND KEY ..." of rest (KEY exact, or prefix: the first whose
 * key starts with it) copied to line; false when none (or too long). */
static bool find_record(const char *rest, const char *kind, const char *key, bool prefix, char *line, size_t n)
{
    char needle[80];
    snprintf(needle, sizeof needle, "\n%s %s%s", kind, key, prefix ? "" : " ");
    const char *l = !strncmp(rest, needle + 1, strlen(needle) - 1) ? rest : strstr(rest, needle);
    if (!l) return false;
    if (l != rest) l++;
    size_t len = strcspn(l, "\n");
    if (len >= n) return false;
    memcpy(line, l, len);
    line[len] = '\0';
    return true;
}

int ce_index_facts_of(ce_ctx *ctx, const char *ipath, const char *cuda, const char *tf, ce_index_facts *out)
{
    char *rest, *data = ce_index_current(ctx, ipath, &rest);
    if (!data) return -1;
    memset(out, 0, sizeof *out);
    int found = 1;
    if (strstr(rest, "nofacts\n") == rest || strstr(rest, "\nnofacts\n")) found = -1;   /* a row it could not carry */
    /* each record found by its text (as ce_index_tf), the ones around it never parsed:
     * the tf row's, then the exact release, else the first X.Y.* row (the oldest:
     * the least strict driver minimum) */
    char key[32], py[sizeof out->python] = "", line[256];
    ce_index_facts f;
    if (found > 0 && tf[0] && find_record(rest, "tfpy", tf, false, line, sizeof line)) {
        if (!parse_facts(line, key, &f)) found = -1;   /* corrupt: trust none of it */
        else snprintf(py, sizeof py, "%s", f.python);
    }
    if (found > 0 && cuda[0]) {
        char dotted[40];
        snprintf(dotted, sizeof dotted, "%s.", cuda);
        if (find_record(rest, "row", cuda, false, line, sizeof line) ||
            find_record(rest, "row", dotted, true, line, sizeof line)) {
            if (!parse_facts(line, key, &f)) found = -1;
            else *out = f;
        }
    }
    if (found > 0) snprintf(out->python, sizeof out->python, "%s", py);
    else memset(out, 0, sizeof *out);
    free(data);
    return found;
}

int ce_index_at(ce_ctx *ctx, const char *ipath, int fd, char **data, const char **recs)
{
    char key[256], *sha, *ikey, *iwhere, *rest;
    struct stat st;
    *data = NULL;
    if (fstat(fd, &st) != 0 || !ce_index_stat_key(&st, key, sizeof key)) return -1;
    char *d = ce_index_read(ctx, ipath, &sha, &ikey, &iwhere, &rest);
    if (!d || !ce_index_same_key(ikey, key)) {
        free(d);
        return -1;
    }
    const char *at = strncmp(rest, "at - ", 5) ? strstr(rest, "\nat - ") : NULL;
    if (!at) {   /* no records (a key they cannot carry; the first record never starts the text) */
        free(d);
        return 0;
    }
    *data = d;
    *recs = at;
    return 1;
}

static void append(char **buf, size_t *len, size_t *cap, const char *fmt, const char *a, const char *b,
                   const char *c)
{
    char line[4400];
    int w = snprintf(line, sizeof line, fmt, a, b, c);
    if (w < 0 || (size_t)w >= sizeof line || !*buf) return;
    if (*len + (size_t)w + 1 > *cap) {
        size_t ncap = (*cap + (size_t)w + 1) * 2;
        char *nb = realloc(*buf, ncap);
        if (!nb) { free(*buf); *buf = NULL; return; }
        *buf = nb;
        *cap = ncap;
    }
    memcpy(*buf + *len, line, (size_t)w + 1);
    *len += (size_t)w;
}

static int write_index(ce_ctx *ctx, const char *ipath, const char *text, size_t len)
{
    char path[4200];
    int rc = ce_index_path(ctx, ipath, path, sizeof path);
    if (rc == CE_OK && ipath) {   /* a user's copy: its directory is theirs alone */
        char dir[4200];
        snprintf(dir, sizeof dir, "%s", path);
        char *sl = strrchr(dir, '/');
        if (sl && sl != dir) *sl = '\0';
        if (access(dir, F_OK) != 0) rc = ce_mkdir_p(dir, 0700);
    }
    if (rc == CE_OK) rc = ce_file_write_atomic_ex(path, text, len, ipath ? 0600 : 0644, false);
    if (rc) ce_emit(ctx, CE_EV_WARN, NULL, "cannot update the resolution index (specs resolve "
                    "through the manifest instead): %s", ce_errmsg());
    return rc;
}

/* The index text for manifest m (text[0..tlen)) of content sha and stat key key. */
static char *index_text(const ce_manifest *m, char *text, size_t tlen, const char *sha, const char *key, const char *path,
                        const char *where, size_t *len)
{
    size_t cap = 4096;
    char *buf = malloc(cap);
    *len = 0;
    if (buf) buf[0] = '\0';
    char head[512];
    snprintf(head, sizeof head, "%s %s", sha, key);
    append(&buf, len, &cap, "%s\nmanifest %s %s\n", INDEX_MAGIC, head, path);
    append(&buf, len, &cap, "where %s\n", where, "", "");
    for (size_t i = 0; m && i < m->n_tf; i++) {
        const ce_tf *t = &m->tf[i];
        if (t->not_installable) continue;
        append(&buf, len, &cap, "tf %s %s %s\n", t->version, t->cuda, t->cudnn ? t->cudnn : "-");
    }
    static const char *const fws[] = { "torch", "jax" };
    for (size_t k = 0; m && k < 2; k++) {
        size_t n;
        const ce_fw *f = ce_manifest_fws(m, fws[k], &n);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < f[i].n_builds; j++) {
                const ce_fw_build *b = &f[i].builds[j];
                char rec[192];
                if (b->not_installable) continue;
                snprintf(rec, sizeof rec, "%s %s %s %s %s %s", fws[k], f[i].version, b->tag, b->cuda,
                         b->cudnn ? b->cudnn : "-", strcmp(b->tag, f[i].deflt) ? "-" : "default");
                append(&buf, len, &cap, "fw %s%s%s\n", rec, "", "");
            }
    }
    for (size_t i = 0; m && i < m->n_cuda; i++) {
        const ce_cuda *c = &m->cuda[i];
        char plat[128] = "";
        size_t pl = 0;
        for (size_t r = 0; r < c->n_runfiles && pl < sizeof plat; r++)
            pl += (size_t)snprintf(plat + pl, sizeof plat - pl, "%s%s", pl ? "," : "", c->runfiles[r].platform);
        if (c->redist && pl < sizeof plat) pl += (size_t)snprintf(plat + pl, sizeof plat - pl, "%s+", pl ? "," : "");
        if (pl >= sizeof plat || strchr(plat, ' ')) continue;   /* not indexable: latest reads the manifest */
        append(&buf, len, &cap, "cuda %s %s %s\n", c->version, c->min_driver ? c->min_driver : "-", pl ? plat : "-");
    }
    /* doctor's facts: every CUDA release and every TensorFlow row, installable or not;
     * a value a record cannot carry (a space, too long): "nofacts", doctor reads the manifest */
    bool bad = false;
    for (size_t i = 0; m && i < m->n_cuda; i++) {
        const ce_cuda *c = &m->cuda[i];
        char rec[192];
        int w = snprintf(rec, sizeof rec, "row %s %s %s %d %s %s", c->version, c->min_driver ? c->min_driver : "-",
                         c->min_driver_compat ? c->min_driver_compat : "-", c->max_gcc > 0 ? c->max_gcc : 0,
                         c->sm_min ? c->sm_min : "-", c->sm_max ? c->sm_max : "-");
        ce_index_facts f;
        char k[32];
        if (w > 0 && (size_t)w < sizeof rec && parse_facts(rec, k, &f)) append(&buf, len, &cap, "%s\n", rec, "", "");
        else bad = true;
    }
    for (size_t i = 0; m && i < m->n_tf; i++) {
        const ce_tf *t = &m->tf[i];
        char rec[96], py[40] = "-";
        size_t n = 0;
        for (const char *p = t->python; p && *p && n + 4 < sizeof py; p++)
            n += (size_t)(*p == ' ' ? snprintf(py + n, sizeof py - n, "%%20")
                          : *p == '%' ? snprintf(py + n, sizeof py - n, "%%25") : snprintf(py + n, sizeof py - n, "%c", *p));
        int w = t->python && strlen(t->python) * 3 + 1 > sizeof py ? -1
              : snprintf(rec, sizeof rec, "tfpy %s %s", t->version, py);
        ce_index_facts f;
        char k[32];
        if (w > 0 && (size_t)w < sizeof rec && parse_facts(rec, k, &f)) append(&buf, len, &cap, "%s\n", rec, "", "");
        else bad = true;
    }
    if (bad) append(&buf, len, &cap, "nofacts\n", "", "", "");
    /* last: where each piece of the manifest is, for its slices (info); none when it has a key they cannot carry */
    char *at = m ? ce_manifest_slice_records(text, tlen) : NULL;
    size_t al = at ? strlen(at) : 0;
    if (buf && at && *len + al + 1 > cap) {
        char *nb = realloc(buf, *len + al + 1);
        if (!nb) free(buf);
        buf = nb;
    }
    if (buf && at) {
        memcpy(buf + *len, at, al + 1);
        *len += al;
    }
    free(at);
    return buf;
}

/* Every record of rest parses (rest is left as it was). */
static bool records_ok(const char *rest)
{
    for (const char *l = rest; *l;) {
        const char *nl = strchr(l, '\n');
        size_t n = nl ? (size_t)(nl - l) : strlen(l);
        char line[256], t[32], c[32], d[32];
        if (n >= sizeof line) return false;
        memcpy(line, l, n);
        line[n] = '\0';
        if (!parse_tf(line, t, c, d)) return false;
        l += n + (nl ? 1 : 0);
    }
    return true;
}

int ce_index_refresh(ce_ctx *ctx, const char *ipath)
{
    char key[256], *sha = NULL, *ikey, *iwhere, *rest, where[17];
    ce_msource src;
    if (!ce_index_manifest_key(ctx, &src, key, sizeof key))
        return ce_fail(CE_ERR_NOTFOUND, "no manifest file to index (%s)", src.path);
    ce_index_where_key(ctx, where);
    char *old = ce_index_read(ctx, ipath, &sha, &ikey, &iwhere, &rest);
    if (old && !records_ok(rest)) {   /* corrupt: rebuilt from the manifest */
        free(old);
        old = NULL;
    }
    if (old && ce_index_same_key(ikey, key) && !strcmp(iwhere, where) && ikey[strlen(key)] == ' ' &&
        !strcmp(ikey + strlen(key) + 1, src.path)) {
        free(old);
        return CE_OK;
    }
    /* the bytes, then the key again: a writer between the two makes the key
     * stale at once, never an index of other bytes under this key */
    char *data = NULL;
    size_t len = 0;
    int rc = ce_file_read(src.path, CE_MANIFEST_MAX, &data, &len);
    char key2[256];
    if (rc == CE_OK && (!ce_index_manifest_key(ctx, &src, key2, sizeof key2) || strcmp(key, key2)))
        rc = ce_fail(CE_ERR_IO, "the manifest %s changed while it was read", src.path);
    if (rc) { free(old); free(data); return rc; }
    char hex[65];
    ce_sha256_hex(data, len, hex);
    char *text = NULL;
    size_t tlen = 0;
    if (old && hex[0] && strcmp(sha, hex) == 0) {
        /* the same content under a new stat key: keep the records */
        size_t cap = strlen(rest) + 1024;
        text = malloc(cap);
        if (text) tlen = (size_t)snprintf(text, cap, "%s\nmanifest %s %s %s\nwhere %s\n%s", INDEX_MAGIC, hex, key,
                                          src.path, where, rest);
    } else {
        ce_manifest *m = NULL;
        /* local: the URL rules do not matter to the index (a copy fetched
         * with --insecure may name http:// files) */
        rc = ce_manifest_parse(ctx, data, len, src.origin, true, &m);
        if (rc == CE_OK) text = index_text(m, data, len, hex, key, src.path, where, &tlen);
        ce_manifest_free(m);
    }
    free(old);
    free(data);
    if (rc) return rc;
    if (!text) return ce_fail(CE_ERR_NOMEM, "out of memory");
    rc = write_index(ctx, ipath, text, tlen);
    free(text);
    return rc;
}
