/* The programs the system switch runs: ldconfig and update-alternatives
 * (core/proc.h). */
#include "system_int.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/proc.h"

/* core/proc.h: posix_spawn (vfork + execv: no copy of this process's page
 * tables), never system(): no shell parses these paths.  The child's stdout
 * goes to stderr so cudaenv's stdout stays results only. */
static int run_prog_out(ce_ctx *ctx, char *const argv[], char *out, size_t n)
{
    ce_proc p = { .path = argv[0], .argv = argv, .out = out ? CE_PROC_CAPTURE : CE_PROC_TO_STDERR,
                  .keep_stderr = true, .cap_head = out ? n - 1 : 0 };
    ce_proc_result r;
    int rc = ce_proc_run(ctx, &p, &r);
    if (rc) return rc;
    if (out) {
        /* what the child prints (bounded; the rest is read and dropped) */
        size_t len = r.out_len < n - 1 ? r.out_len : n - 1;
        memcpy(out, r.out ? r.out : "", len);
        out[len] = '\0';
    }
    ce_proc_result_free(&r);
    if (r.code == 0) return CE_OK;
    return ce_fail(CE_ERR_OTHER, "%s failed (%s %d)", argv[0], r.sig ? "signal" : "exit status",
                   r.sig ? r.sig : r.code);
}

const char *ce_sys_ldconfig_path(const ce_ctx *ctx)
{
    const char *e = ctx->set.ldconfig;
    if (e) return (!*e || !strcmp(e, "none")) ? NULL : e;
    return access("/sbin/ldconfig", X_OK) == 0 ? "/sbin/ldconfig" : "/usr/sbin/ldconfig";
}

int ce_sys_run_ldconfig(ce_ctx *ctx, void (*meanwhile)(ce_ctx *))
{
    const char *ld = ce_sys_ldconfig_path(ctx);
    if (!ld) {
        ce_emit(ctx, CE_EV_NOTE, NULL, "ldconfig skipped (CUDAENV_LDCONFIG=%s)", ctx->set.ldconfig);
        if (meanwhile) meanwhile(ctx);
        return CE_OK;
    }
    char *argv[] = { (char *)ld, ctx->sysroot[0] ? "-r" : NULL, ctx->sysroot, NULL };
    ce_proc p = { .path = ld, .argv = argv, .out = CE_PROC_TO_STDERR, .keep_stderr = true };
    ce_proc_child c;
    int rc = ce_proc_start(ctx, &p, &c);
    if (meanwhile) meanwhile(ctx);   /* also when it could not start */
    if (rc) return rc;
    ce_proc_result r;
    if ((rc = ce_proc_wait(ctx, &c, &r))) return rc;
    ce_proc_result_free(&r);
    if (r.code == 0) return CE_OK;
    return ce_fail(CE_ERR_OTHER, "%s failed (%s %d)", ld, r.sig ? "signal" : "exit status", r.sig ? r.sig : r.code);
}

static const char *alternatives_path(const ce_ctx *ctx)
{
    const char *e = ctx->set.update_alternatives;
    if (e && *e) return e;
    return access("/usr/bin/update-alternatives", X_OK) == 0 ? "/usr/bin/update-alternatives" : "/usr/sbin/update-alternatives";
}

/* update-alternatives [--root SYSROOT] ARGS...: it renames its own links
 * atomically and keeps its admin file, so --display stays consistent. */
static int alternatives_out(ce_ctx *ctx, char *out, size_t on, const char *a1, const char *a2, const char *a3,
                            const char *a4, const char *a5)
{
    char *argv[12];
    int n = 0;
    argv[n++] = (char *)alternatives_path(ctx);
    argv[n++] = "--quiet";
    if (ctx->sysroot[0]) { argv[n++] = "--root"; argv[n++] = ctx->sysroot; }
    const char *rest[] = { a1, a2, a3, a4, a5 };
    for (int i = 0; i < 5 && rest[i]; i++) argv[n++] = (char *)rest[i];
    argv[n] = NULL;
    return run_prog_out(ctx, argv, out, on);
}

int ce_sys_alternatives(ce_ctx *ctx, const char *a1, const char *a2, const char *a3, const char *a4, const char *a5)
{
    return alternatives_out(ctx, NULL, 0, a1, a2, a3, a4, a5);
}

int ce_sys_alt(ce_ctx *ctx, char *out, size_t on, const char *a1, const char *a2, const char *a3)
{
    return alternatives_out(ctx, out, on, a1, a2, a3, NULL, NULL);
}
