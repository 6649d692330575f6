/* daolease audit — audit replay of a judge's journal and media (judge.md
 * "Audit replay", cli.md `audit`).
 *
 *   daolease audit --journal J --grantor NAME --keyring K
 *                  --media M[=PARTY]... [--json] [--svg FILE] [--threads N]
 *                  [--from-checkpoint [N]]
 *
 * Exit: 0 clean, 1 failure found, 2 usage, 3 could not audit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "cli/cli.h"
#include "cli/media.h"
#include "daolease/redis.h"
#include "daolease/jetstream.h"
#include "daolease/attrib.h"
#include "daolease/audit.h"
#include "daolease/stream.h"
#include "cli/json/json.h"
#include "vocab/hex.h"

#define EXIT_CANNOT 3
#define SUB "audit"

static void usage(FILE *to)
{
    fprintf(to,
            "usage: daolease audit --journal J --grantor NAME --keyring K\n"
            "                      --media M[=PARTY]... [--json] [--svg FILE]\n"
            "                      [--threads N] [--from-checkpoint [N]] [--strict]\n\n"
            "Replays the journal J (authored by the grantor NAME, whose Ed25519 key is in\n"
            "the keyring K) against the lease-fact media M, re-executes the judge's\n"
            "classification, and prints every lease's timeline and verdict.\n\n"
            "  --journal J        the grantor's journal (a stream file)\n"
            "  --grantor NAME     the grantor's party name\n"
            "  --keyring K        the keyring of the grantor and the holders\n"
            "  --media M...       the lease-fact media, several after one flag; M=PARTY\n"
            "                     names the party of a medium whose bare facts are\n"
            "                     attributed by the medium itself\n"
            "  --json             JSON Lines: one line a lease, then a summary line\n"
            "  --svg FILE         also draw the timeline picture into FILE\n"
            "  --checkpoints DIR  check each committed checkpoint in DIR against the\n"
            "                     replay (a difference is a journal failure), and start\n"
            "                     at one when the journal's first records are gone\n"
            "                     (default: J.ckpt when that folder exists)\n"
            "  --from-checkpoint [N]  audit only what follows committed checkpoint N\n"
            "                     (default: the newest) in the checkpoint folder\n"
            "  --strict           exit 3 when any lease is unverifiable (a medium the\n"
            "                     journal names was not given, or its records are gone)\n"
            "  --threads N        threads verifying signatures and MACs, 1 to 64\n"
            "                     (default: the cores online); the output is the same\n"
            "                     for any N\n\n"
            "exit status: 0 no failure found, 1 a failure found, 2 usage, 3 could not audit\n"
            "(or, with --strict, leases left unverifiable)\n");
}

typedef struct opts {
    const char *journal, *grantor, *keyring, *svg, *checkpoints;
    bool json;
    bool strict;        /* --strict: an unverifiable lease is exit 3 (cli.md rev 5) */
    unsigned threads;   /* 0: the cores online */
    uint64_t from_checkpoint; /* 0: none; DLS_AUDIT_NEWEST_CHECKPOINT: the newest */
    char **media;       /* argv entries, PATH or PATH=PARTY */
    size_t n_media;
} opts;

/* Value of "--name VALUE" or "--name=VALUE" at argv[*i]; NULL when argv[*i]
 * is not that option; *bad set when the value is missing. */
static const char *opt_value(int argc, char **argv, int *i, const char *name, bool *bad)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n))
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n])
        return NULL;
    if (*i + 1 >= argc || !strncmp(argv[*i + 1], "--", 2)) {
        *bad = true;
        return NULL;
    }
    return argv[++*i];
}

static int parse_args(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->media = calloc((size_t)argc, sizeof *o->media);
    if (!o->media)
        return -1;
    for (int i = 1; i < argc; i++) {
        bool bad = false;
        const char *v;
        if ((v = opt_value(argc, argv, &i, "--journal", &bad)))
            o->journal = v;
        else if (!bad && (v = opt_value(argc, argv, &i, "--grantor", &bad)))
            o->grantor = v;
        else if (!bad && (v = opt_value(argc, argv, &i, "--keyring", &bad)))
            o->keyring = v;
        else if (!bad && (v = opt_value(argc, argv, &i, "--svg", &bad)))
            o->svg = v;
        else if (!bad && (v = opt_value(argc, argv, &i, "--checkpoints", &bad)))
            o->checkpoints = v; /* docs/checkpoints.md */
        else if (!bad && (v = opt_value(argc, argv, &i, "--threads", &bad))) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(v, &end, 10);
            if (errno || end == v || *end || v[0] == '-' || n < 1 || n > 64) {
                dls_cli_error(SUB, "--threads '%s': not a number from 1 to 64", v);
                return -1;
            }
            o->threads = (unsigned)n;
        } else if (!bad && !strncmp(argv[i], "--from-checkpoint", 17) &&
                   (argv[i][17] == 0 || argv[i][17] == '=')) {
            /* docs/audit.md, "Auditing only what is new": N is optional,
               "--from-checkpoint N" or "--from-checkpoint=N" */
            o->from_checkpoint = DLS_AUDIT_NEWEST_CHECKPOINT;
            bool joined = argv[i][17] == '=';
            if (joined || (i + 1 < argc && strncmp(argv[i + 1], "--", 2))) {
                const char *n = joined ? argv[i] + 18 : argv[++i];
                char *end;
                errno = 0;
                unsigned long long p = strtoull(n, &end, 10);
                if (errno || end == n || *end || n[0] == '-' || p == 0 || p == UINT64_MAX) {
                    dls_cli_error(SUB, "--from-checkpoint '%s': not a pass number", n);
                    return -1;
                }
                o->from_checkpoint = p;
            }
        } else if (!bad && !strcmp(argv[i], "--json"))
            o->json = true;
        else if (!bad && !strcmp(argv[i], "--strict"))
            o->strict = true;
        else if (!bad && !strncmp(argv[i], "--media", 7) &&
                 (argv[i][7] == 0 || argv[i][7] == '=')) {
            if (argv[i][7] == '=')
                o->media[o->n_media++] = argv[i] + 8;
            /* the media follow one flag as several arguments, until the next flag */
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2))
                o->media[o->n_media++] = argv[++i];
        } else if (bad) {
            dls_cli_error(SUB, "%s needs a value (see 'daolease audit --help')", argv[i]);
            return -1;
        } else {
            bool opt = argv[i][0] == '-'; /* an option by its name only (a value may
                                             hold a password) */
            dls_cli_error(SUB, "unknown %s %.*s (see 'daolease audit --help')",
                          opt ? "option" : "argument",
                          opt ? (int)strcspn(argv[i], "=") : (int)strlen(argv[i]), argv[i]);
            return -1;
        }
    }
    const char *missing = !o->journal ? "--journal" : !o->grantor ? "--grantor"
                        : !o->keyring ? "--keyring" : !o->n_media ? "--media" : NULL;
    if (missing) {
        dls_cli_error(SUB, "%s is required (see 'daolease audit --help')", missing);
        return -1;
    }
    return 0;
}

/* Opens a path or a redis:// URL for reading. */
static int open_read(dls_medium **m, const char *where, dls_where *w)
{
    if (dls_redis_is_url(where))
        return dls_redis_open(m, where, DLS_OPEN_READ, NULL, w);
    int rc = dls_medium_open(m, where, DLS_OPEN_READ, NULL, w);
    if (!rc)
        dls_cli_warn_sidecars(SUB, where);
    return rc;
}

static void where_error(const char *file, const char *what, int rc, const dls_where *w)
{
    const char *reason = w->reason ? w->reason : dls_strerror(rc);
    if (w->line)
        dls_cli_error(SUB, "%s: line %" PRIu64 ": %s: %s", file, w->line, what, reason);
    else if (rc == DLS_ERR_IO && w->sys_errno)
        dls_cli_error(SUB, "%s: %s: %s (%s)", file, what, reason, strerror(w->sys_errno));
    else if (w->offset)
        dls_cli_error(SUB, "%s: byte %" PRIu64 ": %s: %s", file, w->offset, what, reason);
    else
        dls_cli_error(SUB, "%s: %s: %s", file, what, reason);
}

/* ---- JSON output ------------------------------------------------------------ */

static void j_cause(dls_jbuf *b, dls_cause c)
{
    if (c == DLS_CAUSE_NONE) {
        dls_jbuf_puts(b, "null");
        return;
    }
    const char *n = dls_cause_name(c);
    dls_jbuf_string(b, (const uint8_t *)n, strlen(n));
}

static void j_pass(dls_jbuf *b, uint64_t pass)
{
    if (pass)
        dls_jbuf_uint(b, pass);
    else
        dls_jbuf_puts(b, "null");
}

static void j_key(dls_jbuf *b, const char *k, bool first)
{
    if (!first)
        dls_jbuf_puts(b, ", ");
    dls_jbuf_string(b, (const uint8_t *)k, strlen(k));
    dls_jbuf_puts(b, ": ");
}

static void j_str(dls_jbuf *b, const char *s)
{
    dls_jbuf_string(b, (const uint8_t *)s, strlen(s));
}

static void j_hex(dls_jbuf *b, const uint8_t *id)
{
    char hx[33];
    dls_hex16(id, hx);
    j_str(b, hx);
}

static void j_u64_list(dls_jbuf *b, const uint64_t *v, size_t n)
{
    dls_jbuf_puts(b, "[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            dls_jbuf_puts(b, ", ");
        dls_jbuf_uint(b, v[i]);
    }
    dls_jbuf_puts(b, "]");
}

static void j_counts(dls_jbuf *b, const dls_audit_count *c, size_t n)
{
    dls_jbuf_puts(b, "{");
    for (size_t i = 0; i < n; i++) {
        j_key(b, c[i].reason, i == 0);
        dls_jbuf_uint(b, c[i].n);
    }
    dls_jbuf_puts(b, "}");
}

static void j_spans(dls_jbuf *b, const dls_audit_span *s, size_t n, bool with_to)
{
    dls_jbuf_puts(b, "[");
    for (size_t i = 0; i < n; i++) {
        dls_jbuf_puts(b, i ? ", [" : "[");
        dls_jbuf_uint(b, s[i].pass);
        dls_jbuf_puts(b, ", ");
        j_hex(b, s[i].medium);
        dls_jbuf_puts(b, ", ");
        dls_jbuf_uint(b, s[i].from);
        if (with_to) {
            dls_jbuf_puts(b, ", ");
            dls_jbuf_uint(b, s[i].to);
        }
        dls_jbuf_puts(b, "]");
    }
    dls_jbuf_puts(b, "]");
}

static void j_strings(dls_jbuf *b, const char *const *s, size_t n)
{
    dls_jbuf_puts(b, "[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            dls_jbuf_puts(b, ", ");
        j_str(b, s[i]);
    }
    dls_jbuf_puts(b, "]");
}

static int print_json_lease(dls_jbuf *b, const dls_audit_lease *l)
{
    b->n = 0;
    dls_jbuf_puts(b, "{\"lease\": ");
    dls_jbuf_uint(b, l->lease);
    dls_jbuf_puts(b, ", \"subject\": ");
    if (dls_json_emit(b, l->subject.p, l->subject.n, NULL))
        dls_jbuf_puts(b, "null");
    dls_jbuf_puts(b, ", \"holder\": ");
    dls_jbuf_string(b, l->holder.p, l->holder.n);
    dls_jbuf_puts(b, ", \"granted_pass\": ");
    j_pass(b, l->granted.pass);
    dls_jbuf_puts(b, ", \"due_pass\": ");
    j_pass(b, l->due.pass);
    dls_jbuf_puts(b, ", \"lapsed_pass\": ");
    j_pass(b, l->lapsed.pass);
    dls_jbuf_puts(b, ", \"cause\": ");
    j_cause(b, l->cause);
    dls_jbuf_puts(b, ", \"late_renewals\": ");
    dls_jbuf_uint(b, l->late_renewals);
    dls_jbuf_puts(b, ", \"verdict\": ");
    j_str(b, dls_audit_verdict_name(l->verdict));
    dls_jbuf_puts(b, "}\n");
    return fwrite(b->p, 1, b->n, stdout) == b->n ? 0 : -1;
}

static int print_json_summary(dls_jbuf *b, const dls_audit *a, const char *grantor,
                              char **media_paths, int status)
{
    const dls_audit_summary *s = dls_audit_summary_of(a);
    b->n = 0;
    dls_jbuf_puts(b, "{\"summary\": true, \"failures\": {\"unjustified_lapse\": ");
    dls_jbuf_uint(b, s->unjustified_lapse);
    dls_jbuf_puts(b, ", \"due_mismatch\": ");
    dls_jbuf_uint(b, s->due_mismatch);
    dls_jbuf_puts(b, ", \"double_grant\": ");
    dls_jbuf_uint(b, s->double_grant);
    dls_jbuf_puts(b, ", \"journal\": ");
    dls_jbuf_uint(b, s->journal);
    dls_jbuf_puts(b, "}, \"reports\": {");
    j_key(b, "grantor", true);
    j_str(b, grantor);
    j_key(b, "journal", false);
    j_hex(b, s->journal_id);
    j_key(b, "passes", false);
    dls_jbuf_uint(b, s->passes);
    j_key(b, "journal_records", false);
    dls_jbuf_uint(b, s->journal_records);
    j_key(b, "journal_forged", false);
    dls_jbuf_uint(b, s->journal_forged);
    j_key(b, "journal_malformed", false);
    dls_jbuf_uint(b, s->journal_malformed);
    j_key(b, "journal_defective", false);
    dls_jbuf_uint(b, s->journal_defective);
    j_key(b, "journal_ignored", false);
    dls_jbuf_uint(b, s->journal_ignored);
    j_key(b, "grants", false);
    dls_jbuf_uint(b, s->grants);
    j_key(b, "refusals", false);
    dls_jbuf_uint(b, s->refusals);
    j_key(b, "lapsed", false);
    dls_jbuf_uint(b, s->lapsed);
    j_key(b, "late_reclaims", false);
    dls_jbuf_puts(b, "[");
    for (size_t i = 0; i < s->n_late_reclaims; i++) {
        dls_jbuf_puts(b, i ? ", [" : "[");
        dls_jbuf_uint(b, s->late_reclaims[i].lease);
        dls_jbuf_puts(b, ", ");
        dls_jbuf_uint(b, s->late_reclaims[i].due_pass);
        dls_jbuf_puts(b, ", ");
        dls_jbuf_uint(b, s->late_reclaims[i].lapsed_pass);
        dls_jbuf_puts(b, "]");
    }
    dls_jbuf_puts(b, "]");
    j_key(b, "media_records", false);
    dls_jbuf_uint(b, s->media_records);
    j_key(b, "forged", false);
    j_counts(b, s->forged, s->n_forged);
    j_key(b, "defective", false);
    j_counts(b, s->defective, s->n_defective);
    j_key(b, "ignored", false);
    j_counts(b, s->ignored, s->n_ignored);
    j_key(b, "late_renewals", false);
    dls_jbuf_puts(b, "{");
    for (size_t i = 0; i < s->n_late_renewals; i++) {
        if (i)
            dls_jbuf_puts(b, ", ");
        dls_jbuf_string(b, s->late_renewals[i].holder.p, s->late_renewals[i].holder.n);
        dls_jbuf_puts(b, ": ");
        dls_jbuf_uint(b, s->late_renewals[i].n);
    }
    dls_jbuf_puts(b, "}");
    j_key(b, "cadence_overruns", false);
    dls_jbuf_uint(b, s->cadence_overruns);
    j_key(b, "cadence_overruns_unflagged", false);
    j_u64_list(b, s->cadence_overruns_unflagged, s->n_cadence_overruns_unflagged);
    j_key(b, "due_mismatches", false);
    dls_jbuf_puts(b, "[");
    for (size_t i = 0; i < s->n_due_mismatches; i++) {
        const dls_audit_mismatch *m = &s->due_mismatches[i];
        dls_jbuf_puts(b, i ? ", [" : "[");
        dls_jbuf_uint(b, m->pass);
        dls_jbuf_puts(b, ", ");
        dls_jbuf_uint(b, m->lease);
        dls_jbuf_puts(b, ", ");
        j_cause(b, m->judge);
        dls_jbuf_puts(b, ", ");
        j_cause(b, m->audit);
        dls_jbuf_puts(b, "]");
    }
    dls_jbuf_puts(b, "]");
    j_key(b, "unverifiable", false);
    j_u64_list(b, s->unverifiable_passes, s->n_unverifiable_passes);
    j_key(b, "unverifiable_leases", false);
    j_u64_list(b, s->unverifiable_leases, s->n_unverifiable_leases);
    j_key(b, "gaps", false);
    j_spans(b, s->gaps, s->n_gaps, true);
    j_key(b, "restarts", false);
    j_u64_list(b, s->restarts, s->n_restarts);
    if (s->n_takeovers) { /* revision 5; absent when none, so a journal without
                             takeovers reports as revision 4 did (vectors/) */
        j_key(b, "takeovers", false);
        j_u64_list(b, s->takeovers, s->n_takeovers);
    }
    j_key(b, "basis_changes", false);
    j_u64_list(b, s->basis_changes, s->n_basis_changes);
    j_key(b, "transport_errors", false);
    j_spans(b, s->transport_errors, s->n_transport_errors, false);
    j_key(b, "missing_media", false);
    dls_jbuf_puts(b, "[");
    for (size_t i = 0; i < s->n_missing_media; i++) {
        if (i)
            dls_jbuf_puts(b, ", ");
        j_hex(b, s->missing_media[i]);
    }
    dls_jbuf_puts(b, "]");
    j_key(b, "unused_media", false);
    dls_jbuf_puts(b, "[");
    for (size_t i = 0; i < s->n_unused_media; i++) {
        if (i)
            dls_jbuf_puts(b, ", ");
        j_str(b, media_paths[s->unused_media[i]]);
    }
    dls_jbuf_puts(b, "]");
    j_key(b, "undrained_records", false);
    dls_jbuf_uint(b, s->undrained_records);
    j_key(b, "warnings", false);
    j_strings(b, s->warnings, s->n_warnings);
    j_key(b, "failure_details", false);
    j_strings(b, s->failure_details, s->n_failure_details);
    /* docs/audit.md, "A journal that starts at a checkpoint": present
     * only when they apply, like `incomplete` */
    if (s->start_checkpoint) {
        j_key(b, "not_audited", false);
        dls_jbuf_puts(b, "{\"checkpoint\": ");
        dls_jbuf_uint(b, s->start_checkpoint);
        dls_jbuf_puts(b, ", \"from\": 0, \"to\": ");
        dls_jbuf_uint(b, s->not_audited_to);
        dls_jbuf_puts(b, ", \"journal_first\": ");
        dls_jbuf_uint(b, s->journal_first);
        dls_jbuf_puts(b, "}");
    }
    if (s->journal_missing_to) {
        j_key(b, "journal_missing", false);
        dls_jbuf_puts(b, "[");
        dls_jbuf_uint(b, s->journal_missing_from);
        dls_jbuf_puts(b, ", ");
        dls_jbuf_uint(b, s->journal_missing_to);
        dls_jbuf_puts(b, "]");
    }
    if (s->checkpoints_checked || s->checkpoints_mismatch || s->checkpoints_missing ||
        s->checkpoints_damaged) {
        j_key(b, "checkpoints", false);
        dls_jbuf_puts(b, "{\"checked\": ");
        dls_jbuf_uint(b, s->checkpoints_checked);
        dls_jbuf_puts(b, ", \"mismatch\": ");
        dls_jbuf_uint(b, s->checkpoints_mismatch);
        dls_jbuf_puts(b, ", \"missing\": ");
        dls_jbuf_uint(b, s->checkpoints_missing);
        if (s->checkpoints_damaged) {
            dls_jbuf_puts(b, ", \"damaged\": ");
            dls_jbuf_uint(b, s->checkpoints_damaged);
        }
        dls_jbuf_puts(b, "}");
    }
    if (s->incomplete) {
        j_key(b, "incomplete", false);
        j_str(b, s->incomplete);
    }
    dls_jbuf_puts(b, "}, \"exit\": ");
    dls_jbuf_uint(b, (uint64_t)status);
    dls_jbuf_puts(b, "}\n");
    return fwrite(b->p, 1, b->n, stdout) == b->n ? 0 : -1;
}

/* ---- human output ------------------------------------------------------------ */

/* A cell of at most `w` display columns: text cut with "..." when longer
 * (counting bytes; names are short and mostly ASCII). */
static void cell(const char *s, int w, bool right)
{
    size_t n = strlen(s);
    if ((int)n <= w) {
        printf(right ? "%*s" : "%-*s", w, s);
        return;
    }
    printf("%.*s...", w - 3, s);
}

static void text_of_subject(dls_jbuf *b, const dls_audit_lease *l)
{
    b->n = 0;
    if (b->p)
        b->p[0] = 0;
    if (dls_json_emit(b, l->subject.p, l->subject.n, NULL))
        dls_jbuf_puts(b, "(malformed)");
}

/* A name as text: JSON-escaped (invalid UTF-8 as U+FFFD), without quotes. */
static void text_of_name(dls_jbuf *b, dls_bytes name)
{
    b->n = 0;
    dls_jbuf_string(b, name.p, name.n);
    /* drop the quotes of the JSON string */
    if (b->n >= 2) {
        memmove(b->p, b->p + 1, b->n - 2);
        b->n -= 2;
        b->p[b->n] = 0;
    }
}

static void pass_cell(uint64_t pass, int w)
{
    char t[24];
    if (pass)
        snprintf(t, sizeof t, "%" PRIu64, pass);
    else
        snprintf(t, sizeof t, "-");
    cell(t, w, true);
}

static void print_human(const dls_audit *a, const char *journal, const char *grantor,
                        char **media_paths, int status, bool strict)
{
    const dls_audit_summary *s = dls_audit_summary_of(a);
    dls_jbuf b = {0};
    char hx[33];
    dls_hex16(s->journal_id, hx);
    size_t n = dls_audit_lease_count(a);
    printf("audit of %s (grantor %s, journal %s): %" PRIu64 " pass marks", journal, grantor, hx,
           s->passes);
    if (s->passes)
        printf(" up to pass %" PRIu64, s->last_pass);
    printf(", %zu leases\n\n", n);

    int sw = 7, hw = 6;
    for (size_t i = 0; i < n; i++) {
        const dls_audit_lease *l = dls_audit_lease_at(a, i);
        text_of_subject(&b, l);
        if ((int)b.n > sw)
            sw = (int)b.n;
        text_of_name(&b, l->holder);
        if ((int)b.n > hw)
            hw = (int)b.n;
    }
    if (sw > 32)
        sw = 32;
    if (hw > 24)
        hw = 24;
    printf("%6s  %-*s  %-*s  %7s  %5s  %6s  %-7s  %4s  %s\n", "lease", sw, "subject", hw,
           "holder", "granted", "due", "lapsed", "cause", "late", "verdict");
    for (size_t i = 0; i < n; i++) {
        const dls_audit_lease *l = dls_audit_lease_at(a, i);
        printf("%6" PRIu64 "  ", l->lease);
        text_of_subject(&b, l);
        cell(b.p ? b.p : "", sw, false);
        printf("  ");
        text_of_name(&b, l->holder);
        cell(b.p ? b.p : "", hw, false);
        printf("  ");
        pass_cell(l->granted.pass, 7);
        printf("  ");
        pass_cell(l->due.pass, 5);
        printf("  ");
        pass_cell(l->lapsed.pass, 6);
        printf("  %-7s  %4" PRIu64 "  %s\n", l->cause ? dls_cause_name(l->cause) : "-",
               l->late_renewals, dls_audit_verdict_name(l->verdict));
    }

    printf("\nfailures: unjustified lapse %" PRIu64 ", due mismatch %" PRIu64
           ", double grant %" PRIu64 ", journal %" PRIu64 "\n",
           s->unjustified_lapse, s->due_mismatch, s->double_grant, s->journal);
    for (size_t i = 0; i < s->n_failure_details; i++)
        printf("  failure: %s\n", s->failure_details[i]);

    printf("reports:\n");
    printf("  journal: %" PRIu64 " records, %" PRIu64 " grants, %" PRIu64 " refusals, %" PRIu64
           " lapsed; forged %" PRIu64 ", malformed %" PRIu64 ", defective %" PRIu64
           ", ignored %" PRIu64 "\n",
           s->journal_records, s->grants, s->refusals, s->lapsed, s->journal_forged,
           s->journal_malformed, s->journal_defective, s->journal_ignored);
    printf("  media: %" PRIu64 " records applied, %" PRIu64 " not yet drained", s->media_records,
           s->undrained_records);
    const struct {
        const char *name;
        const dls_audit_count *c;
        size_t n;
    } groups[] = {{"forged", s->forged, s->n_forged},
                  {"defective", s->defective, s->n_defective},
                  {"ignored", s->ignored, s->n_ignored}};
    for (size_t g = 0; g < 3; g++) {
        printf("; %s", groups[g].name);
        if (!groups[g].n)
            printf(" 0");
        for (size_t i = 0; i < groups[g].n; i++)
            printf("%s%s %" PRIu64, i ? ", " : " ", groups[g].c[i].reason, groups[g].c[i].n);
    }
    printf("\n  late renewals:");
    if (!s->n_late_renewals)
        printf(" none");
    for (size_t i = 0; i < s->n_late_renewals; i++) {
        text_of_name(&b, s->late_renewals[i].holder);
        printf("%s %s %" PRIu64, i ? "," : "", b.p ? b.p : "", s->late_renewals[i].n);
    }
    printf("\n  late reclaims:");
    if (!s->n_late_reclaims)
        printf(" none");
    for (size_t i = 0; i < s->n_late_reclaims; i++)
        printf("%s lease %" PRIu64 " due at pass %" PRIu64 ", lapsed at pass %" PRIu64,
               i ? ";" : "", s->late_reclaims[i].lease, s->late_reclaims[i].due_pass,
               s->late_reclaims[i].lapsed_pass);
    printf("\n  cadence overruns: %" PRIu64 " flagged, %zu unflagged\n", s->cadence_overruns,
           s->n_cadence_overruns_unflagged);
    printf("  restarts at passes:");
    if (!s->n_restarts)
        printf(" none");
    for (size_t i = 0; i < s->n_restarts; i++)
        printf(" %" PRIu64, s->restarts[i]);
    if (s->n_takeovers)
        printf("; takeovers: %zu", s->n_takeovers);
    printf("; basis changes: %zu; gaps: %zu; transport errors: %zu\n", s->n_basis_changes,
           s->n_gaps, s->n_transport_errors);
    if (s->n_unverifiable_leases) {
        printf("  unverifiable leases:");
        for (size_t i = 0; i < s->n_unverifiable_leases; i++)
            printf(" %" PRIu64, s->unverifiable_leases[i]);
        printf("\n");
    }
    for (size_t i = 0; i < s->n_unused_media; i++)
        printf("  unused medium: %s (the journal never names it)\n",
               media_paths[s->unused_media[i]]);
    if (s->start_checkpoint && s->journal_first)
        printf("  not audited: journal positions 0..%" PRIu64 " (passes up to %" PRIu64
               "): the audit starts at checkpoint %" PRIu64 " (positions 0..%" PRIu64
               " are gone); unverifiable, not a failure\n",
               s->not_audited_to ? s->not_audited_to - 1 : 0, s->start_checkpoint,
               s->start_checkpoint, s->journal_first ? s->journal_first - 1 : 0);
    else if (s->start_checkpoint) /* --from-checkpoint */
        printf("  not audited: journal positions 0..%" PRIu64 " (passes up to %" PRIu64
               "): the audit starts at checkpoint %" PRIu64 " (--from-checkpoint); "
               "unverifiable, not a failure\n",
               s->not_audited_to ? s->not_audited_to - 1 : 0, s->start_checkpoint,
               s->start_checkpoint);
    if (s->checkpoints_checked || s->checkpoints_mismatch || s->checkpoints_missing ||
        s->checkpoints_damaged)
        printf("  checkpoints: %" PRIu64 " checked, %" PRIu64 " differ, %" PRIu64
               " not in the folder (pruned), %" PRIu64 " damaged (reported, not a failure)\n",
               s->checkpoints_checked, s->checkpoints_mismatch, s->checkpoints_missing,
               s->checkpoints_damaged);
    for (size_t i = 0; i < s->n_warnings; i++)
        printf("  warning: %s\n", s->warnings[i]);
    if (s->incomplete)
        printf("  could not audit: %s\n", s->incomplete);
    printf("\nresult: %s", status == 0   ? "no failure found"
                           : status == 1 ? "FAILURES FOUND"
                                         : "INCOMPLETE AUDIT");
    if (s->n_unverifiable_leases) /* cli.md rev 5: partial input is not "clean" */
        printf("; %zu of %zu leases unverifiable%s", s->n_unverifiable_leases,
               dls_audit_lease_count(a), strict ? " (--strict)" : "");
    printf(" (exit %d)\n", status);
    dls_jbuf_free(&b);
}

/* ---- the command ------------------------------------------------------------ */

static int write_file(void *user, const char *p, size_t n)
{
    return fwrite(p, 1, n, (FILE *)user) == n ? 0 : DLS_ERR_IO;
}

static int write_svg(const dls_audit *a, const char *path)
{
    FILE *f = fopen(path, "we");
    if (!f) {
        dls_cli_error(SUB, "%s: cannot create: %s", path, strerror(errno));
        return -1;
    }
    dls_audit_svg_settings set;
    dls_audit_svg_settings_default(&set);
    set.title = "daolease audit";
    int rc = dls_audit_svg(a, &set, write_file, f);
    if (fclose(f) && !rc)
        rc = DLS_ERR_IO;
    if (rc) {
        dls_cli_error(SUB, "%s: cannot write the picture: %s", path, dls_strerror(rc));
        return -1;
    }
    return 0;
}

/* The cores online, at most 64 (1 when unknown). */
static unsigned cores_online(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : n > 64 ? 64u : (unsigned)n;
}

int dls_cmd_audit(int argc, char **argv)
{
    if (dls_cli_wants_help(argc, argv)) {
        usage(stdout);
        return DLS_EXIT_OK;
    }
    opts o;
    if (parse_args(argc, argv, &o)) {
        free(o.media);
        return DLS_EXIT_USAGE;
    }
    int status = EXIT_CANNOT;
    dls_keyring *kr = NULL;
    dls_medium *journal = NULL;
    dls_medium **media = calloc(o.n_media ? o.n_media : 1, sizeof *media);
    dls_audit_medium *am = calloc(o.n_media ? o.n_media : 1, sizeof *am);
    char **paths = calloc(o.n_media ? o.n_media : 1, sizeof *paths);
    dls_audit *a = NULL;
    dls_where w = {0};
    int rc;
    if (!media || !am || !paths) {
        dls_cli_error(SUB, "out of memory");
        goto out;
    }
    if ((rc = dls_keyring_load(&kr, o.keyring, &w))) {
        where_error(o.keyring, "cannot read the keyring", rc, &w);
        goto out;
    }
    memset(&w, 0, sizeof w);
    if ((rc = open_read(&journal, o.journal, &w))) {
        where_error(o.journal, "cannot open the journal", rc, &w);
        goto out;
    }
    /* docs/audit.md: what the audit cannot read to its end is never "no
     * failure found" — a journal shorter than its header, or one whose
     * reading stops at a bad record followed by CRC-valid ones (exit 3) */
    if (dls_cli_check_end(SUB, o.journal))
        goto out;
    for (size_t i = 0; i < o.n_media; i++) {
        const char *path, *party;
        dls_cli_split_media(o.media[i], &path, &party);
        paths[i] = o.media[i];
        memset(&w, 0, sizeof w);
        if ((rc = open_read(&media[i], path, &w))) {
            where_error(path, "cannot open the medium", rc, &w);
            goto out;
        }
        if (dls_cli_check_end(SUB, path))
            goto out;
        am[i].medium = media[i];
        am[i].party = party;
    }
    memset(&w, 0, sizeof w);
    /* every renewal's pass and now is kept only for the picture: without
     * --svg the audit's memory does not grow with the renewals (docs/audit.md) */
    dls_audit_settings set;
    dls_audit_settings_default(&set);
    set.keep_renewal_points = o.svg != NULL;
    set.threads = o.threads ? o.threads : cores_online(); /* docs/audit.md, Threads */
    /* the judge's default folder, <journal>.ckpt, when it is there (a
     * journal whose front is gone starts at a checkpoint) */
    char *ckpt_default = NULL;
    struct stat st;
    if (!o.checkpoints && dls_cli_ckpt_folder(o.journal, &ckpt_default) == 0 && ckpt_default &&
        (stat(ckpt_default, &st) || !S_ISDIR(st.st_mode))) {
        free(ckpt_default);
        ckpt_default = NULL;
    }
    set.checkpoints = o.checkpoints ? o.checkpoints : ckpt_default;
    set.from_checkpoint = o.from_checkpoint;
    rc = dls_audit_run(&a, &set, journal, o.grantor, kr, am, o.n_media, &w);
    free(ckpt_default);
    if (rc) {
        switch (rc) {
        case DLS_ERR_NOTFOUND:
            dls_cli_error(SUB, "%s: the grantor '%s' is not in the keyring", o.keyring, o.grantor);
            break;
        case DLS_ERR_KEYKIND:
            dls_cli_error(SUB, "%s: the grantor '%s' has a MAC key; a grantor's key is Ed25519",
                          o.keyring, o.grantor);
            break;
        case DLS_ERR_EMPTY_KEYRING:
            dls_cli_error(SUB, "%s: the keyring is empty", o.keyring);
            break;
        case DLS_ERR_DUPLICATE:
        case DLS_ERR_INVAL:
            dls_cli_error(SUB, "%s: %s", w.offset < o.n_media ? paths[w.offset] : o.journal,
                          w.reason ? w.reason : dls_strerror(rc));
            status = DLS_EXIT_USAGE;
            break;
        default:
            dls_cli_error(SUB, "%s: cannot audit: %s", o.journal,
                          w.reason ? w.reason : dls_strerror(rc));
        }
        goto out;
    }
    status = dls_audit_exit_status(a);
    const dls_audit_summary *s = dls_audit_summary_of(a);
    if (o.strict && status == 0 && s->n_unverifiable_leases)
        status = EXIT_CANNOT; /* cli.md rev 5, "Partial input is not clean" */
    int perr;
    if (o.json) {
        dls_jbuf b = {0};
        perr = 0;
        for (size_t i = 0; i < dls_audit_lease_count(a) && !perr; i++)
            perr = print_json_lease(&b, dls_audit_lease_at(a, i));
        if (!perr)
            perr = print_json_summary(&b, a, o.grantor, paths, status);
        dls_jbuf_free(&b);
    } else {
        print_human(a, o.journal, o.grantor, paths, status, o.strict);
        perr = ferror(stdout) ? -1 : 0;
    }
    if (fflush(stdout) || perr) {
        dls_cli_error(SUB, "cannot write the output: %s", strerror(errno));
        status = EXIT_CANNOT;
    }
    /* what could not be verified, on stderr too: never a silent pass */
    if (s->incomplete)
        dls_cli_error(SUB, "%s: position %" PRIu64 ": %s", o.journal, s->incomplete_position,
                      s->incomplete);
    if (o.json)
        for (size_t i = 0; i < s->n_warnings; i++)
            dls_cli_error(SUB, "warning: %s", s->warnings[i]);
    if (o.strict && s->n_unverifiable_leases)
        dls_cli_error(SUB, "%s: --strict: %zu of %zu leases unverifiable", o.journal,
                      s->n_unverifiable_leases, dls_audit_lease_count(a));
    if (o.svg && write_svg(a, o.svg))
        status = EXIT_CANNOT;
out:
    dls_audit_del(a);
    for (size_t i = 0; media && i < o.n_media; i++)
        dls_medium_del(media[i]);
    dls_medium_del(journal);
    dls_keyring_del(kr);
    free(media);
    free(am);
    free(paths);
    free(o.media);
    return status;
}
