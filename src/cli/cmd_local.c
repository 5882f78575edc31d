/* cudaenv local [VERSION | --unset]: pin a toolchain for a project by writing
 * .cuda-version (one line, the spec as typed, like cuvm/cudup) in the current
 * directory; without arguments print the pin that applies here. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/activate.h"
#include "cli.h"

enum { OPT_UNSET = 1, OPT_FORCE, OPT_FOR, OPT_FRAMEWORK, OPT_LIBS };

static const cli_opt cmd_local_opts[] = {
    { "unset", 0, false, OPT_UNSET },
    { "force", 'f', false, OPT_FORCE },
    { "for", 0, true, OPT_FOR },
    { "framework", 0, true, OPT_FRAMEWORK },
    { "libs", 0, true, OPT_LIBS },
    { 0 },
};

static int cmd_local(cli *c, const cli_args *a)
{
    const char *version = a->n ? a->pos[0] : NULL;
    bool unset = cli_on(a, OPT_UNSET), force = cli_on(a, OPT_FORCE);
    char cwd[4096], path[4200], spec[128], forspec[96];
    if (a->opt[OPT_FRAMEWORK] && !a->opt[OPT_FOR])
        return cli_usage_error(c->cmd, "--framework chooses between the frameworks of --for PYTHON");
    if (a->opt[OPT_FOR]) {
        if (version || cli_on(a, OPT_UNSET))
            return cli_usage_error(c->cmd, "--for PYTHON decides the pin: give no VERSION or --unset with it");
        int frc = cli_for_python(c, a->opt[OPT_FOR], a->opt[OPT_FRAMEWORK], forspec, sizeof forspec);
        if (frc) return cli_fail(c, frc);
        version = forspec;
    }
    if (!getcwd(cwd, sizeof cwd)) {
        cli_error(c, "cannot read the current directory: %s", strerror(errno));
        return 1;
    }
    if (unset) {
        snprintf(path, sizeof path, "%s/" CE_VERSION_FILE, strcmp(cwd, "/") ? cwd : "");
        if (unlink(path) != 0 && errno != ENOENT) {
            cli_error(c, "cannot remove %s: %s", path, strerror(errno));
            return 1;
        }
        return 0;
    }
    if (!version) {
        int r = ce_version_file_find(cwd, path, sizeof path, spec, sizeof spec);
        if (r < 0) return cli_fail(c, r);
        if (r == 0) {
            cli_error(c, "no " CE_VERSION_FILE " in %s or above; set one with: cudaenv local VERSION", cwd);
            return 3;
        }
        if ((r = ce_spec_file_showable(path, spec))) return cli_fail(c, r);
        printf("%s\n", spec);
        return 0;
    }
    /* pinning something not installed is allowed with --force (a teammate's
     * checkout may install it later); by default catch typos now */
    ce_active_info s;
    memset(&s, 0, sizeof s);
    int rc = ce_select(&c->ctx, version, &s);
    if (rc && !(force && rc == CE_ERR_NOTFOUND)) return cli_fail(c, rc);
    if (rc) memset(&s.tc, 0, sizeof s.tc);   /* not installed: its families unknown */
    /* the pin carries the mode (libs=framework) for the hook's env */
    if ((rc = cli_libs_mode(c, a->opt[OPT_LIBS], a->opt[OPT_FOR], &s))) return rc;
    snprintf(path, sizeof path, "%s/" CE_VERSION_FILE, strcmp(cwd, "/") ? cwd : "");
    if ((rc = ce_pin_write(path, version, s.libs))) return cli_fail(c, rc);
    return 0;
}

const cli_cmd cli_cmd_local = {
    .name = "local", .run = cmd_local,
    .summary = "pin a toolchain for this directory",
    .usage =
        "usage: cudaenv local [VERSION [--force] | --unset]\n"
        "       cudaenv local --for PYTHON [--framework tf|torch|jax] [--libs framework|toolchain] [--force]\n"
        "\n"
        "Write .cuda-version in the current directory; the cd hook applies it.  Without\n"
        "VERSION print the pin that applies here.  --force pins a version not installed.\n"
        "--for PYTHON pins what that Python's TensorFlow, PyTorch or JAX was built for\n"
        "(see install --for), with a line libs=framework when it brings its own CUDA\n"
        "libraries (see use).\n",
    .opts = cmd_local_opts, .max_pos = 1, .extra = "one VERSION only",
};
