/* cudaenv env [VERSION] [--shell bash|zsh|fish|json]: the environment that
 * `use` applies, as code to eval or one JSON document.  Without VERSION it is
 * the environment of the active selection (what the cd hook applies); when
 * that names a toolchain that is not installed, the output still returns
 * the shell to the machine's own CUDA (so a stale toolchain never lingers)
 * and the exit status is 3.  --shell dotenv: KEY=VALUE lines for CI and
 * service files. */
#include <stdlib.h>
#include <string.h>

#include "store/activate.h"
#include "cli.h"

enum { OPT_SHELL = 1, OPT_JSON };

static const cli_opt opts[] = {
    { "shell", 's', true, OPT_SHELL },
    { "json", 0, false, OPT_JSON },
    { 0 },
};

/* --shell dotenv: KEY=VALUE lines, read literally by $GITHUB_ENV, docker
 * --env-file and systemd EnvironmentFile=.  None of them can unset, so unset
 * variables are left out; a newline in a value would start a new entry. */
enum { SH_DOTENV = 100 };

static int print_dotenv(cli *c, const ce_env *env)
{
    for (size_t i = 0; i < env->n; i++)
        if (env->vars[i].value && strchr(env->vars[i].value, '\n')) {
            cli_error(c, "%s contains a newline, which a KEY=VALUE file cannot hold; use --shell bash or --json",
                      env->vars[i].name);
            return 1;
        }
    for (size_t i = 0; i < env->n; i++)
        if (env->vars[i].value) printf("%s=%s\n", env->vars[i].name, env->vars[i].value);
    return 0;
}

static int default_shell(void)
{
    const char *sh = getenv("SHELL");
    const char *base = sh ? strrchr(sh, '/') : NULL;
    return base && !strcmp(base + 1, "fish") ? CE_SH_FISH : CE_SH_POSIX;
}

int cmd_env(cli *c, int argc, char **argv)
{
    const cli_cmd *cmd = cli_find_cmd("env");
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *arg, *version = NULL;
    int sh = default_shell(), id;
    while ((id = cli_next(c, &a, cmd, opts, &arg)) != CLI_END) {
        switch (id) {
        case CLI_HELP: return cli_help(cmd);
        case CLI_BAD: return 2;
        case OPT_JSON: sh = CE_SH_JSON; break;
        case OPT_SHELL:
            if (!strcmp(arg, "dotenv")) sh = SH_DOTENV;
            else if ((sh = ce_shell_parse(arg)) < 0)
                return cli_usage_error(cmd, "unknown shell '%s' (bash, zsh, fish, json, dotenv)", arg);
            break;
        case CLI_ARG:
            if (version) return cli_usage_error(cmd, "one VERSION only");
            version = arg;
            break;
        }
    }
    ce_active_info sel;
    memset(&sel, 0, sizeof sel);
    int rc, status = 0;
    bool set_version = true;
    if (version) {
        sel.origin = CE_ORIGIN_SHELL;
        if ((rc = ce_select(&c->ctx, version, &sel))) return cli_fail(c, rc);
    } else {
        rc = ce_active(&c->ctx, NULL, &sel);
        if (rc) {
            status = cli_fail(c, rc);
            if (rc != CE_ERR_NOTFOUND) return status;
            sel.is_system = true;
        }
        set_version = sel.origin == CE_ORIGIN_SHELL;
    }
    ce_env env;
    char *text;
    if ((rc = ce_env_compute(&c->ctx, &sel, set_version, &env))) return cli_fail(c, rc);
    if (sh == SH_DOTENV) {
        rc = print_dotenv(c, &env);
        ce_env_free(&env);
        return rc ? rc : status;
    }
    rc = ce_env_format(&c->ctx, &env, &sel, (ce_shell)sh, &text);
    ce_env_free(&env);
    if (rc) return cli_fail(c, rc);
    fputs(text, stdout);
    free(text);
    return status;
}
