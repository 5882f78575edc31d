/* The command-line front end: one table of commands (main.c), one file per
 * command (cmd_<verb>.c), and render.c, the only place that draws. */
#ifndef CE_CLI_H
#define CE_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "core/ctx.h"

typedef struct cli {
    ce_ctx ctx;
    bool json;           /* --json where the command has it */
    bool err_tty;        /* stderr is a terminal: progress bar */
    bool color;          /* stderr colour (terminal, no NO_COLOR) */
    int orig_argc;       /* argv of the process, for re-exec of the full binary */
    char **orig_argv;
} cli;

typedef int (*cli_run_fn)(cli *c, int argc, char **argv);

typedef struct cli_cmd {
    const char *name;
    const char *alias;
    cli_run_fn run;      /* NULL in the light binary: re-exec cudaenv-full */
    const char *summary;
    const char *usage;   /* full --help text of the command */
} cli_cmd;

/* Option parsing shared by every command.  Each command lists its options;
 * the global ones (-q, -v, -h/--help, --manifest PATH|URL, --insecure) are
 * handled here.  cli_next returns an option id (> 0), CLI_ARG for a positional
 * argument (*arg set), CLI_END, or CLI_BAD (message printed, exit 2). */
typedef struct cli_opt {
    const char *name;    /* long name without "--" */
    char short_name;     /* 0 if none */
    bool has_arg;
    int id;              /* > 0 */
} cli_opt;

enum { CLI_END = 0, CLI_ARG = -1, CLI_BAD = -2, CLI_HELP = -3 };

typedef struct cli_args {
    int argc, i;
    char **argv;
    bool only_args;      /* after "--" */
    const char *pending; /* for clustered short options */
} cli_args;

void cli_args_init(cli_args *a, int argc, char **argv);
int cli_next(cli *c, cli_args *a, const cli_cmd *cmd, const cli_opt *opts, const char **arg);
/* The rest of argv after "--" (for exec). */
char **cli_rest(cli_args *a, int *n);

const cli_cmd *cli_find_cmd(const char *name);
/* Print a command's usage to stdout (help) or a hint to stderr (misuse). */
int cli_help(const cli_cmd *cmd);
int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Re-exec the full binary with the original argv (never returns on success). */
int cli_exec_full(cli *c);

/* Loader for http(s) manifests: NULL in the light binary (the caller then
 * re-execs the full one with cli_exec_full), ce_manifest_load_url in the full. */
struct ce_manifest;
extern int (*const cli_url_manifest_loader)(ce_ctx *ctx, const char *url, struct ce_manifest **out);

/* Component planning for info (install/components.h): NULL in the light
 * binary, which re-execs the full one to read a release's redistrib JSON. */
struct ce_redist;
struct ce_resolved;
extern int (*const cli_components_plan)(ce_ctx *ctx, const struct ce_manifest *m, const struct ce_resolved *r,
                                        struct ce_redist **out, const char **profile);
extern void (*const cli_redist_free)(struct ce_redist *r);

/* manifest_load.c: load the manifest a command uses (ce_manifest_location):
 * a local path or file:// URL directly, an http(s) URL through
 * cli_url_manifest_loader (the light binary re-execs the full one).  Returns
 * 0 or a ce_err with the status set (ce_errmsg): `if (rc) return cli_fail(c, rc);`. */
int cli_load_manifest(cli *c, struct ce_manifest **out);

/* json_out.c: --json documents built with cJSON.  cli_json_print prints doc
 * on stdout, deletes it and returns the exit status (0, or 1 on failure);
 * cli_json_add_str adds val, or null when val is NULL or empty. */
struct cJSON;
int cli_json_print(struct cJSON *doc);
void cli_json_add_str(struct cJSON *o, const char *key, const char *val);

/* render.c */
void cli_render_event(void *ud, const ce_event *ev);
void cli_error(cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_warn(cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_note(cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Ctrl-C / SIGTERM during a long step: clear the bar, say what was kept and
 * that the next run resumes, then die of the signal. */
void cli_render_trap_interrupt(cli *c);
/* "845.4 MiB": bytes for people */
void cli_size(char *out, size_t n, double bytes);
/* s with control characters escaped (core/trust.h), for stdout text that
 * quotes files, drivers or manifests; one of 8 rotating static buffers. */
const char *cli_esc(const char *s);
/* Print the status's message (ce_errmsg) as the error of a failed core call
 * and return its exit code. */
int cli_fail(cli *c, int err);

/* Commands (one file each). */
int cmd_install(cli *c, int argc, char **argv);
int cmd_uninstall(cli *c, int argc, char **argv);
int cmd_list(cli *c, int argc, char **argv);
int cmd_list_remote(cli *c, int argc, char **argv);
int cmd_info(cli *c, int argc, char **argv);
int cmd_prefix(cli *c, int argc, char **argv);
int cmd_init(cli *c, int argc, char **argv);
int cmd_use(cli *c, int argc, char **argv);
int cmd_env(cli *c, int argc, char **argv);
int cmd_local(cli *c, int argc, char **argv);
int cmd_global(cli *c, int argc, char **argv);
int cmd_current(cli *c, int argc, char **argv);
int cmd_which(cli *c, int argc, char **argv);
int cmd_exec(cli *c, int argc, char **argv);
int cmd_verify(cli *c, int argc, char **argv);
int cmd_doctor(cli *c, int argc, char **argv);
int cmd_jupyter(cli *c, int argc, char **argv);

/* verify_framework.c: verify --framework on an installed toolchain (in its
 * environment, like exec); returns the exit status. */
struct ce_toolchain;
int cli_verify_framework(cli *c, const struct ce_toolchain *tc, const char *framework, const char *python,
                         const char *libcuda);
int cmd_adopt(cli *c, int argc, char **argv);
int cmd_cache(cli *c, int argc, char **argv);
int cmd_modulefile(cli *c, int argc, char **argv);
int cmd_mirror(cli *c, int argc, char **argv);

#endif
