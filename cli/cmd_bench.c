/* daolease bench — the performance harness (docs/bench.md).
 *
 * The benchmarks are separate programs (bench/bench_<name>.c) so that each
 * measures its own baseline in the same run. This subcommand finds them
 * beside the daolease binary (the build tree's bench/ folder, or
 * $DLS_BENCH_DIR) and runs the ones named (all by default), passing their
 * JSON Lines through. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/proc.h"

static const char *const all[] = {"stream", "attrib", "judge", "host", "redis", "jetstream"};

static const char usage_text[] =
    "usage: daolease bench [NAME...]\n\n"
    "Runs the benchmark programs and prints their JSON Lines\n"
    "{\"bench\", \"metric\", \"value\", \"baseline\", \"ratio\"}; each measures its\n"
    "baseline in the same run. NAME: stream, attrib, judge, host, redis,\n"
    "jetstream\n"
    "(default: all). The programs are looked up in $DLS_BENCH_DIR, else in\n"
    "../bench beside this binary (the build tree).\n";

static int bench_dir(char *out, size_t cap)
{
    const char *env = getenv("DLS_BENCH_DIR");
    if (env) {
        snprintf(out, cap, "%s", env);
        return 0;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = 0;
    snprintf(out, cap, "%.3000s/../bench", self);
    return 0;
}

static int run_one(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%.3000s/bench_%s", dir, name);
    if (access(path, X_OK)) {
        dls_cli_error("bench", "%s: %s", path, strerror(errno));
        return DLS_EXIT_FAIL;
    }
    char *argv[] = {path, NULL};
    fflush(stdout);
    pid_t pid = dls_cli_spawn(argv, NULL);
    int ws;
    if (pid < 0 || waitpid(pid, &ws, 0) != pid)
        return DLS_EXIT_FAIL;
    return dls_cli_exit_status(ws) ? DLS_EXIT_FAIL : DLS_EXIT_OK;
}

int dls_cmd_bench(int argc, char **argv)
{
    if (dls_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return DLS_EXIT_OK;
    }
    char dir[3100];
    if (bench_dir(dir, sizeof dir)) {
        dls_cli_error("bench", "cannot find the benchmark programs (set DLS_BENCH_DIR)");
        return DLS_EXIT_FAIL;
    }
    int code = DLS_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        int known = 0;
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            known |= !strcmp(argv[i], all[k]);
        if (!known) {
            dls_cli_error("bench", "%s: unknown benchmark (see 'daolease bench --help')", argv[i]);
            return DLS_EXIT_USAGE;
        }
    }
    if (argc < 2)
        for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
            code |= run_one(dir, all[k]);
    for (int i = 1; i < argc; i++)
        code |= run_one(dir, argv[i]);
    return code ? DLS_EXIT_FAIL : DLS_EXIT_OK;
}
