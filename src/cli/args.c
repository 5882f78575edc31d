#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void cli_args_init(cli_args *a, int argc, char **argv)
{
    memset(a, 0, sizeof *a);
    a->argc = argc;
    a->argv = argv;
    a->i = 1;
}

static const cli_opt global_opts[] = {
    { "quiet", 'q', false, 1001 },
    { "verbose", 'v', false, 1002 },
    { "help", 'h', false, 1003 },
    { "manifest", 0, true, 1004 },
    { "insecure", 0, false, 1005 },
    { 0 },
};

static int handle_global(cli *c, int id, const char *val)
{
    switch (id) {
    case 1001: c->ctx.quiet = true; return 0;
    case 1002: c->ctx.verbose++; return 0;
    case 1003: return CLI_HELP;
    case 1004: snprintf(c->ctx.manifest, sizeof c->ctx.manifest, "%s", val); return 0;
    case 1005: c->ctx.insecure = true; return 0;
    }
    return 0;
}

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

int cli_next(cli *c, cli_args *a, const cli_cmd *cmd, const cli_opt *opts, const char **arg)
{
    for (;;) {
        const cli_opt *o;
        const char *val = NULL;
        if (a->pending && *a->pending) {
            char ch = *a->pending++;
            o = find_short(opts, ch);
            if (!o) { cli_usage_error(cmd, "unknown option -%c", ch); return CLI_BAD; }
            if (o->has_arg) {
                if (*a->pending) { val = a->pending; a->pending = NULL; }
                else if (a->i < a->argc) val = a->argv[a->i++];
                else { cli_usage_error(cmd, "option -%c needs a value", ch); return CLI_BAD; }
            }
        } else {
            if (a->i >= a->argc) return CLI_END;
            const char *s = a->argv[a->i];
            if (a->only_args || s[0] != '-' || s[1] == '\0') {
                a->i++;
                *arg = s;
                return CLI_ARG;
            }
            a->i++;
            if (strcmp(s, "--") == 0) { a->only_args = true; return CLI_END; }
            if (s[1] == '-') {
                const char *name = s + 2;
                const char *eq = strchr(name, '=');
                size_t n = eq ? (size_t)(eq - name) : strlen(name);
                o = find_long(opts, name, n);
                if (!o) { cli_usage_error(cmd, "unknown option %s", s); return CLI_BAD; }
                if (o->has_arg) {
                    if (eq) val = eq + 1;
                    else if (a->i < a->argc) val = a->argv[a->i++];
                    else { cli_usage_error(cmd, "option --%s needs a value", o->name); return CLI_BAD; }
                } else if (eq) {
                    cli_usage_error(cmd, "option --%s takes no value", o->name);
                    return CLI_BAD;
                }
            } else {
                a->pending = s + 1;
                continue;
            }
        }
        if (o->id >= 1001 && o->id <= 1005) {
            int r = handle_global(c, o->id, val);
            if (r == CLI_HELP) return CLI_HELP;
            continue;
        }
        *arg = val;
        return o->id;
    }
}

char **cli_rest(cli_args *a, int *n)
{
    *n = a->argc - a->i;
    return a->argv + a->i;
}
