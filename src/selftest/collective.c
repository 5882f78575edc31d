/* verify --all-devices on two GPUs or more (issue 28): NCCL across them.
 * One process drives every GPU verify saw (ncclCommInitAll), peer access is
 * read per pair, and an all-reduce (sum) of a known float buffer is checked
 * element by element: GPU i sends (i+1) * (1 + k % 7), so element k must be
 * n(n+1)/2 * (1 + k % 7) on every GPU, exactly (small integers in floats).
 * With --bench the same all-reduce on 256 MiB is timed and reported as bus
 * bandwidth (algorithm bandwidth x 2(n-1)/n, NCCL's own measure).  Settings
 * that cut NCCL's paths (NCCL_P2P_DISABLE, NCCL_IB_DISABLE, NCCL_SHM_DISABLE)
 * are named with the fix. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "st_int.h"

#define ST_MAX_COLL 16
enum { NCCL_FLOAT32 = 7, NCCL_SUM = 0 };

typedef int (*initall_fn)(void **, int, const int *);
typedef int (*destroy_fn)(void *);
typedef int (*group_fn)(void);
typedef int (*allreduce_fn)(const void *, void *, size_t, int, int, void *, void *);
typedef const char *(*errstr_fn)(int);
typedef int (*peer_fn)(int *, int, int);

typedef struct coll {
    st_state *st;
    st_step *s;
    int n, devs[ST_MAX_COLL];
    void *comm[ST_MAX_COLL];
    float *send[ST_MAX_COLL], *recv[ST_MAX_COLL];
    allreduce_fn allreduce;
    group_fn gstart, gend;
    errstr_fn errstr;
} coll;

static const char *nerr(const coll *c, int rc) { return c->errstr ? c->errstr(rc) : "error"; }

/* one all-reduce of count floats on every GPU, waited for */
static int reduce(coll *c, size_t count, char *why, size_t wsz)
{
    int rc = c->gstart();
    for (int i = 0; rc == 0 && i < c->n; i++) {
        c->st->rt.SetDevice(c->devs[i]);
        rc = c->allreduce(c->send[i], c->recv[i], count, NCCL_FLOAT32, NCCL_SUM, c->comm[i], NULL);
    }
    int erc = c->gend();
    if (rc == 0) rc = erc;
    if (rc) {
        snprintf(why, wsz, "ncclAllReduce: %s (%d)", nerr(c, rc), rc);
        return rc;
    }
    for (int i = 0; i < c->n; i++) {
        c->st->rt.SetDevice(c->devs[i]);
        int r = c->st->rt.DeviceSynchronize();
        if (r) {
            snprintf(why, wsz, "GPU %d after the all-reduce: %s", c->devs[i], st_rt_err(c->st, r));
            return r;
        }
    }
    return 0;
}

static void env_findings(st_step *s)
{
    static const char *const knobs[] = { "NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE", NULL };
    for (int i = 0; knobs[i]; i++) {
        const char *v = getenv(knobs[i]);
        if (v && *v && strcmp(v, "0") != 0)
            st_note(s, "%s=%s is set: NCCL avoids that path, collectives run slower or not at all; fix: unset %s",
                    knobs[i], v, knobs[i]);
    }
}

static void release(coll *c, destroy_fn destroy)
{
    for (int i = 0; i < c->n; i++) {
        if (c->send[i] || c->recv[i]) c->st->rt.SetDevice(c->devs[i]);
        if (c->send[i]) c->st->rt.Free(c->send[i]);
        if (c->recv[i]) c->st->rt.Free(c->recv[i]);
        if (c->comm[i] && destroy) destroy(c->comm[i]);
    }
}

/* Returns false when it failed the step. */
bool st_nccl_collective(st_state *st, st_step *s, void *h, const char *ver, char *summary, size_t ssz)
{
    summary[0] = '\0';
    coll c = { .st = st, .s = s, .n = st->r->n_devices < ST_MAX_COLL ? st->r->n_devices : ST_MAX_COLL };
    if (!st->opt->all_devices) return true;
    env_findings(s);
    if (c.n < 2) {
        const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
        snprintf(summary, ssz, "; collective skipped: one GPU visible%s%s%s", cvd ? " (CUDA_VISIBLE_DEVICES=" : "",
                 cvd ? cvd : "", cvd ? " hides the others)" : "");
        return true;
    }
    initall_fn initall = (initall_fn)dlsym(h, "ncclCommInitAll");
    destroy_fn destroy = (destroy_fn)dlsym(h, "ncclCommDestroy");
    c.allreduce = (allreduce_fn)dlsym(h, "ncclAllReduce");
    c.gstart = (group_fn)dlsym(h, "ncclGroupStart");
    c.gend = (group_fn)dlsym(h, "ncclGroupEnd");
    c.errstr = (errstr_fn)dlsym(h, "ncclGetErrorString");
    if (!initall || !destroy || !c.allreduce || !c.gstart || !c.gend || !st_rt_bind(st, s)) {
        st_failf(s, "NCCL %s or the runtime lacks the collective entry points (ncclCommInitAll, ncclAllReduce, "
                 "ncclGroupStart/End, cudaMalloc)", ver);
        return false;
    }
    for (int i = 0; i < c.n; i++) c.devs[i] = st->r->devices[i].ordinal;
    /* peer access per pair (NVLink or PCIe P2P); without it NCCL goes through host memory */
    peer_fn peer = (peer_fn)dlsym(st->rt.h, "cudaDeviceCanAccessPeer");
    int nopeer = 0;
    for (int i = 0; peer && i < c.n; i++)
        for (int j = i + 1; j < c.n; j++) {
            int a = 0, b = 0;
            peer(&a, c.devs[i], c.devs[j]);
            peer(&b, c.devs[j], c.devs[i]);
            st_note(s, "peer access GPU %d <-> GPU %d: %s", c.devs[i], c.devs[j], a && b ? "yes" : "no");
            nopeer += !(a && b);
        }
    if (nopeer)
        st_note(s, "%d GPU pair(s) without peer access: NCCL copies through host memory; check the IOMMU/ACS "
                "settings and nvidia-smi topo -m", nopeer);
    int rc = initall(c.comm, c.n, c.devs);
    if (rc) {
        st_failf(s, "NCCL %s: ncclCommInitAll over %d GPUs failed: %s (%d)", ver, c.n, nerr(&c, rc), rc);
        return false;
    }
    size_t count = (size_t)1 << 22, bytes = count * sizeof(float);   /* 16 MiB a GPU */
    float *host = malloc(bytes);
    char why[512] = "";
    bool ok = host != NULL;
    for (int i = 0; ok && i < c.n; i++) {
        st->rt.SetDevice(c.devs[i]);
        for (size_t k = 0; k < count; k++) host[k] = (float)((i + 1) * (int)(1 + k % 7));
        ok = st->rt.Malloc((void **)&c.send[i], bytes) == 0 && st->rt.Malloc((void **)&c.recv[i], bytes) == 0 &&
             st->rt.Memcpy(c.send[i], host, bytes, ST_H2D) == 0 && st->rt.Memset(c.recv[i], 0xff, bytes) == 0;
        if (!ok) snprintf(why, sizeof why, "cannot set up 2 x 16 MiB on GPU %d", c.devs[i]);
    }
    if (ok && reduce(&c, count, why, sizeof why)) ok = false;
    float want = (float)(c.n * (c.n + 1) / 2);
    for (int i = 0; ok && i < c.n; i++) {
        st->rt.SetDevice(c.devs[i]);
        if (st->rt.Memcpy(host, c.recv[i], bytes, ST_D2H)) {
            snprintf(why, sizeof why, "cannot read the result back from GPU %d", c.devs[i]);
            ok = false;
            break;
        }
        for (size_t k = 0; k < count; k++)
            if (host[k] != want * (float)(1 + k % 7)) {
                snprintf(why, sizeof why, "the all-reduce is wrong on GPU %d: element %zu is %g, not %g (the sum of "
                         "%d GPUs)", c.devs[i], k, (double)host[k], (double)(want * (float)(1 + k % 7)), c.n);
                ok = false;
                break;
            }
    }
    if (!host && !why[0]) snprintf(why, sizeof why, "out of memory");
    if (ok) {
        st_note(s, "all-reduce (sum) of %zu floats across %d GPUs: every element exact on every GPU", count, c.n);
        snprintf(summary, ssz, "; all-reduce across %d GPUs exact", c.n);
    }
    if (ok && st->opt->bench) {
        /* bus bandwidth of a 256 MiB all-reduce, median of 5 after a warm-up (nccl-tests' busbw) */
        size_t big = (size_t)1 << 26;
        release(&c, NULL);
        memset(c.send, 0, sizeof c.send);
        memset(c.recv, 0, sizeof c.recv);
        bool mem = true;
        for (int i = 0; mem && i < c.n; i++) {
            st->rt.SetDevice(c.devs[i]);
            mem = st->rt.Malloc((void **)&c.send[i], big * 4) == 0 && st->rt.Malloc((void **)&c.recv[i], big * 4) == 0;
        }
        double t[5];
        int runs = 0;
        if (mem && reduce(&c, big, why, sizeof why) == 0)
            for (; runs < 5; runs++) {
                double t0 = ce_mono_ms();
                if (reduce(&c, big, why, sizeof why)) break;
                t[runs] = ce_mono_ms() - t0;
            }
        if (runs == 5) {
            for (int a = 0; a < 5; a++)
                for (int b = a + 1; b < 5; b++)
                    if (t[b] < t[a]) { double x = t[a]; t[a] = t[b]; t[b] = x; }
            double alg = (double)(big * 4) / (t[2] / 1000.0) / 1e9, bus = alg * 2.0 * (c.n - 1) / c.n;
            st->r->bench.allreduce_busbw_gbs = bus;
            st->r->bench.allreduce_gpus = c.n;
            st_note(s, "all-reduce of 256 MiB across %d GPUs: %.2f ms, bus bandwidth %.1f GB/s", c.n, t[2], bus);
        } else {
            st_note(s, "all-reduce bandwidth not measured: %s", why[0] ? why : "no memory for 2 x 256 MiB a GPU");
        }
    }
    release(&c, destroy);
    free(host);
    if (!ok) st_failf(s, "NCCL %s across %d GPUs: %s", ver, c.n, why);
    return ok;
}
