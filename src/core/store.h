/* The store under $CUDAENV_ROOT:
 *   cache/<sha256>[.part]          pristine downloads (content addressed)
 *   pkgs/cuda-<X.Y.Z>/             pristine unpacked toolkit (one per release)
 *   pkgs/cudnn-<ver>-cuda<M>/      pristine unpacked cuDNN (one per release and CUDA major)
 *   versions/<name>/               toolchains, composed from pkgs/ with hardlinks
 *   versions/<name>/.cudaenv-receipt.json   what was installed (see below)
 *   versions/.staging-XXXXXX       work in progress; removed by the next run
 *   global                         the user's default toolchain (one line)
 *   .lock                          flock held by install/uninstall
 * Receipt (JSON): {"schema":1,"name","cuda","cudnn"(or null),"platform",
 *   "installed_at","tensorflow":[..],"min_driver","max_gcc","sm":{"min","max"},
 *   "sources":[{"kind":"runfile"|"cudnn","url","sha256","size"}],
 *   "files":[{"path","size","sha256"?}]}   (paths relative to the prefix,
 *   regular files only, the receipt itself excluded). */
#ifndef CE_STORE_H
#define CE_STORE_H

#include <stddef.h>

#include "ctx.h"

#define CE_RECEIPT_NAME ".cudaenv-receipt.json"

typedef struct ce_toolchain {
    char name[96];       /* "11.8.0+cudnn8.7.0.84" */
    char cuda[32];       /* "11.8.0" */
    char cudnn[32];      /* "8.7.0.84" or "" */
    char prefix[4096];   /* $CUDAENV_ROOT/versions/<name> */
} ce_toolchain;

/* $CUDAENV_ROOT/<sub> ("versions", "cache", "pkgs"). */
int ce_store_path(ce_ctx *ctx, const char *sub, char *out, size_t outsz);
/* Split a toolchain name into its CUDA and cuDNN versions; false if it is none. */
int ce_toolchain_parse_name(const char *name, ce_toolchain *out);
/* Installed toolchains, sorted by CUDA then cuDNN version (oldest first). */
int ce_store_list(ce_ctx *ctx, ce_toolchain **out, size_t *n);
/* The installed toolchain a spec names: an exact name, "11.8" / "11.8.0"
 * (newest installed match, preferring the newest cuDNN), "+cudnnX" narrows,
 * "tf-2.14" through the manifest.  CE_ERR_NOTFOUND names what is installed. */
int ce_store_find(ce_ctx *ctx, const char *spec, ce_toolchain *out);

#endif
