/* A test double of libnccl.so.2 for machines without a GPU: the calls
 * verify's NCCL step makes.  NCCL_CODE is the NCCL_VERSION_CODE it reports
 * (default 22105: 2.21.5).  FAKE_NCCL_INIT=fail makes ncclCommInitAll fail
 * with ncclUnhandledCudaError (1), as a GPU the library cannot use does.
 * Build: cc -shared -fPIC -Wl,-soname,libnccl.so.2 -DNCCL_CODE=22105 -o libnccl.so.2 nccl.c */
#include <stdlib.h>
#include <string.h>

#ifndef NCCL_CODE
#define NCCL_CODE 22105
#endif

static int comm_token;

int ncclGetVersion(int *v)
{
    if (!v) return 4;   /* ncclInvalidArgument */
    *v = NCCL_CODE;
    return 0;
}

int ncclCommInitAll(void **comms, int ndev, const int *devlist)
{
    const char *f = getenv("FAKE_NCCL_INIT");
    if (f && strcmp(f, "fail") == 0) return 1;
    if (!comms || ndev < 1) return 4;
    (void)devlist;
    for (int i = 0; i < ndev; i++) comms[i] = &comm_token;
    return 0;
}

int ncclCommDestroy(void *comm) { return comm == &comm_token ? 0 : 4; }

const char *ncclGetErrorString(int rc)
{
    return rc == 1 ? "unhandled cuda error (run with NCCL_DEBUG=INFO for details)" : "invalid argument";
}
