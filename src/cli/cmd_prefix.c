#include "cli.h"

/* Placeholder: implemented by the owner of this command. */
int cmd_prefix(cli *c, int argc, char **argv)
{
    (void)argc; (void)argv;
    cli_error(c, "prefix: not implemented yet");
    return 1;
}
