/* cli_parse (src/cli/args.c): the one parser of every command's argv against
 * the options and positional counts its table entry declares. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

enum { O_NAME = 1, O_FLAG, O_OUT, O_SHELL };

static const cli_opt opts[] = {
    { "name", 0, true, O_NAME },
    { "flag", 'f', false, O_FLAG },
    { "output", 'o', true, O_OUT },
    { "shell", 's', true, O_SHELL },
    { "json", 0, false, O_SHELL, "json" },
    { 0 },
};

static const cli_cmd one = { "one", NULL, NULL, "", "usage: one\n", .opts = opts, .min_pos = 1, .max_pos = 1,
                             .missing = "which one?", .extra = "one at a time (got '%s' and '%s')" };
static const cli_cmd any = { "any", NULL, NULL, "", "usage: any\n", .opts = opts, .max_pos = -1 };
static const cli_cmd none = { "none", NULL, NULL, "", "usage: none\n", .opts = opts };
static const cli_cmd single = { "single", NULL, NULL, "", "", .max_pos = 1, .extra = "one CMD only: %s" };
static const cli_cmd rest = { "rest", NULL, NULL, "", "", .max_pos = 1, .needs = CLI_REST };

static cli c;
static const char *pos[32];
static cli_args a;
static char err[1024];

/* parse argv (NULL-terminated) for cmd; what it printed on stderr lands in err */
static int parse(const cli_cmd *cmd, const char *const *argv)
{
    int argc = 0;
    while (argv[argc]) argc++;
    memset(&c, 0, sizeof c);
    fflush(stderr);
    FILE *tmp = tmpfile();
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    int rc = cli_parse(&c, cmd, argc, (char **)argv, pos, &a);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(err, 1, sizeof err - 1, tmp);
    err[n] = '\0';
    fclose(tmp);
    return rc;
}

static void test_options(void **state)
{
    (void)state;
    const char *v[] = { "any", "--name=x", "-fo", "out", "p1", "-qvv", "--manifest", "m.json", "-", "p2", NULL };
    assert_int_equal(parse(&any, v), 0);
    assert_string_equal(a.opt[O_NAME], "x");
    assert_string_equal(a.opt[O_FLAG], "");
    assert_string_equal(a.opt[O_OUT], "out");
    assert_null(a.opt[O_SHELL]);
    assert_true(cli_on(&a, O_FLAG) && !cli_on(&a, O_SHELL));
    assert_int_equal(a.n, 3);
    assert_string_equal(a.pos[0], "p1");
    assert_string_equal(a.pos[1], "-");
    assert_string_equal(a.pos[2], "p2");
    assert_true(c.ctx.quiet);
    assert_int_equal(c.ctx.verbose, 2);
    assert_string_equal(c.ctx.manifest, "m.json");
    /* -ovalue, --name value, and the last of two spellings wins (env --json = --shell json) */
    const char *w[] = { "any", "-oval", "--name", "y", "--shell", "fish", "--json", NULL };
    assert_int_equal(parse(&any, w), 0);
    assert_string_equal(a.opt[O_OUT], "val");
    assert_string_equal(a.opt[O_NAME], "y");
    assert_string_equal(a.opt[O_SHELL], "json");
    const char *x[] = { "any", "--json", "-s", "bash", NULL };
    assert_int_equal(parse(&any, x), 0);
    assert_string_equal(a.opt[O_SHELL], "bash");
}

static void test_help(void **state)
{
    (void)state;
    const char *v[] = { "one", "--help", "--bogus", NULL };
    assert_int_equal(parse(&one, v), CLI_HELP);
    const char *w[] = { "one", "-fh", NULL };
    assert_int_equal(parse(&one, w), CLI_HELP);
    assert_string_equal(err, "");
    /* a usage error before --help wins, as it did in each command's loop */
    const char *x[] = { "one", "a", "b", "--help", NULL };
    assert_int_equal(parse(&one, x), 2);
}

static void test_usage_errors(void **state)
{
    (void)state;
    const struct { const cli_cmd *cmd; const char *argv[6]; const char *msg; } t[] = {
        { &one, { "one", "--bogus", "x" }, "cudaenv one: unknown option --bogus\nTry 'cudaenv one --help'.\n" },
        { &one, { "one", "-fx" }, "cudaenv one: unknown option -x\nTry 'cudaenv one --help'.\n" },
        { &one, { "one", "--name" }, "cudaenv one: option --name needs a value\nTry 'cudaenv one --help'.\n" },
        { &one, { "one", "-o" }, "cudaenv one: option -o needs a value\nTry 'cudaenv one --help'.\n" },
        { &one, { "one", "--flag=1" }, "cudaenv one: option --flag takes no value\nTry 'cudaenv one --help'.\n" },
        { &one, { "one" }, "cudaenv one: which one?\nTry 'cudaenv one --help'.\n" },
        { &one, { "one", "a", "b" }, "cudaenv one: one at a time (got 'a' and 'b')\nTry 'cudaenv one --help'.\n" },
        { &none, { "none", "a" }, "cudaenv none: unexpected argument 'a'\nTry 'cudaenv none --help'.\n" },
        { &single, { "single", "a", "b" }, "cudaenv single: one CMD only: b\nTry 'cudaenv single --help'.\n" },
        { &single, { "single", "--flag" }, "cudaenv single: unknown option --flag\nTry 'cudaenv single --help'.\n" },
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        assert_int_equal(parse(t[i].cmd, t[i].argv), 2);
        assert_string_equal(err, t[i].msg);
    }
}

static void test_rest(void **state)
{
    (void)state;
    /* "--" ends the options: what follows is the rest, not positionals */
    const char *v[] = { "any", "p", "--", "--bogus", "q", NULL };
    assert_int_equal(parse(&any, v), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(a.n_rest, 2);
    assert_string_equal(a.rest[0], "--bogus");
    /* CLI_REST: the words after the last positional, with or without "--" */
    const char *w[] = { "rest", "-q", "11.8", "nvcc", "--version", NULL };
    assert_int_equal(parse(&rest, w), 0);
    assert_string_equal(a.pos[0], "11.8");
    assert_int_equal(a.n_rest, 2);
    assert_string_equal(a.rest[0], "nvcc");
    assert_string_equal(a.rest[1], "--version");
    const char *x[] = { "rest", "11.8", "--", "-x", NULL };
    assert_int_equal(parse(&rest, x), 0);
    assert_int_equal(a.n_rest, 1);
    assert_string_equal(a.rest[0], "-x");
    const char *y[] = { "rest", "11.8", NULL };
    assert_int_equal(parse(&rest, y), 0);
    assert_int_equal(a.n_rest, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_rest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
