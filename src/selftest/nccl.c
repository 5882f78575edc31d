/* Step 9: NCCL, the library TensorFlow's XLA and torch.distributed dlopen as
 * libnccl.so.2 for every multi-GPU collective.  It is loaded by explicit
 * path from the toolchain (installed there from NVIDIA's nvidia-nccl wheel,
 * see install/redist.h ce_redist_nccl), its version read, compared with the
 * receipt's, and with a GPU one communicator of one device is created and
 * destroyed (ncclCommInitAll): the library, the driver and the GPU agree.
 * A toolchain without NCCL is skipped with the way to add it; a copy on
 * LD_LIBRARY_PATH that other programs would load instead is named. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "st_int.h"
#include "core/version.h"
#include "store/adopt.h"

typedef int (*nccl_getv_fn)(int *);
typedef int (*nccl_initall_fn)(void **, int, const int *);
typedef int (*nccl_destroy_fn)(void *);
typedef const char *(*nccl_errstr_fn)(int);

/* NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9, major*1000 +
 * minor*100 + patch before */
void st_nccl_decode(int code, char *out, size_t outsz)
{
    if (code >= 20900) snprintf(out, outsz, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
    else snprintf(out, outsz, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
}

void st_nccl_step(st_state *st)
{
    st_step *s = &st->r->steps[ST_NCCL];
    char path[4200], why[512], real[4096];
    snprintf(path, sizeof path, "%s/lib64/libnccl.so.2", st->r->tc.prefix);
    if (access(path, F_OK) != 0) {
        /* a tree cudaenv did not install (adopted, or the machine's own) cannot
         * be reinstalled with NCCL: a toolchain of its CUDA release beside it can */
        char from[4096];
        bool ours = !st->r->tc.adhoc && ce_adopted_from(st->r->tc.prefix, from, sizeof from) != 1;
        char mm[32] = "";
        ce_version_prefix(st->r->tc.cuda, 2, mm, sizeof mm);
        if (ours)
            st_skip(s, false, "no NCCL in this toolchain: multi-GPU collectives (TensorFlow's MirroredStrategy, "
                    "torch.distributed) need libnccl.so.2; add it: cudaenv install %s --components +nccl",
                    st->r->tc.name);
        else
            st_skip(s, false, "no NCCL in %s (not installed by cudaenv): multi-GPU collectives (TensorFlow's "
                    "MirroredStrategy, torch.distributed) need libnccl.so.2; install a toolchain of CUDA %s with it "
                    "beside this one: cudaenv install %s --components +nccl", st->r->tc.prefix,
                    mm[0] ? mm : "this release", mm[0] ? mm : "VERSION");
        return;
    }
    if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
    if (st_elf_complete(path, why, sizeof why) != 0) {
        st_failf(s, "%s", why);
        return;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        st_failf(s, "cannot load %s: %s", path, dlerror());
        return;
    }
    nccl_getv_fn getv = (nccl_getv_fn)dlsym(h, "ncclGetVersion");
    int code = 0;
    if (!getv || getv(&code) != 0 || code <= 0) {
        st_failf(s, "%s is not NCCL: ncclGetVersion %s", real, getv ? "failed" : "is missing");
        return;
    }
    char ver[32];
    const char *want = st->r->tc.nccl;
    st_nccl_decode(code, ver, sizeof ver);
    st_note(s, "libnccl.so.2 -> %s: NCCL %s (ncclGetVersion %d)", real, ver, code);
    if (want[0] && strcmp(want, ver) != 0) {
        st_failf(s, "the toolchain's libnccl.so.2 is NCCL %s, but its receipt installed %s: the file was replaced; "
                 "reinstall: cudaenv install %s --force", ver, want, st->r->tc.name);
        return;
    }
    /* another libnccl.so.2 first in LD_LIBRARY_PATH, searched as for the other libraries
     * (loader.c): in the shell's, a warning also said here; in the check's own, a failure */
    size_t before = strlen(st->r->warnings);
    if (st_ld_shadows(st, s, "libnccl.so.2", path)) return;
    bool shadow = strlen(st->r->warnings) > before;
    if (shadow) st_note(s, "%.*s", (int)strcspn(st->r->warnings + before, "\n"), st->r->warnings + before);
    char coll[256] = "";
    if (st->gpu_ready && !st_nccl_collective(st, s, h, ver, coll, sizeof coll)) return;
    if (!st->gpu_ready) {
        st_pass(s, "NCCL %s loads from the toolchain%s; one-GPU init not run: %s", ver,
                shadow ? " (shadowed in this shell, see evidence)" : "",
                st->gpu_skip[0] ? st->gpu_skip : "no usable GPU");
        return;
    }
    nccl_initall_fn initall = (nccl_initall_fn)dlsym(h, "ncclCommInitAll");
    nccl_destroy_fn destroy = (nccl_destroy_fn)dlsym(h, "ncclCommDestroy");
    nccl_errstr_fn errstr = (nccl_errstr_fn)dlsym(h, "ncclGetErrorString");
    if (!initall || !destroy) {
        st_failf(s, "%s lacks ncclCommInitAll/ncclCommDestroy", real);
        return;
    }
    void *comm = NULL;
    int dev = st->r->n_devices > 0 ? st->r->devices[0].ordinal : 0;
    int rc = initall(&comm, 1, &dev);
    if (rc != 0) {
        st_failf(s, "NCCL %s: ncclCommInitAll on GPU %d failed: %s (%d)", ver, dev,
                 errstr ? errstr(rc) : "error", rc);
        return;
    }
    destroy(comm);
    st_pass(s, "NCCL %s from the toolchain: a one-GPU communicator on GPU %d%s%s", ver, dev, coll,
            shadow ? " (shadowed in this shell, see evidence)" : "");
}
