/* daolease command — shared declarations of the subcommands. */
#ifndef DLS_CLI_H
#define DLS_CLI_H

#include <stdio.h>

/* Exit statuses shared by every subcommand (cli.md). */
#define DLS_EXIT_OK 0
#define DLS_EXIT_FAIL 1
#define DLS_EXIT_USAGE 2
/* `judge`: its configuration file is missing, unreadable or invalid
 * (sysexits.h EX_CONFIG; docs/service.md) */
#define DLS_EXIT_CONFIG 78

/* Each subcommand: argv[0] is the subcommand's name. */
int dls_cmd_fact(int argc, char **argv);
int dls_cmd_stream(int argc, char **argv);
int dls_cmd_append(int argc, char **argv);
int dls_cmd_dump(int argc, char **argv);
int dls_cmd_keygen(int argc, char **argv);
int dls_cmd_judge(int argc, char **argv);
int dls_cmd_run(int argc, char **argv);
int dls_cmd_audit(int argc, char **argv);
int dls_cmd_status(int argc, char **argv);
int dls_cmd_watch(int argc, char **argv);
int dls_cmd_serve(int argc, char **argv);
int dls_cmd_demo(int argc, char **argv);
int dls_cmd_bench(int argc, char **argv);

/* Prints "daolease SUB: FILE: position P: REASON" style errors, one line. */
void dls_cli_error(const char *sub, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* After getopt_long returned '?' or ':' (call it with opterr = 0 and an
 * optstring starting with ':'): prints one line naming the problem —
 * "unknown option --x" or "option --x needs a value" — and where help is,
 * and returns DLS_EXIT_USAGE (cli.md: usage errors exit 2; the full help
 * stays on --help). */
int dls_cli_bad_option(const char *sub, int c, char **argv);

/* A usage problem in one line ("--config is required"): prints
 * "daolease SUB: PROBLEM (see 'daolease SUB --help')", returns
 * DLS_EXIT_USAGE. */
int dls_cli_usage(const char *sub, const char *problem);

/* cli.md rev 5, One option dialect: getopt_long takes any unambiguous
 * prefix of a long option ("--jour" for "--journal"); the CLI refuses
 * abbreviations, as the commands that parse their own arguments do. Scans
 * argv as getopt_long will — a required value given without '=' is the
 * next argument, "--" ends the options and, with in_order (a "+"
 * optstring), so does the first operand — and answers the first long
 * option not spelt out as dls_cli_bad_option does ("unknown option
 * --jour"): DLS_EXIT_USAGE; 0 when every one is exact. Call it before the
 * getopt_long loop. */
struct option;
int dls_cli_exact_options(const char *sub, int argc, char **argv, const struct option *opts,
                          int in_order);

/* For the commands that parse their own arguments (cli.md rev 5, One
 * option dialect): the value of "--NAME VALUE" or "--NAME=VALUE" at
 * argv[*i], advancing *i past a separate value; NULL when argv[*i] is not
 * --NAME. A missing value (--NAME last) is said as dls_cli_bad_option says
 * it, and sets *bad. */
const char *dls_cli_opt_value(const char *sub, int argc, char **argv, int *i, const char *name,
                              int *bad);

/* True when argv holds -h or --help (anywhere before a "--"). */
int dls_cli_wants_help(int argc, char **argv);

#endif
