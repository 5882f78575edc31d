/* cudaenv: the command table (each command's entry, --help text included, is
 * in its cmd_<verb>.c), the global options and the dispatch. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "manifest/manifest.h"
#include "core/priv.h"
#include "core/trust.h"
#include "install/components.h"
#include "install/redist.h"
#include "manifest/resolve.h"

int (*const cli_url_manifest_loader)(ce_ctx *, const char *, struct ce_manifest **) =
    FULL_ONLY(ce_manifest_load_url);
int (*const cli_components_plan)(ce_ctx *, const struct ce_manifest *, const struct ce_resolved *,
                                 struct ce_redist **, const char **) = FULL_ONLY(ce_components_plan);
void (*const cli_redist_free)(struct ce_redist *) = FULL_ONLY(ce_redist_free);

/* in the order cudaenv --help lists them */
static const cli_cmd *const commands[] = {
    &cli_cmd_install, &cli_cmd_modulefile, &cli_cmd_mirror, &cli_cmd_push, &cli_cmd_pull,
    &cli_cmd_self, &cli_cmd_update, &cli_cmd_outdated, &cli_cmd_config, &cli_cmd_uninstall,
    &cli_cmd_list, &cli_cmd_list_remote, &cli_cmd_info, &cli_cmd_prefix, &cli_cmd_init,
    &cli_cmd_use, &cli_cmd_deactivate, &cli_cmd_env, &cli_cmd_local, &cli_cmd_global,
    &cli_cmd_current, &cli_cmd_which, &cli_cmd_exec, &cli_cmd_verify, &cli_cmd_jupyter,
    &cli_cmd_doctor, &cli_cmd_adopt, &cli_cmd_cache,
};

static const size_t n_commands = sizeof commands / sizeof *commands;

const cli_cmd *cli_find_cmd(const char *name)
{
    for (size_t i = 0; i < n_commands; i++) {
        if (strcmp(commands[i]->name, name) == 0) return commands[i];
        if (commands[i]->alias && strcmp(commands[i]->alias, name) == 0) return commands[i];
    }
    return NULL;
}

static void main_usage(FILE *f)
{
    fprintf(f, "usage: cudaenv [-q|-v] [--manifest M] [--insecure] [--driver VER] COMMAND [ARGS]\n\n"
               "Install and switch NVIDIA CUDA toolkits + cuDNN, and prove they work.\n\ncommands:\n");
    for (size_t i = 0; i < n_commands; i++)
        fprintf(f, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
    fprintf(f, "\nRun 'cudaenv help COMMAND' (or COMMAND --help) for a command's options; 'man cudaenv' for\n"
               "the rest.\n"
               "Environment: CUDAENV_ROOT, CUDAENV_MANIFEST, CUDAENV_MIRROR, CUDAENV_SYSROOT,\n"
               "CUDAENV_VERSION, CUDAENV_DRIVER_VERSION (as --driver: plan for another machine's\n"
               "driver), NO_COLOR.  Exit codes: 0 ok, 1 other, 2 usage, 3 not found, 4 download,\n"
               "5 integrity, 6 permission, 7 check failed, 8 no usable GPU.\n");
}

/* "instal" -> install, "verfy" -> verify: the nearest command within two
 * edits (or the one the typed word is a prefix of). */
static const char *nearest_command(const char *typed)
{
    const char *best = NULL;
    int best_d = 3;
    for (size_t i = 0; i < n_commands; i++) {
        const char *names[2] = { commands[i]->name, commands[i]->alias };
        for (int k = 0; k < 2; k++) {
            if (!names[k]) continue;
            int d = ce_edit_distance(typed, names[k]);
            if (strlen(typed) >= 3 && strncmp(typed, names[k], strlen(typed)) == 0) d = 1;
            if (d < best_d) { best_d = d; best = commands[i]->name; }
        }
    }
    return best;
}

int cli_exec_full(cli *c)
{
    char path[8300];
    /* CUDAENV_FULL: never as root (core/priv.h); the build tree's
     * bin/ and libexec/ are laid out as an installed prefix's */
    const char *env = c->ctx.set.full;
    if (env && *env && !ce_priv()) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        snprintf(path, sizeof path, "%s/../libexec/cudaenv/cudaenv-full", ce_self_dir(&c->ctx));
        if (access(path, X_OK) != 0)
            snprintf(path, sizeof path, "%s/cudaenv-full", ce_self_dir(&c->ctx));
    }
    /* as root, the full binary passes the program rule as everything cudaenv
     * runs does (core/proc.c) */
    char why[1024];
    if (ce_priv_program(path, why, sizeof why) != 0) {
        if (errno != EPERM) {
            cli_error(c, "cannot run %s: %s; reinstall cudaenv (make install)", path, strerror(errno));
            return 1;
        }
        return cli_fail(c, ce_fail(CE_ERR_PERM, "unsafe for cudaenv run as root: %s; reinstall cudaenv "
                                   "into a root-owned prefix (make install)", why));
    }
    execv(path, c->orig_argv);
    cli_error(c, "cannot run %s: %s; reinstall cudaenv (make install)", path, strerror(errno));
    return 1;
}

int main(int argc, char **argv)
{
    static cli c;   /* zero already: no second pass over it (nor page faults for what stays unset) */
    ce_ctx_init_zeroed(&c.ctx);
    c.orig_argc = argc;
    c.orig_argv = argv;
    /* err_tty and color: on the first message (render.c), not for env/use */
    c.ctx.event = cli_render_event;
    c.ctx.event_ud = &c;

    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
            char about[8400];
            cli_manifest_about(&c, NULL, about, sizeof about);
            cli_print("cudaenv %s\nmanifest %s\n", CE_VERSION, about);
            return 0;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            main_usage(stdout);
            return 0;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            c.ctx.quiet = true;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            c.ctx.verbose++;
        } else if (!strcmp(a, "--insecure")) {
            c.ctx.insecure = true;
        } else if (!strncmp(a, "--driver=", 9) || !strcmp(a, "--driver")) {
            const char *v = a[8] == '=' ? a + 9 : i + 1 < argc ? argv[++i] : NULL;
            if (!v) return cli_usage_error(NULL, "option --driver needs a value");
            if (cli_set_driver(&c, v, "--driver")) return 2;
        } else if (!strncmp(a, "--manifest=", 11)) {
            snprintf(c.ctx.manifest, sizeof c.ctx.manifest, "%s", a + 11);
        } else if (!strcmp(a, "--manifest")) {
            if (i + 1 >= argc) return cli_usage_error(NULL, "option --manifest needs a value");
            snprintf(c.ctx.manifest, sizeof c.ctx.manifest, "%s", argv[++i]);
        } else {
            return cli_usage_error(NULL, "unknown option %s", a);
        }
    }
    if (!c.ctx.driver[0] && c.ctx.set.driver_version && *c.ctx.set.driver_version &&
        cli_set_driver(&c, c.ctx.set.driver_version, "CUDAENV_DRIVER_VERSION"))
        return 2;
    if (i >= argc) {
        main_usage(stderr);
        return 2;
    }
    if (!strcmp(argv[i], "help")) {
        /* help COMMAND: what COMMAND --help prints; help alone: the overview */
        if (i + 1 >= argc || !strcmp(argv[i + 1], "help")) {
            main_usage(stdout);
            return 0;
        }
        const cli_cmd *h = cli_find_cmd(argv[i + 1]);
        if (h) return cli_help(h);
        const char *near = nearest_command(argv[i + 1]);
        if (near) return cli_usage_error(NULL, "help: unknown command '%s'; did you mean '%s'?", argv[i + 1], near);
        return cli_usage_error(NULL, "help: unknown command '%s' (cudaenv help lists them)", argv[i + 1]);
    }
    const cli_cmd *cmd = cli_find_cmd(argv[i]);
    if (!cmd) {
        const char *near = nearest_command(argv[i]);
        if (near) return cli_usage_error(NULL, "unknown command '%s'; did you mean '%s'?", argv[i], near);
        return cli_usage_error(NULL, "unknown command '%s'", argv[i]);
    }
    if (i + 1 < argc && (!strcmp(argv[i + 1], "--help") || !strcmp(argv[i + 1], "-h")))
        return cli_help(cmd);
    /* the store rule (core/trust.h): CUDAENV_ROOT absolute, and as root a
     * store only root can change; init prints shell code and opens nothing */
    if (!(cmd->needs & CLI_NO_STORE)) {
        int rc = ce_trust_root(&c.ctx);
        if (!rc) rc = ce_trust_sysroot(&c.ctx);
        if (rc) return cli_fail(&c, rc);
    }
    if (!cmd->run)
        return cli_exec_full(&c);
    /* the positional words: on the stack unless there are many (install SPEC...) */
    const char *few[8], **pos = argc - i <= 8 ? few : malloc((size_t)(argc - i) * sizeof *pos);
    if (!pos) return 1;
    cli_args a;
    c.cmd = cmd;
    int rc = cli_parse(&c, cmd, argc - i, argv + i, pos, &a);
    if (rc == CLI_HELP) rc = cli_help(cmd);
    else if (rc == 0) rc = cmd->run(&c, &a);
    if (pos != few) free(pos);
    return rc;
}
