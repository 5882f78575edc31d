#include "cli.h"

/* Placeholder: implemented by the owner of this command. */
int cmd_list_remote(cli *c, int argc, char **argv)
{
    (void)argc; (void)argv;
    cli_error(c, "list_remote: not implemented yet");
    return 1;
}
