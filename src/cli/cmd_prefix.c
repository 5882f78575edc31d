/* cudaenv prefix [VERSION]: the directory of a toolchain (default: the
 * active one; "system": what $SYSROOT/usr/local/cuda resolves to). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/activate.h"
#include "cli.h"

static int cmd_prefix(cli *c, const cli_args *a)
{
    const char *version = a->n ? a->pos[0] : NULL;
    ce_active_info s;
    memset(&s, 0, sizeof s);
    int rc = version ? ce_select(&c->ctx, version, &s) : ce_active(&c->ctx, NULL, &s);
    if (rc) return cli_fail(c, rc);
    if (!s.is_system) {
        printf("%s\n", s.tc.prefix);
        return 0;
    }
    char link[4200], real[PATH_MAX];
    ce_sys_path(&c->ctx, "/usr/local/cuda", link, sizeof link);
    if (!realpath(link, real)) {
        cli_error(c, "no toolchain is selected and the system has no CUDA at %s; "
                     "select one with cudaenv use/local/global", link);
        return 3;
    }
    printf("%s\n", real);
    return 0;
}

const cli_cmd cli_cmd_prefix = {
    .name = "prefix", .run = cmd_prefix,
    .summary = "the directory of a toolchain",
    .usage =
        "usage: cudaenv prefix [VERSION]\n"
        "\n"
        "Print the directory of the installed toolchain VERSION (default: the active one).\n",
    .max_pos = 1, .extra = "one VERSION only",
};
