/* cudaenv uninstall VERSION : under the store lock, remove the toolchain in
 * one rename (then rm -rf), refuse the system-wide one and the active one
 * (this shell's, .cuda-version, global) without --force (--force on the
 * global default clears the global file too, and says so), and
 * garbage-collect pkgs/ trees no toolchain is composed from any more. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "store/activate.h"
#include "store/adopt.h"
#include "store/store.h"
#include "core/version.h"

enum { OPT_FORCE = 1 };

static const cli_opt cmd_uninstall_opts[] = {
    { "force", 'f', false, OPT_FORCE },
    { 0 },
};

/* The toolchain this shell uses (CUDA_HOME, or the selection that applies
 * here: shell, .cuda-version, global) is not removed from under it without
 * --force. */
static int refuse_active(cli *c, const ce_toolchain *t)
{
    const char *home = getenv("CUDA_HOME");
    ce_active_info sel;
    memset(&sel, 0, sizeof sel);
    const char *why = NULL;
    if (home && !strcmp(home, t->prefix)) why = "this shell's CUDA_HOME";
    else if (ce_active(&c->ctx, NULL, &sel) == CE_OK && !sel.is_system && !strcmp(sel.tc.name, t->name))
        why = sel.source[0] ? sel.source : ce_origin_name(sel.origin);
    ce_status_clear();
    if (!why) return CE_OK;
    return ce_fail(CE_ERR_OTHER, "%s is the active toolchain (%s); switch away first "
                   "(cudaenv use system, cudaenv local/global --unset) or pass --force", t->name, why);
}

/* The global default is what every new shell outside a project applies: it
 * is not uninstalled from under them whatever this shell selects.  Refused
 * with another default to choose; with --force, file gets the global file
 * to clear after the uninstall. */
static int refuse_global(cli *c, const ce_toolchain *t, bool force, char *file, size_t filesz)
{
    ce_active_info g;
    file[0] = '\0';
    int rc = ce_active_global(&c->ctx, &g);
    ce_status_clear();
    if (rc || g.is_system || strcmp(g.tc.name, t->name) != 0) return CE_OK;
    if (force) {
        snprintf(file, filesz, "%s", g.source);
        return CE_OK;
    }
    ce_toolchain *v = NULL;
    size_t n = 0;
    const char *other = NULL;
    if (ce_store_list(&c->ctx, &v, &n) == CE_OK)
        for (size_t i = n; i-- > 0 && !other;)
            if (strcmp(v[i].name, t->name) != 0) other = v[i].name;
    ce_status_clear();
    char alt[160];
    if (other) snprintf(alt, sizeof alt, "cudaenv global %s, or ", other);
    else alt[0] = '\0';
    rc = ce_fail(CE_ERR_OTHER, "%s is the global default (%s): new shells would find it missing; "
                 "choose another first (%scudaenv global --unset for the machine's own CUDA), or pass --force, "
                 "which also clears the global default", t->name, g.source, alt);
    free(v);
    return rc;
}

static int cmd_uninstall(cli *c, const cli_args *a)
{
    const char *want = a->pos[0];
    bool force = cli_on(a, OPT_FORCE);

    ce_store_txn txn = CE_STORE_TXN_INIT;
    int rc = ce_store_begin(&c->ctx, &txn);
    if (rc) {
        ce_store_end(&txn);
        return cli_fail(c, rc);
    }
    /* an exact name, or a spec naming exactly one installed toolchain:
     * "uninstall 11.8" must not guess between two cuDNN builds */
    ce_toolchain t;
    ce_toolchain *v = NULL;
    size_t n = 0, matches = 0;
    if ((rc = ce_store_find(&c->ctx, want, &t)) == CE_OK && strcmp(t.name, want) != 0 &&
        (rc = ce_store_list(&c->ctx, &v, &n)) == CE_OK) {
        for (size_t i = 0; i < n; i++)
            if (ce_version_matches(t.cuda, v[i].cuda) && strcmp(v[i].name, t.name) != 0 &&
                !strchr(want, '+') && strncmp(want, "tf", 2) && strncmp(want, "tensorflow", 10))
                matches++;
        free(v);
        if (matches)
            rc = ce_fail(CE_ERR_USAGE, "%s names more than one installed toolchain; "
                         "give the full name (see: cudaenv list)", want);
    }
    char global_file[4096] = "";
    if (rc == CE_OK) rc = refuse_global(c, &t, force, global_file, sizeof global_file);
    if (rc == CE_OK && !force) rc = refuse_active(c, &t);
    char from[4096];
    bool adopted = rc == CE_OK && ce_adopted_from(t.prefix, from, sizeof from) == 1;
    if (rc == CE_OK) rc = ce_store_uninstall(&c->ctx, t.name, force);
    if (rc == CE_OK && global_file[0]) {
        if (unlink(global_file) == 0 || errno == ENOENT)
            ce_emit(&c->ctx, CE_EV_NOTE, t.name, "cleared the global default (%s named %s): new shells use the "
                    "machine's own CUDA; choose another with: cudaenv global VERSION", global_file, t.name);
        else
            ce_emit(&c->ctx, CE_EV_WARN, t.name, "cannot remove %s, which names %s: %s; new shells will say it is "
                    "missing until: cudaenv global --unset", global_file, t.name, strerror(errno));
    }
    if (rc == CE_OK && adopted) {
        /* only the symlinks went: the toolkit itself is the user's */
        ce_emit(&c->ctx, CE_EV_NOTE, t.name, "forgot %s; %s is left as it was", t.name, from);
        ce_store_end(&txn);
        return 0;
    }
    if (rc == CE_OK) {
        ce_store_index_prune(&c->ctx);
        int gc = ce_store_gc_pkgs(&c->ctx);
        if (gc > 0) ce_emit(&c->ctx, CE_EV_INFO, NULL, "removed %d unpacked package tree%s no toolchain uses",
                            gc, gc == 1 ? "" : "s");
        ce_emit(&c->ctx, CE_EV_NOTE, t.name, "uninstalled %s", t.name);
    }
    ce_store_end(&txn);
    return rc == CE_OK ? 0 : cli_fail(c, rc);
}

const cli_cmd cli_cmd_uninstall = {
    .name = "uninstall", .run = cmd_uninstall,
    .summary = "remove an installed toolchain",
    .usage =
        "usage: cudaenv uninstall VERSION [--force]\n"
        "\n"
        "Remove one installed toolchain.  The toolchain the system switch points at, and\n"
        "the active one (this shell's, .cuda-version, global), are refused without --force.\n"
        "The global default is refused whatever this shell selects (new shells would miss\n"
        "it): choose another (cudaenv global VERSION, or global --unset); --force also\n"
        "clears the global default, and says so.\n",
    .opts = cmd_uninstall_opts, .min_pos = 1, .max_pos = 1,
    .missing = "which toolchain? see: cudaenv list", .extra = "one toolchain at a time (got %s and %s)",
};
