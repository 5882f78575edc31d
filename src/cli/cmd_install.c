/* cudaenv install SPEC... : lock, clean up after crashed runs, load the
 * manifest, resolve every spec (all before any download, so a typo in the
 * third spec costs nothing), then the pipeline in core/install.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "install/install.h"
#include "manifest/manifest.h"
#include "manifest/resolve.h"
#include "oci/ref.h"
#include "store/activate.h"
#include "store/modulefile.h"
#include "store/store.h"

/* the light binary builds only the table entry at the end (cli.h: FULL_ONLY) */
#ifdef CE_FULL

enum { OPT_CUDNN = 1, OPT_NO_CUDNN, OPT_FORCE, OPT_OFFLINE, OPT_FROM, OPT_COMPONENTS, OPT_MODULEFILES, OPT_MODULE_FORMAT,
       OPT_FOR, OPT_FRAMEWORK };

static const cli_opt cmd_install_opts[] = {
    { "cudnn", 0, true, OPT_CUDNN },
    { "no-cudnn", 0, false, OPT_NO_CUDNN },
    { "force", 'f', false, OPT_FORCE },
    { "offline", 0, false, OPT_OFFLINE },
    { "from", 0, true, OPT_FROM },
    { "components", 0, true, OPT_COMPONENTS },
    { "modulefiles", 0, true, OPT_MODULEFILES },
    { "module-format", 0, true, OPT_MODULE_FORMAT },
    { "for", 0, true, OPT_FOR },
    { "framework", 0, true, OPT_FRAMEWORK },
    { 0 },
};

/* The pin in effect is not a spec, or names no release of the manifest:
 * the failure names the file, never what it says (it may be a symlink to
 * a token), as every other command that reads a pin (activate.h). */
static int pin_unresolved(const char *pin_src)
{
    return ce_fail(CE_ERR_NOTFOUND, "%s: no release of the manifest by that name, or not a spec (content "
                   "not shown); see what it names with: cat %s, then pin a release of cudaenv list-remote "
                   "(cudaenv local VERSION) or give one: cudaenv install VERSION", pin_src, pin_src);
}

static int cmd_install(cli *c, const cli_args *a)
{
    const char *cudnn = a->opt[OPT_CUDNN] ? a->opt[OPT_CUDNN] : "", *moddir = a->opt[OPT_MODULEFILES];
    const char *from = a->opt[OPT_FROM], *components = a->opt[OPT_COMPONENTS], *format = a->opt[OPT_MODULE_FORMAT];
    const char *const *specs = a->pos;
    size_t nspecs = (size_t)a->n;
    char pin[128], pin_src[4096];
    const char *pinned[1] = { pin };
    ce_modfmt modfmt = CE_MODFMT_LMOD;
    bool no_cudnn = cli_on(a, OPT_NO_CUDNN);
    c->ctx.force = c->ctx.force || cli_on(a, OPT_FORCE);
    c->ctx.offline = c->ctx.offline || cli_on(a, OPT_OFFLINE);
    if (from && strcmp(from, "runfile") != 0 && strcmp(from, "redist") != 0)
        return cli_usage_error(c->cmd, "--from takes runfile or redist, not '%s'", from);
    if (from) snprintf(c->ctx.install_from, sizeof c->ctx.install_from, "%s", from);
    if (components && strlen(components) >= sizeof c->ctx.install_components)
        return cli_usage_error(c->cmd, "--components: the list is too long");
    if (components) snprintf(c->ctx.install_components, sizeof c->ctx.install_components, "%s", components);
    if (format && !ce_modfmt_parse(format, &modfmt))
        return cli_usage_error(c->cmd, "unknown module format '%s': use lmod or tcl", format);
    if (c->ctx.install_components[0] && strcmp(c->ctx.install_from, "runfile") == 0)
        return cli_usage_error(c->cmd, "--components chooses NVIDIA components; the runfile installs its own set");
    if (no_cudnn && *cudnn) return cli_usage_error(c->cmd, "--cudnn and --no-cudnn contradict each other");
    char forspec[96];
    const char *forspecs[1] = { forspec };
    if (a->opt[OPT_FRAMEWORK] && !a->opt[OPT_FOR])
        return cli_usage_error(c->cmd, "--framework chooses between the frameworks of --for PYTHON");
    if (a->opt[OPT_FOR]) {
        if (nspecs) return cli_usage_error(c->cmd, "--for PYTHON decides the toolchain: give no SPEC with it");
        int frc = cli_for_python(c, a->opt[OPT_FOR], a->opt[OPT_FRAMEWORK], forspec, sizeof forspec);
        if (frc) return cli_fail(c, frc);
        specs = forspecs;
        nspecs = 1;
    }
    size_t n_oci = 0;   /* toolchain images: oci://REG/REPO:TAG (cmd_push.c) */
    for (size_t i = 0; i < nspecs; i++) n_oci += ce_oci_is_ref(specs[i]);
    if (n_oci && n_oci != nspecs)
        return cli_usage_error(c->cmd, "install either oci:// images or specs of the manifest, not both in one command");
    if (n_oci) {
        if (*cudnn || no_cudnn || from || components || moddir || a->opt[OPT_FOR] || cli_on(a, OPT_OFFLINE))
            return cli_usage_error(c->cmd, "an oci:// image is a finished toolchain: only --force and --insecure apply");
        return cli_oci_install(c, specs, nspecs);
    }
    if (nspecs == 0) {
        /* the pin in effect, as nvm, pyenv and mise install theirs */
        int found = ce_pin_in_effect(&c->ctx, pin, sizeof pin, pin_src, sizeof pin_src);
        if (found < 0) return cli_fail(c, found);
        if (found == 0)
            return cli_usage_error(c->cmd, "which toolchain? nothing is pinned here (no .cuda-version in this "
                                   "directory or above, no global default); e.g. cudaenv install tf-2.14, or "
                                   "--for PYTHON, or pin one first: cudaenv local tf-2.14");
        specs = pinned;
        nspecs = 1;
    }
    bool from_pin = specs == pinned;

    ce_store_txn txn = CE_STORE_TXN_INIT;
    int rc;
    ce_manifest *m = NULL;
    ce_resolved *r = calloc(nspecs, sizeof *r);
    if (!r) return 1;
    if ((rc = ce_store_begin(&c->ctx, &txn)) != CE_OK) goto out;
    if ((rc = cli_load_manifest(c, &m)) != CE_OK) goto out;
    for (size_t i = 0; i < nspecs; i++) {
        ce_spec spec;
        if ((rc = ce_spec_parse(specs[i], &spec)) != CE_OK) {
            if (from_pin) rc = pin_unresolved(pin_src);
            goto out;
        }
        if (spec.kind == CE_SPEC_SYSTEM) {
            rc = ce_fail(CE_ERR_NOTFOUND, "'system' is the machine's own CUDA; nothing to install");
            goto out;
        }
        const char *dn = cudnn;
        bool nd = no_cudnn;
        char policy[32];
        cli_cudnn_policy(c, &spec, &dn, &nd, policy, sizeof policy);
        if ((rc = ce_resolve(&c->ctx, m, &spec, dn, nd, &r[i])) != CE_OK) {
            if (from_pin && (rc == CE_ERR_NOTFOUND || rc == CE_ERR_USAGE)) rc = pin_unresolved(pin_src);
            goto out;
        }
    }
    /* named only once it is a release of the manifest, as current/prefix
     * name a pin only once it is installed */
    if (from_pin && !c->ctx.quiet) cli_note(c, "installing %s, pinned by %s", pin, pin_src);
    cli_render_trap_interrupt(c);
    rc = ce_install(&c->ctx, m, r, nspecs);
    if (rc == CE_OK) ce_store_index_refresh(&c->ctx);   /* tf-X resolves without the manifest */
    if (rc == CE_OK && moddir) /* still under the lock: no install races the listing */
        rc = ce_modulefile_write_all(&c->ctx, modfmt, moddir, NULL, NULL, NULL);
    if (rc == CE_OK && !c->ctx.quiet)
        cli_note(c, "use it: cudaenv use %s (this shell; needs eval \"$(cudaenv init bash)\"), "
                 "cudaenv exec %s -- CMD, cudaenv global %s (default)", r[0].name, r[0].name, r[0].name);
out:
    ce_store_end(&txn);
    ce_manifest_free(m);
    free(r);
    return rc == CE_OK ? 0 : cli_fail(c, rc);
}

#endif /* CE_FULL */

const cli_cmd cli_cmd_install = {
    .name = "install", .run = FULL_ONLY(cmd_install),
    .summary = "download, verify and install toolchains",
    .usage =
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
    .opts = FULL_ONLY(cmd_install_opts), .min_pos = 0, .max_pos = -1,
};
