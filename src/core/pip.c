#include "pip.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "path.h"

static bool exists_rel(const char *dir, const char *rel)
{
    char p[PATH_MAX + 64];
    return ce_path_join(p, sizeof p, dir, rel) == CE_OK && access(p, F_OK) == 0;
}

/* py as given, or the first PATH entry that has it */
static bool locate(const char *py, char *out, size_t n)
{
    if (strchr(py, '/')) {
        snprintf(out, n, "%s", py);
        return true;
    }
    const char *path = getenv("PATH");
    if (!path) return false;
    for (const char *p = path;;) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len) {
            snprintf(out, n, "%.*s/%s", (int)len, p, py);
            if (access(out, X_OK) == 0) return true;
        }
        if (!e) return false;
        p = e + 1;
    }
}

bool ce_pip_externally_managed(const char *py)
{
    char at[PATH_MAX], real[PATH_MAX], dir[PATH_MAX];
    if (!locate(py, at, sizeof at)) return false;
    /* a venv's python is a link to the base one: look beside the link first */
    snprintf(dir, sizeof dir, "%s", at);
    char *s = strrchr(dir, '/');
    if (s) *s = '\0';
    if (exists_rel(dir, "../pyvenv.cfg") || exists_rel(dir, "../conda-meta")) return false;
    if (!realpath(at, real)) return false;
    const char *base = strrchr(real, '/') + 1;
    int maj, min;
    if (sscanf(base, "python%d.%d", &maj, &min) != 2) return false;
    snprintf(dir, sizeof dir, "%s", real);
    for (int i = 0; i < 2; i++)
        if ((s = strrchr(dir, '/')) && s != dir) *s = '\0';
    char rel[64];
    snprintf(rel, sizeof rel, "lib/python%d.%d/EXTERNALLY-MANAGED", maj, min);
    return exists_rel(dir, rel);
}

const char *ce_pip_install_cmd(const char *py, const char *pkgs, char *out, size_t n)
{
    if (ce_pip_externally_managed(py))
        snprintf(out, n, "python3 -m venv ~/.venvs/cuda && " CE_PIP_VENV_PY " -m pip install %s (%s is the "
                 "system's Python, which refuses pip: PEP 668)", pkgs, py);
    else
        snprintf(out, n, "%s -m pip install %s", py, pkgs);
    return out;
}
