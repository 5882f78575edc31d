/* The framework layer of doctor: when python3 (or CUDAENV_DOCTOR_PYTHON;
 * "none" skips the layer) can import PyTorch or TensorFlow, the quick form
 * of verify --framework (selftest/framework.h) runs in the user's own
 * environment: build information against the active toolchain, the
 * libcudart/libcudnn files the import mapped, CPU-only builds.  No GPU work;
 * a framework that is not installed is no finding.
 *
 * Importing a framework takes seconds (Debian's python3-torch: 3-4 s), so
 * the probe's report is kept while nothing it came from changes
 * (doctor_fwcache.c) and the findings are made again from it against the
 * toolchain active now; doctor --framework probes in any case,
 * --no-framework skips the layer.  d->fw_note says which happened. */
#include "doctor_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/priv.h"
#include "core/proc.h"
#include "core/pyrun.h"
#include "selftest/framework.h"
#include "core/path.h"

/* The interpreter as ce_fw_run finds it (PATH searched, made absolute). */
static bool find_python(const char *want, char *out, size_t n)
{
    if (!ce_proc_which(want, out, n)) return false;
    if (out[0] == '/') return true;
    char cwd[2048], rel[4096];
    snprintf(rel, sizeof rel, "%s", out);
    return getcwd(cwd, sizeof cwd) && ce_path_join(out, n, cwd, rel) == CE_OK;
}

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* A kept report of fw for python, analysed against t: true when used.
 * *trusted: as root, whether python passed the check a run would make
 * (-1 not asked yet: asked once per doctor, it walks the site directories). */
static bool from_cache(ce_doctor *d, doc_fwcache *c, const char *fw, const char *python, const ce_fw_target *t,
                       const ce_fw_options *opt, ce_fw_report *r, int *trusted)
{
    memset(r, 0, sizeof *r);
    r->framework_gpus = -1;
    snprintf(r->framework, sizeof r->framework, "%s", fw);
    snprintf(r->module, sizeof r->module, "%s", !strcmp(fw, "tf") ? "tensorflow" : fw);
    char why[2 * 4096 + 512];
    /* as root the interpreter is checked as a run would check it (pyrun.h):
     * one that stopped passing is run, and refused there */
    bool hit = doc_fwcache_get(c, r);
    if (hit && ce_priv() && *trusted < 0) *trusted = ce_py_trusted(python, why, sizeof why) == 0;
    if (!hit || (ce_priv() && !*trusted)) {
        ce_fw_free(r);
        return false;
    }
    ce_fw_analyse(d->ctx, t, opt, r);
    return true;
}

static void add_findings(ce_doctor *d, const ce_fw_report *r)
{
    for (size_t k = 0; k < r->n; k++) {
        const ce_fw_finding *f = &r->f[k];
        /* not installed, or a python3 that cannot run the check: nothing about frameworks to say */
        if (!strcmp(f->code, "framework.not-importable") || !strcmp(f->code, "framework.script-failed")) continue;
        /* doctor cannot know a GPU was wanted: a CPU-only build is a warning here */
        ce_severity sev = !strcmp(f->code, "framework.cpu-only-build") ? CE_SEV_WARNING
                        : f->sev == CE_FW_ERROR                        ? CE_SEV_ERROR
                        : f->sev == CE_FW_WARNING                      ? CE_SEV_WARNING
                                                                       : CE_SEV_INFO;
        doc_add(d, f->code, sev, f->summary, f->evidence, f->fix);
    }
}

static void say(ce_doctor *d, ce_doc_fw_state st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(ce_doctor *d, ce_doc_fw_state st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->fw_note, sizeof d->fw_note, fmt, ap);
    va_end(ap);
    d->fw_state = st;
}

void doc_check_framework(ce_doctor *d)
{
    const char *py = d->ctx->set.doctor_python;
    if (d->fw_mode == CE_DOCTOR_FW_SKIP) { say(d, CE_DOC_FW_SKIPPED, "not checked (--no-framework)"); return; }
    if (py && !strcmp(py, "none")) { say(d, CE_DOC_FW_SKIPPED, "not checked (CUDAENV_DOCTOR_PYTHON=none)"); return; }
    const char *want = py && *py ? py : "python3";
    char python[4096];
    if (!find_python(want, python, sizeof python)) {   /* no python3: no framework to check */
        say(d, CE_DOC_FW_SKIPPED, "not checked: %s %s", want, strchr(want, '/') ? "is no executable" : "is not on PATH");
        return;
    }
    snprintf(d->fw_python, sizeof d->fw_python, "%s", python);
    ce_fw_target t;
    memset(&t, 0, sizeof t);
    if (d->act.present) {
        snprintf(t.name, sizeof t.name, "%s", d->act.name);
        snprintf(t.prefix, sizeof t.prefix, "%s", d->act.prefix);
        snprintf(t.cuda, sizeof t.cuda, "%s", d->act.cuda);
        snprintf(t.cudnn, sizeof t.cudnn, "%s", d->act.cudnn);
    }
    static const char *const fws[] = { "torch", "tf" };
    size_t hits = 0, ran = 0;
    int trusted = -1;
    double ms = 0;
    char why[sizeof ((doc_fwcache *)0)->why] = "", ignored[sizeof ((doc_fwcache *)0)->ignored] = "", dir[4096] = "";
    static doc_fwcache c;   /* ~18 KiB: not on the stack */
    for (size_t i = 0; i < sizeof fws / sizeof *fws; i++) {
        ce_fw_options opt = { .framework = fws[i], .python = python, .quick = true, .timeout_s = 120 };
        ce_fw_report r;
        doc_fwcache_open(&c, fws[i], python);
        snprintf(dir, sizeof dir, "%s", c.dir);
        if (d->fw_mode == CE_DOCTOR_FW_AUTO && from_cache(d, &c, fws[i], python, &t, &opt, &r, &trusted)) {
            hits++;
            if (!d->fw_probed_at || c.probed_at < d->fw_probed_at) d->fw_probed_at = c.probed_at;
        } else {
            long long began = now_ns();
            double t0 = ce_mono_ms();
            ce_quiet q;
            ce_quiet_begin(&q, false);
            int frc = ce_fw_run(d->ctx, &t, &opt, &r);
            if (frc == CE_ERR_PERM) {   /* as root, a Python that is not root's (core/pyrun.h): the error, exit 6 */
                ce_quiet_keep(&q);
                ce_fw_free(&r);
                doc_fwcache_close(&c);
                d->refused = frc;
                say(d, CE_DOC_FW_SKIPPED, "not checked: %s is refused as root", python);
                return;
            }
            ce_quiet_end(&q);
            ms += ce_mono_ms() - t0;
            if (frc != CE_OK) {
                ce_fw_free(&r);
                doc_fwcache_close(&c);
                say(d, CE_DOC_FW_SKIPPED, "not checked: %s could not be run", python);
                return;
            }
            ran++;
            doc_fwcache_put(&c, &r, began);
        }
        if (!why[0] && c.why[0]) snprintf(why, sizeof why, "%s", c.why);
        if (!ignored[0] && c.ignored[0]) snprintf(ignored, sizeof ignored, "%s", c.ignored);
        doc_fwcache_close(&c);
        add_findings(d, &r);
        ce_fw_free(&r);
    }
    if (!ran) {
        char when[32] = "?";
        time_t at = (time_t)d->fw_probed_at;
        struct tm tm;
        if (localtime_r(&at, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
        say(d, CE_DOC_FW_CACHED, "the result %s gave at %s, kept while nothing it imports from changes "
            "(doctor --framework probes again)", python, when);
    } else {
        char kept[4800];
        if (why[0]) snprintf(kept, sizeof kept, "not kept: %s", why);
        else snprintf(kept, sizeof kept, "kept in %s until what it imports from changes", dir);
        say(d, CE_DOC_FW_RAN, "probed %s (%.1f s%s)%s%s; %s", python, ms / 1000,
            d->fw_mode == CE_DOCTOR_FW_PROBE ? ", as --framework asks" : hits ? "; a kept result for the other framework" : "",
            ignored[0] ? "; not trusted, so not used: " : "", ignored, kept);
    }
}
