/* daolease keygen — placeholder until its component lands; refuses with exit 2. */
#include "cli/cli.h"

int dls_cmd_keygen(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    dls_cli_error("keygen", "not available in this build yet");
    return DLS_EXIT_USAGE;
}
