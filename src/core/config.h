/* The config files: settings a site or a user keeps instead of exporting
 * environment variables.  One JSON object per file (cJSON, as everything
 * cudaenv reads):
 *   $CUDAENV_SYSROOT/etc/cudaenv/config.json            the site's
 *   ${XDG_CONFIG_HOME:-~/.config}/cudaenv/config.json   the user's (wins over the site's)
 * and the environment wins over both.  Keys (anything else is refused by
 * `cudaenv config set` and ignored when read, for forward compatibility):
 *   manifest            path or URL                    (CUDAENV_MANIFEST)
 *   mirror              base URL                       (CUDAENV_MIRROR)
 *   update_interval     seconds, >= 0                  (CUDAENV_UPDATE_INTERVAL)
 *   manifest_unsigned   true / false                   (CUDAENV_MANIFEST_UNSIGNED=1)
 *   cudnn               "newest" (default), "none" (= --no-cudnn), or a release
 *                       ("8.9": = --cudnn 8.9) for install and info
 *   keys                array of public key files (PEM) trusted for signed manifests
 * A file is opened O_NOFOLLOW and checked on the fd (core/priv.h,
 * ce_priv_file_open): a symlink is skipped with a warning; as root only a
 * file root owns and no one else can write, under directories only root can
 * change, is read (a user's config, or HOME/XDG_CONFIG_HOME left at a user's
 * by su or sudo -E, must not choose what root installs); others are skipped
 * with a warning (a status event).  ce_config_set writes beneath a directory
 * fd from ce_priv_dir_make.  Read lazily, once per process, on the first question: env/use
 * of an exact name never opens them. */
#ifndef CE_CONFIG_H
#define CE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"

#define CE_CONFIG_NAME "config.json"

typedef enum { CE_CONF_NONE, CE_CONF_SITE, CE_CONF_USER } ce_conf_origin;

/* The value of key from the config files as text (numbers in decimal,
 * booleans "true"/"false", an array's strings joined by ","): 1 and
 * *origin set when a file has it, 0 when none does. */
int ce_config_get(ce_ctx *ctx, const char *key, char *out, size_t n, ce_conf_origin *origin);
/* The array key's i-th string (keys): 1 found, 0 past the end. */
int ce_config_item(ce_ctx *ctx, const char *key, size_t i, char *out, size_t n, ce_conf_origin *origin);
/* The file of a level: the user's or the site's config.json. */
void ce_config_path(ce_ctx *ctx, ce_conf_origin which, char *out, size_t n);
/* Check value for key (CE_ERR_USAGE naming what is expected) and write
 * it into the file of level which (created; temp + rename): text as
 * the key wants it ("" removes the key). */
int ce_config_set(ce_ctx *ctx, ce_conf_origin which, const char *key, const char *value);
/* The known keys, NULL-terminated, and each one's environment variable ("" when none). */
extern const char *const ce_config_keys[];
const char *ce_config_env(const char *key);

#endif
