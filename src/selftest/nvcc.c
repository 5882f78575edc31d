/* Step 7: the toolchain's nvcc builds a tiny CUDA program with the host
 * compiler and the program runs.  The build (about a second: cicc, ptxas,
 * fatbinary, two host compiles) starts in the background as soon as the GPU's
 * architecture is known, so it overlaps the NVRTC kernel step.  A host gcc
 * newer than this CUDA accepts is explained with the fix (-ccbin). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/file.h"
#include "core/rmtree.h"
#include "core/hostcc.h"
#include "st_int.h"

static const char program_src[] =
    "#include <cstdio>\n"
    "#include <cuda_runtime.h>\n"
    "__global__ void odd(int *o, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) o[i] = 2 * i + 1;\n"
    "}\n"
    "int main()\n"
    "{\n"
    "    const int n = 4096;\n"
    "    static int h[n];\n"
    "    int *d = 0, rt = 0;\n"
    "    cudaError_t e = cudaMalloc(&d, sizeof h);\n"
    "    if (e == cudaSuccess) { odd<<<(n + 255) / 256, 256>>>(d, n); e = cudaGetLastError(); }\n"
    "    if (e == cudaSuccess) e = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);\n"
    "    if (e != cudaSuccess) { printf(\"CUDA error: %s\\n\", cudaGetErrorString(e)); return 2; }\n"
    "    for (int i = 0; i < n; i++)\n"
    "        if (h[i] != 2 * i + 1) { printf(\"wrong result at %d: %d\\n\", i, h[i]); return 3; }\n"
    "    cudaRuntimeGetVersion(&rt);\n"
    "    printf(\"ok: %d results right (runtime %d)\\n\", n, rt);\n"
    "    return 0;\n"
    "}\n";

/* A supported g++-N on PATH, for the fix. */
static bool supported_gxx(int max, char *out, size_t outsz)
{
    for (int v = max; v >= max - 6 && v > 4; v--) {
        char name[32];
        snprintf(name, sizeof name, "g++-%d", v);
        if (ce_proc_which(name, out, outsz)) return true;
    }
    return false;
}

void st_nvcc_start(st_state *st)
{
    char nvcc[4200];
    snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", st->r->tc.prefix);
    if (access(nvcc, X_OK) != 0) return;
    const char *tmp = st->opt->tmpdir ? st->opt->tmpdir : getenv("TMPDIR");
    snprintf(st->nvcc_dir, sizeof st->nvcc_dir, "%s/cudaenv-verify-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(st->nvcc_dir)) {
        snprintf(st->gcc_note, sizeof st->gcc_note, "cannot create a temporary directory: %s", strerror(errno));
        st->nvcc_dir[0] = '\0';
        return;
    }
    char src[4300], log[4300];
    snprintf(src, sizeof src, "%s/verify.cu", st->nvcc_dir);
    snprintf(log, sizeof log, "%s/build.log", st->nvcc_dir);
    if (ce_file_write_atomic(src, program_src, sizeof program_src - 1, 0644) != CE_OK) return;
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char arch[32];
    snprintf(arch, sizeof arch, "-arch=sm_%d", st->nvcc_arch);
    char *argv[] = { nvcc, arch, "-o", "verify", "verify.cu", NULL };
    ce_proc np = { .path = nvcc, .argv = argv, .cwd = st->nvcc_dir, .out = CE_PROC_FD, .fd = fd, .timeout_s = 300 };
    st->nvcc_started = ce_mono_ms();
    if (ce_proc_start(NULL, &np, &st->nvcc) != CE_OK) snprintf(st->gcc_note, sizeof st->gcc_note, "%s", st->nvcc.why);
    close(fd);
}

static void cleanup(st_state *st)
{
    if (!st->nvcc_dir[0]) return;
    ce_rm_tree(st->nvcc_dir);
    st->nvcc_dir[0] = '\0';
}

static void tail_of(const char *text, char *out, size_t outsz)
{
    size_t n = strlen(text);
    const char *p = n > outsz - 1 ? text + n - (outsz - 1) : text;
    snprintf(out, outsz, "%s", p);
    for (char *q = out; *q; q++)
        if (*q == '\n') *q = ' ';
}

void st_nvcc_step(st_state *st)
{
    st_step *s = &st->r->steps[ST_NVCC];
    char nvcc[4200];
    snprintf(nvcc, sizeof nvcc, "%s/bin/nvcc", st->r->tc.prefix);
    if (access(nvcc, X_OK) != 0) {
        st_skip(s, false, "this toolchain has no bin/nvcc");
        return;
    }
    if (st->nvcc.pid <= 0) {
        st_failf(s, "could not start %s%s%s", nvcc, st->gcc_note[0] ? ": " : "", st->gcc_note);
        cleanup(st);
        return;
    }
    char gxx[4096], gfull[128];
    int gmaj = ce_host_cc(gxx, sizeof gxx, gfull, sizeof gfull);
    int max = st->r->tc.max_gcc;
    ce_proc_result res;
    int status = ce_proc_wait(NULL, &st->nvcc, &res) == CE_OK ? res.code : 127;
    double t_build = ce_mono_ms() - st->nvcc_started;
    char logp[4300], *log = NULL;
    size_t loglen = 0;
    snprintf(logp, sizeof logp, "%s/build.log", st->nvcc_dir);
    ce_quiet q;
    ce_quiet_begin(&q, true);
    ce_file_read(logp, 1 << 20, &log, &loglen);
    ce_quiet_end(&q);
    if (gmaj && max) st_note(s, "host compiler: %s (gcc %d); CUDA %s accepts gcc up to %d", gxx, gmaj, st->r->tc.cuda, max);
    else if (gmaj) st_note(s, "host compiler: %s (gcc %d)", gxx, gmaj);
    if (status != 0) {
        char t[600];
        tail_of(log ? log : "", t, sizeof t);
        char fix[4300] = "";
        if (max && gmaj > max) {
            char alt[4200];
            if (supported_gxx(max, alt, sizeof alt))
                snprintf(fix, sizeof fix, "; gcc %d is newer than CUDA %s supports (max gcc %d): build with "
                         "nvcc -ccbin %s (or export NVCC_CCBIN=%s)", gmaj, st->r->tc.cuda, max, alt, alt);
            else
                snprintf(fix, sizeof fix, "; gcc %d is newer than CUDA %s supports (max gcc %d): install g++-%d "
                         "and build with nvcc -ccbin g++-%d", gmaj, st->r->tc.cuda, max, max, max);
        }
        st_failf(s, "nvcc -arch=sm_%d could not build a test program (status %d)%s: %s", st->nvcc_arch, status,
                 fix, t);
        free(log);
        cleanup(st);
        return;
    }
    free(log);
    st_note(s, "nvcc -arch=sm_%d built the program in %.0f ms (in the background)", st->nvcc_arch, t_build);
    char prog[4300], out[2048];
    snprintf(prog, sizeof prog, "%s/verify", st->nvcc_dir);
    if (access(prog, X_OK) != 0) {
        st_failf(s, "nvcc -arch=sm_%d exited 0 but wrote no program %s", st->nvcc_arch, prog);
        cleanup(st);
        return;
    }
    char *argv[] = { prog, NULL };
    double t0 = ce_mono_ms();
    status = ce_proc_output(NULL, argv, st->nvcc_dir, 60, out, sizeof out, &res) == CE_OK ? res.code : 127;
    if (status != 0) {
        char t[600];
        tail_of(out, t, sizeof t);
        st_failf(s, "the program nvcc built failed (status %d): %s", status, t);
        cleanup(st);
        return;
    }
    size_t l = strlen(out);
    while (l && out[l - 1] == '\n') out[--l] = '\0';
    st_note(s, "ran in %.0f ms: %s", ce_mono_ms() - t0, out);
    if (max && gmaj > max)
        st_note(s, "warning: gcc %d is newer than CUDA %s officially supports (max gcc %d)", gmaj, st->r->tc.cuda, max);
    st_pass(s, "nvcc built a program for sm_%d with gcc %d and it ran: %s", st->nvcc_arch, gmaj, out);
    cleanup(st);
}

/* A build started for a GPU whose context then failed: reap it. */
void st_nvcc_abandon(st_state *st)
{
    ce_proc_abandon(&st->nvcc);
    cleanup(st);
}
