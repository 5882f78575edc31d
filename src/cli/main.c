/* cudaenv: the command table and the common setup every command shares. */
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

#ifdef CE_FULL
#define FULL_ONLY(fn) fn
#else
#define FULL_ONLY(fn) NULL
#endif

int (*const cli_url_manifest_loader)(ce_ctx *, const char *, struct ce_manifest **) =
    FULL_ONLY(ce_manifest_load_url);
int (*const cli_components_plan)(ce_ctx *, const struct ce_manifest *, const struct ce_resolved *,
                                 struct ce_redist **, const char **) = FULL_ONLY(ce_components_plan);
void (*const cli_redist_free)(struct ce_redist *) = FULL_ONLY(ce_redist_free);

static const cli_cmd commands[] = {
    { "install", NULL, FULL_ONLY(cmd_install), "download, verify and install toolchains",
      "usage: cudaenv install [SPEC...] [--cudnn VER] [--no-cudnn] [--from runfile|redist]\n"
      "                [--components +NAME,-NAME] [--force] [--offline] [--insecure]\n"
      "                [--modulefiles DIR [--module-format lmod|tcl]]\n"
      "       cudaenv install --for PYTHON [--framework tf|torch|jax] [options]\n"
      "\n"
      "Resolve each SPEC through the manifest (tf-2.14, tensorflow-2.14.1, torch-2.5,\n"
      "torch-2.5+cu121, jax-0.4.30, 11.8, 11.8.0, cuda-11.8, optionally +cudnn8.7),\n"
      "download what it needs and the cuDNN tarball\n"
      "(resume, retry, parallel), check size and sha256, and install them side by side\n"
      "under $CUDAENV_ROOT/versions without root.  Where the manifest pins NVIDIA's\n"
      "redistrib JSON for the release, only the components of a profile are downloaded\n"
      "(tf for tf-X.Y specs, toolkit for CUDA specs) and laid out as the runfile would;\n"
      "otherwise the runfile is installed.  Without SPEC, the pin in effect: the nearest\n"
      ".cuda-version from here up, else the global default; a pin that names no\n"
      "release is exit 3, naming its file, never its content.  A toolchain already\n"
      "installed from components gets what SPEC selects and it lacks (components, NCCL),\n"
      "named in a note; nothing it holds is removed (--force: exactly what SPEC selects).\n"
      "\n"
      "  --cudnn VER    use this cuDNN release instead of the one the spec implies\n"
      "  --no-cudnn     install the CUDA toolkit alone\n"
      "  --from runfile install from NVIDIA's runfile even where components exist\n"
      "  --from redist  install from components; fail where the release has none\n"
      "  --components L adjust the profile: +nsight_systems adds, -libcufft removes\n"
      "  --force        reinstall; also install a toolkit this machine's driver cannot run\n"
      "  --offline      use the download cache only, never the network\n"
      "  --insecure     allow http:// URLs in the manifest\n"
      "  --manifest M   use manifest file or URL M (also CUDAENV_MANIFEST)\n"
      "  --modulefiles DIR   afterwards, regenerate DIR's module files (modulefile --all)\n"
      "  --module-format F   lmod (default) or tcl, for --modulefiles\n"
      "  --for PYTHON   the toolchain PYTHON's frameworks were built for: TensorFlow's row\n"
      "                 (tf.__version__), else PyTorch's torch.version.cuda + cuDNN, else\n"
      "                 the CUDA + cuDNN JAX's CUDA plugin was built against; says which\n"
      "                 decided (a venv's python: --for .venv/bin/python).  Frameworks that\n"
      "                 want another CUDA or cuDNN release: exit 2 naming both\n"
      "  --framework F  tf, torch or jax: which of disagreeing frameworks decides\n"
      "\n"
      "       cudaenv install oci://REGISTRY/REPO:TAG|@sha256:DIGEST... [--force] [--insecure]\n"
      "installs toolchain images cudaenv push wrote (see cudaenv pull --help).\n",
      .opts = FULL_ONLY(cmd_install_opts), .min_pos = 0, .max_pos = -1 },
    { "modulefile", NULL, cmd_modulefile, "module files for Lmod / Environment Modules",
      "usage: cudaenv modulefile VERSION|--all [--format lmod|tcl] [--to DIR]\n"
      "\n"
      "Write a module file per toolchain so `module load cuda/<name>` applies what\n"
      "cudaenv use does: <prefix>/bin and <prefix>/lib64 first in PATH and LD_LIBRARY_PATH,\n"
      "<prefix>/lib64 and lib64/stubs first in LIBRARY_PATH (gcc -lcudart, -lcuda),\n"
      "CUDA_HOME, CUDA_PATH and CUDNN_PATH set; family(\"cuda\") / conflict cuda, so one\n"
      "is loaded at a time; whatis names CUDA, cuDNN and the TensorFlow releases.\n"
      "Add DIR to MODULEPATH (module use DIR).\n"
      "\n"
      "  --format F  lmod: DIR/cuda/<name>.lua (default); tcl: DIR/cuda/<name>, read by\n"
      "              Environment Modules and Lmod\n"
      "  --to DIR    write DIR/cuda/<name>[.lua] (prints the path); without it, print the\n"
      "              module file of VERSION on stdout\n"
      "  --all       every installed toolchain, and remove the files cudaenv wrote for\n"
      "              toolchains no longer installed (install --modulefiles DIR does this);\n"
      "              prints \"N module files in DIR/cuda: N changed, N removed\"; files whose\n"
      "              text is current are not rewritten\n",
      .opts = cmd_modulefile_opts, .max_pos = 1, .extra = "one VERSION only (or --all)" },
    { "mirror", NULL, FULL_ONLY(cmd_mirror), "a mirror directory for a site (files + manifest)",
      "usage: cudaenv mirror SPEC...|--all --to DIR [--platform P[,P]] [--cudnn VER] [--no-cudnn]\n"
      "                     [--from runfile|redist] [--components +a,-b] [--sign-key KEY --url URL]\n"
      "       cudaenv mirror --check DIR\n"
      "       cudaenv mirror SPEC... --to oci://REGISTRY/REPO [--insecure]\n"
      "\n"
      "Fetch exactly the files install SPEC would fetch (resume, retry, sha256; files\n"
      "already in the cache are copied, not downloaded) into DIR under NVIDIA's paths:\n"
      "for a release with a redistrib JSON, that JSON (compute/cuda/redist/...) and the\n"
      "components its profile selects beside it (as install: tf for a TensorFlow spec,\n"
      "toolkit for a CUDA spec, --components adjusts), else the runfile; cuDNN's\n"
      "tarball.  Then write DIR/cudaenv.json: a manifest of just those files with\n"
      "relative URLs (and the profiles).  Serve DIR with any static server or share it,\n"
      "then on every machine:\n"
      "  CUDAENV_MANIFEST=https://mirror.lab/cuda/cudaenv.json cudaenv install tf-2.14\n"
      "Running it again adds specs; a file already there is kept only when its sha256\n"
      "matches (a corrupt one is replaced).  Nothing under DIR is followed through a\n"
      "symlink; as root, DIR and its parents must be root's and not group/other-writable\n"
      "(exit 6 naming the path).\n"
      "\n"
      "  --to DIR          the mirror directory (created)\n"
      "  --all             every file the manifest names (for the platforms; components:\n"
      "                    the toolkit profile)\n"
      "  --platform P,P    linux-x86_64, linux-sbsa (default: this machine's)\n"
      "  --cudnn VER, --no-cudnn, --from runfile|redist, --components LIST   as for install\n"
      "  --sign-key KEY    sign DIR/cudaenv.json with this ed25519 private key (PEM):\n"
      "                    DIR/cudaenv.json.sig, which nodes check against their keys;\n"
      "                    needs --url\n"
      "  --url URL         the URL nodes fetch DIR/cudaenv.json from (their\n"
      "                    CUDAENV_MANIFEST), written into it as \"source\" with a \"serial\"\n"
      "                    that grows every run: a node refuses it from elsewhere or older\n"
      "  --check DIR       re-hash every file DIR/cudaenv.json names (components: those\n"
      "                    the mirror holds), only inside DIR: no '..', absolute path or\n"
      "                    symlink, regular files only; exit 5 if any is missing or wrong\n"
      "  --to oci://REGISTRY/REPO   install each SPEC here (as install SPEC), then push it\n"
      "                    (cudaenv push) as REPO:<name> ('+' written '-') and REPO:<SPEC>;\n"
      "                    prints each oci://...@sha256: reference\n",
      .opts = FULL_ONLY(cmd_mirror_opts), .max_pos = -1 },
    { "push", NULL, FULL_ONLY(cmd_push), "push a toolchain to an OCI registry as an image",
      "usage: cudaenv push TOOLCHAIN oci://REGISTRY/REPO:TAG [--insecure]\n"
      "\n"
      "Write the installed TOOLCHAIN (a name or spec of cudaenv list) to a registry as a\n"
      "standard OCI image: one gzip'd tar layer that unpacks to the toolchain tree\n"
      "(bin/, lib64/, include/, the receipt), a config, and a manifest annotated with the\n"
      "toolchain's name, its CUDA, cuDNN and NCCL versions, its receipt's sha256 and\n"
      "its tree digest (io.cudaenv.tree_sha256: the tree_sha256 cudaenv verify --report\n"
      "gives on every node running it; printed here).  The layer is deterministic (sorted entries, fixed times and\n"
      "owners), and a blob the registry has is not sent again: pushing an unchanged\n"
      "toolchain uploads no layer.  Prints oci://REGISTRY/REPO:TAG@sha256:DIGEST.\n"
      "Nodes install it by that digest: cudaenv install oci://REGISTRY/REPO@sha256:...;\n"
      "a Kubernetes image volume, skopeo, Apptainer or enroot can use the image as is.\n"
      "\n"
      "  --insecure   plain http:// to the registry (default https://, verified against\n"
      "               the system CAs or CURL_CA_BUNDLE)\n"
      "Credentials: CUDAENV_REGISTRY_AUTH=USER:PASSWORD, else the registry's entry in\n"
      "~/.docker/config.json (docker login); Basic and Bearer-token registries.\n",
      .min_pos = 2, .max_pos = 2,
      .missing = "which toolchain, and where? cudaenv push TOOLCHAIN oci://REGISTRY/REPO:TAG",
      .extra = "one toolchain and one reference (got %s and %s)" },
    { "pull", NULL, FULL_ONLY(cmd_pull), "install a toolchain image from an OCI registry",
      "usage: cudaenv pull oci://REGISTRY/REPO:TAG|oci://REGISTRY/REPO@sha256:DIGEST... [--force]\n"
      "                    [--insecure]\n"
      "\n"
      "The same as cudaenv install oci://...: read the image's manifest (then used by\n"
      "its digest), check the config and every layer against their sha256 digests\n"
      "while downloading (into the download cache: a layer there is not fetched again),\n"
      "unpack the layers under install's archive rules (no absolute or .. paths, no\n"
      "devices, no setuid) into a staging tree, check its receipt against the\n"
      "io.cudaenv.receipt.sha256 and io.cudaenv.tree_sha256 annotations, then install\n"
      "it as versions/<name> with\n"
      ".cudaenv-oci.json naming the reference and the manifest digest.  A digest that\n"
      "does not match is exit 5 with nothing installed.  Installed already from the\n"
      "same receipt: nothing to do; from another: exit 2 unless --force.\n"
      "\n"
      "  --force      replace a toolchain of the same name\n"
      "  --insecure   plain http:// to the registry\n",
      .opts = FULL_ONLY(cmd_pull_opts), .min_pos = 1, .max_pos = -1,
      .missing = "which image? cudaenv pull oci://REGISTRY/REPO:TAG" },
    { "self", NULL, FULL_ONLY(cmd_self), "update cudaenv itself to the newest release",
      "usage: cudaenv self update [--version VER] [--check]\n"
      "\n"
      "Update a cudaenv that tools/install.sh installed (PREFIX/lib/cudaenv/releases/VER)\n"
      "the way install.sh does: fetch BASE/latest (BASE: the server install.sh used, kept\n"
      "in PREFIX/lib/cudaenv/release.conf; CUDAENV_INSTALL_BASE for a mirror), its\n"
      "SHA256SUMS, checked against the release key install.sh kept\n"
      "(PREFIX/lib/cudaenv/release-key.pem; exit 5 on a bad or missing signature), then\n"
      "that release's install.sh, whose sha256 SHA256SUMS names, which checks the tarball,\n"
      "unpacks it beside the running release and switches PREFIX/lib/cudaenv/current to\n"
      "it in one rename: the running binary is never written, and the previous release\n"
      "stays for a rollback.  Says from which version to which.  A cudaenv from a .deb,\n"
      "a wheel (pipx, uvx) or a build from source is refused (exit 2) with the command\n"
      "that updates it.  As root, PREFIX/lib/cudaenv must be root's (exit 6).\n"
      "\n"
      "  --version VER   that release instead of the newest (also an older one)\n"
      "  --check         say whether a newer release exists; change nothing\n",
      .opts = FULL_ONLY(cmd_self_opts), .min_pos = 1, .max_pos = 1,
      .missing = "self needs a command: cudaenv self update" },
    { "update", NULL, FULL_ONLY(cmd_update), "refresh the manifest from its source",
      "usage: cudaenv update\n"
      "\n"
      "Fetch the manifest again from the URL in use (CUDAENV_MANIFEST / --manifest),\n"
      "with a conditional request (ETag / Last-Modified), check it and replace the\n"
      "local copy in $CUDAENV_ROOT/manifests atomically, then say what changed: new\n"
      "TensorFlow rows and PyTorch/JAX builds, new CUDA and cuDNN releases, corrected\n"
      "values.  Refused (exit 5, the copy kept): an invalid manifest, one not signed by\n"
      "a trusted key (unless\n"
      "CUDAENV_MANIFEST_UNSIGNED=1), one dated before the copy it would replace (or,\n"
      "signed by the project, before the built-in manifest; a site's gets a warning).\n"
      "env, use, exec and the cd hook only ever read the local copy;\n"
      "install, info and list-remote refresh it when it is older than\n"
      "CUDAENV_UPDATE_INTERVAL seconds (default 86400).  With a local manifest file\n"
      "there is nothing to fetch.\n" },
    { "outdated", NULL, cmd_outdated, "installed toolchains the manifest has newer releases for",
      "usage: cudaenv outdated [--json]\n"
      "\n"
      "Installed toolchains for which the manifest (see cudaenv update) now has a CUDA\n"
      "patch release of the same X.Y, a newer cuDNN of the same X.Y built for its CUDA\n"
      "major, or, for a TensorFlow release it was installed for, another tested pair.\n"
      "Each line names what to install; nothing is changed.  Exit 0 either way.\n"
      "\n"
      "  --json   one JSON document: {\"outdated\": [{toolchain, kind, installed, available, hint}]}\n",
      .opts = cmd_outdated_opts },
    { "config", NULL, cmd_config, "settings in the config files: list, get, set, unset",
      "usage: cudaenv config [list] | get KEY | set KEY VALUE | unset KEY  [--system]\n"
      "\n"
      "The config files keep settings instead of environment variables: the user's\n"
      "${XDG_CONFIG_HOME:-~/.config}/cudaenv/config.json and the site's\n"
      "/etc/cudaenv/config.json (--system).  What applies: the environment, then the\n"
      "user's file, then the site's, then the default.  list shows every key with its\n"
      "value and where it comes from; get prints the value that applies (exit 3: unset).\n"
      "\n"
      "  manifest           path or URL of the manifest (CUDAENV_MANIFEST)\n"
      "  mirror             base URL replacing NVIDIA's (CUDAENV_MIRROR)\n"
      "  update_interval    seconds a remote manifest's copy stays fresh (CUDAENV_UPDATE_INTERVAL)\n"
      "  manifest_unsigned  true: accept an unsigned remote manifest (CUDAENV_MANIFEST_UNSIGNED=1)\n"
      "  cudnn              newest (default), none, or a release: the cuDNN of a CUDA spec\n"
      "                     that names none, for install and info (--cudnn / --no-cudnn win)\n"
      "  keys               public keys (PEM files, comma-separated) trusted for signed manifests\n"
      "\n"
      "  --system   the site's file (root; its keys and settings then apply to every user)\n",
      .opts = cmd_config_opts, .max_pos = 3, .extra = "too many words (set KEY VALUE at most)" },
    { "uninstall", NULL, cmd_uninstall, "remove an installed toolchain",
      "usage: cudaenv uninstall VERSION [--force]\n"
      "\n"
      "Remove one installed toolchain.  The toolchain the system switch points at, and\n"
      "the active one (this shell's, .cuda-version, global), are refused without --force.\n"
      "The global default is refused whatever this shell selects (new shells would miss\n"
      "it): choose another (cudaenv global VERSION, or global --unset); --force also\n"
      "clears the global default, and says so.\n",
      .opts = cmd_uninstall_opts, .min_pos = 1, .max_pos = 1,
      .missing = "which toolchain? see: cudaenv list", .extra = "one toolchain at a time (got %s and %s)" },
    { "list", "ls", cmd_list, "installed toolchains and which one is active",
      "usage: cudaenv list [--json | --names] [--sizes]\n"
      "\n"
      "Installed toolchains with what each holds (profile and changes, NCCL, or the\n"
      "runfile); the active one is marked with why (shell, .cuda-version, global,\n"
      "system), the one global --system put at /usr/local/cuda with system (named as the\n"
      "one in use when nothing is selected).  --names prints the bare names, one per line.\n"
      "Sizes (own and shared through hard links) come from the file list install wrote\n"
      "(.cudaenv-usage); --sizes walks every tree afresh (after changing files by hand).\n",
      .opts = cmd_list_opts },
    { "list-remote", "ls-remote", cmd_list_remote, "what the manifest offers",
      "usage: cudaenv list-remote [tf|torch|jax|cuda|cudnn] [--json | --names]\n"
      "\n"
      "What the manifest offers, newest first (alias ls-remote):\n"
      "  tf      TensorFlow releases with their CUDA + cuDNN pair and Python range (default);\n"
      "          rows the manifest cannot install are marked with the reason\n"
      "  torch   PyTorch releases, one line per CUDA build: the spec (torch-2.5 is the\n"
      "          build pip installs from PyPI, torch-2.5+cu121 another), the toolchain it\n"
      "          resolves to, the CUDA + cuDNN the wheels were built with\n"
      "  jax     JAX releases, one line per CUDA plugin (jax-0.4.30, jax-0.7.2+cuda13)\n"
      "  cuda    CUDA releases: min driver, max gcc, GPU architectures, platforms\n"
      "  cudnn   cuDNN releases: the CUDA majors and platforms they have tarballs for\n"
      "\n"
      "  --json   one JSON document\n"
      "  --names  the bare specs, one per line (installable rows only), for scripts\n",
      .opts = cmd_list_remote_opts, .max_pos = 1 },
    { "info", NULL, cmd_info, "what a spec resolves to",
      "usage: cudaenv info SPEC [--json] [--cudnn VER] [--no-cudnn]\n"
      "\n"
      "Show what SPEC resolves to, without downloading: CUDA, cuDNN, min driver, max gcc,\n"
      "GPU architectures, Python range, URLs, sizes, sha256s and the source of each value.\n"
      "tf-2.14 takes TensorFlow's tested CUDA + cuDNN pair; torch-2.5 the pair of the CUDA\n"
      "build pip installs from PyPI (torch-2.5+cu121: another build; info lists them all);\n"
      "jax-0.4.30 the pair its CUDA plugin's pins resolve to; 11.8 takes the newest 11.8.*\n"
      "and the newest cuDNN built for CUDA 11.  Unknown specs exit 3 with the nearest ones.\n"
      "When its toolchain is installed: what it holds and what install would add.\n"
      "\n"
      "  --cudnn VER    choose the cuDNN release (8.9 = newest 8.9.*; wins over +cudnn)\n"
      "  --no-cudnn     the CUDA toolkit alone\n"
      "  --components L with the profile adjusted as install --components L would\n"
      "  --json         one JSON document (keys: man cudaenv)\n"
      "\n"
      "Where the release installs from NVIDIA's components, info lists them with their\n"
      "sizes and the total (it reads the release's redistrib JSON: cached, else fetched).\n",
      .opts = cmd_info_opts, .min_pos = 1, .max_pos = 1,
      .missing = "which SPEC? e.g. cudaenv info tf-2.14", .extra = "one SPEC at a time (got '%s' and '%s')" },
    { "prefix", NULL, cmd_prefix, "the directory of a toolchain",
      "usage: cudaenv prefix [VERSION]\n"
      "\n"
      "Print the directory of the installed toolchain VERSION (default: the active one).\n",
      .max_pos = 1, .extra = "one VERSION only" },
    { "init", NULL, cmd_init, "shell integration to eval",
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
      .missing = "which shell? bash, zsh or fish", .extra = "one shell only", .needs = CLI_NO_STORE },
    { "use", NULL, cmd_use, "switch this shell",
      "usage: cudaenv use VERSION|system | --unset\n"
      "       cudaenv use --for PYTHON [--framework tf|torch|jax] [--libs framework|toolchain]\n"
      "\n"
      "Switch the current shell (needs the shell function from cudaenv init).  VERSION\n"
      "is an installed toolchain or a spec (11.8 = newest installed 11.8.x, tf-2.14);\n"
      "system = the machine's own CUDA.  --unset (or: cudaenv deactivate) drops the\n"
      "shell selection, so .cuda-version / global apply again.  Exit 3: not installed.\n"
      "--for PYTHON uses the toolchain that Python's frameworks were built for (see\n"
      "install --for; it must be installed: cudaenv install --for PYTHON).  When that\n"
      "Python brings its own CUDA libraries (nvidia-* wheels, conda), the toolchain's\n"
      "lib64 stays off LD_LIBRARY_PATH (nvcc, CUDA_HOME, LIBRARY_PATH are the toolchain's),\n"
      "so one process never loads two copies of a library.  --libs toolchain: the\n"
      "toolchain's libraries instead (refused while the Python's own would still load).\n",
      .opts = cmd_use_opts, .max_pos = 1, .extra = "one VERSION only" },
    { "deactivate", NULL, cmd_deactivate, "drop this shell's selection (use --unset)",
      "usage: cudaenv deactivate\n"
      "\n"
      "Drop the shell selection (what use set: CUDAENV_VERSION), so .cuda-version and the\n"
      "global default apply again; the same as use --unset.  Like use it changes the\n"
      "current shell, so it is the shell function's (eval \"$(cudaenv init bash)\");\n"
      "run as the program, it says so (exit 2).\n",
      .needs = CLI_NO_STORE },
    { "env", NULL, cmd_env, "print the environment of a toolchain",
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
      .opts = cmd_env_opts, .max_pos = 1, .extra = "one VERSION only" },
    { "local", NULL, cmd_local, "pin a toolchain for this directory",
      "usage: cudaenv local [VERSION [--force] | --unset]\n"
      "       cudaenv local --for PYTHON [--framework tf|torch|jax] [--libs framework|toolchain] [--force]\n"
      "\n"
      "Write .cuda-version in the current directory; the cd hook applies it.  Without\n"
      "VERSION print the pin that applies here.  --force pins a version not installed.\n"
      "--for PYTHON pins what that Python's TensorFlow, PyTorch or JAX was built for\n"
      "(see install --for), with a line libs=framework when it brings its own CUDA\n"
      "libraries (see use).\n",
      .opts = cmd_local_opts, .max_pos = 1, .extra = "one VERSION only" },
    { "global", NULL, cmd_global, "the default toolchain (user or system)",
      "usage: cudaenv global [VERSION|system | --unset]\n"
      "       cudaenv global [VERSION|system] --system [--force] [--dry-run]\n"
      "       cudaenv global --rollback [--dry-run]\n"
      "\n"
      "Without --system: the user's default toolchain (printed without VERSION; --unset\n"
      "removes it, so new shells outside a project get the machine's own CUDA).\n"
      "With --system (root): point $CUDAENV_SYSROOT/usr/local/cuda and\n"
      "/etc/ld.so.conf.d/cudaenv.conf at it atomically and run ldconfig.  --dry-run prints\n"
      "the plan.  --rollback returns to the previous target, and again to the one before\n"
      "(a history of 16).  The first switch records the\n"
      "machine's own state (no link, a link, the update-alternatives selection, a directory\n"
      "moved aside; cudaenv.conf); 'global system --system' restores exactly that.\n"
      "A real directory at /usr/local/cuda is refused (exit 1) unless --force moves it aside;\n"
      "an update-alternatives link is cooperated with.  Exit 6: not root, or the toolchain\n"
      "is in a tree not owned by root or writable by others (use CUDAENV_ROOT=/opt/cudaenv).\n"
      "A switch interrupted (kill -9, power loss) is completed by the next --system/--rollback.\n"
      "CUDAENV_LDCONFIG overrides the ldconfig path (\"none\" skips it).\n",
      .opts = cmd_global_opts, .max_pos = 1, .extra = "one VERSION only" },
    { "current", NULL, cmd_current, "the active toolchain and where it comes from",
      "usage: cudaenv current [--json]\n"
      "\n"
      "Print the active toolchain and its origin: shell, .cuda-version (path), global, system.\n"
      "Warns when its lib64 is on LD_LIBRARY_PATH while python3 brings its own copies of\n"
      "the same libraries (the fix: cudaenv use --for python3).\n"
      "For system: the toolchain global --system put at /usr/local/cuda, when the link still\n"
      "points there (--json: system_toolchain), else the machine's own CUDA.\n",
      .opts = cmd_current_opts },
    { "which", NULL, cmd_which, "the file a command resolves to",
      "usage: cudaenv which CMD\n"
      "\n"
      "Print the file CMD (e.g. nvcc) resolves to in the active toolchain.\n",
      .min_pos = 1, .max_pos = 1, .missing = "which command? e.g. cudaenv which nvcc", .extra = "one CMD only" },
    { "exec", NULL, cmd_exec, "run one command with a toolchain",
      "usage: cudaenv exec [VERSION] -- CMD [ARG...]\n"
      "       cudaenv exec --for PYTHON [--framework tf|torch|jax] -- CMD [ARG...]\n"
      "       cudaenv exec --libs framework|toolchain [VERSION] -- CMD [ARG...]\n"
      "\n"
      "Run CMD with the environment of toolchain VERSION; without VERSION, of the selection\n"
      "in effect (CUDAENV_VERSION from use, the nearest .cuda-version, global; none: exit 3);\n"
      "--for PYTHON: of the toolchain\n"
      "that Python's frameworks were built for (see install --for), e.g.\n"
      "cudaenv exec --for .venv/bin/python -- .venv/bin/python setup.py build_ext.\n"
      "A Python that brings its own CUDA libraries (--for, or CMD a python) runs on them:\n"
      "the toolchain's lib64 stays off LD_LIBRARY_PATH (see use).\n",
      .opts = cmd_exec_opts, .max_pos = 1, .needs = CLI_REST },
    { "verify", NULL, cmd_verify, "self-test a toolchain on the GPU",
      "usage: cudaenv verify [VERSION] [--json|--report] [--all-devices] [--bench] [--deep]\n"
      "       cudaenv verify [VERSION] --framework tf|torch|jax [--python PATH] [--libs M] [--json]\n"
      "\n"
      "Check the files against the receipt, that all versions agree, that libraries load\n"
      "from the toolchain, then run a kernel and a cuDNN convolution on the GPU.\n"
      "VERSION is checked in its own environment, as exec VERSION runs programs (what\n"
      "shadows it in this shell's LD_LIBRARY_PATH is a warning).  Without VERSION: what\n"
      "is in effect, and it says which: this shell's selection (use, .cuda-version,\n"
      "global), else the system switch's target, else the machine's own /usr/local/cuda.\n"
      "Exit 0 all passed, 7 a check failed, 8 no usable GPU/driver.\n"
      "\n"
      "  --json          one JSON document (toolchain, steps, versions, devices, timings,\n"
      "                  warnings, libraries mapped, host)\n"
      "  --report        one JSON line for this node (host, toolchain, tree_sha256, the\n"
      "                  image it came from, the libraries mapped, each step's status,\n"
      "                  exit_code): lines from many nodes merge with\n"
      "                  contrib/slurm/cudaenv-report; tree_sha256 is the image's\n"
      "                  io.cudaenv.tree_sha256 annotation (cudaenv push)\n"
      "  --all-devices   check every GPU, not only device 0\n"
      "  --bench         add copy bandwidth and convolution throughput (vs PyTorch)\n"
      "  --deep          re-hash every file against the receipt's sha256\n"
      "  -v              show the evidence of every step, not only of failures\n"
      "  --framework F   instead: check TensorFlow (tf), PyTorch (torch) or JAX (jax) on\n"
      "                  the toolchain: in its environment (as exec), that Python reports\n"
      "                  the framework's build (CUDA, cuDNN), its GPUs, a matmul and a\n"
      "                  convolution on GPU 0 against a CPU reference, and the\n"
      "                  CUDA libraries it mapped, per family: the file, from where and\n"
      "                  why the loader took it (by path, RUNPATH, LD_LIBRARY_PATH, ...);\n"
      "                  each problem is a finding with its evidence and fix (man cudaenv)\n"
      "  --python PATH   the Python that has the framework (default: python3 on PATH)\n"
      "  --libs M        framework (default when that Python brings its own libraries: run\n"
      "                  on them, as exec --for does) or toolchain (check it on the\n"
      "                  toolchain's libraries alone)\n",
      .opts = cmd_verify_opts, .max_pos = 1, .extra = "one VERSION at most (got '%s' and '%s')" },
    { "jupyter", NULL, cmd_jupyter, "a Jupyter kernel with a toolchain's environment",
      "usage: cudaenv jupyter install VERSION [--python PATH] [--name NAME]\n"
      "\n"
      "Write a Jupyter kernelspec (kernel.json) whose env carries the environment of the\n"
      "installed toolchain VERSION (what cudaenv env VERSION --shell json prints), so a\n"
      "notebook loads the same libraries as cudaenv use.  It goes to\n"
      "$JUPYTER_DATA_DIR/kernels/NAME, else ${XDG_DATA_HOME:-~/.local/share}/jupyter/kernels/NAME;\n"
      "the path is printed.  The Python needs ipykernel.\n"
      "\n"
      "  --python PATH   the kernel's Python (default: python3 on PATH), written as an absolute path\n"
      "  --name NAME     the kernel's name (default: cudaenv-VERSION; letters, digits, . _ -)\n",
      .opts = cmd_jupyter_opts, .max_pos = 2, .extra = "one VERSION only (got '%s' and '%s')" },
    { "doctor", NULL, cmd_doctor, "diagnose driver, runtime, cuDNN, device, environment",
      "usage: cudaenv doctor [--json] [--framework | --no-framework]\n"
      "\n"
      "Walk the troubleshooting chain and name the fix for each problem.  Exit 0 when\n"
      "there are no errors, 7 when there are.\n"
      "\n"
      "The framework layer imports PyTorch and TensorFlow in python3 (seconds for a\n"
      "large install); its result is kept in ${XDG_CACHE_HOME:-~/.cache}/cudaenv and\n"
      "used until the interpreter, the environment or anything it imports from\n"
      "changes.  The report's \"frameworks:\" line says which.\n"
      "\n"
      "  --json           one JSON document\n"
      "  --framework      probe the frameworks again (the kept result is not used)\n"
      "  --no-framework   skip the framework layer\n",
      .opts = cmd_doctor_opts },
    { "adopt", NULL, cmd_adopt, "register a CUDA toolkit installed elsewhere",
      "usage: cudaenv adopt DIR [--name NAME] | cudaenv adopt --scan\n"
      "\n"
      "Use a toolkit cudaenv did not install (/usr/local/cuda-12.4, /usr/lib/cuda) like any\n"
      "other toolchain: its version is read from version.json, version.txt or cuda.h (nothing\n"
      "in DIR is run), a cuDNN inside it is detected, and a receipt of every file's size is\n"
      "written now so verify can tell later changes.  list marks it adopted; uninstall only\n"
      "forgets it (DIR is never touched).  As root, DIR must be root's all the way down and\n"
      "up (exit 6 naming the path otherwise).\n"
      "\n"
      "  --name NAME   the toolchain name: CUDA[+cudnnVER][@label], e.g. 12.4.1@system\n"
      "                (default: the versions found; @adopted when that name is taken)\n"
      "  --scan        list /usr/local/cuda-*, /opt/cuda* and /usr/lib/cuda, adopted or not\n",
      .opts = cmd_adopt_opts, .max_pos = 1, .extra = "one DIR at a time (got %s and %s)" },
    { "cache", NULL, cmd_cache, "downloads and unpacked trees: dir, list, clean, prune",
      "usage: cudaenv cache [dir | list [--json] | clean [--dry-run] | prune [--dry-run]]\n"
      "\n"
      "The downloads in $CUDAENV_ROOT/cache (verified files and partial ones) and the\n"
      "unpacked releases in pkgs/ that toolchains are hardlinked from.\n"
      "  dir      print the cache directory\n"
      "  list     each item with its size and whether an installed toolchain came from it\n"
      "  clean    remove every download (a reinstall then downloads again)\n"
      "  prune    remove the downloads and unpacked trees no installed toolchain uses\n"
      "  --dry-run, -n   print what would be removed, remove nothing\n",
      .opts = cmd_cache_opts, .max_pos = 1 },
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
    fprintf(f, "usage: cudaenv [-q|-v] [--manifest M] [--insecure] [--driver VER] COMMAND [ARGS]\n\n"
               "Install and switch NVIDIA CUDA toolkits + cuDNN, and prove they work.\n\ncommands:\n");
    for (size_t i = 0; i < n_commands; i++)
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
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
        const char *names[2] = { commands[i].name, commands[i].alias };
        for (int k = 0; k < 2; k++) {
            if (!names[k]) continue;
            int d = ce_edit_distance(typed, names[k]);
            if (strlen(typed) >= 3 && strncmp(typed, names[k], strlen(typed)) == 0) d = 1;
            if (d < best_d) { best_d = d; best = commands[i].name; }
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
        return cli_fail(c, ce_fail(&c->ctx, CE_ERR_PERM, "unsafe for cudaenv run as root: %s; reinstall cudaenv "
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
