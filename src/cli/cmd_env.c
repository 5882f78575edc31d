/* cudaenv env [VERSION] [--shell bash|zsh|fish|json]: the environment that
 * `use` applies, as code to eval or one JSON document.  Without VERSION it is
 * the environment of the active selection (what the cd hook applies); when
 * that names a toolchain that is not installed, the output still returns
 * the shell to the machine's own CUDA (so a stale toolchain never lingers)
 * and the exit status is 3.  --shell dotenv: KEY=VALUE lines for CI and
 * service files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/activate.h"
#include "cli.h"

enum { OPT_SHELL = 1, OPT_FOR, OPT_FRAMEWORK, OPT_LIBS };

static const cli_opt cmd_env_opts[] = {
    { "shell", 's', true, OPT_SHELL },
    { "json", 0, false, OPT_SHELL, "json" },  /* = --shell json; the last one given wins */
    { "for", 0, true, OPT_FOR },              /* the toolchain PYTHON's frameworks were built for */
    { "framework", 0, true, OPT_FRAMEWORK },
    { "libs", 0, true, OPT_LIBS },            /* framework|toolchain: where the runtime libraries come from */
    { 0 },
};

/* --shell dotenv: KEY=VALUE lines, read literally by $GITHUB_ENV, docker
 * --env-file and systemd EnvironmentFile=.  None of them can unset, so unset
 * variables are left out; a newline in a value would start a new entry. */
static int print_dotenv(cli *c, const ce_env *env)
{
    for (size_t i = 0; i < env->n; i++)
        if (env->vars[i].value && strchr(env->vars[i].value, '\n')) {
            cli_error(c, "%s contains a newline, which a KEY=VALUE file cannot hold; use --shell bash or --json",
                      env->vars[i].name);
            return 1;
        }
    for (size_t i = 0; i < env->n; i++)   /* a shell's saved values mean nothing to a file */
        if (env->vars[i].value && strncmp(env->vars[i].name, "__CUDAENV_", 10) != 0)
            printf("%s=%s\n", env->vars[i].name, env->vars[i].value);
    return 0;
}

/* The one printer of a shell environment: env and use (warn: `use`'s
 * foreign-entry warning; env serves the hook and scripts and never warns). */
int cli_print_env(cli *c, const ce_active_info *sel, bool set_version, bool warn, int sh)
{
    ce_env env;
    char *text;
    int rc = ce_env_compute(&c->ctx, sel, set_version, &env);
    if (rc) return cli_fail(c, rc);
    if (warn && !sel->is_system && (rc = ce_env_warn_foreign(&c->ctx, &env, sel->tc.name))) {
        ce_env_free(&env);
        return cli_fail(c, rc);
    }
    if (sh == CLI_SH_DOTENV) {
        rc = print_dotenv(c, &env);
        ce_env_free(&env);
        return rc;
    }
    rc = ce_env_format(&env, sel, (ce_shell)sh, &text);
    ce_env_free(&env);
    if (rc) return cli_fail(c, rc);
    /* one write(2), not stdio: its first use costs an fstat, an ioctl and
     * a buffer page on the path of every env/use (issue 13).  Nothing before
     * it on env's or use's way writes to stdout (messages go to stderr), so
     * there is no stdio buffer to flush first. */
    size_t len = strlen(text), off = 0;
    while (off < len) {
        ssize_t w = write(STDOUT_FILENO, text + off, len - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            cli_error(c, "cannot write the environment to standard output: %s", strerror(errno));
            free(text);
            return 1;
        }
        off += (size_t)w;
    }
    free(text);
    return 0;
}

static int default_shell(void)
{
    const char *sh = getenv("SHELL");
    const char *base = sh ? strrchr(sh, '/') : NULL;
    return base && !strcmp(base + 1, "fish") ? CE_SH_FISH : CE_SH_POSIX;
}

static int cmd_env(cli *c, const cli_args *a)
{
    const char *shell = a->opt[OPT_SHELL], *version = a->n ? a->pos[0] : NULL;
    int sh = default_shell();
    if (shell && !strcmp(shell, "dotenv")) sh = CLI_SH_DOTENV;
    else if (shell && (sh = ce_shell_parse(shell)) < 0)
        return cli_usage_error(c->cmd, "unknown shell '%s' (bash, zsh, fish, json, dotenv)", shell);
    char forspec[96];
    int frc = cli_for_version(c, a, OPT_FOR, OPT_FRAMEWORK, forspec, sizeof forspec, &version);
    if (frc) return frc;
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
    if ((version || a->opt[OPT_LIBS]) && (rc = cli_libs_mode(c, a->opt[OPT_LIBS], a->opt[OPT_FOR], &sel)))
        return rc;
    rc = cli_print_env(c, &sel, set_version, false, sh);
    return rc ? rc : status;
}

const cli_cmd cli_cmd_env = {
    .name = "env", .run = cmd_env,
    .summary = "print the environment of a toolchain",
    .usage =
        "usage: cudaenv env [VERSION|system] [--shell bash|zsh|fish|json|dotenv] [--json]\n"
        "       cudaenv env --for PYTHON [--framework tf|torch|jax] [--libs framework|toolchain] [--shell ...]\n"
        "\n"
        "Print the environment that use applies (CUDA_HOME, CUDA_PATH, CUDNN_PATH, PATH,\n"
        "LD_LIBRARY_PATH, CUDAENV_VERSION), for Jupyter kernels, cron and IDEs.  Without\n"
        "VERSION: the active selection (.cuda-version, global), what the cd hook applies.\n"
        "Entries earlier switches added are removed; other CUDA entries are reported.\n"
        "--shell dotenv prints KEY=VALUE lines for $GITHUB_ENV, docker --env-file and\n"
        "systemd EnvironmentFile= (cudaenv env 11.8 --shell dotenv >> \"$GITHUB_ENV\").\n"
        "--for PYTHON: the environment of the toolchain PYTHON's frameworks were built for\n"
        "(its own CUDA libraries kept: see use).\n",
    .opts = cmd_env_opts, .max_pos = 1, .extra = "one VERSION only",
};
