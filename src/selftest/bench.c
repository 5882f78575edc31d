/* verify --bench: pinned host->device and device->host bandwidth, a
 * device-to-device copy and convolution throughput, through the toolchain's
 * runtime and cuDNN; then the same copies measured through PyTorch on the
 * same machine (when python3 can import torch), for a side-by-side ratio.
 * Each number is the median of the repeats, timed with CUDA events. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pyrun.h"
#include "st_int.h"

#define COPY_BYTES (256u << 20)
#define REPS 20

static const char torch_snippet[] =
    "import json, sys\n"
    "import torch\n"
    "n, reps = int(sys.argv[1]), int(sys.argv[2])\n"
    "h = torch.empty(n, dtype=torch.uint8, pin_memory=True)\n"
    "d = torch.empty(n, dtype=torch.uint8, device='cuda')\n"
    "d2 = torch.empty_like(d)\n"
    "def med(f):\n"
    "    f(); torch.cuda.synchronize()\n"
    "    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)\n"
    "    ts = []\n"
    "    for _ in range(reps):\n"
    "        s.record(); f(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))\n"
    "    ts.sort(); return ts[len(ts) // 2]\n"
    "out = {'torch': torch.__version__, 'cuda': torch.version.cuda,\n"
    "       'h2d_ms': med(lambda: d.copy_(h, non_blocking=True)),\n"
    "       'd2h_ms': med(lambda: h.copy_(d, non_blocking=True)),\n"
    "       'd2d_ms': med(lambda: d2.copy_(d))}\n"
    "try:\n"
    "    torch.backends.cudnn.allow_tf32 = False\n"
    "    x = torch.zeros(32, 64, 56, 56, device='cuda'); w = torch.zeros(64, 64, 3, 3, device='cuda')\n"
    "    conv = lambda: torch.nn.functional.conv2d(x, w, padding=1)\n"
    "    ms = med(conv)\n"
    "    out['conv_tflops'] = 2.0 * 32 * 64 * 56 * 56 * 64 * 9 / (ms * 1e-3) / 1e12\n"
    "except Exception as ex:\n"
    "    out['conv_error'] = str(ex)\n"
    "print('CUDAENV_TORCH ' + json.dumps(out))\n";

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median milliseconds of REPS copies of `bytes` (kind: ST_H2D ...). */
static int time_copy(st_state *st, void *dst, const void *src, size_t bytes, int kind, double *ms_out)
{
    st_rt *r = &st->rt;
    void *e0 = NULL, *e1 = NULL;
    float ts[REPS];
    int rc;
    if ((rc = r->EventCreate(&e0)) || (rc = r->EventCreate(&e1))) return rc;
    if ((rc = r->MemcpyAsync(dst, src, bytes, kind, NULL)) || (rc = r->DeviceSynchronize())) goto out; /* warm-up */
    for (int i = 0; i < REPS; i++) {
        r->EventRecord(e0, NULL);
        if ((rc = r->MemcpyAsync(dst, src, bytes, kind, NULL))) goto out;
        r->EventRecord(e1, NULL);
        if ((rc = r->EventSynchronize(e1))) goto out;
        r->EventElapsedTime(&ts[i], e0, e1);
    }
    qsort(ts, REPS, sizeof *ts, cmp_float);
    *ms_out = ts[REPS / 2];
out:
    if (e0) r->EventDestroy(e0);
    if (e1) r->EventDestroy(e1);
    return rc;
}

static double gbs(size_t bytes, double ms)
{
    return ms > 0 ? (double)bytes / (ms * 1e-3) / 1e9 : 0;
}

static void torch_compare(st_bench *b)
{
    char n[32], reps[16];
    snprintf(n, sizeof n, "%zu", b->copy_bytes);
    snprintf(reps, sizeof reps, "%d", REPS);
    /* python3 from PATH, found here (not by /usr/bin/env) so proc.c's
     * program rule sees the interpreter itself; isolated as every Python
     * cudaenv starts (core/pyrun.h: -I, a private directory, the script a file) */
    char py[4096];
    const char *args[] = { n, reps };
    ce_py run;
    memset(&run, 0, sizeof run);
    char *out = malloc(65536);
    if (!out) return;
    out[0] = '\0';
    int status = 127;
    ce_ctx quiet;
    memset(&quiet, 0, sizeof quiet);
    if (ce_proc_which("python3", py, sizeof py) &&
        ce_py_prepare(&run, py, torch_snippet, args, 2) == CE_OK) {
        ce_proc p = { .path = py, .argv = run.argv, .env_add = (const char *const *)run.env_add, .cwd = run.dir,
                      .timeout_s = 180, .cap_head = 65535 };
        ce_proc_result res;
        if (ce_proc_run(NULL, &p, &res) == CE_OK) {
            status = res.code;
            memcpy(out, res.out ? res.out : "", res.out_len < 65535 ? res.out_len : 65535);
            out[res.out_len < 65535 ? res.out_len : 65535] = '\0';
            ce_proc_result_free(&res);
        }
    }
    ce_py_done(&run);
    if (status != 0) {
        const char *why = strstr(out, "ModuleNotFoundError") ? "python3 cannot import torch"
                        : status == 127                    ? "no python3"
                                                           : "the PyTorch measurement failed";
        snprintf(b->torch_note, sizeof b->torch_note, "no PyTorch comparison: %s (status %d)", why, status);
        free(out);
        return;
    }
    const char *line = strstr(out, "CUDAENV_TORCH ");
    cJSON *j = line ? cJSON_Parse(line + 14) : NULL;
    if (!j) {
        snprintf(b->torch_note, sizeof b->torch_note, "no PyTorch comparison: unreadable output");
        free(out);
        return;
    }
    const cJSON *v;
    b->torch = true;
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "h2d_ms"))) b->torch_h2d_gbs = gbs(b->copy_bytes, v->valuedouble);
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "d2h_ms"))) b->torch_d2h_gbs = gbs(b->copy_bytes, v->valuedouble);
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "d2d_ms"))) b->torch_d2d_gbs = gbs(b->copy_bytes, v->valuedouble);
    if (cJSON_IsNumber(v = cJSON_GetObjectItemCaseSensitive(j, "conv_tflops"))) b->torch_conv_tflops = v->valuedouble;
    const cJSON *tv = cJSON_GetObjectItemCaseSensitive(j, "torch"), *cv = cJSON_GetObjectItemCaseSensitive(j, "cuda");
    snprintf(b->torch_note, sizeof b->torch_note, "PyTorch %s (CUDA %s), same sizes, same timing method",
             cJSON_IsString(tv) ? tv->valuestring : "?", cJSON_IsString(cv) ? cv->valuestring : "?");
    cJSON_Delete(j);
    free(out);
}

void st_bench_run(st_state *st)
{
    st_bench *b = &st->r->bench;
    st_step dummy = { 0 };
    if (!st_rt_bind(st, &dummy)) {
        snprintf(b->torch_note, sizeof b->torch_note, "not run: %s", dummy.summary);
        return;
    }
    b->copy_bytes = COPY_BYTES;
    void *h = NULL, *d = NULL, *d2 = NULL;
    double ms = 0;
    int rc;
    if ((rc = st->rt.MallocHost(&h, COPY_BYTES)) || (rc = st->rt.Malloc(&d, COPY_BYTES)) ||
        (rc = st->rt.Malloc(&d2, COPY_BYTES))) {
        snprintf(b->torch_note, sizeof b->torch_note, "not run: allocating %u bytes: %s", COPY_BYTES,
                 st_rt_err(st, rc));
        goto out;
    }
    memset(h, 0x5a, COPY_BYTES);  /* touch the pinned pages once */
    if (!(rc = time_copy(st, d, h, COPY_BYTES, ST_H2D, &ms))) b->h2d_gbs = gbs(COPY_BYTES, ms);
    if (!rc && !(rc = time_copy(st, h, d, COPY_BYTES, ST_D2H, &ms))) b->d2h_gbs = gbs(COPY_BYTES, ms);
    if (!rc && !(rc = time_copy(st, d2, d, COPY_BYTES, ST_D2D, &ms))) b->d2d_gbs = gbs(COPY_BYTES, ms);
    if (rc) {
        snprintf(b->torch_note, sizeof b->torch_note, "copy failed: %s", st_rt_err(st, rc));
        goto out;
    }
    b->ran = true;
out:
    if (h) st->rt.FreeHost(h);
    if (d) st->rt.Free(d);
    if (d2) st->rt.Free(d2);
    if (!b->ran) return;
    if (st->dnn.Create) st_cudnn_conv_time(st, &b->conv_tflops, b->conv_shape, sizeof b->conv_shape);
    torch_compare(b);
}
