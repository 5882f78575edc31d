#include "cli.h"

/* Placeholder: implemented by the owner of this command. */
int cmd_local(cli *c, int argc, char **argv)
{
    (void)argc; (void)argv;
    cli_error(c, "local: not implemented yet");
    return 1;
}
