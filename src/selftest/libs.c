/* What the steps share about the libraries they dlopen()ed: the error
 * texts of the driver and the runtime, and the runtime's memory entry
 * points (bound once, for the kernel, cuDNN and bench steps). */
#include <stdio.h>

#include "st_int.h"

const char *st_cu_err(st_state *st, int rc)
{
    char *b = st->errbuf[st->errsel++ & 1];
    const char *name = NULL, *text = NULL;
    if (st->cu.GetErrorName) st->cu.GetErrorName(rc, &name);
    if (st->cu.GetErrorString) st->cu.GetErrorString(rc, &text);
    snprintf(b, sizeof st->errbuf[0], "%s (%d)%s%s", name ? name : "CUDA error", rc, text ? ": " : "",
             text ? text : "");
    return b;
}

const char *st_rt_err(st_state *st, int rc)
{
    char *b = st->errbuf[st->errsel++ & 1];
    const char *name = st->rt.GetErrorName ? st->rt.GetErrorName(rc) : NULL;
    const char *text = st->rt.GetErrorString ? st->rt.GetErrorString(rc) : NULL;
    snprintf(b, sizeof st->errbuf[0], "%s (%d)%s%s", name ? name : "cudaError", rc, text ? ": " : "",
             text ? text : "");
    return b;
}

bool st_rt_bind(st_state *st, st_step *s)
{
    st_rt *r = &st->rt;
    if (!r->h) {
        st_failf(s, "the CUDA runtime could not be loaded (see versions)");
        return false;
    }
    if (r->Malloc) return true;
    char miss[1024] = "";
    st_bind(r->h, "cudaGetErrorName", &r->GetErrorName, miss, sizeof miss);
    st_bind(r->h, "cudaGetErrorString", &r->GetErrorString, miss, sizeof miss);
    st_bind(r->h, "cudaSetDevice", &r->SetDevice, miss, sizeof miss);
    st_bind(r->h, "cudaMalloc", &r->Malloc, miss, sizeof miss);
    st_bind(r->h, "cudaFree", &r->Free, miss, sizeof miss);
    st_bind(r->h, "cudaMemcpy", &r->Memcpy, miss, sizeof miss);
    st_bind(r->h, "cudaMemset", &r->Memset, miss, sizeof miss);
    st_bind(r->h, "cudaDeviceSynchronize", &r->DeviceSynchronize, miss, sizeof miss);
    st_bind(r->h, "cudaMallocHost", &r->MallocHost, miss, sizeof miss);
    st_bind(r->h, "cudaFreeHost", &r->FreeHost, miss, sizeof miss);
    st_bind(r->h, "cudaMemcpyAsync", &r->MemcpyAsync, miss, sizeof miss);
    st_bind(r->h, "cudaEventCreate", &r->EventCreate, miss, sizeof miss);
    st_bind(r->h, "cudaEventRecord", &r->EventRecord, miss, sizeof miss);
    st_bind(r->h, "cudaEventSynchronize", &r->EventSynchronize, miss, sizeof miss);
    st_bind(r->h, "cudaEventElapsedTime", &r->EventElapsedTime, miss, sizeof miss);
    st_bind(r->h, "cudaEventDestroy", &r->EventDestroy, miss, sizeof miss);
    if (miss[0]) {
        st_failf(s, "%s lacks runtime entry points: %s", r->path, miss);
        r->Malloc = NULL;
        return false;
    }
    int rc = r->SetDevice(st->dev);
    if (rc != 0) {
        st_failf(s, "cudaSetDevice(%d) failed: %s", st->dev, st_rt_err(st, rc));
        r->Malloc = NULL;
        return false;
    }
    return true;
}
