/* The framework probe's result kept between doctor runs (issue 35): a
 * Python importing a heavy framework (Debian's python3-torch) took doctor
 * from 20-30 ms to 3-4 s on every run.  framework.py's report (not the
 * findings: those are made again from it against the toolchain active now)
 * is kept in ${XDG_CACHE_HOME:-~/.cache}/cudaenv/doctor-fw-<hash>.json, one
 * file per interpreter and framework, and used while nothing it came from
 * changed:
 *  - the key: the effective uid, the framework, the interpreter as found
 *    and resolved with its file's identity (device, inode, size, mtime,
 *    ctime, owner, mode) and that of a venv's pyvenv.cfg, and a hash of
 *    the environment the Python runs in (less what a shell changes by
 *    itself: PWD, OLDPWD, SHLVL, _, the terminal's and the session's
 *    variables); the environment's values are never written down;
 *  - what the Python imported from, checked on every use: each sys.path
 *    entry (an absent one must stay absent: a user site created later
 *    counts), the framework's module file and its directory, the
 *    libcudart/libcudnn files the import mapped, and /etc/ld.so.cache, each
 *    by the same identity.  An install, an upgrade or an uninstall changes
 *    a site directory (a new dist-info), the package's directory or its
 *    files, so the next doctor probes again;
 *  - a result is kept only when none of that changed since the probe began
 *    (ctime), so an install running meanwhile is never taken for the state.
 * Trust: the directory must be the caller's own and not writable by group
 * or others, and as root the whole chain must pass the privileged-use rule
 * (ce_priv_tree_open: a cache under a user's HOME, as sudo -E leaves it, is
 * not used at all); the file is opened without following a symlink and
 * used only when it is a regular file of the caller's, not group/other
 * writable; it is replaced by a rename, never written through.  Anything
 * else is a probe, with a note saying why. */
#include "doctor_int.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/file.h"
#include "core/json.h"
#include "core/priv.h"
#include "selftest/framework.h"
#include "store/userstate.h"

extern char **environ;

#define ENTRY_MAX (4u << 20)

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Set by the shell or the session, not by what Python imports. */
static bool volatile_var(const char *e)
{
    static const char *const names[] = { "PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "CUDAENV_WARNED",
                                         "WINDOWID", "TERM_SESSION_ID", "TMUX_PANE", "STY", "XDG_SESSION_ID",
                                         "SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "SSH_AUTH_SOCK", "GPG_TTY" };
    size_t k = strcspn(e, "=");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == k && !strncmp(e, names[i], k)) return true;
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static uint64_t env_hash(void)
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++) n++;
    const char **v = malloc((n ? n : 1) * sizeof *v);
    uint64_t h = 0xcbf29ce484222325ull;
    if (!v) return h;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!volatile_var(environ[i])) v[k++] = environ[i];
    qsort(v, k, sizeof *v, cmp_str);
    for (size_t i = 0; i < k; i++) h = fnv(h, v[i], strlen(v[i]) + 1);
    free(v);
    return h;
}

/* "dev:ino:size:mtime:ctime:uid:mode", or "-" when path is not there. */
static void ident(const char *path, char *out, size_t n, long long *ctime_ns)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(out, n, "-");
        if (ctime_ns) *ctime_ns = 0;
        return;
    }
    snprintf(out, n, "%ju:%ju:%jd:%lld.%09ld:%lld.%09ld:%u:%o", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino,
             (intmax_t)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
             st.st_ctim.tv_nsec, (unsigned)st.st_uid, (unsigned)st.st_mode);
    if (ctime_ns) *ctime_ns = (long long)st.st_ctim.tv_sec * 1000000000ll + st.st_ctim.tv_nsec;
}

/* Why st is not for this user to trust, or NULL. */
static const char *not_mine(const struct stat *st, char *buf, size_t n)
{
    if (st->st_uid != geteuid()) {
        snprintf(buf, n, "owned by uid %u, not %s", (unsigned)st->st_uid, ce_priv() ? "root" : "you");
        return buf;
    }
    if (st->st_mode & 022) return "writable by group or others";
    return NULL;
}

/* The cache directory, made when missing and held open in c->dfd. */
static bool open_dir(doc_fwcache *c)
{
    ce_quiet q;
    ce_quiet_begin(&q, true);
    int rc = ce_user_cache_path(c->name, c->dir, sizeof c->dir);
    char *slash = strrchr(c->dir, '/');
    if (rc == CE_OK && slash) *slash = '\0';
    if (rc == CE_OK && access(c->dir, F_OK) != 0) rc = ce_mkdir_p(c->dir, 0700);
    if (rc != CE_OK) {
        snprintf(c->why, sizeof c->why, "%s", ce_errmsg());
        ce_quiet_end(&q);
        return false;
    }
    ce_quiet_end(&q);
    ce_priv_tree t;
    char why[4400];
    if (ce_priv_tree_open(&t, c->dir, why, sizeof why) != 0) {   /* as root: the chain rule */
        snprintf(c->why, sizeof c->why, "%s", why);
        return false;
    }
    struct stat st;
    char buf[64];
    const char *r = fstat(t.fd, &st) != 0 ? "cannot be inspected" : not_mine(&st, buf, sizeof buf);
    if (r) {
        snprintf(c->why, sizeof c->why, "the cache directory %s is %s", t.path, r);
        ce_priv_tree_close(&t);
        return false;
    }
    c->dfd = t.fd;
    return true;
}

int doc_fwcache_open(doc_fwcache *c, const char *fw, const char *python)
{
    memset(c, 0, sizeof *c);
    c->dfd = -1;
    char real[4096], id[160], cfg[4200], venv[2][160];
    if (!realpath(python, real)) snprintf(real, sizeof real, "%s", python);
    ident(real, id, sizeof id, NULL);
    /* a venv's pyvenv.cfg (beside bin/ or in it) decides its sys.path too */
    snprintf(cfg, sizeof cfg, "%s", python);
    char *s = strrchr(cfg, '/');
    for (int i = 0; i < 2; i++) {
        if (s) *s = '\0';
        char p[4300];
        snprintf(p, sizeof p, "%s/pyvenv.cfg", cfg);
        ident(p, venv[i], sizeof venv[i], NULL);
        s = strrchr(cfg, '/');
    }
    snprintf(c->key, sizeof c->key, "cudaenv doctor framework 1\nuid %u\nframework %s\npython %s\nreal %s\nexe %s\n"
             "venv %s %s\nenv %016llx\n", (unsigned)geteuid(), fw, python, real, id, venv[0], venv[1],
             (unsigned long long)env_hash());
    uint64_t h = fnv(0xcbf29ce484222325ull, c->key, strlen(c->key));
    snprintf(c->name, sizeof c->name, "doctor-fw-%016llx.json", (unsigned long long)h);
    return open_dir(c) ? 0 : -1;
}

void doc_fwcache_close(doc_fwcache *c)
{
    if (c->dfd >= 0) close(c->dfd);
    c->dfd = -1;
}

/* What the report says the Python imported from, and the loader's cache. */
static size_t watched(const cJSON *doc, const char **out, size_t max, char *moddir, size_t mdn)
{
    size_t n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "sys_path"))
        if (cJSON_IsString(e) && e->valuestring[0] == '/' && n < max) out[n++] = e->valuestring;
    const char *mod = ce_json_str(doc, "module");
    if (mod && mod[0] == '/' && n + 2 <= max) {
        out[n++] = mod;
        snprintf(moddir, mdn, "%s", mod);
        char *s = strrchr(moddir, '/');
        if (s && s != moddir) { *s = '\0'; out[n++] = moddir; }
    }
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "maps"))
        if (cJSON_IsString(e) && e->valuestring[0] == '/' && n < max) out[n++] = e->valuestring;
    if (n < max) out[n++] = "/etc/ld.so.cache";
    return n;
}

bool doc_fwcache_get(doc_fwcache *c, ce_fw_report *r)
{
    if (c->dfd < 0) return false;
    int fd = ce_priv_openat(c->dfd, c->name, O_RDONLY, 0);
    if (fd < 0) {
        if (errno == ELOOP || errno == EXDEV || errno == ENOTDIR)
            snprintf(c->ignored, sizeof c->ignored, "%s/%s is a symlink", c->dir, c->name);
        return false;
    }
    struct stat st;
    char buf[64];
    const char *bad = fstat(fd, &st) != 0 ? "cannot be inspected" : !S_ISREG(st.st_mode) ? "not a regular file"
                    : st.st_size > (off_t)ENTRY_MAX ? "too large" : not_mine(&st, buf, sizeof buf);
    if (bad) {
        snprintf(c->ignored, sizeof c->ignored, "%s/%s is %s", c->dir, c->name, bad);
        close(fd);
        return false;
    }
    char *text = malloc((size_t)st.st_size + 1);
    ssize_t got = text ? read(fd, text, (size_t)st.st_size) : -1;
    close(fd);
    if (got != (ssize_t)st.st_size) { free(text); return false; }
    text[got] = '\0';
    cJSON *j = cJSON_Parse(text);
    free(text);
    const char *key = ce_json_str(j, "key"), *py = ce_json_str(j, "python"), *log = ce_json_str(j, "log");
    const cJSON *rep = cJSON_GetObjectItemCaseSensitive(j, "report"), *w = cJSON_GetObjectItemCaseSensitive(j, "watch");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(j, "status"), *at = cJSON_GetObjectItemCaseSensitive(j, "probed_at");
    bool ok = key && !strcmp(key, c->key) && py && log && cJSON_IsObject(rep) && cJSON_IsArray(w) &&
              cJSON_IsNumber(status) && cJSON_IsNumber(at);
    const cJSON *e, *list = ok ? w : NULL;
    cJSON_ArrayForEach(e, list) {   /* [path, identity] each: all as they were */
        const cJSON *p0 = e->child, *p1 = p0 ? p0->next : NULL;
        char id[160];
        if (!cJSON_IsString(p0) || !cJSON_IsString(p1)) { ok = false; break; }
        ident(p0->valuestring, id, sizeof id, NULL);
        if (strcmp(id, p1->valuestring)) { ok = false; break; }
    }
    if (ok) {
        snprintf(r->python, sizeof r->python, "%s", py);
        snprintf(r->log, sizeof r->log, "%s", log);
        r->status = status->valueint;
        r->doc = cJSON_DetachItemFromObjectCaseSensitive(j, "report");
        c->probed_at = (long long)at->valuedouble;
    }
    cJSON_Delete(j);
    return ok;
}

/* Results of interpreters or environments not seen for 30 days go (each
 * environment of each Python has its file). */
static void prune(doc_fwcache *c, time_t now)
{
    int fd = dup(c->dfd);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0) close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(dir))) {
        struct stat st;
        if (strncmp(e->d_name, "doctor-fw-", 10) || !strcmp(e->d_name, c->name) ||
            fstatat(c->dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (st.st_mtime < now - 30 * 86400) unlinkat(c->dfd, e->d_name, 0);
    }
    closedir(dir);
}

void doc_fwcache_put(doc_fwcache *c, const ce_fw_report *r, long long began_ns)
{
    if (c->dfd < 0 || !r->doc) return;   /* no report: the script failed, try again next time */
    const char *paths[1100];
    char moddir[4096], id[160];
    size_t n = watched(r->doc, paths, sizeof paths / sizeof *paths, moddir, sizeof moddir);
    cJSON *j = cJSON_CreateObject(), *w = cJSON_AddArrayToObject(j, "watch");
    bool changed = false;
    for (size_t i = 0; i < n && !changed; i++) {
        long long ct;
        ident(paths[i], id, sizeof id, &ct);
        changed = ct >= began_ns - 20000000ll;   /* during the probe (the clock of file times is coarse) */
        cJSON *e = cJSON_CreateArray();
        cJSON_AddItemToArray(e, cJSON_CreateString(paths[i]));
        cJSON_AddItemToArray(e, cJSON_CreateString(id));
        cJSON_AddItemToArray(w, e);
    }
    if (changed) {
        snprintf(c->why, sizeof c->why, "what it imports from changed while it ran");
        cJSON_Delete(j);
        return;
    }
    cJSON_AddStringToObject(j, "key", c->key);
    cJSON_AddNumberToObject(j, "probed_at", (double)(began_ns / 1000000000ll));
    cJSON_AddStringToObject(j, "python", r->python);
    cJSON_AddNumberToObject(j, "status", r->status);
    cJSON_AddStringToObject(j, "log", r->log);
    cJSON_AddItemToObject(j, "report", cJSON_Duplicate(r->doc, true));
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    if (!text) return;
    char tmp[96];
    snprintf(tmp, sizeof tmp, ".%s.%ld", c->name, (long)getpid());
    int fd = ce_priv_openat(c->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
    size_t len = strlen(text);
    bool ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    if (fd >= 0 && close(fd) != 0) ok = false;
    free(text);
    if (!ok || renameat(c->dfd, tmp, c->dfd, c->name) != 0) {
        if (fd >= 0) unlinkat(c->dfd, tmp, 0);
        snprintf(c->why, sizeof c->why, "cannot write %s/%s: %s", c->dir, c->name, strerror(errno));
        return;
    }
    prune(c, (time_t)(began_ns / 1000000000ll));
}
