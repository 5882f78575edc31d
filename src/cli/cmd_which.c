#include "cli.h"

/* Placeholder: implemented by the owner of this command. */
int cmd_which(cli *c, int argc, char **argv)
{
    (void)argc; (void)argv;
    cli_error(c, "which: not implemented yet");
    return 1;
}
