/* cudaenv: the command table and the common setup every command shares. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/manifest.h"
#include "core/trust.h"

#ifdef CE_FULL
#define FULL_ONLY(fn) fn
#else
#define FULL_ONLY(fn) NULL
#endif

int (*const cli_url_manifest_loader)(ce_ctx *, const char *, struct ce_manifest **) =
    FULL_ONLY(ce_manifest_load_url);

static const cli_cmd commands[] = {
    { "install", NULL, FULL_ONLY(cmd_install), "download, verify and install toolchains",
      "usage: cudaenv install SPEC... [--cudnn VER] [--no-cudnn] [--force] [--offline] [--insecure]\n"
      "\n"
      "Resolve each SPEC through the manifest (tf-2.14, tensorflow-2.14.1, 11.8, 11.8.0,\n"
      "cuda-11.8, optionally +cudnn8.7), download the CUDA runfile and the cuDNN tarball\n"
      "(resume, retry, parallel), check size and sha256, and install them side by side\n"
      "under $CUDAENV_ROOT/versions without root.\n"
      "\n"
      "  --cudnn VER    use this cuDNN release instead of the one the spec implies\n"
      "  --no-cudnn     install the CUDA toolkit alone\n"
      "  --force        reinstall; also install a toolkit this machine's driver cannot run\n"
      "  --offline      use the download cache only, never the network\n"
      "  --insecure     allow http:// URLs in the manifest\n"
      "  --manifest M   use manifest file or URL M (also CUDAENV_MANIFEST)\n" },
    { "uninstall", NULL, cmd_uninstall, "remove an installed toolchain",
      "usage: cudaenv uninstall VERSION [--force]\n"
      "\n"
      "Remove one installed toolchain.  The toolchain the system switch points at is\n"
      "refused without --force.\n" },
    { "list", "ls", cmd_list, "installed toolchains and which one is active",
      "usage: cudaenv list [--json | --names]\n"
      "\n"
      "Installed toolchains; the active one is marked with why (shell, .cuda-version,\n"
      "global, system).  --names prints the bare names, one per line, for scripts.\n" },
    { "list-remote", "ls-remote", cmd_list_remote, "what the manifest offers",
      "usage: cudaenv list-remote [tf|cuda|cudnn] [--json]\n"
      "\n"
      "What the manifest offers, newest first (alias ls-remote):\n"
      "  tf      TensorFlow releases with their CUDA + cuDNN pair and Python range (default);\n"
      "          rows the manifest cannot install are marked with the reason\n"
      "  cuda    CUDA releases: min driver, max gcc, GPU architectures, platforms\n"
      "  cudnn   cuDNN releases: the CUDA majors and platforms they have tarballs for\n"
      "\n"
      "  --json   one JSON document\n" },
    { "info", NULL, cmd_info, "what a spec resolves to",
      "usage: cudaenv info SPEC [--json] [--cudnn VER] [--no-cudnn]\n"
      "\n"
      "Show what SPEC resolves to, without downloading: CUDA, cuDNN, min driver, max gcc,\n"
      "GPU architectures, Python range, URLs, sizes, sha256s and the source of each value.\n"
      "tf-2.14 takes TensorFlow's tested CUDA + cuDNN pair; 11.8 takes the newest 11.8.*\n"
      "and the newest cuDNN built for CUDA 11.  Unknown specs exit 3 with the nearest ones.\n"
      "\n"
      "  --cudnn VER    choose the cuDNN release (8.9 = newest 8.9.*; wins over +cudnn)\n"
      "  --no-cudnn     the CUDA toolkit alone\n"
      "  --json         one JSON document (keys: man cudaenv)\n" },
    { "prefix", NULL, cmd_prefix, "the directory of a toolchain",
      "usage: cudaenv prefix [VERSION]\n"
      "\n"
      "Print the directory of the installed toolchain VERSION (default: the active one).\n" },
    { "init", NULL, cmd_init, "shell integration to eval",
      "usage: cudaenv init bash|zsh|fish\n"
      "\n"
      "Print the shell integration: the cudaenv shell function (so use can change the\n"
      "current shell), the cd hook for .cuda-version, and completions.\n"
      "  bash: eval \"$(cudaenv init bash)\"     zsh: eval \"$(cudaenv init zsh)\"\n"
      "  fish: cudaenv init fish | source\n" },
    { "use", NULL, cmd_use, "switch this shell",
      "usage: cudaenv use VERSION|system | --unset\n"
      "\n"
      "Switch the current shell (needs the shell function from cudaenv init).  VERSION\n"
      "is an installed toolchain or a spec (11.8 = newest installed 11.8.x, tf-2.14);\n"
      "system = the machine's own CUDA.  --unset (or: cudaenv deactivate) drops the\n"
      "shell selection, so .cuda-version / global apply again.  Exit 3: not installed.\n" },
    { "env", NULL, cmd_env, "print the environment of a toolchain",
      "usage: cudaenv env [VERSION|system] [--shell bash|zsh|fish|json] [--json]\n"
      "\n"
      "Print the environment that use applies (CUDA_HOME, CUDA_PATH, CUDNN_PATH, PATH,\n"
      "LD_LIBRARY_PATH, CUDAENV_VERSION), for Jupyter kernels, cron and IDEs.  Without\n"
      "VERSION: the active selection (.cuda-version, global), what the cd hook applies.\n"
      "Entries earlier switches added are removed; other CUDA entries are reported.\n" },
    { "local", NULL, cmd_local, "pin a toolchain for this directory",
      "usage: cudaenv local [VERSION [--force] | --unset]\n"
      "\n"
      "Write .cuda-version in the current directory; the cd hook applies it.  Without\n"
      "VERSION print the pin that applies here.  --force pins a version not installed.\n" },
    { "global", NULL, cmd_global, "the default toolchain (user or system)",
      "usage: cudaenv global [VERSION] [--system [--force] [--dry-run] | --rollback]\n"
      "\n"
      "Without --system: the user's default toolchain.  With --system (root): point\n"
      "$CUDAENV_SYSROOT/usr/local/cuda and /etc/ld.so.conf.d/cudaenv.conf at it atomically\n"
      "and run ldconfig.  --rollback returns to the previous target; --dry-run prints the plan.\n"
      "A real directory at /usr/local/cuda is refused (exit 1) unless --force moves it aside;\n"
      "an update-alternatives link is cooperated with.  Exit 6: not root, or the toolchain\n"
      "is in a tree not owned by root or writable by others (use CUDAENV_ROOT=/opt/cudaenv).\n"
      "A switch interrupted (kill -9, power loss) is completed by the next --system/--rollback.\n"
      "CUDAENV_LDCONFIG overrides the ldconfig path (\"none\" skips it).\n" },
    { "current", NULL, cmd_current, "the active toolchain and where it comes from",
      "usage: cudaenv current [--json]\n"
      "\n"
      "Print the active toolchain and its origin: shell, .cuda-version (path), global, system.\n" },
    { "which", NULL, cmd_which, "the file a command resolves to",
      "usage: cudaenv which CMD\n"
      "\n"
      "Print the file CMD (e.g. nvcc) resolves to in the active toolchain.\n" },
    { "exec", NULL, cmd_exec, "run one command with a toolchain",
      "usage: cudaenv exec VERSION -- CMD [ARG...]\n"
      "\n"
      "Run CMD with the environment of toolchain VERSION.\n" },
    { "verify", NULL, cmd_verify, "self-test a toolchain on the GPU",
      "usage: cudaenv verify [VERSION] [--json] [--all-devices] [--bench] [--deep]\n"
      "\n"
      "Check the files against the receipt, that all versions agree, that libraries load\n"
      "from the toolchain, then run a kernel and a cuDNN convolution on the GPU.\n"
      "Exit 0 all passed, 7 a check failed, 8 no usable GPU/driver.\n"
      "\n"
      "  --json          one JSON document (toolchain, steps, versions, devices, timings)\n"
      "  --all-devices   check every GPU, not only device 0\n"
      "  --bench         add copy bandwidth and convolution throughput (vs PyTorch)\n"
      "  --deep          re-hash every file against the receipt's sha256\n"
      "  -v              show the evidence of every step, not only of failures\n" },
    { "doctor", NULL, cmd_doctor, "diagnose driver, runtime, cuDNN, device, environment",
      "usage: cudaenv doctor [--json]\n"
      "\n"
      "Walk the troubleshooting chain and name the fix for each problem.  Exit 0 when\n"
      "there are no errors, 7 when there are.\n" },
};

static const size_t n_commands = sizeof commands / sizeof *commands;

const cli_cmd *cli_find_cmd(const char *name)
{
    for (size_t i = 0; i < n_commands; i++) {
        if (strcmp(commands[i].name, name) == 0) return &commands[i];
        if (commands[i].alias && strcmp(commands[i].alias, name) == 0) return &commands[i];
    }
    return NULL;
}

static void main_usage(FILE *f)
{
    fprintf(f, "usage: cudaenv [-q|-v] COMMAND [ARGS]\n\n"
               "Install and switch NVIDIA CUDA toolkits + cuDNN, and prove they work.\n\ncommands:\n");
    for (size_t i = 0; i < n_commands; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'cudaenv COMMAND --help' for a command's options; 'man cudaenv' for the rest.\n"
               "Environment: CUDAENV_ROOT, CUDAENV_MANIFEST, CUDAENV_MIRROR, CUDAENV_SYSROOT,\n"
               "CUDAENV_VERSION, NO_COLOR.  Exit codes: 0 ok, 1 other, 2 usage, 3 not found,\n"
               "4 download, 5 integrity, 6 permission, 7 check failed, 8 no usable GPU.\n");
}

int cli_help(const cli_cmd *cmd)
{
    fputs(cmd->usage, stdout);
    fputs("\nglobal options: -q/--quiet, -v/--verbose, -h/--help, --manifest PATH|URL, --insecure\n", stdout);
    return 0;
}

int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "cudaenv%s%s: ", cmd ? " " : "", cmd ? cmd->name : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'cudaenv %s--help'.\n", cmd ? cmd->name : "");
    return 2;
}

int cli_exec_full(cli *c)
{
    char path[8300];
    const char *env = getenv("CUDAENV_FULL");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        snprintf(path, sizeof path, "%s/../libexec/cudaenv/cudaenv-full", c->ctx.self_dir);
        if (access(path, X_OK) != 0)
            snprintf(path, sizeof path, "%s/cudaenv-full", c->ctx.self_dir);
    }
    execv(path, c->orig_argv);
    cli_error(c, "cannot run %s: %s; reinstall cudaenv (make install)", path, strerror(errno));
    return 1;
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    ce_ctx_init(&c.ctx);
    c.orig_argc = argc;
    c.orig_argv = argv;
    c.err_tty = isatty(2);
    const char *nc = getenv("NO_COLOR");
    c.color = c.err_tty && !(nc && *nc);
    c.ctx.event = cli_render_event;
    c.ctx.event_ud = &c;

    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
            printf("cudaenv %s\n", CE_VERSION);
            return 0;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            main_usage(stdout);
            return 0;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            c.ctx.quiet = true;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            c.ctx.verbose++;
        } else {
            return cli_usage_error(NULL, "unknown option %s", a);
        }
    }
    if (i >= argc) {
        main_usage(stderr);
        return 2;
    }
    if (!strcmp(argv[i], "help")) {
        const cli_cmd *h = i + 1 < argc ? cli_find_cmd(argv[i + 1]) : NULL;
        if (h) return cli_help(h);
        main_usage(stdout);
        return 0;
    }
    const cli_cmd *cmd = cli_find_cmd(argv[i]);
    if (!cmd)
        return cli_usage_error(NULL, "unknown command '%s'", argv[i]);
    if (i + 1 < argc && (!strcmp(argv[i + 1], "--help") || !strcmp(argv[i + 1], "-h")))
        return cli_help(cmd);
    /* the store rule (core/trust.h): CUDAENV_ROOT absolute, and as root a
     * store only root can change; init prints shell code and opens nothing */
    if (strcmp(cmd->name, "init") != 0) {
        int rc = ce_trust_root(&c.ctx);
        if (rc) return cli_fail(&c, rc);
    }
    if (!cmd->run)
        return cli_exec_full(&c);
    return cmd->run(&c, argc - i, argv + i);
}
