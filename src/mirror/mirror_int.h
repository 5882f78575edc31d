/* What mirror.c shares with mirror_repack.c: the plan of one mirror run. */
#ifndef CE_MIRROR_INT_H
#define CE_MIRROR_INT_H

#include <cjson/cJSON.h>

#include "archive/repack.h"
#include "fetch/digest.h"
#include "install/redist.h"
#include "mirror.h"
#include "mirror_dir.h"

#define NVIDIA_BASE "https://developer.download.nvidia.com/"
#define WORK_DIR ".cudaenv-mirror"

/* A runfile, a cuDNN tarball, a release's redistrib JSON (cuda.<ver>.redist),
 * one component archive the JSON names (no entry of its own: the JSON
 * has it, and the redist entry lists the mirrored names per platform), or an
 * NCCL wheel (the "nccl" section, shaped as cudnn's). */
typedef enum { MF_RUNFILE, MF_CUDNN, MF_REDIST, MF_COMPONENT, MF_NCCL } mf_kind;

typedef struct ce_mirror_file {
    mf_kind kind;
    const char *version;       /* CUDA or cuDNN release (JSON key) */
    int cuda_major;            /* cuDNN, NCCL: the "cudaM" key */
    const char *platform;
    const char *url, *sha256;  /* resolved URL (mirror rewrite applied), pin */
    long long size;
    const char *component;     /* MF_COMPONENT: its name */
    char rel[1024];            /* path under DIR (NVIDIA's) */
    /* --repack: the repacked file under DIR ("" none), its sha256 and size */
    char rp_rel[1040];
    char rp_sha256[CE_SHA256_HEX];
    long long rp_size;
} ce_mirror_file;

typedef struct plan {
    ce_mirror_file *f;
    size_t n, cap;
    ce_redist *reds[64];       /* the JSONs the components point into */
    size_t n_reds;
} plan;

/* The format a run repacks in: req's, else the one DIR/cudaenv.json
 * records ("repack"), else none. */
ce_repack_fmt ce_mirror_repack_format(const ce_mdir *md, ce_repack_fmt asked);

/* Repack every .tar.xz component and cuDNN archive of the plan (placed and
 * verified under DIR) into fmt beside it, several at once; one repacked
 * before from the same bytes (its record in .cudaenv-mirror/repack/) and
 * still hashing to what was recorded is kept. */
int ce_mirror_repack(ce_ctx *ctx, const ce_mdir *md, ce_repack_fmt fmt, plan *pl, ce_mirror_stats *st);

/* A cuDNN entry of the mirror's manifest (a copy of the source's, its url
 * already f->rel): url, sha256 and size become the repack's, NVIDIA's kept
 * under "origin". */
void ce_mirror_repack_entry(cJSON *a, const ce_mirror_file *f);

/* Each redistrib JSON of the manifest out with repacked components: a
 * rewritten copy beside NVIDIA's (redistrib_<ver>.<fmt>.json) naming the
 * repacks (NVIDIA's relative_path, sha256, size, md5 under "origin"), and
 * out's redist entry pointing at it (NVIDIA's JSON under "origin"). */
int ce_mirror_repack_json(ce_ctx *ctx, const ce_mdir *md, ce_repack_fmt fmt, cJSON *out, const plan *pl);

#endif
