/* The config files (config.h). */
#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "priv.h"
#include "trust.h"
#include "version.h"

const char *const ce_config_keys[] = { "manifest", "mirror", "update_interval", "manifest_unsigned", "cudnn",
                                       "keys", NULL };
static const char *const env_of[] = { "CUDAENV_MANIFEST", "CUDAENV_MIRROR", "CUDAENV_UPDATE_INTERVAL",
                                      "CUDAENV_MANIFEST_UNSIGNED", "", "" };

const char *ce_config_env(const char *key)
{
    for (size_t i = 0; ce_config_keys[i]; i++)
        if (!strcmp(ce_config_keys[i], key)) return env_of[i];
    return NULL;
}

void ce_config_path(ce_ctx *ctx, ce_conf_origin which, char *out, size_t n)
{
    if (which == CE_CONF_SITE) {
        ce_sys_path(ctx, "/etc/cudaenv/" CE_CONFIG_NAME, out, n);
        return;
    }
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && *xdg == '/') ce_path_under(xdg, "/cudaenv/" CE_CONFIG_NAME, out, n);
    else if (home && *home == '/') ce_path_under(home, "/.config/cudaenv/" CE_CONFIG_NAME, out, n);
    else out[0] = '\0';
}

/* The parsed files, read on the first question (site [0], user [1]). */
static cJSON *loaded[2];
static bool loaded_once;

/* The file at path opened under the rule (priv.h: never through a symlink;
 * as root only root's, in directories only root can change, checked on
 * the opened fd): the fd, or -1 with why; missing is -1 with errno ENOENT. */
static int open_conf(const char *path, char *why, size_t whysz)
{
    char real[PATH_MAX];
    return ce_priv_file_open(path, false, real, sizeof real, why, whysz);
}

static cJSON *read_one(ce_ctx *ctx, ce_conf_origin which)
{
    char path[4200], *data = NULL, why[PATH_MAX + 128];
    size_t len = 0;
    ce_config_path(ctx, which, path, sizeof path);
    if (!path[0]) return NULL;
    int fd = open_conf(path, why, sizeof why);
    if (fd < 0) {
        if (errno == ENOENT) return NULL;
        /* a status event: the front end words it (HOME or XDG_CONFIG_HOME
         * left pointing at a user's by su or sudo -E lands here) */
        ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the config file %s: %s%s", path, why,
                ce_trust_privileged() && errno == EPERM
                    ? " (as root only a config root owns, in directories only root can change, is read: a "
                      "user's must not choose what root installs; use root's own, e.g. sudo -H)"
                    : "");
        return NULL;
    }
    ce_quiet q;
    ce_quiet_begin(&q, false);
    int rc = ce_file_read_fd(fd, path, 1u << 20, &data, &len);
    ce_quiet_end(&q);
    if (rc) return NULL;
    cJSON *j = cJSON_ParseWithLength(data, len);
    free(data);
    if (!cJSON_IsObject(j)) {
        ce_emit(ctx, CE_EV_WARN, NULL, "ignoring the config file %s: not a JSON object; see: man cudaenv (CONFIG)", path);
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

static void load(ce_ctx *ctx)
{
    if (loaded_once) return;
    loaded_once = true;
    loaded[0] = read_one(ctx, CE_CONF_SITE);
    loaded[1] = read_one(ctx, CE_CONF_USER);
}

static const cJSON *find(ce_ctx *ctx, const char *key, ce_conf_origin *origin)
{
    load(ctx);
    for (int i = 1; i >= 0; i--) {
        const cJSON *v = loaded[i] ? cJSON_GetObjectItemCaseSensitive(loaded[i], key) : NULL;
        if (v && !cJSON_IsNull(v)) {
            if (origin) *origin = i ? CE_CONF_USER : CE_CONF_SITE;
            return v;
        }
    }
    return NULL;
}

static bool text_of(const cJSON *v, char *out, size_t n)
{
    if (cJSON_IsString(v) && v->valuestring) snprintf(out, n, "%s", v->valuestring);
    else if (cJSON_IsNumber(v)) snprintf(out, n, "%lld", (long long)v->valuedouble);
    else if (cJSON_IsBool(v)) snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else if (cJSON_IsArray(v)) {
        size_t len = 0;
        out[0] = '\0';
        for (const cJSON *e = v->child; e && len < n; e = e->next)
            if (cJSON_IsString(e) && e->valuestring)
                len += (size_t)snprintf(out + len, n - len, "%s%s", len ? "," : "", e->valuestring);
    } else return false;
    return true;
}

int ce_config_get(ce_ctx *ctx, const char *key, char *out, size_t n, ce_conf_origin *origin)
{
    const cJSON *v = find(ctx, key, origin);
    return v && text_of(v, out, n) ? 1 : 0;
}

int ce_config_item(ce_ctx *ctx, const char *key, size_t i, char *out, size_t n, ce_conf_origin *origin)
{
    const cJSON *v = find(ctx, key, origin);
    if (!cJSON_IsArray(v)) return 0;
    for (const cJSON *e = v->child; e; e = e->next)
        if (cJSON_IsString(e) && e->valuestring && i-- == 0) {
            snprintf(out, n, "%s", e->valuestring);
            return 1;
        }
    return 0;
}

/* value as the JSON key wants it, or CE_ERR_USAGE naming what is expected. */
static int to_json(const char *key, const char *value, cJSON **out)
{
    *out = NULL;
    if (!ce_config_env(key))
        return ce_fail(CE_ERR_USAGE, "unknown config key '%s'; the keys: manifest, mirror, update_interval, "
                       "manifest_unsigned, cudnn, keys", key);
    if (!strcmp(key, "update_interval")) {
        char *end;
        errno = 0;
        long v = strtol(value, &end, 10);
        if (errno || end == value || *end || v < 0)
            return ce_fail(CE_ERR_USAGE, "update_interval: '%s' is no number of seconds (>= 0)", value);
        *out = cJSON_CreateNumber((double)v);
    } else if (!strcmp(key, "manifest_unsigned")) {
        if (strcmp(value, "true") && strcmp(value, "false"))
            return ce_fail(CE_ERR_USAGE, "manifest_unsigned: '%s' is neither true nor false", value);
        *out = cJSON_CreateBool(!strcmp(value, "true"));
    } else if (!strcmp(key, "cudnn")) {
        if (strcmp(value, "newest") && strcmp(value, "none") && !ce_version_valid(value))
            return ce_fail(CE_ERR_USAGE, "cudnn: '%s' is none of newest, none or a cuDNN release (8.9)", value);
        *out = cJSON_CreateString(value);
    } else if (!strcmp(key, "keys")) {
        cJSON *a = cJSON_CreateArray();
        char buf[8192];
        snprintf(buf, sizeof buf, "%s", value);
        for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
            if (*p != '/') {
                cJSON_Delete(a);
                return ce_fail(CE_ERR_USAGE, "keys: '%s' is not an absolute path to a public key (PEM)", p);
            }
            cJSON_AddItemToArray(a, cJSON_CreateString(p));
        }
        *out = a;
    } else {
        bool url = !strncmp(value, "https://", 8) || !strncmp(value, "http://", 7) || !strncmp(value, "file://", 7);
        if (!url && *value != '/')
            return ce_fail(CE_ERR_USAGE, "%s: '%s' is neither a URL nor an absolute path", key, value);
        *out = cJSON_CreateString(value);
    }
    return *out ? CE_OK : ce_fail(CE_ERR_NOMEM, "out of memory");
}

int ce_config_set(ce_ctx *ctx, ce_conf_origin which, const char *key, const char *value)
{
    cJSON *v = NULL;
    int rc = *value ? to_json(key, value, &v) : (ce_config_env(key) ? CE_OK :
             ce_fail(CE_ERR_USAGE, "unknown config key '%s'", key));
    if (rc) return rc;
    char path[4200], dir[4200], *data = NULL, why[PATH_MAX + 128];
    size_t len = 0;
    ce_config_path(ctx, which, path, sizeof path);
    if (!path[0]) { cJSON_Delete(v); return ce_fail(CE_ERR_USAGE, "no HOME: where is the user's config?"); }
    /* the directory first, held by fd (priv.h): as root nothing a user
     * can change on the way redirects the write */
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    ce_priv_tree t;
    if (ce_priv_dir_make(&t, dir, 0755, why, sizeof why)) {
        cJSON_Delete(v);
        bool refused = errno == EPERM || errno == ELOOP;
        return ce_fail(refused ? CE_ERR_PERM : CE_ERR_IO, "cannot write %s: %s%s", path, why,
                       refused ? "; as root the config is written only where only root can change it (a user's "
                                 "HOME or XDG_CONFIG_HOME left by su or sudo -E: use sudo -H, or --system)" : "");
    }
    cJSON *doc = NULL;
    int fd = ce_priv_openat(t.fd, CE_CONFIG_NAME, O_RDONLY | O_NONBLOCK, 0);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) { close(fd); fd = -1; }
    ce_quiet q;
    ce_quiet_begin(&q, false);
    if (fd >= 0 && ce_file_read_fd(fd, path, 1u << 20, &data, &len) == CE_OK) doc = cJSON_ParseWithLength(data, len);
    ce_quiet_end(&q);
    free(data);
    if (data && !cJSON_IsObject(doc)) {
        ce_priv_tree_close(&t);
        cJSON_Delete(doc);
        cJSON_Delete(v);
        return ce_fail(CE_ERR_USAGE, "%s is not a JSON object: fix or remove it first", path);
    }
    if (!doc) doc = cJSON_CreateObject();
    cJSON_Delete(cJSON_DetachItemFromObjectCaseSensitive(doc, key));
    if (v) cJSON_AddItemToObject(doc, key, v);
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (!text) { ce_priv_tree_close(&t); return ce_fail(CE_ERR_NOMEM, "out of memory"); }
    size_t tl = strlen(text);
    text[tl] = '\n';   /* cJSON_Print's buffer ends in a NUL we may overwrite */
    rc = ce_file_write_atomic_at(t.fd, dir, CE_CONFIG_NAME, text, tl + 1, 0644);
    ce_priv_tree_close(&t);
    free(text);
    loaded_once = false;   /* the next question reads the files again */
    cJSON_Delete(loaded[0]);
    cJSON_Delete(loaded[1]);
    loaded[0] = loaded[1] = NULL;
    return rc;
}
