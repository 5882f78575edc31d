/* cudaenv global [VERSION | --unset]: the user's default toolchain
 * ($CUDAENV_ROOT/global).  With --system (root): the machine-wide switch of
 * /usr/local/cuda + ld.so.conf.d (system.c); --rollback, --dry-run, --force. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/activate.h"
#include "cli.h"
#include "store/store.h"
#include "store/userstate.h"
#include "core/file.h"
#include "system/system.h"

enum { OPT_SYSTEM = 1, OPT_FORCE, OPT_DRY, OPT_ROLLBACK, OPT_UNSET };

static const cli_opt cmd_global_opts[] = {
    { "system", 0, false, OPT_SYSTEM },
    { "force", 'f', false, OPT_FORCE },
    { "dry-run", 'n', false, OPT_DRY },
    { "rollback", 0, false, OPT_ROLLBACK },
    { "unset", 0, false, OPT_UNSET },
    { 0 },
};

static int show_system(cli *c)
{
    ce_sys_record r;
    int rc = ce_system_record(&c->ctx, &r);
    if (rc) return cli_fail(c, rc);
    if (!r.present) {
        cli_error(c, "no system switch recorded; set one with: sudo cudaenv global VERSION --system");
        return 3;
    }
    printf("%s\n", r.restore ? "system" : r.name[0] ? r.name : r.target);
    if (r.pending)
        cli_warn(c, "the last system switch (to %s) was interrupted; complete it with: sudo cudaenv global %s --system "
                 "(cudaenv doctor shows what disagrees)", r.name[0] ? r.name : r.target,
                 r.restore ? "system" : r.name[0] ? r.name : "VERSION");
    return 0;
}

static int cmd_global(cli *c, const cli_args *a)
{
    const char *version = a->n ? a->pos[0] : NULL;
    bool sys = cli_on(a, OPT_SYSTEM), unset = cli_on(a, OPT_UNSET);
    ce_sys_opts so = { .force = cli_on(a, OPT_FORCE), .dry_run = cli_on(a, OPT_DRY) };
    int rc;
    if (cli_on(a, OPT_ROLLBACK)) {
        if (version) return cli_usage_error(c->cmd, "--rollback takes no VERSION (the machine's own CUDA: global system --system)");
        if ((rc = ce_system_rollback(&c->ctx, &so))) return cli_fail(c, rc);
        return so.dry_run ? 0 : show_system(c);
    }
    if ((so.force || so.dry_run) && !sys)
        return cli_usage_error(c->cmd, "--force and --dry-run belong to --system");
    if (sys) {
        if (!version) return show_system(c);
        if (!strcmp(version, "system")) {
            /* back to the machine's own CUDA, as the first switch found it */
            if ((rc = ce_system_restore(&c->ctx, &so))) return cli_fail(c, rc);
            if (!so.dry_run) cli_note(c, "system CUDA is the machine's own again (as before cudaenv's first switch)");
            return 0;
        }
        if (!so.dry_run && geteuid() != 0) {
            cli_error(c, "global --system changes /usr/local/cuda and /etc/ld.so.conf.d and needs root; "
                         "run: sudo cudaenv global %s --system", version);
            return 6;
        }
        ce_toolchain tc;
        /* an installed tf-X.Y through the index: no manifest parse */
        if (!ce_store_index_find(&c->ctx, version, &tc) && (rc = ce_store_find(&c->ctx, version, &tc)))
            return cli_fail(c, rc);
        if ((rc = ce_system_switch(&c->ctx, &tc, &so))) return cli_fail(c, rc);
        if (!so.dry_run) cli_note(c, "system CUDA is now %s", tc.name);
        return 0;
    }
    char path[4096], spec[128];
    if ((rc = ce_global_path(&c->ctx, path, sizeof path))) return cli_fail(c, rc);
    if (unset) {
        if (unlink(path) != 0 && errno != ENOENT) {
            cli_error(c, "cannot remove %s: %s", path, strerror(errno));
            return 1;
        }
        return 0;
    }
    if (!version) {
        /* beside a shared store without a choice of our own: the site default */
        if (!ce_exists(path) && ce_store_shared(&c->ctx)) ce_store_path(&c->ctx, "global", path, sizeof path);
        if (!ce_exists(path)) {
            printf("system\n");
            return 0;
        }
        if ((rc = ce_spec_file_read(path, spec, sizeof spec)) ||
            (rc = ce_spec_file_showable(path, spec)))
            return cli_fail(c, rc);
        printf("%s\n", spec);
        return 0;
    }
    ce_active_info s;
    if ((rc = ce_select(&c->ctx, version, &s))) return cli_fail(c, rc);
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", path);
    if (strrchr(parent, '/')) *strrchr(parent, '/') = '\0';
    if ((rc = ce_mkdir_p(parent, 0755)) ||
        (rc = ce_spec_file_write(path, s.is_system ? "system" : s.tc.name)))
        return cli_fail(c, rc);
    return 0;
}

const cli_cmd cli_cmd_global = {
    .name = "global", .run = cmd_global,
    .summary = "the default toolchain (user or system)",
    .usage =
        "usage: cudaenv global [VERSION|system | --unset]\n"
        "       cudaenv global [VERSION|system] --system [--force] [--dry-run]\n"
        "       cudaenv global --rollback [--dry-run]\n"
        "\n"
        "Without --system: the user's default toolchain (printed without VERSION; --unset\n"
        "removes it, so new shells outside a project get the machine's own CUDA).\n"
        "With --system (root): point $CUDAENV_SYSROOT/usr/local/cuda and\n"
        "/etc/ld.so.conf.d/cudaenv.conf at it atomically and run ldconfig.  --dry-run prints\n"
        "the plan.  --rollback returns to the previous target, and again to the one before\n"
        "(a history of 16).  The first switch records the\n"
        "machine's own state (no link, a link, the update-alternatives selection, a directory\n"
        "moved aside; cudaenv.conf); 'global system --system' restores exactly that.\n"
        "A real directory at /usr/local/cuda is refused (exit 1) unless --force moves it aside;\n"
        "an update-alternatives link is cooperated with.  Exit 6: not root, or the toolchain\n"
        "is in a tree not owned by root or writable by others (use CUDAENV_ROOT=/opt/cudaenv).\n"
        "A switch interrupted (kill -9, power loss) is completed by the next --system/--rollback.\n"
        "CUDAENV_LDCONFIG overrides the ldconfig path (\"none\" skips it).\n",
    .opts = cmd_global_opts, .max_pos = 1, .extra = "one VERSION only",
};
