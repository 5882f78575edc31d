/* cudaenv list [--json]: installed toolchains; the active one is marked with
 * why it is active (shell, .cuda-version, global), and the one the system
 * switch points at is marked "system" (and named as the one in use when
 * nothing is selected).  Each line shows the bytes only that
 * toolchain holds (freed by uninstall) and those it shares with another
 * through hardlinks (composition links one unpacked release into many), and
 * what it holds: "(tf profile, NCCL 2.21.5)", "(toolkit profile
 * +nsight_systems)", "(runfile)" (its receipt). */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/activate.h"
#include "store/adopt.h"
#include "store/cache.h"
#include "cli.h"
#include "system/system.h"

enum { OPT_JSON = 1, OPT_NAMES, OPT_SIZES };

static const cli_opt cmd_list_opts[] = {
    { "json", 0, false, OPT_JSON },
    { "names", 0, false, OPT_NAMES },   /* for completions: bare names */
    { "sizes", 0, false, OPT_SIZES },   /* walk every tree instead of reading its usage record */
    { 0 },
};

static int cmd_list(cli *c, const cli_args *a)
{
    bool names = cli_on(a, OPT_NAMES);
    c->json = cli_on(a, OPT_JSON);
    ce_toolchain *v;
    size_t n;
    int rc = ce_store_list(&c->ctx, &v, &n);
    if (rc) return cli_fail(c, rc);
    if (names) {
        for (size_t i = 0; i < n; i++) cli_print("%s\n", v[i].name);
        free(v);
        return 0;
    }
    ce_active_info act;
    ce_quiet q;
    ce_quiet_begin(&q, true);   /* a broken pin is shown, not an error of list */
    bool have_active = ce_active(&c->ctx, NULL, &act) == CE_OK && !act.is_system;
    /* the toolchain the system switch put at /usr/local/cuda */
    ce_toolchain sys;
    bool have_sys = ce_system_toolchain(&c->ctx, &sys);
    /* what each one costs: bytes only it holds, bytes shared by hardlinks */
    ce_tc_usage *use = calloc(n ? n : 1, sizeof *use);
    if (!use || ce_store_usage(v, n, use, cli_on(a, OPT_SIZES)) != CE_OK) { free(use); use = NULL; }
    ce_quiet_end(&q);
    cJSON *root = c->json ? cJSON_CreateObject() : NULL;
    cJSON *arr = root ? cJSON_AddArrayToObject(root, "toolchains") : NULL;
    for (size_t i = 0; i < n; i++) {
        bool active = have_active && !strcmp(act.tc.name, v[i].name);
        bool system = have_sys && !strcmp(sys.name, v[i].name);
        char from[4096], what[1200];
        bool adopted = ce_adopted_from(v[i].prefix, from, sizeof from) == 1;
        ce_receipt_held held;   /* what it holds: profile and changes, NCCL */
        ce_receipt_held_read(v[i].prefix, false, &held);
        ce_receipt_held_text(&held, what, sizeof what);
        if (root) {
            cJSON *t = cJSON_CreateObject();
            cJSON_AddStringToObject(t, "name", v[i].name);
            cJSON_AddStringToObject(t, "cuda", v[i].cuda);
            if (v[i].cudnn[0]) cJSON_AddStringToObject(t, "cudnn", v[i].cudnn);
            else cJSON_AddNullToObject(t, "cudnn");
            cJSON_AddStringToObject(t, "prefix", v[i].prefix);
            cJSON_AddBoolToObject(t, "active", active);
            if (active) cJSON_AddStringToObject(t, "origin", ce_origin_name(act.origin));
            else cJSON_AddNullToObject(t, "origin");
            if (active && act.source[0]) cJSON_AddStringToObject(t, "source", act.source);
            else cJSON_AddNullToObject(t, "source");
            cJSON_AddBoolToObject(t, "system", system);
            cli_json_add_str(t, "adopted_from", adopted ? from : NULL);
            if (use) {
                cJSON_AddNumberToObject(t, "unique_bytes", (double)use[i].unique);
                cJSON_AddNumberToObject(t, "shared_bytes", (double)use[i].shared);
            }
            cli_json_held(t, &held);
            ce_receipt_held_free(&held);
            cJSON_AddItemToArray(arr, t);
            continue;
        }
        cli_print("%s %s", active ? "*" : " ", v[i].name);
        if (active) {
            if (act.origin == CE_ORIGIN_SHELL) cli_print("  (shell: CUDAENV_VERSION)");
            else cli_print("  (%s: %s)", ce_origin_name(act.origin), act.source);
        }
        if (system) cli_print("  (system: /usr/local/cuda)");
        if (adopted) cli_print("  (adopted: %s)", from);
        if (use) {
            char u[32], sh[32];
            cli_size(u, sizeof u, (double)use[i].unique);
            cli_size(sh, sizeof sh, (double)use[i].shared);
            cli_print("  [%s own, %s shared]", u, sh);
        }
        if (what[0]) cli_print("  (%s)", what);
        ce_receipt_held_free(&held);
        putchar('\n');
    }
    if (root) {
        /* the selection even when it is "system" or names nothing installed */
        ce_quiet_begin(&q, true);
        bool ok = ce_active(&c->ctx, NULL, &act) == CE_OK;
        ce_quiet_end(&q);
        cJSON *aj = cJSON_AddObjectToObject(root, "active");
        /* null for what a file names that resolves to nothing (never shown: activate.h) */
        cli_json_add_str(aj, "name", ok ? (act.is_system ? "system" : act.tc.name) : act.spec);
        cJSON_AddStringToObject(aj, "origin", ce_origin_name(act.origin));
        if (act.source[0]) cJSON_AddStringToObject(aj, "source", act.source);
        else cJSON_AddNullToObject(aj, "source");
        cJSON_AddBoolToObject(aj, "installed", ok);
        cli_json_add_str(aj, "system_toolchain", have_sys ? sys.name : NULL);
        cli_json_print(root);
    } else if (n == 0) {
        cli_note(c, "no toolchains installed; try: cudaenv install tf-2.14");
    } else if (!have_active && have_sys) {
        cli_note(c, "none selected: the system toolchain %s is used (%s, cudaenv global --system)", sys.name,
                 CE_SYS_LINK);
    } else if (!have_active) {
        cli_note(c, "none active: the machine's own CUDA is used (cudaenv use/local/global VERSION)");
    }
    free(use);
    free(v);
    return 0;
}

const cli_cmd cli_cmd_list = {
    .name = "list", .alias = "ls", .run = cmd_list,
    .summary = "installed toolchains and which one is active",
    .usage =
        "usage: cudaenv list [--json | --names] [--sizes]\n"
        "\n"
        "Installed toolchains with what each holds (profile and changes, NCCL, or the\n"
        "runfile); the active one is marked with why (shell, .cuda-version, global,\n"
        "system), the one global --system put at /usr/local/cuda with system (named as the\n"
        "one in use when nothing is selected).  --names prints the bare names, one per line.\n"
        "Sizes (own and shared through hard links) come from the file list install wrote\n"
        "(.cudaenv-usage), their sums kept in versions/.cudaenv-sizes until a toolchain\n"
        "comes, goes or is recorded again; --sizes walks every tree afresh (after changing\n"
        "files by hand).\n",
    .opts = cmd_list_opts,
};
