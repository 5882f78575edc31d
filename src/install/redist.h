/* NVIDIA's redistrib_<ver>.json (MANIFEST.md "cuda.<ver>.redist"): the
 * per-component archives of a CUDA release.  The file is pinned by sha256 in
 * the manifest, but it is still parsed as untrusted input: every value's type
 * is checked, sizes must be decimal, sha256 64 lowercase hex, and a
 * relative_path may not be absolute, carry a scheme or climb with "..".
 *
 * Component selection: a profile of the manifest (tf, toolkit), adjusted by
 * --components "+nsight_systems,-libcufft"; driver-side components are never
 * selected, whatever the profile or the user says. */
#ifndef CE_REDIST_H
#define CE_REDIST_H

#include <stdbool.h>
#include <stddef.h>

#include "core/ctx.h"
#include "manifest/manifest.h"

#define CE_REDIST_MAX (64u * 1024 * 1024) /* bytes of JSON accepted */

typedef struct ce_component {
    char *name;           /* key: "libcublas" */
    char *label;          /* NVIDIA's "name": "CUDA cuBLAS" (may be NULL) */
    char *version;        /* "11.11.3.6" */
    char *relative_path;  /* "libcublas/linux-x86_64/libcublas-linux-x86_64-11.11.3.6-archive.tar.xz" */
    char *url;            /* relative_path resolved against the JSON's own URL */
    char sha256[65];
    long long size;       /* bytes */
    bool selected;
} ce_component;

typedef struct ce_redist {
    char *release_label;  /* "11.8.0", NULL in old files */
    char *release_date;
    ce_component *comps;  /* those with an archive for the platform, in file order */
    size_t n;
} ce_redist;

/* Parse text (len bytes) fetched from json_url for platform.  Errors are
 * CE_ERR_INTEGRITY naming json_url and the JSON path of the bad value. */
int ce_redist_parse(const char *text, size_t len, const char *json_url,
                    const char *platform, ce_redist **out);
void ce_redist_free(ce_redist *r);

/* nvidia_driver, nvidia_fs, fabricmanager, imex, libnvidia_nscq, libnvsdm,
 * mft*, nvlsm, driver_assistant, collectx_bringup, cuda_compat* (cuda_compat,
 * cuda_compat_orin). */
bool ce_redist_driver_side(const char *name);

/* Set comps[].selected from the profile, then the adjustments: a comma
 * separated list of +name (add) and -name (remove); a bare name adds.
 * Unknown names in adjustments are CE_ERR_USAGE naming the release's
 * components; asking for a driver-side one is CE_ERR_USAGE too. */
int ce_redist_select(ce_redist *r, const ce_profile *p, const char *adjust);

/* Sum of the selected components' sizes. */
long long ce_redist_selected_bytes(const ce_redist *r, size_t *count);

#endif
