/* A test double of libnccl.so.2 for machines without a GPU: the calls
 * verify's NCCL step makes.  NCCL_CODE is the NCCL_VERSION_CODE it reports
 * (default 22105: 2.21.5).  FAKE_NCCL_INIT=fail makes ncclCommInitAll fail
 * with ncclUnhandledCudaError (1), as a GPU the library cannot use does.
 * With several devices it also runs all-reduces (see below).
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

int ncclCommInitAllRanks(void **comms, int ndev);

int ncclCommInitAll(void **comms, int ndev, const int *devlist)
{
    const char *f = getenv("FAKE_NCCL_INIT");
    if (f && strcmp(f, "fail") == 0) return 1;
    if (!comms || ndev < 1) return 4;
    (void)devlist;
    if (ndev > 1) return ncclCommInitAllRanks(comms, ndev);
    comms[0] = &comm_token;
    return 0;
}

int ncclCommDestroy(void *comm) { return comm ? 0 : 4; }

const char *ncclGetErrorString(int rc)
{
    return rc == 1 ? "unhandled cuda error (run with NCCL_DEBUG=INFO for details)" : "invalid argument";
}

/* Collectives (verify --all-devices): communicators are ranks of one clique;
 * an all-reduce between ncclGroupStart and ncclGroupEnd is queued and summed
 * at ncclGroupEnd over the ranks' buffers (device memory is host memory in
 * the libcudart double).  FAKE_NCCL_WRONG: the sum is off by one at one element. */
#include <stddef.h>
#define FAKE_MAX 16
static int ranks[FAKE_MAX];
static struct { const float *send; float *recv; size_t count; } queued[FAKE_MAX];
static int nqueued, grouped;

int ncclCommInitAllRanks(void **comms, int ndev)
{
    if (ndev > FAKE_MAX) return 4;
    for (int i = 0; i < ndev; i++) { ranks[i] = i; comms[i] = &ranks[i]; }
    return 0;
}

int ncclGroupStart(void) { grouped++; return 0; }

static int flush(void)
{
    if (nqueued == 0) return 0;
    size_t count = queued[0].count;
    for (int q = 1; q < nqueued; q++) if (queued[q].count != count) return 4;
    for (size_t k = 0; k < count; k++) {
        float s = 0;
        for (int q = 0; q < nqueued; q++) s += queued[q].send[k];
        for (int q = 0; q < nqueued; q++) queued[q].recv[k] = s;
    }
    if (getenv("FAKE_NCCL_WRONG") && count > 3) queued[nqueued - 1].recv[3] += 1.0f;
    nqueued = 0;
    return 0;
}

int ncclGroupEnd(void) { return --grouped == 0 ? flush() : 0; }

int ncclAllReduce(const void *send, void *recv, size_t count, int dtype, int op, void *comm, void *stream)
{
    (void)stream; (void)comm;
    if (dtype != 7 || op != 0 || nqueued == FAKE_MAX) return 4;
    queued[nqueued].send = send; queued[nqueued].recv = recv; queued[nqueued].count = count;
    nqueued++;
    return grouped ? 0 : flush();
}
