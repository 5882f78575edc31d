/* A small valid manifest shared by test_manifest.c and test_resolve.c, and
 * helpers to load it (or a mutation of it) from text. */
#ifndef TEST_MANIFEST_FIXTURE_H
#define TEST_MANIFEST_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "manifest/manifest.h"

#define SHA_A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define SHA_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define SHA_C "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define NV "https://developer.download.nvidia.com/"
#define ART(url, sha) "{\"url\": \"" url "\", \"sha256\": \"" sha "\"}"

static const char FIXTURE[] =
    "{\"schema\": 1, \"updated\": \"2026-01-01\", \"future_key\": {\"x\": [1, 2]},\n"
    " \"tensorflow\": {\n"
    "  \"2.14\": {\"cuda\": \"11.8.0\", \"cudnn\": \"8.7.0.84\", \"python\": \"3.9-3.11\", \"source\": \"tf docs\"},\n"
    "  \"2.13\": {\"cuda\": \"11.8.0\", \"cudnn\": \"8.6.0.163\", \"python\": \"3.8-3.11\"},\n"
    "  \"2.15\": {\"cuda\": \"12.2.2\", \"cudnn\": \"8.9.7.29\"},\n"
    "  \"2.18\": {\"cuda\": \"12.5.1\", \"cudnn\": \"9.3.0.75\"},\n"
    "  \"1.12\": {\"cuda\": \"9.0.176\", \"cudnn\": \"7.6.5.32\", \"not_installable\": \"no verified sha256 for the cuDNN tarball\"}\n"
    " },\n"
    " \"cuda\": {\n"
    "  \"12.2.2\": {\"runfile\": {\"linux-x86_64\": " ART("cuda/cuda_12.2.2_linux.run", SHA_B) "}},\n"
    "  \"11.8.0\": {\"min_driver\": \"520.61.05\", \"min_driver_compat\": \"450.80.02\", \"max_gcc\": 11,\n"
    "             \"sm\": {\"min\": \"3.5\", \"max\": \"9.0\"}, \"source\": \"spack\", \"unknown\": true,\n"
    "             \"runfile\": {\"linux-x86_64\": {\"url\": \"" NV "compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux.run\",\n"
    "                                       \"sha256\": \"" SHA_A "\", \"size\": 4336730777, \"note\": \"x\"},\n"
    "                       \"linux-sbsa\": " ART(NV "compute/cuda/11.8.0/local_installers/cuda_11.8.0_520.61.05_linux_sbsa.run", SHA_B) "}},\n"
    "  \"12.2.0\": {\"runfile\": {\"linux-x86_64\": " ART(NV "cuda_12.2.0.run", SHA_C) "},\n"
    "             \"redist\": {\"url\": \"" NV "compute/cuda/redist/redistrib_12.2.0.json\", \"sha256\": \"" SHA_B "\", \"size\": 55781}},\n"
    "  \"12.5.1\": {\"runfile\": {\"linux-x86_64\": " ART(NV "cuda_12.5.1.run", SHA_C) ", \"linux-sbsa\": " ART(NV "cuda_12.5.1_sbsa.run", SHA_C) "}},\n"
    "  \"13.0.0\": {\"runfile\": {\"linux-x86_64\": " ART(NV "cuda_13.0.0.run", SHA_C) "}},\n"
    "  \"10.0.130\": {\"runfile\": {\"linux-x86_64\": " ART(NV "cuda_10.0.130.run", SHA_C) "}}\n"
    " },\n"
    " \"cudnn\": {\n"
    "  \"8.7.0.84\": {\"source\": \"spack\", \"cuda11\": {\"linux-x86_64\": {\"url\": \"" NV "cudnn-linux-x86_64-8.7.0.84_cuda11-archive.tar.xz\", \"sha256\": \"" SHA_C "\", \"size\": 886423308}}},\n"
    "  \"8.6.0.163\": {\"cuda11\": {\"linux-x86_64\": " ART(NV "cudnn-8.6.tar.xz", SHA_C) "}},\n"
    "  \"8.9.7.29\": {\"cuda11\": {\"linux-x86_64\": " ART(NV "cudnn-8.9-cuda11.tar.xz", SHA_C) "},\n"
    "                \"cuda12\": {\"linux-x86_64\": " ART(NV "cudnn-8.9-cuda12.tar.xz", SHA_C) ", \"linux-sbsa\": " ART(NV "cudnn-8.9-sbsa.tar.xz", SHA_C) "}},\n"
    "  \"9.3.0.75\": {\"cuda12\": {\"linux-x86_64\": " ART(NV "cudnn-9.3-cuda12.tar.xz", SHA_C) "}},\n"
    "  \"7.6.5.32\": {\"cuda10\": {\"linux-x86_64\": {\"url\": \"" NV "cudnn-10.1-linux-x64-v7.6.5.32.tgz\", \"sha256\": \"" SHA_C "\", \"for_cuda\": \"10.1\"}}},\n"
    "  \"9.13.0.50\": {\"cuda13\": {\"linux-x86_64\": " ART(NV "cudnn-9.13-cuda13.tar.xz", SHA_C) "}}\n"
    " },\n"
    " \"profiles\": {\"tf\": {\"components\": [\"cuda_cudart\", \"libcublas\", \"cuda_nvcc\"], \"source\": \"xla\"},\n"
    "              \"toolkit\": {\"components\": [\"*\"], \"exclude\": [\"cuda_documentation\", \"nsight_*\"]}}\n"
    "}\n";

/* base with the first occurrence of from replaced by to (malloc'ed). */
static inline char *fx_subst(const char *base, const char *from, const char *to)
{
    const char *at = strstr(base, from);
    if (!at) return NULL;
    size_t n = strlen(base) - strlen(from) + strlen(to) + 1;
    char *r = malloc(n);
    if (!r) return NULL;
    size_t pre = (size_t)(at - base);
    memcpy(r, base, pre);
    memcpy(r + pre, to, strlen(to));
    memcpy(r + pre + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1);
    return r;
}

#endif
