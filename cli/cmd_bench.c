/* daolease bench — placeholder until its component lands; refuses with exit 2. */
#include "cli/cli.h"

int dls_cmd_bench(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    dls_cli_error("bench", "not available in this build yet");
    return DLS_EXIT_USAGE;
}
