#include "index.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/file.h"
#include "core/path.h"
#include "core/version.h"

#define INDEX_MAGIC "cudaenv-index 1"
#define INDEX_MAX (1u << 20)

static int index_path(ce_ctx *ctx, char *out, size_t n)
{
    if (ce_path_join(out, n, ctx->root, "versions/" CE_INDEX_NAME) != CE_OK)
        return ce_fail(ctx, CE_ERR_OTHER, "path too long: %s/versions/" CE_INDEX_NAME, ctx->root);
    return CE_OK;
}

/* "manifest <dev>:<inode> <size> <mtime>" of the manifest ctx resolves with
 * (the file, whichever path names it: the light and the full binary reach
 * the built-in one through different paths), and in *path its path; false
 * for a URL manifest or one that cannot be stat'ed (no index then). */
static bool manifest_id(ce_ctx *ctx, char *out, size_t n, const char **path_out)
{
    char loc[4200];
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = ce_manifest_location(ctx, loc, sizeof loc);
    ce_quiet_end(&q);   /* a lookup miss leaves no error behind */
    if (rc || strncasecmp(loc, "http://", 7) == 0 || strncasecmp(loc, "https://", 8) == 0) return false;
    const char *path = strncasecmp(loc, "file://", 7) == 0 ? loc + 7 : loc;
    struct stat st;
    if (stat(path, &st) != 0 || strchr(path, '\n')) return false;
    int w = snprintf(out, n, "manifest %llu:%llu %lld %lld.%09ld", (unsigned long long)st.st_dev,
                     (unsigned long long)st.st_ino, (long long)st.st_size,
                     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    if (path_out) {
        static char keep[4200];
        snprintf(keep, sizeof keep, "%s", path);
        *path_out = keep;
    }
    return w > 0 && (size_t)w < n;
}

/* The index's manifest line names the same file as id (the path after it is for people). */
static bool same_manifest(const char *line, const char *id)
{
    size_t n = strlen(id);
    return strncmp(line, id, n) == 0 && (line[n] == ' ' || line[n] == '\0');
}

/* The index text split into lines (in place); NULL when absent or not ours. */
static char *read_index(ce_ctx *ctx, char **line2, char **rest)
{
    char path[4200], *data = NULL;
    size_t len = 0;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = index_path(ctx, path, sizeof path);
    if (rc == CE_OK) rc = ce_file_read(ctx, path, INDEX_MAX, &data, &len);
    ce_quiet_end(&q);
    if (rc) return NULL;
    char *nl1 = strchr(data, '\n'), *nl2 = nl1 ? strchr(nl1 + 1, '\n') : NULL;
    if (!nl2 || (size_t)(nl1 - data) != strlen(INDEX_MAGIC) || strncmp(data, INDEX_MAGIC, strlen(INDEX_MAGIC))) {
        free(data);
        return NULL;
    }
    *nl1 = *nl2 = '\0';
    *line2 = nl1 + 1;
    *rest = nl2 + 1;
    return data;
}

/* One "tf X.Y cuda cudnn|-" record; false for anything else. */
static bool parse_tf(const char *line, char *tf, char *cuda, char *cudnn)
{
    char extra;
    if (sscanf(line, "tf %31s %31s %31s %c", tf, cuda, cudnn, &extra) != 3) return false;
    if (!strcmp(cudnn, "-")) cudnn[0] = '\0';
    return ce_version_valid(tf) && ce_version_valid(cuda) && (!cudnn[0] || ce_version_valid(cudnn));
}

int ce_index_tf(ce_ctx *ctx, const char *tf, char *cuda, size_t cudasz, char *cudnn, size_t cudnnsz)
{
    char id[4300], *line2, *rest;
    if (!manifest_id(ctx, id, sizeof id, NULL)) return 0;
    char *data = read_index(ctx, &line2, &rest);
    if (!data) return 0;
    int found = 0;
    if (same_manifest(line2, id)) {
        for (char *save = NULL, *l = strtok_r(rest, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            char t[32], c[32], d[32];
            if (!parse_tf(l, t, c, d)) { found = 0; break; }   /* corrupt: trust none of it */
            if (!found && !strcmp(t, tf)) {
                snprintf(cuda, cudasz, "%s", c);
                snprintf(cudnn, cudnnsz, "%s", d);
                found = 1;
            }
        }
    }
    free(data);
    return found;
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

/* Write the index; with no record it is removed (versions/ left empty). */
static void write_index(ce_ctx *ctx, const char *text, size_t len)
{
    char path[4200];
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = index_path(ctx, path, sizeof path);
    if (rc == CE_OK && !strstr(text, "\ntf ")) {
        if (unlink(path) != 0 && errno != ENOENT)
            rc = ce_fail(ctx, CE_ERR_IO, "cannot remove %s: %s", path, strerror(errno));
    } else if (rc == CE_OK) {
        rc = ce_file_write_atomic(ctx, path, text, len, 0644);
    }
    if (rc) ce_emit(ctx, CE_EV_WARN, NULL, "cannot update the resolution index (specs resolve "
                    "through the manifest instead): %s", ce_errmsg());
    ce_quiet_end(&q);
}

void ce_index_rebuild(ce_ctx *ctx, const ce_manifest *m, ce_index_keep keep, void *arg)
{
    char id[4300];
    const char *mpath;
    if (!m || !manifest_id(ctx, id, sizeof id, &mpath)) return;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (buf) buf[0] = '\0';
    append(&buf, &len, &cap, "%s\n%s %s\n", INDEX_MAGIC, id, mpath);
    for (size_t i = 0; i < m->n_tf; i++) {
        const ce_tf *t = &m->tf[i];
        if (t->not_installable || !keep(arg, t->cuda, t->cudnn ? t->cudnn : "")) continue;
        append(&buf, &len, &cap, "tf %s %s %s\n", t->version, t->cuda, t->cudnn ? t->cudnn : "-");
    }
    if (buf) write_index(ctx, buf, len);
    free(buf);
}

void ce_index_prune(ce_ctx *ctx, ce_index_keep keep, void *arg)
{
    char *line2, *rest;
    char *data = read_index(ctx, &line2, &rest);
    if (!data) return;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    if (buf) buf[0] = '\0';
    append(&buf, &len, &cap, "%s\n%s%s\n", INDEX_MAGIC, "", line2);
    for (char *save = NULL, *l = strtok_r(rest, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char t[32], c[32], d[32];
        if (!parse_tf(l, t, c, d)) continue;
        if (keep(arg, c, d)) append(&buf, &len, &cap, "tf %s %s %s\n", t, c, d[0] ? d : "-");
    }
    free(data);
    if (buf) write_index(ctx, buf, len);
    free(buf);
}
