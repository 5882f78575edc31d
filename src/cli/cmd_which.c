/* cudaenv which CMD: the file CMD resolves to in the active toolchain
 * (<prefix>/bin/CMD; for "system", /usr/local/cuda/bin/CMD). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store/activate.h"
#include "cli.h"

static int cmd_which(cli *c, const cli_args *a)
{
    const char *name = a->pos[0];
    if (strchr(name, '/')) return cli_usage_error(c->cmd, "CMD is a command name, not a path: %s", name);
    ce_active_info s;
    int rc = ce_active(&c->ctx, NULL, &s);
    if (rc) return cli_fail(c, rc);
    char dir[4200], path[4400];
    if (s.is_system) ce_sys_path(&c->ctx, "/usr/local/cuda", dir, sizeof dir);
    else snprintf(dir, sizeof dir, "%s", s.tc.prefix);
    snprintf(path, sizeof path, "%s/bin/%s", dir, name);
    if (access(path, X_OK) != 0) {
        cli_error(c, "%s is not in %s (%s/bin)", name, s.is_system ? "the system CUDA" : s.tc.name, dir);
        return 3;
    }
    printf("%s\n", path);
    return 0;
}

const cli_cmd cli_cmd_which = {
    .name = "which", .run = cmd_which,
    .summary = "the file a command resolves to",
    .usage =
        "usage: cudaenv which CMD\n"
        "\n"
        "Print the file CMD (e.g. nvcc) resolves to in the active toolchain.\n",
    .min_pos = 1, .max_pos = 1, .missing = "which command? e.g. cudaenv which nvcc", .extra = "one CMD only",
};
