/* cudaenv init bash|zsh|fish: the shell integration to eval.
 *
 * - a `cudaenv` shell function: `use`, `use --unset`/`deactivate`, `local` and
 *   `global` change this shell by evaluating what the binary prints; every
 *   other subcommand passes through to the binary;
 * - a prompt/cd hook that finds .cuda-version from $PWD up to / and reads it
 *   and $CUDAENV_ROOT/global (and ~/.config/cudaenv/global, the user's own
 *   default beside a shared store) with shell builtins only ([ -f ], read, string
 *   ops): when the key (CUDAENV_VERSION | file | its first line | global |
 *   root) equals the one it saw last, it returns without starting any
 *   process (__CUDAENV_HOOK_EXECS counts the times it did, for the bench
 *   and tests).  Only a change runs `cudaenv env`, whose output applies the
 *   .cuda-version toolchain on entering a project and the global default (or
 *   the machine's CUDA) on leaving it;
 * - completions, sourced from the files `make install` puts in place (or the
 *   source tree when run from a build directory).
 * The bash and zsh texts are one: the syntax used is common to both. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char posix_fn[] =
    "cudaenv() {\n"
    "  case ${1-} in\n"
    "  use|shell)\n"
    "    shift\n"
    "    case \" $* \" in *' -h '*|*' --help '*) \"$__CUDAENV_BIN\" use \"$@\"; return;; esac\n"
    "    case ${1-} in --unset|--reset) unset CUDAENV_VERSION; __cudaenv_hook; return;; esac\n"
    "    local __ce_out\n"
    "    __ce_out=$(\"$__CUDAENV_BIN\" use --shell bash \"$@\") || return $?\n"
    "    eval \"$__ce_out\"\n"
    "    __cudaenv_hook;;\n"
    "  deactivate) unset CUDAENV_VERSION; __cudaenv_hook;;\n"
    "  local|global)\n"
    "    \"$__CUDAENV_BIN\" \"$@\"; local __ce_rc=$?\n"
    "    __cudaenv_hook; return $__ce_rc;;\n"
    "  *) \"$__CUDAENV_BIN\" \"$@\";;\n"
    "  esac\n"
    "}\n"
    "__cudaenv_read1() {\n"
    "  local __ce_l=\n"
    "  if [[ -n ${ZSH_VERSION-} ]]; then\n"
    "    { IFS= read -r -u 0 -k 256 __ce_l < \"$2\"; } 2>/dev/null\n"
    "  else\n"
    "    { IFS= read -r -d '' -n 256 __ce_l < \"$2\"; } 2>/dev/null\n"
    "  fi\n"
    "  eval \"$1=\\${__ce_l%%\\$'\\\\n'*}\"\n"
    "}\n"
    "__cudaenv_hook() {\n"
    "  local d=$PWD f= c= g= r=${CUDAENV_ROOT:-$HOME/.cudaenv} __ce_out\n"
    "  while :; do\n"
    "    if [[ -f $d/.cuda-version ]]; then\n"
    "      f=$d/.cuda-version; __cudaenv_read1 c \"$f\"; break\n"
    "    fi\n"
    "    [[ -z $d ]] && break\n"
    "    d=${d%/*}\n"
    "  done\n"
    "  (( ${#PWD} >= 4000 )) && f=\"$f|deep:$PWD\"\n"
    "  [[ -f $r/global ]] && __cudaenv_read1 g \"$r/global\"\n"
    "  d=${XDG_CONFIG_HOME:-$HOME/.config}/cudaenv/global\n"
    "  [[ -f $d ]] && { __cudaenv_read1 d \"$d\"; g=\"$g|$d\"; }\n"
    "  d=\"${CUDAENV_VERSION-}|$f|$c|$g|$r\"\n"
    "  [[ $d == \"${__CUDAENV_KEY-}\" ]] && return 0\n"
    "  __CUDAENV_KEY=$d\n"
    "  [[ -n ${CUDAENV_VERSION-} ]] && return 0\n"
    "  [[ -z $f$g && :$PATH:${LD_LIBRARY_PATH-}: != *\"$r/versions/\"* ]] && return 0\n"
    "  __CUDAENV_HOOK_EXECS=$((${__CUDAENV_HOOK_EXECS:-0} + 1))\n"
    "  __ce_out=$(\"$__CUDAENV_BIN\" env --shell bash)\n"
    "  eval \"$__ce_out\"\n"
    "}\n";

static const char bash_tail[] =
    "if [[ \"${PROMPT_COMMAND[*]-}\" != *__cudaenv_hook* ]]; then\n"
    "  PROMPT_COMMAND=\"__cudaenv_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}\"\n"
    "fi\n"
    "__cudaenv_hook\n";

static const char zsh_tail[] =
    "autoload -Uz add-zsh-hook\n"
    "add-zsh-hook precmd __cudaenv_hook\n"
    "add-zsh-hook chpwd __cudaenv_hook\n"
    "__cudaenv_hook\n";

static const char fish_text[] =
    "function cudaenv\n"
    "  switch \"$argv[1]\"\n"
    "  case use shell\n"
    "    if contains -- --help $argv; or contains -- -h $argv\n"
    "      $__CUDAENV_BIN $argv; return\n"
    "    end\n"
    "    if contains -- \"$argv[2]\" --unset --reset\n"
    "      set -e CUDAENV_VERSION; __cudaenv_hook; return\n"
    "    end\n"
    "    set -l out ($__CUDAENV_BIN use --shell fish $argv[2..-1]); or return $status\n"
    "    string join \\n -- $out | source\n"
    "    __cudaenv_hook\n"
    "  case deactivate\n"
    "    set -e CUDAENV_VERSION; __cudaenv_hook\n"
    "  case local global\n"
    "    $__CUDAENV_BIN $argv; set -l rc $status\n"
    "    __cudaenv_hook; return $rc\n"
    "  case '*'\n"
    "    $__CUDAENV_BIN $argv\n"
    "  end\n"
    "end\n"
    "function __cudaenv_hook --on-variable PWD --on-event fish_prompt\n"
    "  set -l d $PWD; set -l f ''; set -l c ''; set -l g ''; set -l r $HOME/.cudaenv\n"
    "  set -q CUDAENV_ROOT; and test -n \"$CUDAENV_ROOT\"; and set r $CUDAENV_ROOT\n"
    "  while true\n"
    "    if test -f \"$d/.cuda-version\"\n"
    "      set f \"$d/.cuda-version\"; read -n 256 c < $f 2>/dev/null; or true; break\n"
    "    end\n"
    "    test -z \"$d\"; and break\n"
    "    set d (string replace -r '/[^/]*$' '' -- $d)\n"
    "  end\n"
    "  test (string length -- $PWD) -ge 4000; and set f \"$f|deep:$PWD\"\n"
    "  test -f \"$r/global\"; and begin; read -n 256 g < \"$r/global\" 2>/dev/null; or true; end\n"
    "  set -l u $HOME/.config; set -q XDG_CONFIG_HOME; and test -n \"$XDG_CONFIG_HOME\"; and set u $XDG_CONFIG_HOME\n"
    "  if test -f \"$u/cudaenv/global\"; read -n 256 -l ug < \"$u/cudaenv/global\" 2>/dev/null; and set g \"$g|$ug\"; end\n"
    "  set -l k \"$CUDAENV_VERSION|$f|$c|$g|$r\"\n"
    "  set -q __CUDAENV_KEY; and test \"$k\" = \"$__CUDAENV_KEY\"; and return 0\n"
    "  set -g __CUDAENV_KEY $k\n"
    "  set -q CUDAENV_VERSION; and test -n \"$CUDAENV_VERSION\"; and return 0\n"
    "  if test -z \"$f$g\"; and not string match -q -- \"*$r/versions/*\" \"$PATH\" \"$LD_LIBRARY_PATH\"\n"
    "    return 0\n"
    "  end\n"
    "  set -g __CUDAENV_HOOK_EXECS (math $__CUDAENV_HOOK_EXECS + 1)\n"
    "  $__CUDAENV_BIN env --shell fish | source\n"
    "end\n"
    "set -q __CUDAENV_HOOK_EXECS; or set -g __CUDAENV_HOOK_EXECS 0\n"
    "__cudaenv_hook\n";

/* The first candidate that exists, as a clean absolute path. */
static bool find_file(const cli *c, const char *const rel[], size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) {
        char p[PATH_MAX + 512];
        if (rel[i][0] == '/') snprintf(p, sizeof p, "%s", rel[i]);
        else snprintf(p, sizeof p, "%s/%s", c->ctx.self_dir, rel[i]);
        if (realpath(p, out)) return true;
    }
    return false;
}

/* Single-quoted for bash/zsh: ' becomes '\''. */
static void print_quoted(const char *s)
{
    putchar('\'');
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", stdout);
        else putchar(*s);
    }
    putchar('\'');
}

/* Single-quoted for fish, where \' and \\ are escapes inside '...' (the
 * POSIX form would let a \' in the path end the string and inject code). */
static void print_quoted_fish(const char *s)
{
    putchar('\'');
    for (; *s; s++) {
        if (*s == '\'' || *s == '\\') putchar('\\');
        putchar(*s);
    }
    putchar('\'');
}

int cmd_init(cli *c, int argc, char **argv)
{
    const cli_cmd *cmd = cli_find_cmd("init");
    cli_args a;
    cli_args_init(&a, argc, argv);
    const char *arg, *shell = NULL;
    int id;
    while ((id = cli_next(c, &a, cmd, NULL, &arg)) != CLI_END) {
        if (id == CLI_HELP) return cli_help(cmd);
        if (id == CLI_BAD) return 2;
        if (id == CLI_ARG) {
            if (shell) return cli_usage_error(cmd, "one shell only");
            shell = arg;
        }
    }
    if (!shell) return cli_usage_error(cmd, "which shell? bash, zsh or fish");
    bool fish = !strcmp(shell, "fish"), zsh = !strcmp(shell, "zsh");
    if (!fish && !zsh && strcmp(shell, "bash"))
        return cli_usage_error(cmd, "unsupported shell '%s' (bash, zsh, fish)", shell);

    char bin[PATH_MAX + 16], comp[PATH_MAX];
    snprintf(bin, sizeof bin, "%s/cudaenv", c->ctx.self_dir);
    if (access(bin, X_OK) != 0) snprintf(bin, sizeof bin, "cudaenv");
    /* the hook must not pay for loading the full binary: name the light one */
    if (fish) {
        fputs("set -g __CUDAENV_BIN ", stdout);
        print_quoted_fish(bin);
        fputs("\n", stdout);
        fputs(fish_text, stdout);
        static const char *const fc[] = {
            "../share/fish/vendor_completions.d/cudaenv.fish", "../../completions/cudaenv.fish",
            "../../share/fish/vendor_completions.d/cudaenv.fish",
        };
        if (find_file(c, fc, 3, comp)) {
            fputs("source ", stdout);
            print_quoted_fish(comp);
            fputs("\n", stdout);
        }
        return 0;
    }
    fputs("__CUDAENV_BIN=", stdout);
    print_quoted(bin);
    fputs("\n", stdout);
    fputs(posix_fn, stdout);
    if (zsh) {
        fputs(zsh_tail, stdout);
        static const char *const zc[] = {
            "../share/zsh/site-functions/_cudaenv", "../../completions/_cudaenv",
            "../../share/zsh/site-functions/_cudaenv",
        };
        if (find_file(c, zc, 3, comp)) {
            char *slash = strrchr(comp, '/');
            *slash = '\0';
            /* compdef exists only after compinit; without it, no completions */
            fputs("if (( $+functions[compdef] )); then fpath=(", stdout);
            print_quoted(comp);
            fputs(" $fpath); autoload -Uz _cudaenv; compdef _cudaenv cudaenv; fi\n", stdout);
        }
        return 0;
    }
    fputs(bash_tail, stdout);
    static const char *const bc[] = {
        "../share/bash-completion/completions/cudaenv", "../../completions/cudaenv.bash",
        "../../share/bash-completion/completions/cudaenv",
    };
    if (find_file(c, bc, 3, comp)) {
        fputs("source ", stdout);
        print_quoted(comp);
        fputs("\n", stdout);
    }
    return 0;
}
