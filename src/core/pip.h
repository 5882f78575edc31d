/* Advice that installs Python packages and works where it is given: on a
 * PEP 668 system (Debian 12, Ubuntu 23.04+) `python3 -m pip install` into
 * the distribution's Python is refused (externally-managed-environment), so
 * there the fix makes a virtual environment first. */
#ifndef CE_PIP_H
#define CE_PIP_H

#include <stdbool.h>
#include <stddef.h>

/* true when py (a path, or a name looked up in PATH) is a distribution's
 * Python that refuses pip: not in a venv (pyvenv.cfg) or conda prefix
 * (conda-meta), and its lib/pythonX.Y holds EXTERNALLY-MANAGED. */
bool ce_pip_externally_managed(const char *py);

/* The shell command that installs pkgs (pip's arguments) for py into out:
 * "PY -m pip install PKGS", or where py refuses pip, "python3 -m venv
 * ~/.venvs/cuda && ~/.venvs/cuda/bin/python -m pip install PKGS" (then name
 * that Python: ~/.venvs/cuda/bin/python).  Returns out. */
const char *ce_pip_install_cmd(const char *py, const char *pkgs, char *out, size_t n);

/* The Python ce_pip_install_cmd's venv gives. */
#define CE_PIP_VENV_PY "~/.venvs/cuda/bin/python"

#endif
