/* daolease stream — create or seal a medium (cli.md).
 *
 *   daolease stream create PATH [--segmented] [--segment-bytes N]
 *                               [--retain N] [--retain-bytes N]
 *   daolease stream seal PATH
 *   daolease stream repair PATH [--yes]
 *
 * `create` prints the new medium's id as 32 lower-case hex digits. Errors
 * are one line on stderr naming the file, the byte offset and the reason;
 * exit 2 for usage, 1 for anything else. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/cli.h"
#include "daolease/redis.h"
#include "daolease/jetstream.h"
#include "daolease/stream.h"

static void usage(FILE *to)
{
    fprintf(to,
            "usage: daolease stream create PATH [--segmented] [--segment-bytes N]\n"
            "                                   [--retain N] [--retain-bytes N]\n"
            "       daolease stream seal PATH\n"
            "       daolease stream repair PATH [--yes]\n"
            "\n"
            "create   creates a medium atomically (never over an existing path) and\n"
            "         prints its id (32 hex digits). A plain stream file by default;\n"
            "         --segmented makes a directory of segments instead:\n"
            "           --segment-bytes N  roll to a new segment before one would pass\n"
            "                              N bytes (default 64M)\n"
            "           --retain N         keep at most N segments (default: all)\n"
            "           --retain-bytes N   keep at most N bytes of segments (default: all)\n"
            "         N takes an optional suffix k, M or G (powers of 1024).\n"
            "seal     appends the seal: later appends are refused, readers see the end.\n"
            "repair   the one way to cut a bad tail that still holds CRC-valid records\n"
            "         (a judge refuses to start on such a journal): the bytes from the\n"
            "         bad record to the end are saved to PATH.torn-OFFSET, then cut;\n"
            "         prints the position, the bytes and the CRC-valid records moved.\n"
            "         Stop the judge (or writer) first. Asks first on a terminal;\n"
            "           --yes    do not ask (required when stdin is not a terminal)\n");
}

/* Parses a byte count or a count, with an optional k/M/G suffix. */
static int parse_size(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    uint64_t mul = 1;
    if (*end == 'k' || *end == 'K')
        mul = 1024, end++;
    else if (*end == 'm' || *end == 'M')
        mul = 1024 * 1024, end++;
    else if (*end == 'g' || *end == 'G')
        mul = 1024ull * 1024 * 1024, end++;
    if (*end || (v && mul > UINT64_MAX / v))
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

/* One line: the file, where (a byte offset where the content is at fault)
 * and why. */
static int fail(const char *path, int rc, const dls_where *w)
{
    const char *why = w->reason ? w->reason : dls_strerror(rc);
    bool at = rc == DLS_ERR_CORRUPT || rc == DLS_ERR_HEADER || rc == DLS_ERR_MEDIUM_ID;
    if (at && w->sys_errno)
        dls_cli_error("stream", "%s: byte %" PRIu64 ": %s (%s)", path, w->offset, why,
                      strerror(w->sys_errno));
    else if (at)
        dls_cli_error("stream", "%s: byte %" PRIu64 ": %s", path, w->offset, why);
    else if (w->sys_errno)
        dls_cli_error("stream", "%s: %s (%s)", path, why, strerror(w->sys_errno));
    else
        dls_cli_error("stream", "%s: %s", path, why);
    return rc == DLS_ERR_INVAL ? DLS_EXIT_USAGE : DLS_EXIT_FAIL;
}

/* The position of the seal of a sealed medium (for the message). */
static int seal_position(const char *path, uint64_t *pos)
{
    dls_medium *m = NULL;
    dls_cursor *c = NULL;
    int found = -1;
    if (dls_medium_open(&m, path, DLS_OPEN_READ, NULL, NULL) == 0 &&
        dls_cursor_new(&c, m, 0) == 0) {
        dls_record r;
        dls_next n;
        while ((n = dls_cursor_next(c, &r, NULL)) == DLS_NEXT_OK || n == DLS_NEXT_GAP) {
        }
        if (n == DLS_NEXT_END) {
            *pos = r.position;
            found = 0;
        }
    }
    dls_cursor_del(c);
    dls_medium_del(m);
    return found;
}

static int cmd_create(int argc, char **argv)
{
    const char *path = NULL;
    bool segmented = false, seg_opts = false;
    dls_medium_settings s;
    dls_medium_settings_default(&s);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        uint64_t *dst = NULL;
        int bad = 0;
        if (!strcmp(a, "--segmented")) {
            segmented = true;
            continue;
        }
        static const char *const names[] = {"--segment-bytes", "--retain", "--retain-bytes"};
        uint64_t *const dsts[] = {&s.segment_bytes, &s.retain_segments, &s.retain_bytes};
        for (size_t k = 0; k < 3 && !dst && !bad; k++)
            if ((v = dls_cli_opt_value("stream", argc, argv, &i, names[k], &bad))) {
                dst = dsts[k];
                a = names[k];
            }
        if (bad)
            return DLS_EXIT_USAGE;
        if (dst) {
            if (parse_size(v, dst)) {
                dls_cli_error("stream", "%s needs a non-negative number (e.g. 1048576 or 1M)", a);
                return DLS_EXIT_USAGE;
            }
            if (*dst == 0 && dst != &s.segment_bytes) {
                /* a bound of 0 would keep nothing; no bound is the default */
                dls_cli_error("stream", "create: %s 0 keeps nothing: leave %s out for no bound",
                              a, a);
                return DLS_EXIT_USAGE;
            }
            seg_opts = true;
            continue;
        }
        if (a[0] == '-' && a[1]) {
            dls_cli_error("stream", "create: unknown option %.*s (see 'daolease stream --help')",
                          (int)strcspn(a, "="), a);
            return DLS_EXIT_USAGE;
        }
        if (path) {
            dls_cli_error("stream", "create: one PATH only (see 'daolease stream --help')");
            return DLS_EXIT_USAGE;
        }
        path = a;
    }
    if (!path) {
        dls_cli_error("stream", "create: PATH is missing (see 'daolease stream --help')");
        return DLS_EXIT_USAGE;
    }
    if (seg_opts && !segmented) {
        dls_cli_error("stream", "create: --segment-bytes, --retain and --retain-bytes "
                                "need --segmented");
        return DLS_EXIT_USAGE;
    }
    if (segmented && s.segment_bytes < DLS_STREAM_HEADER_LEN + DLS_RECORD_HEADER_LEN + 1) {
        dls_cli_error("stream", "create: --segment-bytes must be at least %u",
                      DLS_STREAM_HEADER_LEN + DLS_RECORD_HEADER_LEN + 1);
        return DLS_EXIT_USAGE;
    }
    dls_medium *m = NULL;
    dls_where w;
    memset(&w, 0, sizeof w);
    bool url = dls_redis_is_url(path);
    if (dls_jetstream_is_url(path) && segmented) {
        dls_cli_error("stream", "create: a nats:// medium is not segmented; bound it with "
                                "?max_msgs=N in the URL");
        return DLS_EXIT_USAGE;
    }
    if (url && segmented) {
        dls_cli_error("stream", "create: a redis:// medium is not segmented; bound it with "
                                "?maxlen=N in the URL");
        return DLS_EXIT_USAGE;
    }
    int rc = url ? dls_redis_create(&m, path, NULL, &w)
                 : dls_medium_create(&m, segmented ? DLS_MEDIUM_SEGMENTED : DLS_MEDIUM_FILE,
                                     path, &s, &w);
    if (rc)
        return fail(path, rc, &w);
    char hex[2 * DLS_MEDIUM_ID_LEN + 1];
    sodium_bin2hex(hex, sizeof hex, dls_medium_id(m), DLS_MEDIUM_ID_LEN);
    printf("%s\n", hex);
    dls_medium_del(m);
    return fflush(stdout) == 0 ? DLS_EXIT_OK : DLS_EXIT_FAIL;
}

static int cmd_seal(int argc, char **argv)
{
    if (argc != 2 || argv[1][0] == '-') {
        dls_cli_error("stream", "seal: exactly one PATH (see 'daolease stream --help')");
        return DLS_EXIT_USAGE;
    }
    const char *path = argv[1];
    dls_medium *m = NULL;
    dls_where w;
    memset(&w, 0, sizeof w);
    int rc = dls_redis_is_url(path) ? dls_redis_open(&m, path, DLS_OPEN_APPEND, NULL, &w)
                                    : dls_medium_open(&m, path, DLS_OPEN_APPEND, NULL, &w);
    dls_torn_cut cut;
    if (!rc && dls_medium_last_cut(m, &cut) && cut.valid_records > 0)
        /* stream-format.md rev 4: a cut that held CRC-valid records */
        dls_cli_error("stream",
                      "%s: warning: cut a torn tail at byte %" PRIu64 ": %" PRIu64
                      " bytes holding %s%" PRIu64 " CRC-valid records (acknowledged records "
                      "may be among them: a damaged record, not a crash); saved in %s",
                      path, cut.offset, cut.bytes, cut.capped ? "at least " : "",
                      cut.valid_records, cut.sidecar);
    if (!rc)
        rc = dls_medium_seal(m, &w);
    dls_medium_del(m);
    uint64_t pos;
    if (rc == DLS_ERR_SEALED && seal_position(path, &pos) == 0) {
        dls_cli_error("stream", "%s: position %" PRIu64 ": already sealed", path, pos);
        return DLS_EXIT_FAIL;
    }
    return rc ? fail(path, rc, &w) : DLS_EXIT_OK;
}

/* Asks on the terminal; true for "y" or "yes". */
static bool confirm(const char *path, const dls_where *w)
{
    fprintf(stderr,
            "daolease stream: %s: the record at byte %" PRIu64 " is bad and %" PRIu64
            " CRC-valid record%s follow%s it (acknowledged records may be among them).\n"
            "Move everything from byte %" PRIu64 " to a sidecar and cut it? [y/N] ",
            path, w->offset, w->count, w->count == 1 ? "" : "s", w->count == 1 ? "s" : "",
            w->offset);
    fflush(stderr);
    char line[16];
    if (!fgets(line, sizeof line, stdin))
        return false;
    line[strcspn(line, "\r\n")] = 0;
    return !strcasecmp(line, "y") || !strcasecmp(line, "yes");
}

/* What a repair cut (or that it found nothing to cut). */
static int report_cut(const char *path, const dls_torn_cut *cut, const char *sidecar)
{
    if (!cut->cuts)
        printf("%s: nothing to repair (no bad record at the end)\n", path);
    else
        printf("%s: moved the tail at byte %" PRIu64 " to %s: %" PRIu64
               " bytes, %s%" PRIu64 " CRC-valid record%s\n",
               path, cut->offset, sidecar ? sidecar : "a sidecar", cut->bytes,
               cut->capped ? "at least " : "", cut->valid_records,
               cut->valid_records == 1 ? "" : "s");
    return fflush(stdout) == 0 ? DLS_EXIT_OK : DLS_EXIT_FAIL;
}

/* cli.md, Operators (revision 5): `stream repair PATH`. First an
 * exclusive open, which cuts a plain torn write (no CRC-valid record) as
 * any writer does and refuses a tail holding CRC-valid records; that one
 * is moved only when the operator says so (--yes, or "y" on a terminal). */
static int cmd_repair(int argc, char **argv)
{
    const char *path = NULL;
    bool yes = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--yes"))
            yes = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return dls_cli_usage("stream", "repair: unknown option");
        else if (path)
            return dls_cli_usage("stream", "repair: one PATH only");
        else
            path = argv[i];
    }
    if (!path)
        return dls_cli_usage("stream", "repair: PATH is missing");
    if (dls_redis_is_url(path) || dls_jetstream_is_url(path))
        return dls_cli_usage("stream", "repair: PATH is a stream file or segmented directory "
                                       "(remote media have no torn tails)");
    dls_medium_settings s;
    dls_medium_settings_default(&s);
    s.exclusive = true;
    s.lock_timeout_ms = 0;
    dls_medium *m = NULL;
    dls_where w = {0};
    int rc = dls_medium_open(&m, path, DLS_OPEN_APPEND, &s, &w);
    if (rc == DLS_ERR_LOCKED) {
        dls_cli_error("stream", "%s: a writer holds this medium (a running judge?): stop it "
                                "first", path);
        return DLS_EXIT_FAIL;
    }
    if (!rc) {
        dls_torn_cut cut = {0};
        (void)dls_medium_last_cut(m, &cut);
        int ex = report_cut(path, &cut, cut.sidecar);
        dls_medium_del(m);
        return ex;
    }
    if (rc != DLS_ERR_VALID_TAIL)
        return fail(path, rc, &w);
    if (!yes && !isatty(STDIN_FILENO)) {
        dls_cli_error("stream", "repair: %s: byte %" PRIu64 " begins a bad record followed by %"
                                PRIu64 " CRC-valid record%s; stdin is not a terminal: pass "
                                "--yes to move them to a sidecar",
                      path, w.offset, w.count, w.count == 1 ? "" : "s");
        return DLS_EXIT_USAGE;
    }
    if (!yes && !confirm(path, &w)) {
        dls_cli_error("stream", "%s: not repaired: nothing changed", path);
        return DLS_EXIT_FAIL;
    }
    dls_torn_cut cut;
    char *sidecar = NULL;
    memset(&w, 0, sizeof w);
    s.exclusive = false;
    rc = dls_medium_repair(path, &s, &cut, &sidecar, &w);
    if (rc)
        return fail(path, rc, &w);
    int ex = report_cut(path, &cut, sidecar);
    free(sidecar);
    return ex;
}

int dls_cmd_stream(int argc, char **argv)
{
    if (dls_cli_wants_help(argc, argv)) {
        usage(stdout);
        return DLS_EXIT_OK;
    }
    if (argc < 2)
        return dls_cli_usage("stream", "create, seal or repair is required");
    if (!strcmp(argv[1], "create"))
        return cmd_create(argc - 1, argv + 1);
    if (!strcmp(argv[1], "seal"))
        return cmd_seal(argc - 1, argv + 1);
    if (!strcmp(argv[1], "repair"))
        return cmd_repair(argc - 1, argv + 1);
    dls_cli_error("stream", "unknown action '%s' (create, seal or repair; see 'daolease stream "
                            "--help')", argv[1]);
    return DLS_EXIT_USAGE;
}
