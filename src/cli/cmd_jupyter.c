/* cudaenv jupyter install VERSION [--python PATH] [--name NAME]: a Jupyter
 * kernelspec whose env carries the toolchain's environment (the document of
 * `env --shell json`), so a notebook gets the same libraries as `cudaenv use`.
 * Written to $JUPYTER_DATA_DIR/kernels/NAME/kernel.json, else
 * ${XDG_DATA_HOME:-~/.local/share}/jupyter/kernels/NAME/kernel.json. */
#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/pip.h"
#include "core/priv.h"
#include "core/file.h"
#include "core/proc.h"
#include "core/pyrun.h"
#include "store/activate.h"

enum { OPT_PYTHON = 1, OPT_NAME };

static const cli_opt cmd_jupyter_opts[] = {
    { "python", 0, true, OPT_PYTHON },
    { "name", 0, true, OPT_NAME },
    { 0 },
};

/* Jupyter's kernel names: letters, digits, '.', '_' and '-' (so never a path). */
static bool valid_name(const char *s)
{
    if (!*s || strlen(s) > 64 || !strcmp(s, ".") || !strcmp(s, "..")) return false;
    for (; *s; s++)
        if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') && !(*s >= '0' && *s <= '9') && !strchr("._-", *s))
            return false;
    return true;
}

/* An absolute path for PYTHON: a name is looked up on PATH (the kernel must
 * not depend on the PATH Jupyter happens to start with). */
static bool python_path(const char *want, char *out, size_t outsz)
{
    if (strchr(want, '/')) {
        /* made absolute, not resolved: a venv's bin/python links to the base interpreter */
        char cwd[4096] = "";
        if (want[0] != '/' && !getcwd(cwd, sizeof cwd)) return false;
        int n = snprintf(out, outsz, "%s%s%s", cwd, cwd[0] ? "/" : "", want);
        return n > 0 && (size_t)n < outsz && access(out, X_OK) == 0;
    }
    return ce_proc_which(want, out, outsz);
}

/* Whether py can import ipykernel (what the kernel's argv runs), asked of
 * a Python isolated from the working directory (core/pyrun.h: an
 * ipykernel.py there must not run). */
static bool has_ipykernel(const char *py)
{
    ce_py run;
    if (ce_py_prepare(&run, py, "import ipykernel\n", NULL, 0) != CE_OK) {
        ce_py_done(&run);
        return true; /* cannot tell: no warning */
    }
    ce_proc p = { .path = py, .argv = run.argv, .env_add = (const char *const *)run.env_add, .cwd = run.dir,
                  .out = CE_PROC_NULL };
    ce_proc_result r;
    int rc = ce_proc_run(NULL, &p, &r);
    ce_py_done(&run);
    if (rc != CE_OK) return true;
    ce_proc_result_free(&r);
    return r.code == 0;
}

static int data_dir(cli *c, char *out, size_t n)
{
    /* relative values are not used: the kernel spec is never written under
     * the working directory (HOME=.; ce_home) */
    const char *j = getenv("JUPYTER_DATA_DIR"), *x = getenv("XDG_DATA_HOME");
    (void)c;
    if (j && j[0] == '/') snprintf(out, n, "%s", j);
    else if (x && x[0] == '/') snprintf(out, n, "%s/jupyter", x);
    else snprintf(out, n, "%s/.local/share/jupyter", ce_home());
    return CE_OK;
}

static int install(cli *c, const cli_cmd *cmd, const char *version, const char *python, const char *name)
{
    ce_active_info sel;
    memset(&sel, 0, sizeof sel);
    sel.origin = CE_ORIGIN_SHELL;
    int rc = ce_select(&c->ctx, version, &sel);
    if (rc) return cli_fail(c, rc);
    if (sel.is_system) return cli_usage_error(cmd, "a kernel needs an installed toolchain, not 'system'");
    char py[4096], kname[128];
    if (!python_path(python ? python : "python3", py, sizeof py))
        return cli_fail(c, ce_fail(CE_ERR_NOTFOUND, "%s: %s; name the Python with --python PATH",
                                   python ? python : "python3", python ? "no such executable" : "not found on PATH"));
    /* as root, a Python that is not root's is refused before anything is
     * written (pyrun.h: the same check every Python start makes) */
    char why[2 * 4096 + 512];
    if (ce_py_trusted(py, why, sizeof why)) return cli_fail(c, ce_fail(CE_ERR_PERM, "%s", why));
    if (name) {
        if (!valid_name(name))
            return cli_usage_error(cmd, "bad kernel name '%s' (letters, digits, '.', '_', '-')", name);
        snprintf(kname, sizeof kname, "%s", name);
    } else {
        snprintf(kname, sizeof kname, "cudaenv-%s", sel.tc.name);
        for (char *p = kname; *p; p++)
            if (*p == '+') *p = '-';
    }
    /* the environment: what `cudaenv env VERSION --shell json` prints; a
     * kernel Python that brings its own CUDA libraries keeps them, as exec
     * --for does (for_python.c: one copy of each library) */
    ce_env env;
    char *text = NULL;
    if ((rc = cli_libs_mode(c, NULL, py, &sel))) return rc;
    if ((rc = ce_env_compute(&c->ctx, &sel, true, &env))) return cli_fail(c, rc);
    rc = ce_env_format(&env, &sel, CE_SH_JSON, &text);
    ce_env_free(&env);
    if (rc) return cli_fail(c, rc);
    cJSON *doc = cJSON_Parse(text);
    free(text);
    cJSON *envobj = doc ? cJSON_DetachItemFromObjectCaseSensitive(doc, "env") : NULL;
    cJSON_Delete(doc);
    if (!envobj) return cli_fail(c, ce_fail(CE_ERR_OTHER, "cannot read the toolchain's environment"));

    cJSON *k = cJSON_CreateObject();
    cJSON *argv = cJSON_AddArrayToObject(k, "argv");
    const char *args[] = { py, "-m", "ipykernel_launcher", "-f", "{connection_file}" };
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) cJSON_AddItemToArray(argv, cJSON_CreateString(args[i]));
    char disp[256];
    snprintf(disp, sizeof disp, "Python 3 (cudaenv %s)", sel.tc.name);
    cJSON_AddStringToObject(k, "display_name", disp);
    cJSON_AddStringToObject(k, "language", "python");
    cJSON_AddItemToObject(k, "env", envobj);
    cJSON *meta = cJSON_AddObjectToObject(cJSON_AddObjectToObject(k, "metadata"), "cudaenv");
    cJSON_AddStringToObject(meta, "toolchain", sel.tc.name);
    cJSON_AddStringToObject(meta, "prefix", sel.tc.prefix);
    char *json = cJSON_Print(k);
    cJSON_Delete(k);
    if (!json) return cli_fail(c, ce_fail(CE_ERR_NOMEM, "out of memory"));

    char dir[4096], kdir[4300], file[4400];
    if ((rc = data_dir(c, dir, sizeof dir))) {
        free(json);
        return cli_fail(c, rc);
    }
    snprintf(kdir, sizeof kdir, "%s/kernels/%s", dir, kname);
    snprintf(file, sizeof file, "%s/kernel.json", kdir);
    size_t len = strlen(json);
    json[len] = '\n';  /* cJSON_Print leaves room: replace the NUL, write len + 1 */
    /* beneath the kernel's directory held by fd (core/priv.h): as root a
     * user's JUPYTER_DATA_DIR, HOME or link on the way redirects nothing */
    ce_priv_tree t;
    if (ce_priv_dir_make(&t, kdir, 0755, why, sizeof why)) {
        bool refused = errno == EPERM || errno == ELOOP;
        free(json);
        return cli_fail(c, ce_fail(refused || errno == EACCES ? CE_ERR_PERM : CE_ERR_IO,
                                   "cannot write %s: %s%s", file, why,
                                   refused ? "; as root the kernelspec is written only into directories only root "
                                             "can change (a user's JUPYTER_DATA_DIR or HOME left by sudo -E: use "
                                             "sudo -H, or run jupyter install as that user)" : ""));
    }
    rc = ce_file_write_atomic_at(t.fd, kdir, "kernel.json", json, len + 1, 0644);
    ce_priv_tree_close(&t);
    free(json);
    if (rc) return cli_fail(c, rc);
    printf("%s\n", file);
    char pip[768];
    if (!has_ipykernel(py))
        cli_warn(c, "%s cannot import ipykernel, which the kernel runs: %s", py,
                 ce_pip_install_cmd(py, "ipykernel", pip, sizeof pip));
    cli_note(c, "kernel '%s' (%s) runs %s with toolchain %s; pick it in Jupyter's kernel list", kname, disp, py,
             sel.tc.name);
    return 0;
}

static int cmd_jupyter(cli *c, const cli_args *a)
{
    const cli_cmd *cmd = c->cmd;
    const char *sub = a->n > 0 ? a->pos[0] : NULL, *version = a->n > 1 ? a->pos[1] : NULL;
    if (!sub || strcmp(sub, "install"))
        return cli_usage_error(cmd, "usage: cudaenv jupyter install VERSION [--python PATH] [--name NAME]");
    if (!version) return cli_usage_error(cmd, "name the toolchain: cudaenv jupyter install VERSION");
    return install(c, cmd, version, a->opt[OPT_PYTHON], a->opt[OPT_NAME]);
}

const cli_cmd cli_cmd_jupyter = {
    .name = "jupyter", .run = cmd_jupyter,
    .summary = "a Jupyter kernel with a toolchain's environment",
    .usage =
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
    .opts = cmd_jupyter_opts, .max_pos = 2, .extra = "one VERSION only (got '%s' and '%s')",
};
