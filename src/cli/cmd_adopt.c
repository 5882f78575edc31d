/* cudaenv adopt DIR [--name NAME] | adopt --scan: use a CUDA toolkit that
 * cudaenv did not install (store/adopt.h) like any other toolchain. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "store/adopt.h"
#include "store/store.h"

enum { OPT_NAME = 1, OPT_SCAN };

static const cli_opt cmd_adopt_opts[] = {
    { "name", 0, true, OPT_NAME },
    { "scan", 0, false, OPT_SCAN },
    { 0 },
};

/* the toolchain already adopted from dir, if any */
static bool adopted_as(cli *c, const char *dir, char *name, size_t n)
{
    ce_toolchain *v = NULL;
    size_t cnt = 0;
    bool found = false;
    char from[4096], real[4096];
    if (!realpath(dir, real)) snprintf(real, sizeof real, "%s", dir);
    if (ce_store_list(&c->ctx, &v, &cnt) != CE_OK) return false;
    for (size_t i = 0; i < cnt && !found; i++)
        if (ce_adopted_from(v[i].prefix, from, sizeof from) && !strcmp(from, real)) {
            snprintf(name, n, "%s", v[i].name);
            found = true;
        }
    free(v);
    return found;
}

static int scan(cli *c)
{
    char (*dirs)[4096] = calloc(32, sizeof *dirs);
    if (!dirs) return 1;
    size_t n = ce_adopt_scan(&c->ctx, dirs, 32);
    if (n == 0)
        cli_note(c, "no CUDA toolkit found in /usr/local/cuda-*, /opt/cuda*, /usr/lib/cuda; "
                 "adopt one elsewhere with: cudaenv adopt DIR");
    for (size_t i = 0; i < n; i++) {
        char cuda[64], cudnn[64], name[96];
        if (ce_adopt_probe(&c->ctx, dirs[i], cuda, sizeof cuda, cudnn, sizeof cudnn) != CE_OK) {
            /* as root, a tree a user can change is named, never offered */
            if (ce_errcode() == CE_ERR_PERM) printf("%-28s not offered: %s\n", dirs[i], ce_errmsg());
            continue;
        }
        char what[160];
        snprintf(what, sizeof what, "CUDA %s%s%s", cuda, cudnn[0] ? " + cuDNN " : "", cudnn);
        if (adopted_as(c, dirs[i], name, sizeof name))
            printf("%-28s %-30s adopted as %s\n", dirs[i], what, name);
        else
            printf("%-28s %-30s cudaenv adopt %s\n", dirs[i], what, dirs[i]);
    }
    free(dirs);
    return 0;
}

static int cmd_adopt(cli *c, const cli_args *a)
{
    const char *dir = a->n ? a->pos[0] : NULL, *name = a->opt[OPT_NAME];
    if (cli_on(a, OPT_SCAN)) {
        if (dir || name) return cli_usage_error(c->cmd, "--scan takes no DIR or --name");
        return scan(c);
    }
    if (!dir) return cli_usage_error(c->cmd, "which directory? e.g. cudaenv adopt /usr/local/cuda-12.4 (or --scan)");
    char have[96];
    if (adopted_as(c, dir, have, sizeof have)) {
        cli_note(c, "%s is already adopted as %s", dir, have);
        return 0;
    }
    ce_store_txn txn = CE_STORE_TXN_INIT;
    int rc = ce_store_begin(&c->ctx, &txn);
    if (rc) return cli_fail(c, rc);
    char got[96];
    rc = ce_adopt(&c->ctx, dir, name, got, sizeof got);
    ce_store_end(&txn);
    if (rc) return cli_fail(c, rc);
    cli_note(c, "adopted %s as %s (cudaenv uninstall %s forgets it and leaves %s alone)", dir, got, got, dir);
    cli_note(c, "use it: cudaenv use %s, cudaenv exec %s -- CMD, cudaenv verify %s", got, got, got);
    return 0;
}

const cli_cmd cli_cmd_adopt = {
    .name = "adopt", .run = cmd_adopt,
    .summary = "register a CUDA toolkit installed elsewhere",
    .usage =
        "usage: cudaenv adopt DIR [--name NAME] | cudaenv adopt --scan\n"
        "\n"
        "Use a toolkit cudaenv did not install (/usr/local/cuda-12.4, /usr/lib/cuda) like any\n"
        "other toolchain: its version is read from version.json, version.txt or cuda.h (nothing\n"
        "in DIR is run), a cuDNN inside it is detected, and a receipt of every file's size is\n"
        "written now so verify can tell later changes.  list marks it adopted; uninstall only\n"
        "forgets it (DIR is never touched).  As root, DIR must be root's all the way down and\n"
        "up (exit 6 naming the path otherwise).\n"
        "\n"
        "  --name NAME   the toolchain name: CUDA[+cudnnVER][@label], e.g. 12.4.1@system\n"
        "                (default: the versions found; @adopted when that name is taken)\n"
        "  --scan        list /usr/local/cuda-*, /opt/cuda* and /usr/lib/cuda, adopted or not\n",
    .opts = cmd_adopt_opts, .max_pos = 1, .extra = "one DIR at a time (got %s and %s)",
};
