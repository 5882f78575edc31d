/* verify --framework: run framework.py in the framework's own Python and
 * read back its report; count the GPUs the driver shows, so "the framework
 * sees none" can be told apart from "there are none".  The findings are made
 * in framework_check.c. */
#include "framework.h"

#include <cJSON.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/file.h"
#include "core/pyrun.h"
#include "st_int.h"
#include "core/path.h"

/* framework.py, embedded as a NUL-terminated string (the Makefile makes this
 * object depend on it; the path is relative to the top of the tree, where
 * make runs the compiler). */
__asm__(".section .rodata\n"
        ".global ce_fw_script\n"
        ".type ce_fw_script, @object\n"
        "ce_fw_script:\n"
        ".incbin \"src/selftest/framework.py\"\n"
        ".byte 0\n"
        ".previous\n");
extern const char ce_fw_script[];

const char *ce_fw_name(const char *s)
{
    if (!s) return NULL;
    if (!strcmp(s, "torch") || !strcmp(s, "pytorch")) return "torch";
    if (!strcmp(s, "tf") || !strcmp(s, "tensorflow")) return "tf";
    if (!strcmp(s, "jax")) return "jax";
    return NULL;
}

const char *ce_fw_sev_name(ce_fw_sev s)
{
    return s == CE_FW_ERROR ? "error" : s == CE_FW_WARNING ? "warning" : "info";
}

int ce_fw_exit_code(const ce_fw_report *r)
{
    return r->errors ? 7 : r->nogpu ? 8 : 0;
}

void ce_fw_free(ce_fw_report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->f[i].summary);
        free(r->f[i].evidence);
        free(r->f[i].fix);
    }
    free(r->f);
    r->f = NULL;
    r->n = r->cap = 0;
    cJSON_Delete(r->doc);
    r->doc = NULL;
}

/* python3 (or the name given) on PATH, like execvp would find it. */
static bool find_python(const char *want, char *out, size_t outsz)
{
    return ce_proc_which(want, out, outsz);
}

/* The GPUs the driver shows, with CUDA_VISIBLE_DEVICES out of the way (the
 * framework's own count is the one that honours it). */
static void count_driver_gpus(const ce_fw_options *opt, ce_fw_report *r)
{
    r->driver_gpus = -1;
    void *h = dlopen(opt->libcuda ? opt->libcuda : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
    int (*count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
    int (*version)(int *) = (int (*)(int *))dlsym(h, "cuDriverGetVersion");
    if (version) version(&r->driver_cuda);
    const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
    char *saved = cvd ? strdup(cvd) : NULL;
    unsetenv("CUDA_VISIBLE_DEVICES");
    int n = 0;
    r->driver_gpus = init && count && init(0) == 0 && count(&n) == 0 ? n : 0;
    if (saved) setenv("CUDA_VISIBLE_DEVICES", saved, 1);
    free(saved);
    /* libcuda stays loaded: unloading an initialised driver is not safe */
}

static char *read_small(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t cap = 1u << 20, len;
    char *buf = malloc(cap);
    len = buf ? fread(buf, 1, cap - 1, f) : 0;
    fclose(f);
    if (buf) buf[len] = '\0';
    return buf;
}

int ce_fw_run(ce_ctx *ctx, const ce_fw_target *tc, const ce_fw_options *opt, ce_fw_report *r)
{
    double t0 = ce_mono_ms();
    memset(r, 0, sizeof *r);
    r->framework_gpus = -1;
    const char *fw = ce_fw_name(opt->framework);
    if (!fw)
        return ce_fail(CE_ERR_USAGE, "unknown framework '%s' (torch, tf or jax)",
                       opt->framework ? opt->framework : "");
    snprintf(r->framework, sizeof r->framework, "%s", fw);
    snprintf(r->module, sizeof r->module, "%s", !strcmp(fw, "tf") ? "tensorflow" : fw);
    const char *want = opt->python && *opt->python ? opt->python : "python3";
    /* the fix names the option the caller took the Python from (--python, --for) */
    const char *how = opt->python_opt ? opt->python_opt : "--python";
    if (!find_python(want, r->python, sizeof r->python)) {
        const char *why = strchr(want, '/') ? "no such executable" : "not found on PATH";
        if (opt->python_opt)   /* --for probes each framework: no one of them is the one wanted */
            return ce_fail(CE_ERR_NOTFOUND, "%s: %s; name the Python with %s PATH (a venv's: %s "
                           ".venv/bin/python)", want, why, how, how);
        return ce_fail(CE_ERR_NOTFOUND, "%s: %s; name the Python that has %s with --python PATH", want, why,
                       r->module);
    }
    if (r->python[0] != '/') {   /* it runs in a private directory: made absolute (not resolved: a venv's link) */
        char cwd[2048], rel[sizeof r->python];
        snprintf(rel, sizeof rel, "%s", r->python);
        if (!getcwd(cwd, sizeof cwd) || ce_path_join(r->python, sizeof r->python, cwd, rel) != CE_OK)
            return ce_fail(CE_ERR_NOTFOUND, "%s: cannot make it an absolute path; name the Python with %s /PATH",
                           rel, how);
    }
    if (!opt->quick) count_driver_gpus(opt, r);

    /* isolated (core/pyrun.h): -I, a private working directory, the script
     * as a file there; the report comes back in a file of that directory */
    ce_py py;
    char out[4300];
    const char *args[] = { r->framework, out, opt->quick ? "1" : "0" };
    int prc = ce_py_prepare(&py, r->python, ce_fw_script, args, 3);
    if (!prc) prc = ce_py_file(&py, "report.json", out, sizeof out);
    if (prc) {
        ce_py_done(&py);
        return prc;
    }
    int timeout = opt->timeout_s > 0 ? opt->timeout_s : 300;
    /* the loader's own account of each library it took (framework.py's
     * loader_trace: why it won), into the private directory */
    const char *env[8];
    char ldout[4400];
    size_t ne = 0;
    for (size_t i = 0; py.env_add[i] && ne < 5; i++) env[ne++] = py.env_add[i];
    if (!opt->quick && snprintf(ldout, sizeof ldout, "LD_DEBUG_OUTPUT=%s/ld", py.dir) < (int)sizeof ldout) {
        env[ne++] = "LD_DEBUG=libs,files";
        env[ne++] = ldout;
    }
    env[ne] = NULL;
    ce_proc p = { .path = r->python, .argv = py.argv, .env_add = env, .cwd = py.dir,
                  .timeout_s = timeout, .cap_head = sizeof r->log - 1 };
    ce_proc_result res;
    int run = ce_proc_run(NULL, &p, &res);
    if (run == CE_ERR_PERM) {
        /* the privileged-use policy refused the interpreter (a user's, run
         * as root): that is the answer, not "the framework did not import" */
        int rc = ce_fail(CE_ERR_PERM, "%s", res.why);
        ce_proc_result_free(&res);
        ce_py_done(&py);
        return rc;
    }
    if (run == CE_OK) {
        r->status = res.code;
        size_t n = res.out_len < sizeof r->log - 1 ? res.out_len : sizeof r->log - 1;
        memcpy(r->log, res.out ? res.out : "", n);
        r->log[n] = '\0';
    } else {
        r->status = 127;
        snprintf(r->log, sizeof r->log, "%s", res.why);
    }
    ce_proc_result_free(&res);
    char *text = read_small(out);
    ce_py_done(&py);
    r->doc = text && *text ? cJSON_Parse(text) : NULL;
    free(text);
    ce_fw_analyse(ctx, tc, opt, r);
    r->ms = ce_mono_ms() - t0;
    return CE_OK;
}
