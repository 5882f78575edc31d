/* The CUDA libraries a Python environment brings itself (issue 37): pip's
 * nvidia-* wheels (<site-packages>/nvidia/<component>/lib), libraries a
 * framework wheel bundles (torch/lib), a conda environment's lib/.  A
 * framework loads those by path (PyTorch preloads libcudnn.so.9 from its
 * wheel) and their sub-libraries by name (cuDNN's libcudnn_graph,
 * _engines_*), so a toolchain's copy of the same family on LD_LIBRARY_PATH
 * gives one process two of them.  Found by reading directories only (no
 * Python runs): env, use, exec and current stay cheap.
 *
 * A library family: cudart, cublas (libcublas + libcublasLt), cudnn (all
 * its sub-libraries), nccl, nvrtc, nvjitlink, cufft, cusparse, cusparselt,
 * curand, cusolver, cupti. */
#ifndef CE_PYLIBS_H
#define CE_PYLIBS_H

#include <stdbool.h>
#include <stddef.h>

#define CE_PYLIBS_DIRS 16

typedef struct ce_pylibs {
    size_t n;
    char dir[CE_PYLIBS_DIRS][1024];   /* the directories holding family libraries */
    unsigned fams[CE_PYLIBS_DIRS];    /* the families each holds (bit ce_pylibs_family) */
    unsigned all;                     /* their union */
    char wheels[1024];                /* the nvidia-* distributions beside them, space-separated */
    bool conda;                       /* one of them is a conda environment's lib/ */
} ce_pylibs;

/* The family of a library file name ("libcudnn_graph.so.9" -> the cudnn
 * bit's index), -1 for none. */
int ce_pylibs_family(const char *base);
/* "cudart", "cublas", ...; NULL past the last. */
const char *ce_pylibs_family_name(int i);
/* The families whose libraries (lib*.so*) dir holds. */
unsigned ce_pylibs_dir_families(const char *dir);
/* "cudnn, nccl" for the bits of fams, into out. */
const char *ce_pylibs_names(unsigned fams, char *out, size_t n);

/* What python (a path, or a name looked up on PATH) brings: its venv or
 * prefix's site-packages (and dist-packages), the user's site unless a
 * venv, PYTHONPATH's entries, a conda prefix's lib/.  false when python
 * cannot be found; out->n 0 when it brings nothing. */
bool ce_pylibs_find(const char *python, ce_pylibs *out);

/* The hazard of a plain `use` (issue 37): the families python brings that
 * libdir (a toolchain's lib64) has too, when libdir is an entry of
 * LD_LIBRARY_PATH; 0 when none (pl filled either way). */
unsigned ce_pylibs_shadowed(const char *python, const char *libdir, ce_pylibs *pl);
/* Its summary and fix, for current and doctor (tc: the toolchain's name). */
void ce_pylibs_hazard_text(const char *python, const char *tc, unsigned fams, const ce_pylibs *pl, char *sum,
                           size_t sumsz, char *fix, size_t fixsz);

#endif
