/* The command-line front end: one file per command (cmd_<verb>.c: its table
 * entry with its --help text, its options and its code), the table that lists
 * them (main.c), and render.c, the only place that draws. */
#ifndef CE_CLI_H
#define CE_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "core/ctx.h"

typedef struct cli {
    bool json;           /* --json where the command has it */
    bool err_tty;        /* stderr is a terminal: progress bar (valid once tty_known) */
    bool color;          /* stderr colour (terminal, no NO_COLOR; valid once tty_known) */
    bool tty_known;      /* render.c looked at stderr (on the first message: env prints none) */
    int orig_argc;       /* argv of the process, for re-exec of the full binary */
    char **orig_argv;
    const struct cli_cmd *cmd; /* the command running, for its usage errors */
    ce_ctx ctx;          /* last: its first fields share a page with the ones above */
} cli;

/* Options a command declares (its `opts[]`, ending with { 0 }).  The global
 * ones (-q, -v, -h/--help, --manifest PATH|URL, --insecure) every command
 * takes are main's.  A flag with `value` stores that value under id, so two
 * spellings of one setting share it and the last one given wins (env --json
 * = --shell json). */
typedef struct cli_opt {
    const char *name;    /* long name without "--" */
    char short_name;     /* 0 if none */
    bool has_arg;
    int id;              /* 1 .. CLI_MAX_OPT - 1 */
    const char *value;   /* flags: what they store under id (default "") */
} cli_opt;

#define CLI_MAX_OPT 16

/* What a command needs from main beyond its options. */
enum {
    CLI_NO_STORE = 1 << 0, /* opens no store: no CUDAENV_ROOT check (init prints shell code) */
    CLI_REST = 1 << 1,     /* the words after the last positional (and an optional "--")
                            * are the command's, unparsed (exec VERSION CMD ARG...) */
};

/* The command line main parsed for a command (cli_parse). */
typedef struct cli_args {
    const char *opt[CLI_MAX_OPT]; /* by id: the option's value, "" for a flag, NULL when not given */
    const char **pos;             /* positional words, n of them */
    int n;
    char **rest;                  /* after "--" (CLI_REST: after the last positional) */
    int n_rest;
} cli_args;

typedef int (*cli_run_fn)(cli *c, const cli_args *a);

/* A command as data: its entry cli_cmd_<verb>, defined at the end of its
 * cmd_<verb>.c and listed in main.c's table.  main parses argv against opts and
 * the positional counts, and reports unknown options, missing values and wrong
 * counts (exit 2) before run is called. */
typedef struct cli_cmd {
    const char *name;
    const char *alias;
    cli_run_fn run;        /* NULL in the light binary (FULL_ONLY): re-exec cudaenv-full */
    const char *summary;
    const char *usage;     /* full --help text of the command */
    const cli_opt *opts;   /* NULL: the global options only (the light binary's full-only
                            * commands have none: it re-execs cudaenv-full before parsing) */
    int min_pos, max_pos;  /* positional words; max_pos -1: any number */
    const char *missing;   /* usage error under min_pos */
    const char *extra;     /* usage error over max_pos: a format of the word before and the
                            * word too many ("got %s and %s"), or of the word alone with
                            * one %s; NULL: "unexpected argument '%s'" */
    unsigned needs;        /* CLI_NO_STORE, CLI_REST */
} cli_cmd;

/* The light/full seam of the front end, the one way it is built: main.c and
 * the files of the commands that need the network or archives (install,
 * mirror, push, pull, self, update) are compiled twice (Makefile:
 * TWICE_SRC), with CE_FULL for cudaenv-full and without it for the light
 * cudaenv, where only their table entries are built and FULL_ONLY(x) is
 * NULL: the light binary prints their --help itself and re-execs
 * cudaenv-full to run them.  verify is compiled twice too: only its --deep
 * (FULL_ONLY(ce_sha256_file)) is the full binary's. */
#ifdef CE_FULL
#define FULL_ONLY(x) x
#else
#define FULL_ONLY(x) NULL
#endif

/* args.c: parse argv[1..argc) (argv[0] is the command's name) into *out.
 * pos must have room for argc words.  Returns 0, CLI_HELP (-h/--help seen),
 * or 2 after printing the usage error. */
enum { CLI_HELP = -3 };
int cli_parse(cli *c, const cli_cmd *cmd, int argc, char **argv, const char **pos, cli_args *out);
static inline bool cli_on(const cli_args *a, int id) { return a->opt[id] != NULL; }

const cli_cmd *cli_find_cmd(const char *name);
/* args.c: print a command's usage to stdout (help) or a hint to stderr (misuse). */
int cli_help(const cli_cmd *cmd);
/* --driver VER / CUDAENV_DRIVER_VERSION (from names which): the driver the
 * plan is for, in c->ctx.driver; 2 after a usage error naming the value. */
int cli_set_driver(cli *c, const char *val, const char *from);
int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Re-exec the full binary with the original argv (never returns on success). */
int cli_exec_full(cli *c);

/* Loader for http(s) manifests: NULL in the light binary (which reads a
 * fresh local copy itself, else re-execs the full one with cli_exec_full),
 * ce_manifest_load_url in the full (refresh when stale, then the copy). */
struct ce_manifest;
extern int (*const cli_url_manifest_loader)(ce_ctx *ctx, const char *url, struct ce_manifest **out);

/* Component planning for info (install/components.h): NULL in the light
 * binary, which re-execs the full one to read a release's redistrib JSON. */
struct ce_redist;
struct ce_resolved;
extern int (*const cli_components_plan)(ce_ctx *ctx, const struct ce_manifest *m, const struct ce_resolved *r,
                                        struct ce_redist **out, const char **profile);
extern void (*const cli_redist_free)(struct ce_redist *r);

/* manifest_load.c: load the manifest a command uses (manifest/source.h):
 * a local path or file:// URL directly, an http(s) URL from its local copy,
 * through cli_url_manifest_loader when that may need a refresh.  Returns
 * 0 or a ce_err with the status set (ce_errmsg): `if (rc) return cli_fail(c, rc);`. */
int cli_load_manifest(cli *c, struct ce_manifest **out);
/* The same cut to what resolving spec reads where that is a slice
 * (manifest/slice.h: a TensorFlow row without a cuDNN override), else the
 * whole; cudnn: the command's --cudnn. */
struct ce_spec;
int cli_load_manifest_for(cli *c, const struct ce_spec *spec, const char *cudnn, struct ce_manifest **out);
/* "<origin> (built-in), dated <updated>[ (local copy: PATH)]": where the
 * manifest in use comes from and how old it is, for --version, info and
 * list-remote (m: the loaded manifest, NULL to read it here; quiet). */
void cli_manifest_about(cli *c, const struct ce_manifest *m, char *out, size_t n);
/* The config's cuDNN policy (core/config.h "cudnn") for a CUDA spec that
 * names no cuDNN, when neither --cudnn nor --no-cudnn was given: "none"
 * sets *no_cudnn, a release sets *cudnn (into buf). */
struct ce_spec;
void cli_cudnn_policy(cli *c, const struct ce_spec *spec, const char **cudnn, bool *no_cudnn, char *buf, size_t n);

/* json_out.c: --json documents built with cJSON.  cli_json_print prints doc
 * on stdout, deletes it and returns the exit status (0, or 1 on failure);
 * cli_json_add_str adds val, or null when val is NULL or empty. */
struct cJSON;
int cli_json_print(struct cJSON *doc);
void cli_json_add_str(struct cJSON *o, const char *key, const char *val);
/* What a toolchain holds (store/receipt.h), as o's "holds":
 * {"from": "components"|"runfile"|null, "profile", "adjust": [..],
 *  "components": [names], "nccl": version|null, "text"}. */
struct ce_receipt_held;
void cli_json_held(struct cJSON *o, const struct ce_receipt_held *h);

/* render.c */
void cli_render_event(void *ud, const ce_event *ev);
void cli_error(cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_warn(cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cli_note(cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether the progress bar is on stderr's line now (async-signal-safe). */
bool cli_render_bar_shown(void);
/* interrupt.c (the full binary's): Ctrl-C / SIGTERM during a long step:
 * clear the bar, say exactly what each download kept and what the next run
 * does with it (resumes at byte N, or starts over), then die of the signal. */
void cli_render_trap_interrupt(cli *c);
/* "845.4 MiB": bytes for people */
void cli_size(char *out, size_t n, double bytes);
/* The one way text that quotes what others wrote (files, manifests, drivers,
 * frameworks, servers) reaches standard output: printf, then every control
 * character of the result (C0 but tab and newline, DEL, UTF-8 C1) shown as
 * \xNN (core/trust.h), so nothing printed drives the terminal.  A
 * command's own colour codes go through plain printf, never through this.
 * (Standard error's messages are escaped the same way by cli_error & co.) */
void cli_print(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* s with control characters escaped (core/trust.h); one of 8 rotating
 * static buffers.  Prefer cli_print. */
const char *cli_esc(const char *s);
/* The same for a name on a line of its own making (a table cell, a list
 * entry): a newline or tab in it escaped too, so it cannot start a line of
 * its own (a forged row). */
const char *cli_esc_line(const char *s);
/* Print the status's message (ce_errmsg) as the error of a failed core call
 * and return its exit code. */
int cli_fail(cli *c, int err);
/* --for PYTHON (for_python.c): the spec the frameworks importable in PYTHON
 * were built for (TensorFlow's row, else PyTorch's CUDA + cuDNN); choice
 * ("tf"/"torch", or NULL) settles two that disagree.  Says which decided. */
int cli_for_python(cli *c, const char *python, const char *choice, char *spec, size_t specsz);
/* A command's --for PYTHON [--framework F] (options opt_for, opt_fw): with
 * --for, *version becomes the spec (in buf), a VERSION beside it a usage
 * error; --framework without --for a usage error.  Returns the exit code
 * (rendered), 0 to go on. */
int cli_for_version(cli *c, const cli_args *a, int opt_for, int opt_fw, char *buf, size_t n,
                    const char **version);

/* --libs framework|toolchain (NULL: decide) for a toolchain about to be
 * activated in sel (store/activate.h: ce_libs) for python (--for PYTHON, the
 * Python exec runs; NULL: none known).  Deciding: the framework's own when
 * python brings a library family the toolchain has too (core/pylibs.h),
 * said in a note; toolchain refused (exit 2) where it cannot be complete
 * (python's own copy of a family would still load by path).  Sets
 * sel->libs; returns the exit code (rendered), 0 to go on. */
struct ce_active_info;
int cli_libs_mode(cli *c, const char *libs, const char *python, struct ce_active_info *sel);
/* The interpreter CMD is when its name is python's (python, python3,
 * python3.12), else NULL: exec's auto mode. */
const char *cli_python_cmd(const char *cmd);

/* The commands, one file each (cmd_<verb>.c; use and deactivate share
 * cmd_use.c): cli_cmd_<verb> is the command's table entry, its handler and
 * options are the file's own. */
extern const cli_cmd cli_cmd_install, cli_cmd_modulefile, cli_cmd_mirror, cli_cmd_push, cli_cmd_pull,
    cli_cmd_self, cli_cmd_update, cli_cmd_outdated, cli_cmd_config, cli_cmd_uninstall, cli_cmd_list,
    cli_cmd_list_remote, cli_cmd_info, cli_cmd_prefix, cli_cmd_init, cli_cmd_use, cli_cmd_deactivate,
    cli_cmd_env, cli_cmd_local, cli_cmd_global, cli_cmd_current, cli_cmd_which, cli_cmd_exec,
    cli_cmd_verify, cli_cmd_jupyter, cli_cmd_doctor, cli_cmd_adopt, cli_cmd_cache;
/* cmd_pull.c: install the toolchain images refs[0..n) name (oci://...);
 * returns the exit status (install oci://... and pull). */
int cli_oci_install(cli *c, const char *const *refs, size_t n);
/* cmd_push.c: cli_fail for a registry's failure: its message, and registry
 * advice instead of the mirror's (proxy, --insecure, CURL_CA_BUNDLE). */
int cli_oci_fail(cli *c, int err);
/* mirror_oci.c: mirror SPEC... --to oci://REGISTRY/REPO (install, then push each
 * as REPO:<name> and REPO:<spec>); returns the exit status. */
int cli_mirror_oci(cli *c, const char *to, const char **specs, size_t n);

/* cmd_env.c: print the environment of sel for shell sh (ce_shell, or
 * CLI_SH_DOTENV) on stdout: env and use.  Returns 0 or the exit status. */
enum { CLI_SH_DOTENV = 100 };
struct ce_active_info;
int cli_print_env(cli *c, const struct ce_active_info *sel, bool set_version, bool warn, int sh);

/* verify_framework.c: verify --framework on an installed toolchain (in its
 * environment, like exec); returns the exit status. */
struct ce_toolchain;
int cli_verify_framework(cli *c, const struct ce_toolchain *tc, const char *framework, const char *python,
                         const char *libcuda, const char *libs);

#endif
