#include "cli.h"

/* Placeholder: implemented by the owner of this command. */
int cmd_info(cli *c, int argc, char **argv)
{
    (void)argc; (void)argv;
    cli_error(c, "info: not implemented yet");
    return 1;
}
