/* daolease append — append facts read as JSON Lines to a medium (cli.md:
 * `append`, "JSON mapping of facts"; attribution.md: envelopes).
 *
 *   daolease append PATH --as NAME --key FILE [--sync none|data|group] [--no-validate]
 *   daolease append PATH --bare [--sync none|data|group] [--no-validate]
 *
 * Each non-blank line of stdin is one JSON object: mapped to msgpack in the
 * shortest form (keys in the line's order), checked (a valid lease fact, or
 * a map with neither dispatch key; any msgpack map with --no-validate),
 * wrapped in an envelope signed for this medium's id (or written bare with
 * --bare) and appended. Each record's position is printed on its own line
 * once it is durable to the medium's sync policy.
 *
 * Lines are taken as they arrive: every complete line already read when
 * the previous records were acknowledged goes into one batch (one lock, one
 * sync), so a fast producer gets batch throughput and a slow one gets each
 * line appended as soon as it is written. Acknowledgement stays per line:
 * at the first bad line (or failed append) the lines before it are
 * appended and printed, the bad line and everything after it are not, and
 * one error line names the input line, the position and the reason (exit
 * 1). A batch the medium refuses is retried one record at a time so the
 * error names the exact line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/media.h"
#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/stream.h"
#include "cli/json/json.h"

/* The longest input line (a 65536-byte record as {"$bin": hex} is ~131 KiB). */
#define LINE_MAX_BYTES (1u << 20)
/* A batch holds at most this many records and bytes (well under R). */
#define BATCH_MAX_RECORDS 1024u
#define BATCH_MAX_BYTES (1u << 20)
#define READ_CHUNK 65536u

static const char usage_text[] =
    "usage: daolease append PATH --as NAME --key FILE [--sync none|data|group]\n"
    "                            [--no-validate]\n"
    "       daolease append PATH --bare [--sync none|data|group] [--no-validate]\n"
    "\n"
    "Reads facts as JSON Lines on stdin (one JSON object a line, in the JSON\n"
    "mapping of `daolease fact`: {\"$bin\": hex} for bytes, durations as maps\n"
    "such as {\"ms\": 3000}; blank lines skipped), appends each to the existing\n"
    "medium PATH (a stream file, a segmented directory or a redis:// URL) and\n"
    "prints its position, one line per fact, once it is durable.\n"
    "\n"
    "  --as NAME       the author: each fact is wrapped in an envelope signed\n"
    "  --key FILE      (or MACed) with NAME's secret key file for this medium\n"
    "                  (FILE must hold NAME's key, mode 0600; see keygen)\n"
    "  --bare          append the facts themselves, unsigned: for media whose\n"
    "                  readers attribute bare facts to the medium's party\n"
    "  --sync P        none, data (default: fdatasync per batch) or group\n"
    "  --no-validate   accept any JSON object (any msgpack map), not only\n"
    "                  valid lease facts (vocabulary.md rules 1-5)\n"
    "\n"
    "A defective lease fact is refused, naming the input line and the rule it\n"
    "breaks; a map with neither dao.lease/status nor dao.lease/event is not a\n"
    "lease fact and is accepted. The lines before a refused one stay appended\n"
    "(their positions were printed); nothing after it is read. Exit 0 when\n"
    "every line was appended, 1 on the first refused line or failed append,\n"
    "2 for usage errors.\n";

typedef struct append_opts {
    const char *path, *as, *key;
    bool bare, validate;
    dls_sync sync;
} append_opts;

/* ---- arguments ------------------------------------------------------------ */

static int parse_args(int argc, char **argv, append_opts *o)
{
    memset(o, 0, sizeof *o);
    o->validate = true;
    o->sync = DLS_SYNC_DATA;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        int bad = 0;
        if (!strcmp(a, "--bare")) {
            o->bare = true;
        } else if (!strcmp(a, "--no-validate")) {
            o->validate = false;
        } else if ((v = dls_cli_opt_value("append", argc, argv, &i, "--as", &bad))) {
            o->as = v;
        } else if (!bad && (v = dls_cli_opt_value("append", argc, argv, &i, "--key", &bad))) {
            o->key = v;
        } else if (!bad && (v = dls_cli_opt_value("append", argc, argv, &i, "--sync", &bad))) {
            if (dls_sync_parse(v, &o->sync)) {
                dls_cli_error("append", "--sync takes none, data or group, not '%s'", v);
                return -1;
            }
        } else if (bad) {
            return -1;
        } else if (a[0] == '-' && a[1]) {
            dls_cli_error("append", "unknown option %.*s (see 'daolease append --help')",
                          (int)strcspn(a, "="), a);
            return -1;
        } else if (o->path) {
            dls_cli_error("append", "one PATH only, got %s too (see 'daolease append --help')", a);
            return -1;
        } else {
            o->path = a;
        }
    }
    if (!o->path) {
        dls_cli_error("append", "PATH is missing (see 'daolease append --help')");
        return -1;
    }
    if (o->bare && (o->as || o->key)) {
        dls_cli_error("append", "--bare appends unsigned facts: it takes no --as or --key");
        return -1;
    }
    if (!o->bare && (!o->as || !o->key)) {
        dls_cli_error("append", "%s (signed facts need --as NAME and --key FILE; "
                                "unsigned ones need --bare)",
                      !o->as && !o->key ? "who is the author?"
                      : !o->as          ? "--as NAME is missing"
                                        : "--key FILE is missing");
        return -1;
    }
    if (o->as && !dls_name_valid((const uint8_t *)o->as, strlen(o->as))) {
        dls_cli_error("append", "--as %s: a name is 1-64 bytes, each in 0x21-0x7E or "
                                "0x80-0xFF",
                      o->as);
        return -1;
    }
    return 0;
}

static int load_secret(const append_opts *o, dls_secret **s)
{
    dls_where w = {0};
    int rc = dls_secret_load(s, o->key, &w);
    if (rc) {
        const char *why = w.reason ? w.reason : dls_strerror(rc);
        if (rc == DLS_ERR_IO && w.sys_errno)
            dls_cli_error("append", "%s: %s (%s)", o->key,
                      w.reason ? w.reason : dls_strerror(rc), strerror(w.sys_errno));
        else if (rc == DLS_ERR_KEYRING && w.line)
            dls_cli_error("append", "%s: line %" PRIu64 ": column %" PRIu64 ": %s", o->key,
                          w.line, w.offset, why);
        else
            dls_cli_error("append", "%s: %s", o->key, why);
        return rc;
    }
    if (strcmp(dls_secret_name(*s), o->as)) {
        dls_cli_error("append", "%s: holds the key of %s, not of %s (--as)", o->key,
                      dls_secret_name(*s), o->as);
        dls_secret_del(*s);
        *s = NULL;
        return DLS_ERR_INVAL;
    }
    return 0;
}

/* ---- reading lines -------------------------------------------------------- */

typedef struct reader {
    int fd;
    char *buf;
    size_t start, end, cap;
    bool eof;
    uint64_t lineno; /* of the last line handed out */
} reader;

/* True when a complete line (or a final one at EOF) is buffered. */
static bool next_line_pending(const reader *r)
{
    return r->start < r->end &&
           (r->eof || memchr(r->buf + r->start, '\n', r->end - r->start) != NULL);
}

/* Hands out the next complete line (a final line without newline once at
 * EOF), newline excluded, or returns false when more input is needed. */
static bool next_line(reader *r, char **line, size_t *n)
{
    if (!next_line_pending(r))
        return false;
    char *p = r->buf + r->start;
    char *nl = memchr(p, '\n', r->end - r->start);
    *line = p;
    *n = nl ? (size_t)(nl - p) : r->end - r->start;
    r->start += *n + (nl ? 1 : 0);
    r->lineno++;
    return true;
}

/* Reads what stdin has (blocking until something or EOF). 0, or -1 with a
 * message printed. */
static int read_more(reader *r)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->end -= r->start;
        r->start = 0;
    }
    if (r->end >= LINE_MAX_BYTES) {
        dls_cli_error("append", "stdin: line %" PRIu64 ": longer than %u bytes",
                      r->lineno + 1, LINE_MAX_BYTES);
        return -1;
    }
    if (r->cap - r->end < READ_CHUNK) {
        size_t cap = r->end + READ_CHUNK;
        char *b = realloc(r->buf, cap);
        if (!b) {
            dls_cli_error("append", "out of memory");
            return -1;
        }
        r->buf = b;
        r->cap = cap;
    }
    for (;;) {
        ssize_t got = read(r->fd, r->buf + r->end, r->cap - r->end);
        if (got > 0) {
            r->end += (size_t)got;
            return 0;
        }
        if (got == 0) {
            r->eof = true;
            return 0;
        }
        if (errno != EINTR) {
            dls_cli_error("append", "stdin: %s", strerror(errno));
            return -1;
        }
    }
}

/* ---- one line to one record ---------------------------------------------- */

typedef struct appender {
    const append_opts *o;
    dls_medium *m;
    dls_secret *secret;
    /* the batch */
    uint8_t *recs[BATCH_MAX_RECORDS];
    size_t lens[BATCH_MAX_RECORDS];
    uint64_t lines[BATCH_MAX_RECORDS];
    size_t count, bytes;
    bool have_next;   /* next_pos is known */
    uint64_t next_pos;
    uint64_t err_line; /* a refused input line (0: none) and why, reported */
    char err[512];     /* after the lines before it are appended */
} appender;

/* Keeps the message for a refused input line: it is printed once the lines
 * before it are appended (or not at all when one of those fails first). */
static int refuse(appender *a, uint64_t ln, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int refuse(appender *a, uint64_t ln, const char *fmt, ...)
{
    a->err_line = ln;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->err, sizeof a->err, fmt, ap);
    va_end(ap);
    return -1;
}

static bool is_map_header(uint8_t b)
{
    return (b & 0xf0) == 0x80 || b == 0xde || b == 0xdf;
}

/* Trims CR/LF and blanks at both ends; true when nothing is left. */
static bool blank(char **line, size_t *n)
{
    while (*n && ((*line)[*n - 1] == '\r' || (*line)[*n - 1] == ' ' || (*line)[*n - 1] == '\t'))
        --*n;
    while (*n && (**line == ' ' || **line == '\t')) {
        ++*line;
        --*n;
    }
    return *n == 0;
}

/* Checks the mapped msgpack mp[0..n) of input line `ln`; 0 or -1 (refused). */
static int check_fact(appender *a, uint64_t ln, const uint8_t *mp, size_t n)
{
    if (a->o->validate) {
        dls_fact f;
        dls_where w = {0};
        if (dls_fact_decode(mp, n, &f, &w))
            return refuse(a, ln, "defective fact, rule %d: %s (msgpack byte %" PRIu64 ")",
                          w.rule, w.reason ? w.reason : "invalid", w.offset);
    }
    if (!n || !is_map_header(mp[0]))
        return refuse(a, ln, "not a JSON object (every record is one msgpack map)");
    if (a->o->bare && dls_record_is_seal(mp, n))
        return refuse(a, ln, "this is the seal record; seal with 'daolease stream seal'");
    return 0;
}

/* The record for one fact: the fact itself (--bare) or its envelope. Takes
 * mp; on success *rec is malloc'd. */
static int make_record(appender *a, uint64_t ln, uint8_t *mp, size_t n, uint8_t **rec,
                       size_t *len)
{
    if (a->o->bare) {
        *rec = mp;
        *len = n;
    } else {
        size_t cap = dls_envelope_size(strlen(a->o->as), n, dls_secret_kind(a->secret));
        uint8_t *env = cap ? malloc(cap) : NULL;
        int rc = !cap ? DLS_ERR_TOOBIG
                 : !env
                     ? DLS_ERR_NOMEM
                     : dls_envelope_seal(a->secret, dls_medium_id(a->m), mp, n, env, cap, len);
        free(mp);
        if (rc) {
            free(env);
            return refuse(a, ln, "cannot sign the fact (%zu bytes): %s", n, dls_strerror(rc));
        }
        *rec = env;
    }
    if (*len > DLS_RECORD_MAX) {
        free(*rec);
        *rec = NULL;
        return refuse(a, ln, "the record would be %zu bytes, over the %u-byte limit", *len,
                      DLS_RECORD_MAX);
    }
    return 0;
}

/* Maps, checks and wraps one input line into the batch; 0 or -1 (refused). */
static int add_line(appender *a, uint64_t ln, char *line, size_t n)
{
    uint8_t *mp = NULL;
    size_t mlen = 0;
    dls_json_error e;
    memset(&e, 0, sizeof e);
    int rc = dls_json_to_msgpack(line, n, &mp, &mlen, &e);
    if (rc == DLS_ERR_JSON && e.offset)
        return refuse(a, ln, "invalid JSON at byte %" PRIu64 " of the line: %s", e.offset,
                      e.text);
    if (rc)
        return refuse(a, ln, "invalid JSON: %s", rc == DLS_ERR_JSON ? e.text : dls_strerror(rc));
    if (check_fact(a, ln, mp, mlen)) {
        free(mp);
        return -1;
    }
    uint8_t *rec;
    size_t len;
    if (make_record(a, ln, mp, mlen, &rec, &len))
        return -1;
    a->recs[a->count] = rec;
    a->lens[a->count] = len;
    a->lines[a->count] = ln;
    a->count++;
    a->bytes += len;
    return 0;
}

/* ---- appending ------------------------------------------------------------ */

/* Where the next record would go (for messages): the seal's position on a
 * sealed medium. False when the medium cannot be read. */
static bool next_position(appender *a, uint64_t *pos, bool *sealed)
{
    *sealed = false;
    if (a->have_next) {
        *pos = a->next_pos;
        return true;
    }
    dls_cursor *c = NULL;
    if (dls_cursor_new(&c, a->m, 0))
        return false;
    dls_record r;
    dls_next nx;
    while ((nx = dls_cursor_next(c, &r, NULL)) == DLS_NEXT_OK || nx == DLS_NEXT_GAP) {
    }
    dls_cursor_del(c);
    *pos = r.position;
    *sealed = nx == DLS_NEXT_END;
    return nx == DLS_NEXT_END || nx == DLS_NEXT_BLOCKED;
}

/* One error line for input line `ln`:
 *   daolease append: PATH: line N: position P: REASON
 * where P is the position the line's record would have taken (the seal's
 * on a sealed medium), omitted when the medium cannot tell. */
static void report_line(appender *a, uint64_t ln, const char *why, bool sealed_error)
{
    uint64_t pos;
    bool sealed;
    if (next_position(a, &pos, &sealed))
        dls_cli_error("append", "%s: line %" PRIu64 ": position %" PRIu64 "%s: %s", a->o->path,
                      ln, pos, sealed_error && sealed ? " (the seal)" : "", why);
    else
        dls_cli_error("append", "%s: line %" PRIu64 ": %s", a->o->path, ln, why);
}

static void report_append(appender *a, uint64_t ln, int rc, const dls_where *w)
{
    char why[400];
    const char *reason = w->reason ? w->reason : dls_strerror(rc);
    if (w->sys_errno)
        snprintf(why, sizeof why, "%s (byte %" PRIu64 ": %s)", reason, w->offset,
                 strerror(w->sys_errno));
    else if (rc == DLS_ERR_CORRUPT)
        snprintf(why, sizeof why, "%s (byte %" PRIu64 ")", reason, w->offset);
    else
        snprintf(why, sizeof why, "%s", reason);
    report_line(a, ln, why, rc == DLS_ERR_SEALED);
}

static void drop_batch(appender *a, size_t from)
{
    for (size_t i = from; i < a->count; i++)
        free(a->recs[i]);
    a->count = 0;
    a->bytes = 0;
}

static int acknowledge(appender *a, uint64_t first, size_t k)
{
    for (size_t i = 0; i < k; i++)
        printf("%" PRIu64 "\n", first + i);
    a->have_next = true;
    a->next_pos = first + k;
    if (fflush(stdout) == EOF) {
        dls_cli_error("append", "stdout: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* Appends the batch; 0, or -1 with the first failing line reported. */
static int flush_batch(appender *a)
{
    if (!a->count)
        return 0;
    uint64_t first = 0;
    dls_where w = {0};
    int rc;
    if (a->count > 1) {
        rc = dls_medium_append_batch(a->m, (const uint8_t *const *)a->recs, a->lens, a->count,
                                     &first, &w);
        if (!rc) {
            size_t k = a->count;
            drop_batch(a, 0);
            return acknowledge(a, first, k);
        }
    }
    /* One at a time: a single record, or a refused batch retried so that
     * the error names its line. */
    for (size_t i = 0; i < a->count; i++) {
        memset(&w, 0, sizeof w);
        rc = dls_medium_append(a->m, a->recs[i], a->lens[i], &first, &w);
        if (rc) {
            report_append(a, a->lines[i], rc, &w);
            drop_batch(a, 0);
            return -1;
        }
        if (acknowledge(a, first, 1)) {
            drop_batch(a, 0);
            return -1;
        }
    }
    drop_batch(a, 0);
    return 0;
}

static int run(appender *a)
{
    reader r = {.fd = STDIN_FILENO};
    int status = DLS_EXIT_OK;
    for (;;) {
        char *line;
        size_t n;
        while (status == DLS_EXIT_OK && a->count < BATCH_MAX_RECORDS &&
               a->bytes < BATCH_MAX_BYTES && next_line(&r, &line, &n)) {
            if (blank(&line, &n))
                continue;
            if (add_line(a, r.lineno, line, n))
                status = DLS_EXIT_FAIL;
        }
        /* What was read before a bad line is still appended. */
        if (flush_batch(a))
            status = DLS_EXIT_FAIL;
        else if (a->err_line)
            report_line(a, a->err_line, a->err, false);
        if (status != DLS_EXIT_OK || (r.eof && r.start == r.end))
            break;
        if (!next_line_pending(&r) && read_more(&r)) {
            status = DLS_EXIT_FAIL;
            break;
        }
    }
    free(r.buf);
    return status;
}

int dls_cmd_append(int argc, char **argv)
{
    if (dls_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return DLS_EXIT_OK;
    }
    append_opts o;
    if (parse_args(argc, argv, &o))
        return DLS_EXIT_USAGE;
    appender a = {.o = &o};
    int status = DLS_EXIT_FAIL;
    if (!o.bare && load_secret(&o, &a.secret))
        goto out;
    if (dls_cli_open(&a.m, "append", o.path, DLS_OPEN_APPEND, false, o.sync))
        goto out;
    status = run(&a);
out:
    drop_batch(&a, 0);
    dls_medium_del(a.m);
    dls_secret_del(a.secret);
    return status;
}
