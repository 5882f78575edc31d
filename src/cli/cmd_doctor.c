#include "cli.h"

/* Placeholder: implemented by the owner of this command. */
int cmd_doctor(cli *c, int argc, char **argv)
{
    (void)argc; (void)argv;
    cli_error(c, "doctor: not implemented yet");
    return 1;
}
