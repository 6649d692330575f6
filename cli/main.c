/* daolease — one binary, subcommands in the style of git. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#ifndef DLS_VERSION
#define DLS_VERSION "unknown"
#endif

struct subcommand {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
};

static const struct subcommand commands[] = {
    {"fact", dls_cmd_fact, "encode or decode facts (JSON Lines <-> msgpack)"},
    {"keygen", dls_cmd_keygen, "make a key pair and print its keyring line"},
    {"stream", dls_cmd_stream, "create or seal a medium"},
    {"append", dls_cmd_append, "append facts read as JSON Lines to a medium"},
    {"dump", dls_cmd_dump, "print a medium's records"},
    {"judge", dls_cmd_judge, "run a judge as a process"},
    {"run", dls_cmd_run, "run a command while holding a lease"},
    {"audit", dls_cmd_audit, "replay a journal and its media, and judge the judge"},
    {"status", dls_cmd_status, "list the live leases now, from the journal and media"},
    {"watch", dls_cmd_watch, "follow the journal: grants, refusals, lapses as written"},
    {"serve", dls_cmd_serve, "serve the live page and /metrics from the files (read-only)"},
    {"demo", dls_cmd_demo, "the main job: a judge and agents, kills, an audit"},
    {"bench", dls_cmd_bench, "the performance harness"},
};

void dls_cli_error(const char *sub, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "daolease %s: ", sub);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int dls_cli_bad_option(const char *sub, int c, char **argv)
{
    char opt[3] = {'-', (char)optopt, 0};
    const char *name = optopt ? opt : argv[optind - 1];
    int n = (int)strcspn(name, "="); /* the name only: a value may hold a password */
    if (c == ':')
        dls_cli_error(sub, "option %s needs a value (see 'daolease %s --help')",
                      argv[optind - 1], sub);
    else
        dls_cli_error(sub, "unknown option %.*s (see 'daolease %s --help')", n, name, sub);
    return DLS_EXIT_USAGE;
}

int dls_cli_exact_options(const char *sub, int argc, char **argv, const struct option *opts,
                          int in_order)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--"))
            return 0;
        if (a[0] != '-' || !a[1]) {
            if (in_order)
                return 0;
            continue;
        }
        if (a[1] != '-') /* short options take no values here */
            continue;
        size_t n = strcspn(a + 2, "=");
        const struct option *o = opts;
        while (o->name && (strlen(o->name) != n || strncmp(o->name, a + 2, n)))
            o++;
        if (!o->name) { /* the name only: a value may hold a password */
            dls_cli_error(sub, "unknown option %.*s (see 'daolease %s --help')", (int)(n + 2), a,
                          sub);
            return DLS_EXIT_USAGE;
        }
        if (o->has_arg == required_argument && !a[2 + n])
            i++;
    }
    return 0;
}

const char *dls_cli_opt_value(const char *sub, int argc, char **argv, int *i, const char *name,
                              int *bad)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) || (a[n] && a[n] != '='))
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (*i + 1 >= argc) {
        dls_cli_error(sub, "option %s needs a value (see 'daolease %s --help')", a, sub);
        *bad = 1;
        return NULL;
    }
    return argv[++*i];
}

int dls_cli_usage(const char *sub, const char *problem)
{
    dls_cli_error(sub, "%s (see 'daolease %s --help')", problem, sub);
    return DLS_EXIT_USAGE;
}

int dls_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--"))
            return 0;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    }
    return 0;
}

static void usage(FILE *to)
{
    fprintf(to, "usage: daolease [--version] [--help] <command> [<args>]\n\n"
                "Leases as signed msgpack facts on append-only streams.\n\n"
                "commands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(to, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(to, "\nRun 'daolease <command> --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs("daolease: a command is required (see 'daolease --help')\n", stderr);
        return DLS_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return DLS_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("daolease %s\n", DLS_VERSION);
        return DLS_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    dls_cli_error(argv[1], "unknown command (see 'daolease --help')");
    return DLS_EXIT_USAGE;
}
