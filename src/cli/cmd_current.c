/* cudaenv current [--json]: the active toolchain and where the selection
 * comes from (shell, .cuda-version with its path, global, system); for
 * "system", the toolchain the system switch put at /usr/local/cuda. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/activate.h"
#include "cli.h"
#include "core/pylibs.h"
#include "core/trust.h"
#include "system/system.h"

enum { OPT_JSON = 1 };

static const cli_opt cmd_current_opts[] = {
    { "json", 0, false, OPT_JSON },
    { 0 },
};

/* A plain `use` beside a python3 that brings its own copies of the
 * toolchain's libraries (core/pylibs.h): the summary and the fix in sum,
 * fix; false when there is no such hazard. */
static bool two_copies(const ce_active_info *s, char *sum, size_t sumsz, char *fix, size_t fixsz)
{
    if (s->is_system || s->libs == CE_LIBS_FRAMEWORK || !s->tc.prefix[0]) return false;
    char lib[sizeof s->tc.prefix + 8];
    snprintf(lib, sizeof lib, "%s/lib64", s->tc.prefix);
    ce_pylibs pl;
    unsigned both = ce_pylibs_shadowed("python3", lib, &pl);
    if (!both) return false;
    ce_pylibs_hazard_text("python3", s->tc.name, both, &pl, sum, sumsz, fix, fixsz);
    return true;
}

static int cmd_current(cli *c, const cli_args *a)
{
    c->json = cli_on(a, OPT_JSON);
    ce_active_info s;
    int rc = ce_active(&c->ctx, NULL, &s);
    bool installed = rc == CE_OK;
    if (rc && rc != CE_ERR_NOTFOUND) return cli_fail(c, rc);
    const char *name = s.is_system ? "system" : installed ? s.tc.name : s.spec;
    char sum[2048], fix[1024];
    bool hazard = installed && two_copies(&s, sum, sizeof sum, fix, sizeof fix);
    /* "system" stands for the toolchain the system switch put at /usr/local/cuda, if any */
    ce_toolchain sys;
    bool have_sys = s.is_system && installed && ce_system_toolchain(&c->ctx, &sys);
    if (c->json) {
        cJSON *j = cJSON_CreateObject();
        /* a spec a file names that resolves to nothing is not shown (activate.h) */
        cli_json_add_str(j, "name", name);
        cli_json_add_str(j, "spec", s.spec);
        cJSON_AddStringToObject(j, "origin", ce_origin_name(s.origin));
        if (s.source[0]) cJSON_AddStringToObject(j, "source", s.source);
        else cJSON_AddNullToObject(j, "source");
        if (installed && !s.is_system) cJSON_AddStringToObject(j, "prefix", s.tc.prefix);
        else cJSON_AddNullToObject(j, "prefix");
        cJSON_AddBoolToObject(j, "installed", installed);
        cJSON_AddStringToObject(j, "libs", s.libs == CE_LIBS_FRAMEWORK ? "framework" : "toolchain");
        if (hazard) {
            cJSON *h = cJSON_AddObjectToObject(j, "warning");
            cJSON_AddStringToObject(h, "code", "framework.two-copies");
            cJSON_AddStringToObject(h, "summary", sum);
            cJSON_AddStringToObject(h, "fix", fix);
        } else {
            cJSON_AddNullToObject(j, "warning");
        }
        cli_json_add_str(j, "system_toolchain", have_sys ? sys.name : NULL);
        cli_json_print(j);
        return installed ? 0 : cli_fail(c, rc);
    }
    /* a spec from CUDAENV_VERSION and a path from a cloned tree: escaped */
    char sname[sizeof s.spec * 4], ssrc[sizeof s.source * 4];
    ce_escape_into(sname, sizeof sname, name);
    ce_escape_into(ssrc, sizeof ssrc, s.source);
    if (!*name) {
        /* nothing to show on stdout: the error names the file */
    } else if (s.origin == CE_ORIGIN_SYSTEM && have_sys) {
        cli_print("system: %s (no toolchain selected: the system switch's, at %s)\n", sys.name, CE_SYS_LINK);
    } else if (s.origin == CE_ORIGIN_SYSTEM) {
        printf("system (no toolchain selected: the machine's own CUDA)\n");
    } else if (have_sys) {
        cli_print("system: %s (set by %s)\n", sys.name, ssrc);
    } else if (s.origin == CE_ORIGIN_SHELL) {
        printf("%s (set by CUDAENV_VERSION, cudaenv use)\n", sname);
    } else {
        printf("%s (set by %s)\n", sname, ssrc);
    }
    if (hazard) cli_warn(c, "%s; fix: %s", sum, fix);
    return installed ? 0 : cli_fail(c, rc);
}

const cli_cmd cli_cmd_current = {
    .name = "current", .run = cmd_current,
    .summary = "the active toolchain and where it comes from",
    .usage =
        "usage: cudaenv current [--json]\n"
        "\n"
        "Print the active toolchain and its origin: shell, .cuda-version (path), global, system.\n"
        "Warns when its lib64 is on LD_LIBRARY_PATH while python3 brings its own copies of\n"
        "the same libraries (the fix: cudaenv use --for python3).\n"
        "For system: the toolchain global --system put at /usr/local/cuda, when the link still\n"
        "points there (--json: system_toolchain), else the machine's own CUDA.\n",
    .opts = cmd_current_opts,
};
