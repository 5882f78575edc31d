/* Private to src/doctor: what the checks share (adding a finding, the
 * loader search, one check per layer), run in order by doctor.c. */
#ifndef CE_DOCTOR_INT_H
#define CE_DOCTOR_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "manifest/manifest.h"
#include "report.h"

/* Finding texts are display strings built from paths of up to PATH_MAX:
 * cutting an absurdly long one short is the right outcome, so GCC's
 * truncation warning is off for the modules that build them (this header
 * is included only by src/doctor/: the CLI keeps the warning). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif


/* doctor_platform.c */
void doc_check_container(ce_doctor *d);
void doc_check_wsl(ce_doctor *d);
void doc_check_mig(ce_doctor *d);
void doc_check_perf(ce_doctor *d);
/* doctor_gpu.c */
void doc_check_gpu(ce_doctor *d);
/* doctor_libs.c */
void doc_check_libs(ce_doctor *d);
/* Where the dynamic loader would find soname for a program without RPATH:
 * LD_LIBRARY_PATH, then ld.so.cache (or, when the root has none, the
 * ld.so.conf directories), then the default directories.  0 and the host
 * path in out, via says which ("LD_LIBRARY_PATH", "ld.so.cache", ...);
 * -1 when nothing provides it. */
int doc_ld_resolve(ce_doctor *d, const char *soname, char *out, size_t outsz, char *via, size_t viasz);
/* The ld.so.conf directories (system paths), for the environment checks. */
size_t doc_ld_conf_dirs(ce_doctor *d, const char ***dirs, const char ***files);
void doc_ld_free(ce_doctor *d);
/* doctor_env.c */
void doc_check_env(ce_doctor *d);
/* The CUDA release (major.minor) of a toolkit tree: version.json,
 * version.txt, CUDART_VERSION, then a cuda-X.Y directory name; "" unknown. */
void doc_toolkit_version(const char *root, char *out, size_t n);
/* doctor_framework.c: TensorFlow / PyTorch as python3 imports them (quick:
 * build information and mapped libraries, no GPU work) */
void doc_check_framework(ce_doctor *d);
/* doctor_pylibs.c: python3's own CUDA libraries beside the toolchain's on LD_LIBRARY_PATH */
void doc_check_pylibs(ce_doctor *d);
/* doctor_fwcache.c: framework.py's report kept between runs, per
 * interpreter + framework, while nothing it imported from changed.  open:
 * the key and the cache directory (-1 with why when it cannot be used:
 * get/put then do nothing); get: the report, python, status and log into
 * r (true on a hit; ignored says why a file there was not trusted); put:
 * keep r's report (began_ns: CLOCK_REALTIME when the probe started; why
 * says when it was not kept). */
struct ce_fw_report;
typedef struct doc_fwcache {
    char dir[CE_PATH_MAX];
    char name[64];
    char key[8800];
    int dfd;
    long long probed_at;     /* a hit: when (epoch seconds) */
    char ignored[4400];      /* get: why the file there was not trusted, "" */
    char why[4600];          /* open, put: why nothing is kept, "" */
} doc_fwcache;
int doc_fwcache_open(doc_fwcache *c, const char *fw, const char *python);
bool doc_fwcache_get(doc_fwcache *c, struct ce_fw_report *r);
void doc_fwcache_put(doc_fwcache *c, const struct ce_fw_report *r, long long began_ns);
void doc_fwcache_close(doc_fwcache *c);
/* doctor_compat.c */
void doc_check_driver_toolkit(ce_doctor *d);
void doc_check_compat(ce_doctor *d);

#endif
