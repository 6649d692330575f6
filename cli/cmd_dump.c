/* daolease dump — print a medium's records (cli.md: `dump`, "JSON output
 * shapes"; stream-format.md: cursor results).
 *
 *   daolease dump PATH [--keyring K] [--from POS] [--follow] [--json | --human]
 *
 * One row per record (one per fact of a batch envelope, with "index" after
 * "position": cli.md rev 4), read through a cursor opened for reading (no lock,
 * never truncates): as JSON Lines
 *   {"position":7,"kind":…,"author":…,"verified":…,"why":…,"fact":…}
 * (keys in that order, the fact through the JSON mapping), or as one
 * readable line per record. The cursor's answers decide the rest:
 *   ok               a row;
 *   blocked          stop, exit 0 (with --follow: ask again every 100 ms
 *                    until end, SIGINT or SIGTERM);
 *   end              the seal's row, exit 0;
 *   gap              a note on stderr naming the evicted span, continue;
 *   transport-error  one line on stderr naming file, position, byte offset
 *                    and reason, exit 1.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/cli.h"
#include "cli/proc.h"
#include "cli/media.h"
#include "daolease/attrib.h"
#include "daolease/stream.h"
#include "cli/json/json.h"
#include "resolver/dump.h"

/* How often --follow asks a blocked cursor again. */
#define FOLLOW_POLL_NS 100000000L
/* Human output shows at most this many bytes of a record it cannot decode. */
#define HUMAN_HEX_MAX 32

static const char usage_text[] =
    "usage: daolease dump PATH [--keyring K] [--from POS] [--follow] [--json | --human]\n"
    "\n"
    "Prints each record of the medium PATH (a stream file, a segmented\n"
    "directory or a redis://host:port/key URL), oldest first: its position, its\n"
    "kind (fact, envelope, seal, malformed), its author, whether the author is\n"
    "verified and why not, and the fact. A batch envelope prints one row per\n"
    "fact, kind batch, with its index (POS.INDEX in human output).\n"
    "\n"
    "  --keyring K  verify envelopes against the keyring file K (without it\n"
    "               every envelope shows why \"unknown-author\")\n"
    "  --from POS   start at position POS (default 0)\n"
    "  --follow     at the end of what is written, wait for more (asks again\n"
    "               every 100 ms) until the seal, SIGINT or SIGTERM\n"
    "  --json       one JSON object a line (cli.md's shape):\n"
    "               {\"position\":N,\"kind\":...,\"author\":...,\"verified\":...,\n"
    "                \"why\":...,\"fact\":...} (a batch's facts: \"index\":I after\n"
    "                \"position\")\n"
    "  --human      one readable line a record\n"
    "\n"
    "Default: --human on a terminal, --json otherwise. A gap (records evicted\n"
    "before they were read) is noted on stderr and the dump goes on. Exit 0\n"
    "when everything written was shown, 1 when the medium cannot be read,\n"
    "2 for usage errors.\n";

typedef struct dump_opts {
    const char *path;
    const char *keyring;
    uint64_t from;
    bool follow;
    int json; /* 1 JSON Lines, 0 human, -1 decide by isatty */
} dump_opts;


/* ---- arguments ------------------------------------------------------------ */

static int parse_u64(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, dump_opts *o)
{
    memset(o, 0, sizeof *o);
    o->json = -1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int bad = 0;
        if (!strcmp(a, "--follow")) {
            o->follow = true;
        } else if (!strcmp(a, "--json") || !strcmp(a, "--human")) {
            int want = a[2] == 'j';
            if (o->json >= 0 && o->json != want) {
                dls_cli_error("dump", "--json and --human exclude each other (see 'daolease "
                                      "dump --help')");
                return -1;
            }
            o->json = want;
        } else if ((v = dls_cli_opt_value("dump", argc, argv, &i, "--keyring", &bad))) {
            o->keyring = v;
        } else if (!bad && (v = dls_cli_opt_value("dump", argc, argv, &i, "--from", &bad))) {
            if (parse_u64(v, &o->from)) {
                dls_cli_error("dump", "--from needs a position (a non-negative integer)");
                return -1;
            }
        } else if (bad) {
            return -1;
        } else if (a[0] == '-' && a[1]) {
            dls_cli_error("dump", "unknown option %.*s (see 'daolease dump --help')",
                          (int)strcspn(a, "="), a);
            return -1;
        } else if (o->path) {
            dls_cli_error("dump", "one PATH only, got %s too (see 'daolease dump --help')", a);
            return -1;
        } else {
            o->path = a;
        }
    }
    if (!o->path) {
        dls_cli_error("dump", "PATH is missing (see 'daolease dump --help')");
        return -1;
    }
    if (o->json < 0)
        o->json = isatty(STDOUT_FILENO) ? 0 : 1;
    return 0;
}

/* ---- rows ----------------------------------------------------------------- */

/* The fact's JSON; on failure (e.g. nested deeper than the mapping allows)
 * JSON null and a note on stderr, so the row keeps its shape. */
static int put_fact(dls_jbuf *b, const dls_dump_row *row, const char *path, uint64_t pos)
{
    if (!row->has_fact)
        return dls_jbuf_puts(b, "null");
    dls_where w = {0};
    int rc = dls_json_emit(b, row->fact.p, row->fact.n, &w);
    if (rc == DLS_ERR_NOMEM)
        return rc;
    if (rc) {
        dls_cli_error("dump", "%s: position %" PRIu64 ": fact not shown: %s", path, pos,
                      w.reason ? w.reason : dls_strerror(rc));
        return dls_jbuf_puts(b, "null");
    }
    return 0;
}

static int json_row(dls_jbuf *b, uint64_t pos, const dls_dump_row *row, const char *path)
{
    int rc = dls_jbuf_puts(b, "{\"position\":");
    rc = rc ? rc : dls_jbuf_uint(b, pos);
    if (row->has_index) { /* a fact of a batch: (position, index), cli.md rev 4 */
        rc = rc ? rc : dls_jbuf_puts(b, ",\"index\":");
        rc = rc ? rc : dls_jbuf_uint(b, row->index);
    }
    rc = rc ? rc : dls_jbuf_puts(b, ",\"kind\":");
    rc = rc ? rc : dls_jbuf_string(b, (const uint8_t *)row->kind, strlen(row->kind));
    rc = rc ? rc : dls_jbuf_puts(b, ",\"author\":");
    if (!rc)
        rc = row->has_author ? dls_jbuf_string(b, row->author.p, row->author.n)
                             : dls_jbuf_puts(b, "null");
    rc = rc ? rc : dls_jbuf_puts(b, row->verified ? ",\"verified\":true" : ",\"verified\":false");
    rc = rc ? rc : dls_jbuf_puts(b, ",\"why\":");
    if (!rc)
        rc = row->why ? dls_jbuf_string(b, (const uint8_t *)row->why, strlen(row->why))
                      : dls_jbuf_puts(b, "null");
    rc = rc ? rc : dls_jbuf_puts(b, ",\"fact\":");
    rc = rc ? rc : put_fact(b, row, path, pos);
    return rc ? rc : dls_jbuf_puts(b, "}");
}

/* An author as typed when it is plain printable ASCII, else a JSON string. */
static int put_name(dls_jbuf *b, dls_bytes name)
{
    for (size_t i = 0; i < name.n; i++)
        if (name.p[i] < 0x21 || name.p[i] > 0x7e || name.p[i] == '"')
            return dls_jbuf_string(b, name.p, name.n);
    return dls_jbuf_put(b, (const char *)name.p, name.n);
}

/* Appends spaces until the line since `from` is `width` bytes long (at
 * least two spaces). */
static int pad(dls_jbuf *b, size_t from, size_t width)
{
    size_t used = b->n - from;
    size_t k = used + 2 > width ? 2 : width - used;
    static const char spaces[] = "                                ";
    return dls_jbuf_put(b, spaces, k < sizeof spaces - 1 ? k : sizeof spaces - 1);
}

/* POS  KIND  AUTHOR  STATUS  FACT, e.g.
 *      0  fact      -            bare-fact       {"dao.lease/event":"tick",...}
 *      1  envelope  worker-east  verified        {"dao.lease/status":"proposed",...}
 *      3  envelope  mallory      signature       {...}
 *      4  malformed -            malformed       5 bytes: 92c30102c0
 *      2  seal */
static int human_row(dls_jbuf *b, uint64_t pos, const dls_dump_row *row,
                     const uint8_t *rec, size_t n, const char *path)
{
    char head[64];
    if (row->has_index) /* a fact of a batch: POS.INDEX, the kind one column on */
        snprintf(head, sizeof head, "%6" PRIu64 ".%-2" PRIu32 " %-9s ", pos, row->index,
                 row->kind);
    else
        snprintf(head, sizeof head, "%6" PRIu64 "  %-9s ", pos, row->kind);
    int rc = dls_jbuf_puts(b, head);
    if (!rc && !strcmp(row->kind, "seal")) {
        while (b->n && b->p[b->n - 1] == ' ')
            b->p[--b->n] = 0; /* no trailing blanks */
        return 0;
    }
    size_t col = b->n;
    if (!rc)
        rc = row->has_author ? put_name(b, row->author) : dls_jbuf_puts(b, "-");
    rc = rc ? rc : pad(b, col, 13);
    col = b->n;
    rc = rc ? rc : dls_jbuf_puts(b, row->verified ? "verified" : row->why ? row->why : "unverified");
    rc = rc ? rc : pad(b, col, 16);
    if (rc)
        return rc;
    if (row->has_fact)
        return put_fact(b, row, path, pos);
    /* Nothing decodable: show the start of the payload in hex. */
    char hex[HUMAN_HEX_MAX * 2 + 40];
    size_t k = n < HUMAN_HEX_MAX ? n : HUMAN_HEX_MAX;
    size_t at = (size_t)snprintf(hex, sizeof hex, "%zu bytes: ", n);
    sodium_bin2hex(hex + at, sizeof hex - at, rec, k);
    if (k < n)
        strcat(hex, "...");
    return dls_jbuf_puts(b, hex);
}

/* ---- the loop ------------------------------------------------------------- */

typedef struct dumper {
    const dump_opts *o;
    dls_medium *m;
    dls_cursor *c;
    dls_keyring *kr;
    dls_dump_attrib *attrib; /* bound to the medium id at the first record */
    dls_jbuf line;
} dumper;

static int print_one(dumper *d, uint64_t pos, const dls_dump_row *rowp, const uint8_t *rec,
                     size_t n)
{
    const dls_dump_row row = *rowp;
    d->line.n = 0;
    if (d->line.p)
        d->line.p[0] = 0;
    int rc = d->o->json ? json_row(&d->line, pos, &row, d->o->path)
                        : human_row(&d->line, pos, &row, rec, n, d->o->path);
    if (rc) {
        dls_cli_error("dump", "%s: position %" PRIu64 ": %s", d->o->path, pos,
                      dls_strerror(rc));
        return rc;
    }
    if (fwrite(d->line.p, 1, d->line.n, stdout) != d->line.n || putchar('\n') == EOF) {
        dls_cli_error("dump", "stdout: %s", strerror(errno));
        return DLS_ERR_IO;
    }
    return 0;
}

/* The rows of one record: one, or one per fact of a batch (cli.md rev 4). */
static int print_row(dumper *d, uint64_t pos, const uint8_t *rec, size_t n, bool seal)
{
    dls_dump_row row;
    if (seal) {
        memset(&row, 0, sizeof row);
        row.kind = "seal";
        return print_one(d, pos, &row, rec, n);
    }
    if (!d->attrib) {
        int rc = dls_dump_attrib_new(&d->attrib, dls_medium_id(d->m), d->kr);
        if (rc) {
            dls_cli_error("dump", "%s: %s", d->o->path, dls_strerror(rc));
            return rc;
        }
    }
    dls_dump_rows rows;
    dls_dump_attrib_rows(d->attrib, rec, n, &rows);
    while (dls_dump_rows_next(&rows, &row)) {
        int rc = print_one(d, pos, &row, rec, n);
        if (rc)
            return rc;
    }
    return 0;
}

static void report_gap(const dumper *d, const dls_record *r)
{
    if (r->position == r->gap_from + 1)
        dls_cli_error("dump", "%s: gap: position %" PRIu64 " was evicted unread; "
                              "continuing at %" PRIu64,
                      d->o->path, r->gap_from, r->position);
    else
        dls_cli_error("dump", "%s: gap: positions %" PRIu64 "-%" PRIu64 " were evicted "
                              "unread; continuing at %" PRIu64,
                      d->o->path, r->gap_from, r->position - 1, r->position);
}

static void report_error(const dumper *d, const dls_record *r, const dls_where *w)
{
    const char *why = w->reason ? w->reason : "the medium cannot be read";
    if (w->sys_errno)
        dls_cli_error("dump", "%s: position %" PRIu64 ": byte %" PRIu64 ": %s (%s)",
                      d->o->path, r->position, w->offset, why, strerror(w->sys_errno));
    else
        dls_cli_error("dump", "%s: position %" PRIu64 ": byte %" PRIu64 ": %s", d->o->path,
                      r->position, w->offset, why);
    /* A hole in a segmented medium (stream-format.md rev 4): gap_from is
     * the first position after it (docs/streams.md). */
    if (r->gap_from > r->position)
        dls_cli_error("dump", "%s: positions %" PRIu64 "-%" PRIu64 " are missing", d->o->path,
                      r->position, r->gap_from - 1);
}

/* Sleeps one poll interval unless a stop was requested; never busy-spins. */
static void follow_wait(void)
{
    struct timespec ts = {0, FOLLOW_POLL_NS};
    if (!dls_cli_stop_requested())
        nanosleep(&ts, NULL); /* EINTR (a stop signal) just ends the wait */
}

/* Blocked polls of --follow between two checks of the file's end (2 s). */
#define FOLLOW_CHECK_EVERY 20

static int dump_loop(dumper *d)
{
    unsigned stalls = 0;
    for (;;) {
        dls_record r;
        dls_where w = {0};
        dls_next nx = dls_cursor_next(d->c, &r, &w);
        switch (nx) {
        case DLS_NEXT_OK:
            stalls = 0;
            if (print_row(d, r.position, r.p, r.n, false))
                return DLS_EXIT_FAIL;
            break;
        case DLS_NEXT_END:
            /* A --from beyond the seal shows nothing of it. */
            if (r.position >= d->o->from && print_row(d, r.position, NULL, 0, true))
                return DLS_EXIT_FAIL;
            return DLS_EXIT_OK;
        case DLS_NEXT_GAP:
            fflush(stdout);
            report_gap(d, &r);
            break;
        case DLS_NEXT_ERROR:
            fflush(stdout);
            report_error(d, &r, &w);
            return DLS_EXIT_FAIL;
        case DLS_NEXT_BLOCKED:
            /* docs/cli.md `dump`: a reader stops at a bad record; damage
             * (CRC-valid records after it) is an error, not the end */
            if (!d->o->follow || ++stalls % FOLLOW_CHECK_EVERY == 0) {
                fflush(stdout);
                if (dls_cli_check_end("dump", d->o->path))
                    return DLS_EXIT_FAIL;
            }
            if (!d->o->follow || dls_cli_stop_requested())
                return DLS_EXIT_OK;
            if (fflush(stdout) == EOF) {
                dls_cli_error("dump", "stdout: %s", strerror(errno));
                return DLS_EXIT_FAIL;
            }
            follow_wait();
            if (dls_cli_stop_requested())
                return DLS_EXIT_OK;
            break;
        }
    }
}

static int load_keyring(const char *path, dls_keyring **kr)
{
    dls_where w = {0};
    int rc = dls_keyring_load(kr, path, &w);
    if (!rc)
        return 0;
    if (rc == DLS_ERR_IO && w.sys_errno)
        dls_cli_error("dump", "%s: %s (%s)", path,
                      w.reason ? w.reason : dls_strerror(rc), strerror(w.sys_errno));
    else if (w.line)
        dls_cli_error("dump", "%s: line %" PRIu64 ": column %" PRIu64 ": %s", path, w.line,
                      w.offset, w.reason ? w.reason : dls_strerror(rc));
    else
        dls_cli_error("dump", "%s: %s", path, w.reason ? w.reason : dls_strerror(rc));
    return rc;
}

int dls_cmd_dump(int argc, char **argv)
{
    if (dls_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return DLS_EXIT_OK;
    }
    dump_opts o;
    if (parse_args(argc, argv, &o))
        return DLS_EXIT_USAGE;
    dumper d = {.o = &o};
    int status = DLS_EXIT_FAIL;
    if (o.keyring && load_keyring(o.keyring, &d.kr))
        goto out;
    if (dls_cli_open(&d.m, "dump", o.path, DLS_OPEN_READ, false, DLS_SYNC_DATA))
        goto out;
    int rc = dls_cursor_new(&d.c, d.m, o.from);
    if (rc) {
        dls_cli_error("dump", "%s: %s", o.path, dls_strerror(rc));
        goto out;
    }
    if (o.follow)
        dls_cli_catch_stop();
    status = dump_loop(&d);
    if (fflush(stdout) == EOF || ferror(stdout)) {
        dls_cli_error("dump", "stdout: write failed");
        status = DLS_EXIT_FAIL;
    }
out:
    dls_jbuf_free(&d.line);
    dls_dump_attrib_del(d.attrib);
    dls_cursor_del(d.c);
    dls_medium_del(d.m);
    dls_keyring_del(d.kr);
    return status;
}
