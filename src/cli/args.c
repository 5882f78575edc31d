/* cli_parse: a command's argv against the options and positional counts its
 * table entry declares (cli.h), with the global options every command takes;
 * and the usage errors and --help every command shares.  No allocation:
 * values point into argv, positionals into the caller's pos. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/version.h"

int cli_help(const cli_cmd *cmd)
{
    fputs(cmd->usage, stdout);
    fputs("\nglobal options: -q/--quiet, -v/--verbose, -h/--help, --manifest PATH|URL, --insecure,\n"
          "                --driver VER (plan for that NVIDIA driver: another machine's)\n", stdout);
    return 0;
}

int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "cudaenv%s%s: ", cmd ? " " : "", cmd ? cmd->name : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'cudaenv %s%s--help'.\n", cmd ? cmd->name : "", cmd ? " " : "");
    return 2;
}

enum { G_QUIET = CLI_MAX_OPT, G_VERBOSE, G_HELP, G_MANIFEST, G_INSECURE, G_DRIVER };

static const cli_opt global_opts[] = {
    { "quiet", 'q', false, G_QUIET },
    { "verbose", 'v', false, G_VERBOSE },
    { "help", 'h', false, G_HELP },
    { "manifest", 0, true, G_MANIFEST },
    { "insecure", 0, false, G_INSECURE },
    { "driver", 0, true, G_DRIVER },
    { 0 },
};

static const cli_opt *find_long(const cli_opt *opts, const char *name, size_t n)
{
    for (const cli_opt *o = opts; o && o->name; o++)
        if (strlen(o->name) == n && strncmp(o->name, name, n) == 0) return o;
    for (const cli_opt *o = global_opts; o->name; o++)
        if (strlen(o->name) == n && strncmp(o->name, name, n) == 0) return o;
    return NULL;
}

static const cli_opt *find_short(const cli_opt *opts, char ch)
{
    for (const cli_opt *o = opts; o && o->name; o++)
        if (o->short_name == ch) return o;
    for (const cli_opt *o = global_opts; o->name; o++)
        if (o->short_name == ch) return o;
    return NULL;
}

/* One option seen: a global one goes to the context, a command's to out. */
static int take(cli *c, const cli_opt *o, const char *val, cli_args *out)
{
    switch (o->id) {
    case G_QUIET: c->ctx.quiet = true; break;
    case G_VERBOSE: c->ctx.verbose++; break;
    case G_HELP: return CLI_HELP;
    case G_MANIFEST: snprintf(c->ctx.manifest, sizeof c->ctx.manifest, "%s", val); break;
    case G_INSECURE: c->ctx.insecure = true; break;
    case G_DRIVER: return cli_set_driver(c, val, "--driver") ? 2 : 0;
    default: out->opt[o->id] = o->has_arg ? val : o->value ? o->value : "";
    }
    return 0;
}

int cli_set_driver(cli *c, const char *val, const char *from)
{
    size_t n = strspn(val, "0123456789.");
    if (!*val || val[n] || !ce_version_valid(val) || n >= sizeof c->ctx.driver) {
        cli_usage_error(c->cmd, "%s '%s' is not an NVIDIA driver version: give the compute nodes' driver, "
                        "like 550.54.14 or 580 (nvidia-smi's 'Driver Version')", from, val);
        return 2;
    }
    memcpy(c->ctx.driver, val, n + 1);
    return 0;
}

static int positional(const cli_cmd *cmd, const char *word, cli_args *out)
{
    if (cmd->max_pos < 0 || out->n < cmd->max_pos) {
        out->pos[out->n++] = word;
        return 0;
    }
    if (!cmd->extra) return cli_usage_error(cmd, "unexpected argument '%s'", word);
    /* the message names the word before and this one, or this one alone */
    const char *s = strstr(cmd->extra, "%s");
    bool two = s && strstr(s + 2, "%s");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
    if (two) return cli_usage_error(cmd, cmd->extra, out->pos[out->n - 1], word);
    return cli_usage_error(cmd, cmd->extra, word);
#pragma GCC diagnostic pop
}

int cli_parse(cli *c, const cli_cmd *cmd, int argc, char **argv, const char **pos, cli_args *out)
{
    memset(out, 0, sizeof *out);
    out->pos = pos;
    int i = 1, rc;
    while (i < argc) {
        const char *s = argv[i];
        if (strcmp(s, "--") == 0) { i++; break; }
        if (s[0] != '-' || s[1] == '\0') {
            i++;
            if (positional(cmd, s, out)) return 2;
            if ((cmd->needs & CLI_REST) && out->n == cmd->max_pos) {
                if (i < argc && strcmp(argv[i], "--") == 0) i++;
                break;
            }
            continue;
        }
        i++;
        if (s[1] == '-') {
            const char *name = s + 2, *eq = strchr(name, '='), *val = NULL;
            size_t n = eq ? (size_t)(eq - name) : strlen(name);
            const cli_opt *o = find_long(cmd->opts, name, n);
            if (!o) return cli_usage_error(cmd, "unknown option %s", s);
            if (o->has_arg) {
                if (eq) val = eq + 1;
                else if (i < argc) val = argv[i++];
                else return cli_usage_error(cmd, "option --%s needs a value", o->name);
            } else if (eq) {
                return cli_usage_error(cmd, "option --%s takes no value", o->name);
            }
            if ((rc = take(c, o, val, out))) return rc;
            continue;
        }
        /* -abc: clustered short options; -ovalue or -o value */
        for (const char *p = s + 1; *p; p++) {
            const cli_opt *o = find_short(cmd->opts, *p);
            const char *val = NULL;
            if (!o) return cli_usage_error(cmd, "unknown option -%c", *p);
            if (o->has_arg) {
                if (p[1]) val = p + 1;
                else if (i < argc) val = argv[i++];
                else return cli_usage_error(cmd, "option -%c needs a value", *p);
            }
            if ((rc = take(c, o, val, out))) return rc;
            if (val) break;
        }
    }
    out->rest = argv + i;
    out->n_rest = argc - i;
    if (out->n < cmd->min_pos) return cli_usage_error(cmd, "%s", cmd->missing);
    return 0;
}
