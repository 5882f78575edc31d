/* cudaenv init bash|zsh|fish: the shell integration to eval.
 *
 * - a `cudaenv` shell function: `use`, `use --unset`/`deactivate`, `local` and
 *   `global` change this shell by evaluating what the binary prints; every
 *   other subcommand passes through to the binary;
 * - a prompt/cd hook that finds .cuda-version from $PWD up to / and reads it
 *   and $CUDAENV_ROOT/global (and ~/.config/cudaenv/global, the user's own
 *   default beside a shared store) with shell builtins only ([ -f ], read, string
 *   ops); a file is read only when it is regular and not empty ([ -s ]), at
 *   most 256 bytes: /proc/kmsg and its kind report size 0, so the read never
 *   blocks on them (nor takes kernel log lines); the binary then refuses them.
 *   When the key (CUDAENV_VERSION | file | its first line | global |
 *   root) equals the one it saw last, it returns without starting any
 *   process (__CUDAENV_HOOK_EXECS counts the times it did, for the bench
 *   and tests).  Only a change runs `cudaenv env`, whose output applies the
 *   .cuda-version toolchain on entering a project and the global default (or
 *   the machine's CUDA) on leaving it;
 * - completions, sourced from the files `make install` puts in place (or the
 *   source tree when run from a build directory); bash's on the first
 *   completion (a stub _cudaenv sources the file), zsh's through autoload.
 * The bash and zsh texts are one: the syntax used is common to both.
 *
 * --static [-o FILE] writes the same text to a file (default
 * $CUDAENV_ROOT/init/cudaenv.SHELL; `make install` puts one per shell in
 * share/cudaenv/init/) that the start-up file sources: no `$(cudaenv init)`
 * subprocess at shell start.  The file carries the version that wrote it and
 * regenerates itself when the binary is newer than it (test -nt, a builtin). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/file.h"
#include "core/priv.h"
#include "core/trust.h"

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
    "  if [[ ! -s $2 ]]; then\n"
    "    :\n"
    "  elif [[ -n ${ZSH_VERSION-} ]]; then\n"
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
    "      set f \"$d/.cuda-version\"; test -s $f; and read -n 256 c < $f 2>/dev/null; or true; break\n"
    "    end\n"
    "    test -z \"$d\"; and break\n"
    "    set d (string replace -r '/[^/]*$' '' -- $d)\n"
    "  end\n"
    "  test (string length -- $PWD) -ge 4000; and set f \"$f|deep:$PWD\"\n"
    "  test -s \"$r/global\"; and test -f \"$r/global\"; and begin; read -n 256 g < \"$r/global\" 2>/dev/null; or true; end\n"
    "  set -l u $HOME/.config; set -q XDG_CONFIG_HOME; and test -n \"$XDG_CONFIG_HOME\"; and set u $XDG_CONFIG_HOME\n"
    "  if test -f \"$u/cudaenv/global\"; and test -s \"$u/cudaenv/global\"; read -n 256 -l ug < \"$u/cudaenv/global\" 2>/dev/null; and set g \"$g|$ug\"; end\n"
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
        char p[CE_PATH_MAX];
        if (rel[i][0] == '/') snprintf(p, sizeof p, "%s", rel[i]);
        else if (ce_path_join(p, sizeof p, ce_self_dir(&c->ctx), rel[i]) != CE_OK) continue;   /* no such file */
        if (realpath(p, out)) return true;
    }
    return false;
}

/* Single-quoted for bash/zsh: ' becomes '\''. */
static void print_quoted(FILE *o, const char *s)
{
    fputc('\'', o);
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", o);
        else fputc(*s, o);
    }
    fputc('\'', o);
}

/* Single-quoted for fish, where \' and \\ are escapes inside '...' (the
 * POSIX form would let a \' in the path end the string and inject code). */
static void print_quoted_fish(FILE *o, const char *s)
{
    fputc('\'', o);
    for (; *s; s++) {
        if (*s == '\'' || *s == '\\') fputc('\\', o);
        fputc(*s, o);
    }
    fputc('\'', o);
}

/* The integration text for one shell, with the light binary bin. */
static void write_init(const cli *c, FILE *o, const char *shell, const char *bin)
{
    char comp[PATH_MAX];
    if (!strcmp(shell, "fish")) {
        fputs("set -g __CUDAENV_BIN ", o);
        print_quoted_fish(o, bin);
        fputs("\n", o);
        fputs(fish_text, o);
        static const char *const fc[] = {
            "../share/fish/vendor_completions.d/cudaenv.fish", "../../completions/cudaenv.fish",
            "../../share/fish/vendor_completions.d/cudaenv.fish",
        };
        if (find_file(c, fc, 3, comp)) {
            fputs("source ", o);
            print_quoted_fish(o, comp);
            fputs("\n", o);
        }
        return;
    }
    fputs("__CUDAENV_BIN=", o);
    print_quoted(o, bin);
    fputs("\n", o);
    fputs(posix_fn, o);
    if (!strcmp(shell, "zsh")) {
        fputs(zsh_tail, o);
        static const char *const zc[] = {
            "../share/zsh/site-functions/_cudaenv", "../../completions/_cudaenv",
            "../../share/zsh/site-functions/_cudaenv",
        };
        if (find_file(c, zc, 3, comp)) {
            char *slash = strrchr(comp, '/');
            *slash = '\0';
            /* on fpath always: a compinit run later (init eval'd before it
             * in .zshrc) finds _cudaenv by its #compdef line; compdef exists
             * only after compinit, so bind now only when it has run */
            fputs("fpath=(", o);
            print_quoted(o, comp);
            fputs(" $fpath)\nif (( $+functions[compdef] )); then autoload -Uz _cudaenv; compdef _cudaenv cudaenv; fi\n", o);
        }
        return;
    }
    fputs(bash_tail, o);
    static const char *const bc[] = {
        "../share/bash-completion/completions/cudaenv", "../../completions/cudaenv.bash",
        "../../share/bash-completion/completions/cudaenv",
    };
    if (find_file(c, bc, 3, comp)) {
        /* loaded on the first completion, not at every shell start */
        fputs("_cudaenv() { unset -f _cudaenv; source ", o);
        print_quoted(o, comp);
        fputs(" && _cudaenv \"$@\"; }\ncomplete -F _cudaenv cudaenv\n", o);
    }
}

/* The static file: a version stamp, then the staleness check (the binary is
 * newer than this file: a rebuild or an upgrade), which regenerates the
 * file and sources it again (once: __CUDAENV_REGEN), falling back to the
 * eval of `init` when the file cannot be written; then the integration. */
static void write_static_head(FILE *o, const char *shell, const char *bin, const char *path)
{
    bool fish = !strcmp(shell, "fish");
    fprintf(o, "# cudaenv %s static shell integration for %s, written by `cudaenv init %s --static`.\n"
               "# Sourced with no process started; regenerated when the cudaenv binary is newer.\n",
            CE_VERSION, shell, shell);
    if (fish) {
        fputs("if not set -q __CUDAENV_REGEN; and test ", o);
        print_quoted_fish(o, bin);
        fputs(" -nt ", o);
        print_quoted_fish(o, path);
        fputs("\n  set -g __CUDAENV_REGEN 1\n  if ", o);
        print_quoted_fish(o, bin);
        fputs(" init fish --static --output ", o);
        print_quoted_fish(o, path);
        fputs(" >/dev/null 2>&1\n    source ", o);
        print_quoted_fish(o, path);
        fputs("\n  else\n    ", o);
        print_quoted_fish(o, bin);
        fputs(" init fish | source\n  end\n  set -e __CUDAENV_REGEN\n  return 0\nend\n", o);
        fprintf(o, "set -g __CUDAENV_INIT_VERSION '%s'\n", CE_VERSION);
        return;
    }
    fputs("if [[ -z ${__CUDAENV_REGEN-} && ", o);
    print_quoted(o, bin);
    fputs(" -nt ", o);
    print_quoted(o, path);
    fputs(" ]]; then\n  __CUDAENV_REGEN=1\n  if ", o);
    print_quoted(o, bin);
    fprintf(o, " init %s --static --output ", shell);
    print_quoted(o, path);
    fputs(" >/dev/null 2>&1; then\n    source ", o);
    print_quoted(o, path);
    fputs("\n  else\n    eval \"$(", o);
    print_quoted(o, bin);
    fprintf(o, " init %s)\"\n  fi\n  unset __CUDAENV_REGEN\n  return 0\nfi\n", shell);
    fprintf(o, "__CUDAENV_INIT_VERSION='%s'\n", CE_VERSION);
}

/* As root (core/priv.h): the static file is written only into a directory
 * only root can change.  In the store (the default) the store rule applies
 * (core/trust.h, which checks init/ and its files as every command's store
 * check does); an --output elsewhere needs its directory's chain from / to
 * be root's.  The file itself is made with mkstemp and renamed over. */
static int static_target_safe(cli *c, const char *path, bool in_store)
{
    if (!ce_priv()) return CE_OK;
    if (in_store) return ce_trust_root(&c->ctx);
    char dir[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) *slash = '\0';
    if (ce_priv_path_ok(dir)) return CE_OK;
    return ce_fail(CE_ERR_PERM, "unsafe for cudaenv run as root: %s is not a directory only root can "
                   "change (it, or one above it, is a symlink or a user's, or writable by group or others); write "
                   "the file somewhere root owns", dir);
}

/* --static: write the file atomically (default $CUDAENV_ROOT/init/cudaenv.SHELL). */
static int write_static(cli *c, const char *shell, const char *bin, const char *out)
{
    char path[PATH_MAX + 64], dir[PATH_MAX + 64];
    int n;
    /* in the store: its rule first (ctx.root resolved by it) */
    int src = out && *out ? CE_OK : static_target_safe(c, NULL, true);
    if (src) return cli_fail(c, src);
    if (out && *out) {
        if (out[0] == '/' || !getcwd(dir, PATH_MAX)) n = snprintf(path, sizeof path, "%s", out);
        else n = ce_path_join(path, sizeof path, dir, out) == CE_OK ? (int)strlen(path) : -1;
    } else {
        n = snprintf(path, sizeof path, "%s/init/cudaenv.%s", c->ctx.root, shell);
    }
    if (n < 0 || (size_t)n >= sizeof path)
        return cli_fail(c, ce_fail(CE_ERR_OTHER, "path too long: %s", out ? out : c->ctx.root));
    int trc = out && *out ? static_target_safe(c, path, false) : CE_OK;
    if (trc) return cli_fail(c, trc);
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        int rc = ce_mkdir_p(dir, 0755);
        if (rc) return cli_fail(c, rc);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    if (!o) return cli_fail(c, ce_fail(CE_ERR_NOMEM, "out of memory"));
    write_static_head(o, shell, bin, path);
    write_init(c, o, shell, bin);
    fclose(o);
    int rc = ce_file_write_atomic(path, text, len, 0644);
    free(text);
    if (rc) return cli_fail(c, rc);
    puts(path);
    if (!c->ctx.quiet)
        cli_note(c, "wrote %s; add to your shell's start-up file: source %s", path, path);
    return 0;
}

enum { OPT_STATIC = 1, OPT_OUTPUT };

static const cli_opt cmd_init_opts[] = {
    { "static", 0, false, OPT_STATIC },
    { "output", 'o', true, OPT_OUTPUT },
    { 0 },
};

static int cmd_init(cli *c, const cli_args *a)
{
    const char *shell = a->pos[0], *output = a->opt[OPT_OUTPUT];
    bool stat_file = cli_on(a, OPT_STATIC);
    if (strcmp(shell, "fish") && strcmp(shell, "zsh") && strcmp(shell, "bash"))
        return cli_usage_error(c->cmd, "unsupported shell '%s' (bash, zsh, fish)", shell);
    if (output && !stat_file) return cli_usage_error(c->cmd, "--output goes with --static");

    char bin[PATH_MAX + 16];
    snprintf(bin, sizeof bin, "%s/cudaenv", ce_self_dir(&c->ctx));
    if (access(bin, X_OK) != 0) snprintf(bin, sizeof bin, "cudaenv");
    /* the hook must not pay for loading the full binary: name the light one */
    if (stat_file) return write_static(c, shell, bin, output);
    write_init(c, stdout, shell, bin);
    return 0;
}

const cli_cmd cli_cmd_init = {
    .name = "init", .run = cmd_init,
    .summary = "shell integration to eval",
    .usage =
        "usage: cudaenv init bash|zsh|fish [--static [-o FILE]]\n"
        "\n"
        "Print the shell integration: the cudaenv shell function (so use can change the\n"
        "current shell), the cd hook for .cuda-version, and completions.\n"
        "  bash: eval \"$(cudaenv init bash)\"     zsh: eval \"$(cudaenv init zsh)\"\n"
        "  fish: cudaenv init fish | source\n"
        "\n"
        "  --static       write it to a file to source instead (no process at shell start;\n"
        "                 the file regenerates itself when the binary is newer) and print\n"
        "                 its path; then in ~/.bashrc: source ~/.cudaenv/init/cudaenv.bash\n"
        "  -o, --output FILE   where --static writes (default $CUDAENV_ROOT/init/cudaenv.SHELL)\n",
    .opts = cmd_init_opts, .min_pos = 1, .max_pos = 1,
    .missing = "which shell? bash, zsh or fish", .extra = "one shell only", .needs = CLI_NO_STORE,
};
