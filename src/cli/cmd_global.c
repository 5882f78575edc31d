#include "cli.h"

/* Placeholder: implemented by the owner of this command. */
int cmd_global(cli *c, int argc, char **argv)
{
    (void)argc; (void)argv;
    cli_error(c, "global: not implemented yet");
    return 1;
}
