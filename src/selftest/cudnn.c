/* Step 8: cuDNN runs forward convolutions on the GPU (NCHW float, shapes with
 * padding, stride and dilation) and the results match a float64 CPU
 * reference (relative error < 1e-5).  TF32 is switched off (FMA math type):
 * with TF32 the error is ~1e-3 and a toolchain that silently used it would
 * fail here.  The legacy API (cudnnConvolutionForward) exists in cuDNN 8 and
 * 9 alike; in 9 libcudnn.so.9 is a shim that loads libcudnn_cnn.so.9. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "st_int.h"

#define CUDNN_TENSOR_NCHW 0
#define CUDNN_DATA_FLOAT 0
#define CUDNN_CROSS_CORRELATION 1
#define CUDNN_FMA_MATH 3
#define CUDNN_DEFAULT_MATH 0
#define ALGO_IMPLICIT_GEMM 0
#define ALGO_IMPLICIT_PRECOMP_GEMM 1
#define REL_TOL 1e-5

typedef struct shape {
    int n, c, h, w, k, r, s, pad, stride, dil;
} shape;

static const shape shapes[] = {
    { 2, 8, 33, 33, 16, 3, 3, 1, 1, 1 },
    { 1, 3, 64, 64, 8, 5, 5, 2, 2, 1 },
    { 2, 4, 31, 31, 6, 3, 3, 2, 1, 2 },
};

static bool bind_cudnn(st_state *st, st_step *s)
{
    st_dnn *d = &st->dnn;
    if (d->Create) return true;
    char miss[1024] = "";
    st_bind(d->h, "cudnnGetErrorString", &d->GetErrorString, miss, sizeof miss);
    st_bind(d->h, "cudnnCreate", &d->Create, miss, sizeof miss);
    st_bind(d->h, "cudnnDestroy", &d->Destroy, miss, sizeof miss);
    st_bind(d->h, "cudnnCreateTensorDescriptor", &d->CreateTensorDescriptor, miss, sizeof miss);
    st_bind(d->h, "cudnnSetTensor4dDescriptor", &d->SetTensor4dDescriptor, miss, sizeof miss);
    st_bind(d->h, "cudnnDestroyTensorDescriptor", &d->DestroyTensorDescriptor, miss, sizeof miss);
    st_bind(d->h, "cudnnCreateFilterDescriptor", &d->CreateFilterDescriptor, miss, sizeof miss);
    st_bind(d->h, "cudnnSetFilter4dDescriptor", &d->SetFilter4dDescriptor, miss, sizeof miss);
    st_bind(d->h, "cudnnDestroyFilterDescriptor", &d->DestroyFilterDescriptor, miss, sizeof miss);
    st_bind(d->h, "cudnnCreateConvolutionDescriptor", &d->CreateConvolutionDescriptor, miss, sizeof miss);
    st_bind(d->h, "cudnnSetConvolution2dDescriptor", &d->SetConvolution2dDescriptor, miss, sizeof miss);
    st_bind(d->h, "cudnnSetConvolutionMathType", &d->SetConvolutionMathType, miss, sizeof miss);
    st_bind(d->h, "cudnnDestroyConvolutionDescriptor", &d->DestroyConvolutionDescriptor, miss, sizeof miss);
    st_bind(d->h, "cudnnGetConvolution2dForwardOutputDim", &d->GetConvolution2dForwardOutputDim, miss, sizeof miss);
    st_bind(d->h, "cudnnGetConvolutionForwardWorkspaceSize", &d->GetConvolutionForwardWorkspaceSize, miss,
            sizeof miss);
    st_bind(d->h, "cudnnConvolutionForward", &d->ConvolutionForward, miss, sizeof miss);
    if (miss[0]) {
        st_failf(s, "%s lacks cuDNN entry points: %s", d->path, miss);
        d->Create = NULL;
        return false;
    }
    return true;
}

/* Descriptors, buffers and a handle for one convolution. */
typedef struct conv {
    void *x_desc, *w_desc, *y_desc, *c_desc;
    void *dx, *dw, *dy, *ws;
    size_t ws_size;
    int on, oc, oh, ow;
} conv;

static const char *dnn_err(st_state *st, int rc)
{
    return st->dnn.GetErrorString ? st->dnn.GetErrorString(rc) : "cuDNN error";
}

static void conv_free(st_state *st, conv *c)
{
    st_dnn *d = &st->dnn;
    if (c->x_desc) d->DestroyTensorDescriptor(c->x_desc);
    if (c->y_desc) d->DestroyTensorDescriptor(c->y_desc);
    if (c->w_desc) d->DestroyFilterDescriptor(c->w_desc);
    if (c->c_desc) d->DestroyConvolutionDescriptor(c->c_desc);
    if (c->dx) st->rt.Free(c->dx);
    if (c->dw) st->rt.Free(c->dw);
    if (c->dy) st->rt.Free(c->dy);
    if (c->ws) st->rt.Free(c->ws);
    memset(c, 0, sizeof *c);
}

/* Set up a convolution of shape sh with algo; 0 or the failing cuDNN/CUDA
 * call described in err. */
static int conv_setup(st_state *st, void *handle, const shape *sh, int algo, conv *c, char *err, size_t esz)
{
    st_dnn *d = &st->dnn;
    int rc;
    memset(c, 0, sizeof *c);
#define DNN(call, what)                                                         \
    if ((rc = (call)) != 0) {                                                   \
        snprintf(err, esz, "%s: %s (status %d)", what, dnn_err(st, rc), rc);    \
        return -1;                                                              \
    }
    DNN(d->CreateTensorDescriptor(&c->x_desc), "cudnnCreateTensorDescriptor");
    DNN(d->CreateTensorDescriptor(&c->y_desc), "cudnnCreateTensorDescriptor");
    DNN(d->CreateFilterDescriptor(&c->w_desc), "cudnnCreateFilterDescriptor");
    DNN(d->CreateConvolutionDescriptor(&c->c_desc), "cudnnCreateConvolutionDescriptor");
    DNN(d->SetTensor4dDescriptor(c->x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, sh->n, sh->c, sh->h, sh->w),
        "cudnnSetTensor4dDescriptor");
    DNN(d->SetFilter4dDescriptor(c->w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, sh->k, sh->c, sh->r, sh->s),
        "cudnnSetFilter4dDescriptor");
    DNN(d->SetConvolution2dDescriptor(c->c_desc, sh->pad, sh->pad, sh->stride, sh->stride, sh->dil, sh->dil,
                                      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
        "cudnnSetConvolution2dDescriptor");
    /* FMA math: no tensor cores, no TF32 (cuDNN 8 and later). */
    DNN(d->SetConvolutionMathType(c->c_desc, st->r->v.cudnn_runtime >= 8000 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH),
        "cudnnSetConvolutionMathType");
    DNN(d->GetConvolution2dForwardOutputDim(c->c_desc, c->x_desc, c->w_desc, &c->on, &c->oc, &c->oh, &c->ow),
        "cudnnGetConvolution2dForwardOutputDim");
    DNN(d->SetTensor4dDescriptor(c->y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, c->on, c->oc, c->oh, c->ow),
        "cudnnSetTensor4dDescriptor");
    DNN(d->GetConvolutionForwardWorkspaceSize(handle, c->x_desc, c->w_desc, c->c_desc, c->y_desc, algo, &c->ws_size),
        "cudnnGetConvolutionForwardWorkspaceSize");
#undef DNN
    size_t xs = (size_t)sh->n * sh->c * sh->h * sh->w * sizeof(float);
    size_t wsz = (size_t)sh->k * sh->c * sh->r * sh->s * sizeof(float);
    size_t ys = (size_t)c->on * c->oc * c->oh * c->ow * sizeof(float);
    if ((rc = st->rt.Malloc(&c->dx, xs)) || (rc = st->rt.Malloc(&c->dw, wsz)) || (rc = st->rt.Malloc(&c->dy, ys)) ||
        (c->ws_size && (rc = st->rt.Malloc(&c->ws, c->ws_size)))) {
        snprintf(err, esz, "cudaMalloc: %s", st_rt_err(st, rc));
        return -1;
    }
    return 0;
}

static int conv_forward(st_state *st, void *handle, conv *c, int algo)
{
    const float one = 1.0f, zero = 0.0f;
    return st->dnn.ConvolutionForward(handle, &one, c->x_desc, c->dx, c->w_desc, c->dw, c->c_desc, algo, c->ws,
                                      c->ws_size, &zero, c->y_desc, c->dy);
}

/* float64 reference, cross-correlation as cuDNN computes it. */
static void reference(const shape *sh, const conv *c, const float *x, const float *w, double *y)
{
    for (int n = 0; n < c->on; n++)
        for (int k = 0; k < c->oc; k++)
            for (int p = 0; p < c->oh; p++)
                for (int q = 0; q < c->ow; q++) {
                    double acc = 0;
                    for (int ch = 0; ch < sh->c; ch++)
                        for (int r = 0; r < sh->r; r++) {
                            int ih = p * sh->stride - sh->pad + r * sh->dil;
                            if (ih < 0 || ih >= sh->h) continue;
                            for (int s = 0; s < sh->s; s++) {
                                int iw = q * sh->stride - sh->pad + s * sh->dil;
                                if (iw < 0 || iw >= sh->w) continue;
                                acc += (double)x[((size_t)(n * sh->c + ch) * sh->h + ih) * sh->w + iw] *
                                       (double)w[((size_t)(k * sh->c + ch) * sh->r + r) * sh->s + s];
                            }
                        }
                    y[((size_t)(n * c->oc + k) * c->oh + p) * c->ow + q] = acc;
                }
}

static void one_shape(st_state *st, st_step *s, void *handle, const shape *sh, int algo, st_rng *g)
{
    conv c;
    char err[512];
    float *hx = NULL, *hw = NULL, *hy = NULL;
    double *ref = NULL;
    char label[160];
    snprintf(label, sizeof label, "x %dx%dx%dx%d * w %dx%dx%dx%d pad %d stride %d dilation %d (algo %d)", sh->n,
             sh->c, sh->h, sh->w, sh->k, sh->c, sh->r, sh->s, sh->pad, sh->stride, sh->dil, algo);
    if (conv_setup(st, handle, sh, algo, &c, err, sizeof err) != 0) {
        st_failf(s, "%s: %s", label, err);
        goto out;
    }
    size_t nx = (size_t)sh->n * sh->c * sh->h * sh->w, nw = (size_t)sh->k * sh->c * sh->r * sh->s;
    size_t ny = (size_t)c.on * c.oc * c.oh * c.ow;
    hx = malloc(nx * sizeof *hx);
    hw = malloc(nw * sizeof *hw);
    hy = malloc(ny * sizeof *hy);
    ref = malloc(ny * sizeof *ref);
    if (!hx || !hw || !hy || !ref) {
        st_failf(s, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nx; i++) hx[i] = st_rng_float(g);
    for (size_t i = 0; i < nw; i++) hw[i] = st_rng_float(g);
    int rc;
    if ((rc = st->rt.Memcpy(c.dx, hx, nx * sizeof *hx, ST_H2D)) ||
        (rc = st->rt.Memcpy(c.dw, hw, nw * sizeof *hw, ST_H2D)) ||
        (rc = st->rt.Memset(c.dy, 0xFF, ny * sizeof *hy))) {
        st_failf(s, "%s: copying the inputs: %s", label, st_rt_err(st, rc));
        goto out;
    }
    double t0 = ce_mono_ms();
    if ((rc = conv_forward(st, handle, &c, algo)) != 0) {
        st_failf(s, "%s: cudnnConvolutionForward: %s (status %d)", label, dnn_err(st, rc), rc);
        goto out;
    }
    if ((rc = st->rt.Memcpy(hy, c.dy, ny * sizeof *hy, ST_D2H)) != 0) {
        st_failf(s, "%s: reading the output: %s", label, st_rt_err(st, rc));
        goto out;
    }
    double t_gpu = ce_mono_ms() - t0;
    reference(sh, &c, hx, hw, ref);
    double max_err = 0, max_ref = 0;
    size_t nan = 0;
    for (size_t i = 0; i < ny; i++) {
        if (isnan(hy[i])) { nan++; continue; }
        double e = fabs((double)hy[i] - ref[i]);
        if (e > max_err) max_err = e;
        if (fabs(ref[i]) > max_ref) max_ref = fabs(ref[i]);
    }
    double rel = max_ref > 0 ? max_err / max_ref : max_err;
    if (nan || rel >= REL_TOL) {
        st_failf(s, "%s: output differs from the float64 reference: relative error %.2e (limit %.0e)%s%zu%s", label,
                 rel, REL_TOL, nan ? ", " : "", nan, nan ? " outputs not written" : "");
        goto out;
    }
    st_note(s, "%s -> %dx%dx%dx%d: relative error %.1e, %.2f ms", label, c.on, c.oc, c.oh, c.ow, rel, t_gpu);
out:
    conv_free(st, &c);
    free(hx);
    free(hw);
    free(hy);
    free(ref);
}

void st_cudnn_step(st_state *st)
{
    st_step *s = &st->r->steps[ST_CUDNN];
    if (!st->r->v.has_cudnn) {
        st_skip(s, false, "this toolchain has no cuDNN");
        return;
    }
    if (!st->dnn.h) {
        st_failf(s, "cuDNN could not be loaded (see versions)");
        return;
    }
    if (!bind_cudnn(st, s) || !st_rt_bind(st, s)) return;
    setenv("NVIDIA_TF32_OVERRIDE", "0", 1);  /* and the math type below: no TF32 anywhere */
    void *handle = NULL;
    double t0 = ce_mono_ms();
    int rc = st->dnn.Create(&handle);
    if (rc != 0) {
        st_failf(s, "cudnnCreate: %s (status %d)", dnn_err(st, rc), rc);
        return;
    }
    st_note(s, "cudnnCreate in %.1f ms (%s)", ce_mono_ms() - t0, st->dnn.path);
    st_rng g;
    st_rng_seed(&g);
    st_note(s, "fresh random data (seed %#llx), FMA math (TF32 off)", g.s);
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        one_shape(st, s, handle, &shapes[i], ALGO_IMPLICIT_GEMM, &g);
    one_shape(st, s, handle, &shapes[0], ALGO_IMPLICIT_PRECOMP_GEMM, &g);
    st->dnn.Destroy(handle);
    if (s->status != ST_FAILED)
        st_pass(s, "%zu forward convolutions (padding, stride, dilation) match float64 within %.0e",
                sizeof shapes / sizeof *shapes + 1, REL_TOL);
}

/* Throughput of one larger convolution, for --bench. */
int st_cudnn_conv_time(st_state *st, double *tflops, char *label, size_t lsz)
{
    static const shape big = { 32, 64, 56, 56, 64, 3, 3, 1, 1, 1 };
    *tflops = 0;
    if (!st->dnn.Create || !st->rt.EventCreate) return -1;
    void *handle = NULL;
    if (st->dnn.Create(&handle) != 0) return -1;
    conv c;
    char err[512];
    int ret = -1;
    void *e0 = NULL, *e1 = NULL;
    if (conv_setup(st, handle, &big, ALGO_IMPLICIT_PRECOMP_GEMM, &c, err, sizeof err) != 0) goto out;
    st->rt.Memset(c.dx, 0, (size_t)big.n * big.c * big.h * big.w * sizeof(float));
    st->rt.Memset(c.dw, 0, (size_t)big.k * big.c * big.r * big.s * sizeof(float));
    if (conv_forward(st, handle, &c, ALGO_IMPLICIT_PRECOMP_GEMM) != 0) goto out;  /* warm-up */
    st->rt.EventCreate(&e0);
    st->rt.EventCreate(&e1);
    const int reps = 20;
    st->rt.EventRecord(e0, NULL);
    for (int i = 0; i < reps; i++) conv_forward(st, handle, &c, ALGO_IMPLICIT_PRECOMP_GEMM);
    st->rt.EventRecord(e1, NULL);
    st->rt.EventSynchronize(e1);
    float ms = 0;
    st->rt.EventElapsedTime(&ms, e0, e1);
    double flops = 2.0 * c.on * c.oc * c.oh * c.ow * big.c * big.r * big.s * reps;
    if (ms > 0) *tflops = flops / ((double)ms * 1e-3) / 1e12;
    snprintf(label, lsz, "N%d C%d H%d W%d K%d %dx%d pad %d, float, FMA math", big.n, big.c, big.h, big.w, big.k, big.r,
             big.s, big.pad);
    ret = 0;
out:
    if (e0) st->rt.EventDestroy(e0);
    if (e1) st->rt.EventDestroy(e1);
    conv_free(st, &c);
    st->dnn.Destroy(handle);
    return ret;
}
