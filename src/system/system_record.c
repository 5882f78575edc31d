/* system.json and its intent system.json.pending: read (ce_system_record)
 * and written (the text of one record), and the toolchain it puts at
 * /usr/local/cuda (ce_system_toolchain); see system.h. */
#include "system_int.h"

#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "core/file.h"
#include "core/json.h"

/* The top-level members of a record (the strings into their fields). */
typedef struct rec_rd {
    ce_sys_record *rec;
    char mode[32], state[16], action[16];
    size_t orig[2], hist[2];   /* where "original" and "history" are */
    bool bad;
} rec_rd;

static int rec_member(void *ud, const char *t, size_t k, size_t kl, size_t v, size_t e)
{
    rec_rd *r = ud;
    ce_sys_record *rec = r->rec;
    struct { const char *key; char *out; size_t n; } str[] = {
        { "mode", r->mode, sizeof r->mode }, { "name", rec->name, sizeof rec->name },
        { "target", rec->target, sizeof rec->target }, { "lib", rec->lib, sizeof rec->lib },
        { "prev_target", rec->prev_target, sizeof rec->prev_target },
        { "prev_lib", rec->prev_lib, sizeof rec->prev_lib }, { "prev_name", rec->prev_name, sizeof rec->prev_name },
        { "state", r->state, sizeof r->state }, { "action", r->action, sizeof r->action },
    };
    char key[16] = "";   /* a longer key is none of ours */
    if (kl < sizeof key + 2 && ce_json_unquote(t, k, k + kl, key, sizeof key)) return r->bad = true, -1;
    for (size_t i = 0; i < sizeof str / sizeof str[0]; i++)
        if (!strcmp(key, str[i].key)) {
            /* what is not a string reads as "" (cJSON: no string there) */
            if (t[v] == '"' && ce_json_unquote(t, v, e, str[i].out, str[i].n)) return r->bad = true, -1;
            return 0;
        }
    if (!strcmp(key, "original") || !strcmp(key, "history")) {
        size_t *at = key[0] == 'o' ? r->orig : r->hist;
        at[0] = v;
        at[1] = e;
        return 0;
    }
    long long n;
    bool num = t[v] != '"' && t[v] != '{' && t[v] != '[' && ce_json_number(t, v, e, &n) == 0;
    if (!strcmp(key, "when")) rec->when = num ? n : 0;
    else if (!strcmp(key, "gen")) rec->gen = num && n >= 0 ? n : -1;
    else if (t[v] == '"' && ce_json_unquote(t, v, e, NULL, 0)) return r->bad = true, -1;
    return 0;
}

/* One record's text (from path) into rec.  CE_ERR_INTEGRITY when it is
 * not a JSON object (cut short: an intent that never became durable). */
static int parse_record(const char *path, const char *data, ce_sys_record *rec)
{
    size_t len = strlen(data);
    rec_rd r = { .rec = rec };
    rec->when = 0;
    rec->gen = -1;
    if (ce_json_each_member(data, len, rec_member, &r) != 1 || r.bad || ce_sys_hist_read(data, r.orig, r.hist, rec))
        return ce_fail(CE_ERR_INTEGRITY, "%s is not valid JSON; remove it (and %s.pending) to forget the system "
                       "selection", path, CE_SYS_STATE);
    rec->mode = strcmp(r.mode, "alternatives") == 0 ? CE_SYS_MODE_ALTERNATIVES : CE_SYS_MODE_LINK;
    rec->pending = strcmp(r.state, "pending") == 0;   /* an older cudaenv's intent, in system.json itself */
    rec->restore = strcmp(r.action, "restore") == 0;
    rec->present = true;
    return CE_OK;
}

/* One record file into rec.  CE_ERR_NOTFOUND when absent. */
static int read_record(const char *path, ce_sys_record *rec)
{
    char *data;
    int rc = ce_file_read(path, CE_SYS_RECORD_MAX, &data, NULL);
    if (rc) return rc;
    rc = parse_record(path, data, rec);
    free(data);
    return rc;
}

/* The "gen" of a record's text, -1 when it has none, without parsing it all
 * (record_text writes it near the top; the sequence "gen": cannot occur
 * inside a string value, whose quotes are escaped). */
static long long text_gen(const char *t)
{
    const char *p = strstr(t, "\"gen\":");
    if (!p) return -1;
    for (p += 6; *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'; p++) {}
    if (*p < '0' || *p > '9') return -1;
    return strtoll(p, NULL, 10);
}

/* Is a pending record of generation pg an intent next to system.json of
 * generation sg (-1: none, or no system.json)?  A switch writes its intent
 * with system.json's gen + 1 and at the end exchanges the two, so the
 * pending file then holds the previous record, of a lower gen.  Without a
 * gen on either side it is an older cudaenv's intent (which it removed
 * when done). */
bool ce_sys_is_intent(long long pg, long long sg)
{
    if (pg < 0) return sg < 0;
    return pg > sg;
}

/* rec empty: every field before the history set, each string to "" by its
 * first byte.  A memset of those ~33 KiB (8 paths of 4 KiB) faulted in
 * every page of them on each switch, those no field of a record uses too;
 * the history (~130 KiB) is read only up to nhistory.  A field added to
 * ce_sys_record or ce_sys_original is cleared here. */
static void rec_clear(ce_sys_record *rec)
{
    rec->present = rec->pending = rec->restore = false;
    rec->gen = 0;
    rec->mode = CE_SYS_MODE_LINK;
    rec->when = 0;
    rec->name[0] = rec->target[0] = rec->lib[0] = rec->prev_target[0] = rec->prev_lib[0] = rec->prev_name[0] = '\0';
    ce_sys_original *g = &rec->original;
    g->present = g->alt_manual = g->conf_present = false;
    g->kind = CE_SYS_ORIG_NONE;
    g->target[0] = g->alt_list[0] = g->conf_text[0] = '\0';
    rec->nhistory = 0;
    rec->hlen = 0;
}

int ce_system_record(ce_ctx *ctx, ce_sys_record *rec)
{
    rec_clear(rec);
    char path[4200], *data;
    ce_sys_path(ctx, CE_SYS_STATE, path, sizeof path);
    int src = read_record(path, rec);
    if (src) rec->gen = -1;
    /* system.json.pending is the newer record, an intent (a switch began and
     * has not been marked done), only when its gen is greater (above); else
     * it is the record before system.json's.  One that is not JSON was cut
     * short before it was durable, so before anything changed: the switch
     * never began (the next switch writes over it). */
    ce_sys_path(ctx, CE_SYS_PENDING, path, sizeof path);
    ce_quiet q;
    ce_quiet_begin(&q, false);
    /* only a regular file of its own: a symlink planted there is no intent
     * (read through, it could name any file as one); the switch then
     * refuses to write at that name (ce_sys_journal_write) */
    struct stat pst;
    int prc = lstat(path, &pst) == 0 && S_ISREG(pst.st_mode) ? ce_file_read(path, CE_SYS_RECORD_MAX, &data, NULL)
                                                              : CE_ERR_NOTFOUND;
    ce_quiet_end(&q);
    if (prc != CE_OK) {
        if (src == CE_OK && rec->pending) rec->gen = (rec->gen < 0 ? 0 : rec->gen) + 1;   /* older "state":"pending" */
        return src == CE_ERR_NOTFOUND ? CE_OK : src;
    }
    long long sg = src == CE_OK ? rec->gen : -1, pg = text_gen(data);
    if (ce_sys_is_intent(pg, sg)) {
        rec_clear(rec);
        ce_quiet_begin(&q, false);
        int irc = parse_record(path, data, rec);
        ce_quiet_end(&q);
        if (irc == CE_OK) {
            free(data);
            rec->pending = true;
            rec->gen = pg >= 0 ? pg : 1;   /* legacy: sg < 0; its repair stays an intent */
            return CE_OK;
        }
        /* cut short: system.json once more (rare) */
        rec_clear(rec);
        ce_sys_path(ctx, CE_SYS_STATE, path, sizeof path);
        if ((src = read_record(path, rec))) rec->gen = -1;
    }
    free(data);
    if (src == CE_OK && rec->pending) rec->gen = (rec->gen < 0 ? 0 : rec->gen) + 1;   /* older "state":"pending" */
    return src == CE_ERR_NOTFOUND ? CE_OK : src;
}

bool ce_sys_resolve(const ce_ctx *ctx, const char *path, char *out, size_t outsz)
{
    char cur[4096], tgt[4096];
    snprintf(cur, sizeof cur, "%s", path);
    for (int hops = 0; hops < 16; hops++) {
        ssize_t n = readlink(cur, tgt, sizeof tgt - 1);
        if (n < 0) {
            struct stat sb;
            if (stat(cur, &sb) != 0 || !S_ISDIR(sb.st_mode)) return false;
            char real[PATH_MAX];   /* a relative link leaves ".." behind: said plainly */
            snprintf(out, outsz, "%s", realpath(cur, real) ? real : cur);
            return true;
        }
        tgt[n] = '\0';
        if (tgt[0] == '/') {
            ce_sys_path(ctx, tgt, cur, sizeof cur);
        } else {
            char *slash = strrchr(cur, '/');
            if (slash) slash[1] = '\0';
            size_t used = strlen(cur);
            snprintf(cur + used, sizeof cur - used, "%s", tgt);
        }
    }
    return false;
}

static bool same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool ce_system_toolchain(ce_ctx *ctx, ce_toolchain *out)
{
    char link[4096], real[4096];
    ce_sys_path(ctx, CE_SYS_LINK, link, sizeof link);
    if (!ce_sys_resolve(ctx, link, real, sizeof real)) return false;
    ce_sys_record *rec = malloc(sizeof *rec);
    if (!rec) return false;
    ce_quiet q;
    ce_quiet_begin(&q, false);
    bool sw = ce_system_record(ctx, rec) == CE_OK && rec->present && !rec->restore && rec->name[0] &&
              ce_store_find(ctx, rec->name, out) == CE_OK && same_dir(out->prefix, real);
    ce_quiet_end(&q);
    free(rec);
    return sw;
}

static char *record_text(const ce_sys_record *rec)
{
    ce_jtext j = { 0 };
    if (rec->gen >= 0) ce_jtext_add(&j, "{\n\t\"schema\":\t1,\n\t\"gen\":\t%lld,\n", rec->gen);
    else ce_jtext_raw(&j, "{\n\t\"schema\":\t1,\n");
    const char *s[][2] = {
        { "state", rec->pending ? "pending" : "done" },
        { "mode", rec->mode == CE_SYS_MODE_ALTERNATIVES ? "alternatives" : "link" },
        { "name", rec->name }, { "target", rec->target }, { "lib", rec->lib },
        { "prev_target", rec->prev_target }, { "prev_lib", rec->prev_lib }, { "prev_name", rec->prev_name },
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        ce_jtext_raw(&j, "\t\"");
        ce_jtext_raw(&j, s[i][0]);
        ce_jtext_raw(&j, "\":\t");
        ce_jtext_str(&j, s[i][1]);
        ce_jtext_raw(&j, ",\n");
    }
    ce_jtext_add(&j, "\t\"when\":\t%lld,\n\t\"action\":\t\"%s\",\n", rec->when, rec->restore ? "restore" : "switch");
    ce_sys_hist_write(&j, rec);
    ce_jtext_raw(&j, "}");
    return ce_jtext_take(&j);
}

/* system.json for rec (malloc'd; NULL when out of memory), at most
 * CE_SYS_RECORD_MAX bytes, what the reader takes: the oldest history
 * entries go until it fits (long store paths: ~8 KiB an entry).  Longer
 * only when it has no history left (the caller refuses it). */
char *ce_sys_record_text(ce_sys_record *rec)
{
    char *text;
    while ((text = record_text(rec)) && strlen(text) > CE_SYS_RECORD_MAX && rec->nhistory > 0) {
        free(text);
        rec->nhistory--;
    }
    return text;
}
