/* cudaenv config list | get KEY | set KEY VALUE | unset KEY  [--system]:
 * the config files (core/config.h): the user's, or with --system the
 * site's; what applies is the environment, then the user's file, then the
 * site's, then the default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/config.h"
#include "manifest/copy.h"
#include "manifest/source.h"

enum { OPT_SYSTEM = 1 };

static const cli_opt cmd_config_opts[] = {
    { "system", 0, false, OPT_SYSTEM },
    { 0 },
};

/* The value that applies to key and where it comes from ("environment
 * (CUDAENV_X)", a file's path, "default"); false when nothing sets it. */
static bool effective(cli *c, const char *key, char *val, size_t n, char *from, size_t fn)
{
    const ce_settings *s = ce_settings_now();
    const char *env = !strcmp(key, "manifest") ? s->manifest : !strcmp(key, "mirror") ? s->mirror
                    : !strcmp(key, "update_interval") ? s->update_interval
                    : !strcmp(key, "manifest_unsigned") ? s->unsigned_ok : NULL;
    if (env && *env) {
        snprintf(val, n, "%s", !strcmp(key, "manifest_unsigned") ? (!strcmp(env, "1") ? "true" : "false") : env);
        snprintf(from, fn, "environment: %s", ce_config_env(key));
        return true;
    }
    ce_conf_origin o;
    if (ce_config_get(&c->ctx, key, val, n, &o)) {
        ce_config_path(&c->ctx, o, from, fn);
        return true;
    }
    snprintf(from, fn, "default");
    if (!strcmp(key, "manifest")) {
        ce_quiet q;
        ce_quiet_begin(&q, true);
        int rc = ce_builtin_manifest(&c->ctx, val, n);
        ce_quiet_end(&q);
        if (rc) snprintf(val, n, "(built-in, not found)");
    } else if (!strcmp(key, "update_interval")) {
        snprintf(val, n, "%d", CE_UPDATE_INTERVAL_DEFAULT);
    } else if (!strcmp(key, "manifest_unsigned")) {
        snprintf(val, n, "false");
    } else if (!strcmp(key, "cudnn")) {
        snprintf(val, n, "newest");
    } else {
        val[0] = '\0';
        return false;
    }
    return true;
}

static int cmd_config(cli *c, const cli_args *a)
{
    const cli_cmd *cmd = c->cmd;
    const char *verb = a->n ? a->pos[0] : "list";
    ce_conf_origin level = cli_on(a, OPT_SYSTEM) ? CE_CONF_SITE : CE_CONF_USER;
    char val[8192], from[4300];
    if (!strcmp(verb, "list")) {
        if (a->n > 1) return cli_usage_error(cmd, "list takes no KEY (get KEY shows one)");
        for (size_t i = 0; ce_config_keys[i]; i++) {
            bool set = effective(c, ce_config_keys[i], val, sizeof val, from, sizeof from);
            cli_print("%-18s %s (%s)\n", ce_config_keys[i], set ? val : "-", from);
        }
        return 0;
    }
    if (!strcmp(verb, "get")) {
        if (a->n != 2) return cli_usage_error(cmd, "get KEY: one key (cudaenv config list shows them)");
        if (!ce_config_env(a->pos[1])) return cli_usage_error(cmd, "unknown config key '%s'", a->pos[1]);
        if (!effective(c, a->pos[1], val, sizeof val, from, sizeof from)) {
            cli_error(c, "%s is not set", a->pos[1]);
            return 3;
        }
        cli_print("%s\n", val);
        return 0;
    }
    if (!strcmp(verb, "set") || !strcmp(verb, "unset")) {
        bool set = !strcmp(verb, "set");
        if (a->n != (set ? 3 : 2))
            return cli_usage_error(cmd, set ? "set KEY VALUE" : "unset KEY");
        const char *value = set ? a->pos[2] : "";
        if (set && !*value) return cli_usage_error(cmd, "set %s: an empty value (unset %s removes it)", a->pos[1], a->pos[1]);
        int rc = ce_config_set(&c->ctx, level, a->pos[1], value);
        if (rc == CE_ERR_USAGE) {
            cli_error(c, "%s", ce_errmsg());
            return 2;
        }
        if (rc) return cli_fail(c, rc);
        ce_config_path(&c->ctx, level, from, sizeof from);
        if (!c->ctx.quiet) cli_note(c, "%s %s in %s", set ? "set" : "removed", a->pos[1], from);
        const char *env = ce_config_env(a->pos[1]);
        if (env && *env && getenv(env) && *getenv(env))
            cli_warn(c, "%s is set in the environment and wins over the config file", env);
        return 0;
    }
    return cli_usage_error(cmd, "'%s': use list, get KEY, set KEY VALUE or unset KEY", verb);
}

const cli_cmd cli_cmd_config = {
    .name = "config", .run = cmd_config,
    .summary = "settings in the config files: list, get, set, unset",
    .usage =
        "usage: cudaenv config [list] | get KEY | set KEY VALUE | unset KEY  [--system]\n"
        "\n"
        "The config files keep settings instead of environment variables: the user's\n"
        "${XDG_CONFIG_HOME:-~/.config}/cudaenv/config.json and the site's\n"
        "/etc/cudaenv/config.json (--system).  What applies: the environment, then the\n"
        "user's file, then the site's, then the default.  list shows every key with its\n"
        "value and where it comes from; get prints the value that applies (exit 3: unset).\n"
        "\n"
        "  manifest           path or URL of the manifest (CUDAENV_MANIFEST)\n"
        "  mirror             base URL replacing NVIDIA's (CUDAENV_MIRROR)\n"
        "  update_interval    seconds a remote manifest's copy stays fresh (CUDAENV_UPDATE_INTERVAL)\n"
        "  manifest_unsigned  true: accept an unsigned remote manifest (CUDAENV_MANIFEST_UNSIGNED=1)\n"
        "  cudnn              newest (default), none, or a release: the cuDNN of a CUDA spec\n"
        "                     that names none, for install and info (--cudnn / --no-cudnn win)\n"
        "  keys               public keys (PEM files, comma-separated) trusted for signed manifests\n"
        "\n"
        "  --system   the site's file (root; its keys and settings then apply to every user)\n",
    .opts = cmd_config_opts, .max_pos = 3, .extra = "too many words (set KEY VALUE at most)",
};
