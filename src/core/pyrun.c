/* Python run isolated: see pyrun.h. */
#include "pyrun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "path.h"
#include "priv.h"
#include "rmtree.h"

/* Runs before the script, under -I: puts back the caller's own PYTHONPATH
 * entries (vetted as root) and, for a user, the user site. */
static const char prologue[] =
    "import os as _o, sys as _s\n"
    "_s.path[0:0] = [_e for _e in _o.environ.pop('__CUDAENV_PYPATH', '').split(_o.pathsep) if _e]\n"
    "if _o.environ.pop('__CUDAENV_USER_SITE', None):\n"
    "    import site as _si\n"
    "    _si.ENABLE_USER_SITE = True\n"
    "    _si.addsitedir(_si.getusersitepackages())\n"
    "del _o, _s\n";

/* PYTHONPATH's entries the prologue puts back: absolute ones only (a
 * relative entry is the working directory's), and as root only those that
 * pass the rule. */
static char *vetted_path(void)
{
    static const char key[] = "__CUDAENV_PYPATH=";
    const char *pp = getenv("PYTHONPATH");
    size_t n = pp ? strlen(pp) : 0;
    char *out = malloc(sizeof key + n + 1), *copy = pp ? strdup(pp) : NULL;
    if (!out || (pp && !copy)) {
        free(out);
        free(copy);
        return NULL;
    }
    memcpy(out, key, sizeof key);
    size_t o = sizeof key - 1;
    char *save = NULL;
    for (char *t = copy ? strtok_r(copy, ":", &save) : NULL; t; t = strtok_r(NULL, ":", &save)) {
        if (t[0] != '/' || !ce_priv_path_ok(t)) continue;
        if (o > sizeof key - 1) out[o++] = ':';
        size_t l = strlen(t);
        memcpy(out + o, t, l);
        o += l;
    }
    out[o] = '\0';
    free(copy);
    return out;
}

int ce_py_prepare(ce_py *py, const char *python, const char *script, const char *const *args,
                  size_t nargs)
{
    memset(py, 0, sizeof *py);
    if (nargs > 8) return ce_fail(CE_ERR_OTHER, "too many arguments for a Python script");
    char why[2 * 4096 + 512];
    if (ce_py_trusted(python, why, sizeof why)) return ce_fail(CE_ERR_PERM, "%s", why);
    const char *tmp = ce_priv_tmpdir();
    if (snprintf(py->dir, sizeof py->dir, "%s/cudaenv-py.XXXXXX", tmp) >= (int)sizeof py->dir) {
        py->dir[0] = '\0';
        return ce_fail(CE_ERR_OTHER, "TMPDIR too long: %s", tmp);
    }
    if (!mkdtemp(py->dir)) {
        int e = errno;
        py->dir[0] = '\0';
        return ce_fail(CE_ERR_IO, "cannot create a private directory in %s: %s", tmp, strerror(e));
    }
    /* dir is < 4096 bytes, script 4200 (no snprintf: GCC's -O1 format check
     * misreads mkdtemp's buffer as possibly null) */
    static const char name[] = "/cudaenv_script.py";
    size_t dl = strlen(py->dir);
    memcpy(py->script, py->dir, dl);
    memcpy(py->script + dl, name, sizeof name);
    int dfd = open(py->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int fd = dfd >= 0 ? openat(dfd, "cudaenv_script.py", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600) : -1;
    int e = errno;
    if (dfd >= 0) close(dfd);
    bool ok = fd >= 0;
    size_t sl = strlen(script);
    ok = ok && write(fd, prologue, sizeof prologue - 1) == (ssize_t)(sizeof prologue - 1) &&
         write(fd, script, sl) == (ssize_t)sl;
    if (!ok && fd >= 0) e = errno;
    if (fd >= 0 && close(fd) != 0 && ok) { ok = false; e = errno; }
    if (!ok) {
        ce_py_done(py);
        return ce_fail(CE_ERR_IO, "cannot write a Python script into a private directory in %s: %s", tmp,
                       strerror(e));
    }
    if (!(py->env_path = vetted_path())) {
        ce_py_done(py);
        return ce_fail(CE_ERR_NOMEM, "out of memory");
    }
    size_t k = 0;
    py->env_add[k++] = py->env_path;
    if (!ce_priv()) py->env_add[k++] = "__CUDAENV_USER_SITE=1";
    py->env_add[k] = NULL;
    k = 0;
    py->argv[k++] = (char *)python;
    py->argv[k++] = "-I";
    py->argv[k++] = py->script;
    for (size_t i = 0; i < nargs; i++) py->argv[k++] = (char *)args[i];
    py->argv[k] = NULL;
    return CE_OK;
}

int ce_py_file(const ce_py *py, const char *name, char *out, size_t outsz)
{
    if (ce_path_join(out, outsz, py->dir, name) != CE_OK) return ce_fail(CE_ERR_OTHER, "path too long: %s", py->dir);
    return CE_OK;
}

void ce_py_done(ce_py *py)
{
    if (py->dir[0]) ce_rm_tree(py->dir);
    py->dir[0] = '\0';
    free(py->env_path);
    py->env_path = NULL;
}
