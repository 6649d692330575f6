/* daolease watch — follow a journal as it is written (docs/cli.md
 * `watch`): grants, refusals and lapses with their cause, one
 * line each, stamped with the pass (and its now) they belong to. Reads only
 * the journal; polls every 50 ms at its end; SIGINT, SIGTERM or SIGHUP
 * stop it cleanly (exit 0), as does the journal's seal. A journal that
 * cannot be read on (cut back under it, a bad record followed by CRC-valid
 * ones, shorter than its header) is exit 1 naming the file and position. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/json/json.h"
#include "cli/jview.h"
#include "cli/media.h"
#include "cli/proc.h"

#include "vocab/vec.h"

#define POLL_NS (50 * DLS_NS_PER_MS)
#define WATCH_CHECK_EVERY 20 /* polls: 1 s */

static const char usage_text[] =
    "usage: daolease watch --journal J [--grantor NAME --keyring K] [--json]\n"
    "                      [--from POS | --new] [--no-follow]\n\n"
    "Prints the journal's grants, refusals and lapses (with cause) as they are\n"
    "written, and each standby judge's takeover, each with the pass it belongs\n"
    "to and that pass's now. Reads only the journal. Stops on SIGINT/SIGTERM\n"
    "(exit 0) or when the journal is sealed; exit 1 naming the file and\n"
    "position when the journal cannot be read on (cut back, damaged, shorter\n"
    "than its header).\n\n"
    "  --journal J      the grantor's journal\n"
    "  --grantor NAME   only records by NAME count\n"
    "  --keyring K      verify every record under NAME's key (else records are\n"
    "                   taken as they claim)\n"
    "  --json           JSON Lines: {\"event\": \"grant\"|\"refusal\"|\"lapsed\"|\n"
    "                   \"takeover\", ...}\n"
    "  --from POS       start at position POS (default 0: the whole history)\n"
    "  --new            start at the journal's end: only what is written now\n"
    "  --no-follow      stop at the journal's end instead of waiting\n";

/* Subjects and holders of leases granted while watching, for lapse lines. */
typedef struct wl {
    uint64_t lease;
    char *subject; /* JSON text */
    char *holder;  /* JSON string */
} wl;

typedef struct watch {
    bool json, has_now;
    uint64_t pass, now;
    dls_vec leases; /* wl */
} watch;

#define LEASE(w, i) DLS_VEC_AT((w)->leases, wl, i)

static wl *find(watch *w, uint64_t lease)
{
    for (size_t i = w->leases.n; i-- > 0;) /* recent first: lapses follow grants */
        if (LEASE(w, i).lease == lease)
            return &LEASE(w, i);
    return NULL;
}

static char *text(dls_jbuf *b, size_t from)
{
    char *t = malloc(b->n - from + 1);
    if (t) {
        memcpy(t, b->p + from, b->n - from);
        t[b->n - from] = 0;
    }
    return t;
}

static void remember(watch *w, uint64_t lease, const char *subject, const char *holder)
{
    wl *x = dls_vec_push(&w->leases, sizeof *x);
    if (x)
        *x = (wl){lease, strdup(subject), strdup(holder)};
}

static void forget(watch *w, wl *l)
{
    free(l->subject);
    free(l->holder);
    *l = LEASE(w, --w->leases.n);
}

static void header(watch *w, dls_jbuf *b, const char *event, uint64_t pos)
{
    b->n = 0;
    if (w->json) {
        dls_jbuf_puts(b, "{\"event\": \"");
        dls_jbuf_puts(b, event);
        dls_jbuf_puts(b, "\", \"position\": ");
        dls_jbuf_uint(b, pos);
        dls_jbuf_puts(b, ", \"pass\": ");
        dls_jbuf_uint(b, w->pass);
        dls_jbuf_puts(b, ", \"now\": ");
        dls_jbuf_uint(b, w->now);
    } else {
        char line[96];
        snprintf(line, sizeof line, "pass %-6" PRIu64 " %-8s", w->pass, event);
        dls_jbuf_puts(b, line);
    }
}

static void field(watch *w, dls_jbuf *b, const char *key, const char *json_value,
                  const char *human)
{
    if (w->json) {
        dls_jbuf_puts(b, ", \"");
        dls_jbuf_puts(b, key);
        dls_jbuf_puts(b, "\": ");
        dls_jbuf_puts(b, json_value);
    } else if (human) {
        dls_jbuf_puts(b, " ");
        dls_jbuf_puts(b, human);
    }
}

static void emit(watch *w, dls_jbuf *b)
{
    dls_jbuf_puts(b, w->json ? "}\n" : "\n");
    fwrite(b->p, 1, b->n, stdout);
    fflush(stdout);
}

static void on_fact(watch *w, const jv_record *r, dls_jbuf *b, dls_jbuf *t)
{
    const dls_fact *f = &r->fact;
    char num[32], buf[64];
    t->n = 0;
    if (f->kind == DLS_FACT_GRANT) {
        if (dls_json_emit(t, f->subject.p, f->subject.n, NULL))
            dls_jbuf_puts(t, "null");
        size_t hs = t->n;
        dls_jbuf_string(t, f->holder.p, f->holder.n);
        char *subject = text(t, 0), *holder = text(t, hs);
        if (!subject || !holder) {
            free(subject);
            free(holder);
            return;
        }
        subject[hs] = 0;
        header(w, b, w->json ? "accepted" : "grant", r->position);
        snprintf(num, sizeof num, "%" PRIu64, f->lease);
        snprintf(buf, sizeof buf, "lease %" PRIu64, f->lease);
        field(w, b, "lease", num, buf);
        field(w, b, "subject", subject, subject);
        field(w, b, "holder", holder, "->");
        if (!w->json) {
            dls_jbuf_puts(b, " ");
            dls_jbuf_put(b, (const char *)f->holder.p, f->holder.n);
        }
        /* cli.md rev 5, One JSON dialect: a duration in its fact form */
        dls_duration_format(&f->duration, buf, sizeof buf);
        char dq[72];
        snprintf(dq, sizeof dq, "{\"%s\": %" PRIu64 "}", dls_unit_name(f->duration.unit),
                 f->duration.magnitude);
        field(w, b, "duration", dq, buf);
        emit(w, b);
        remember(w, f->lease, subject, holder);
        free(subject);
        free(holder);
    } else if (f->kind == DLS_FACT_REFUSAL) {
        dls_jbuf_string(t, f->holder.p, f->holder.n);
        size_t rs = t->n;
        if (f->keys & DLS_K_REASON)
            dls_jbuf_string(t, f->reason.p, f->reason.n);
        else
            dls_jbuf_puts(t, "null");
        header(w, b, w->json ? "rejected" : "refusal", r->position);
        char *holder = text(t, 0), *reason = text(t, rs);
        if (holder && reason) {
            holder[rs] = 0;
            field(w, b, "holder", holder, holder);
            field(w, b, "reason", reason, reason);
            emit(w, b);
        }
        free(holder);
        free(reason);
    } else if (f->kind == DLS_FACT_RECLAIM) {
        wl *l = find(w, f->lease);
        header(w, b, "lapsed", r->position);
        snprintf(num, sizeof num, "%" PRIu64, f->lease);
        snprintf(buf, sizeof buf, "lease %" PRIu64, f->lease);
        field(w, b, "lease", num, buf);
        char cq[32];
        snprintf(cq, sizeof cq, "\"%s\"", dls_cause_name(f->cause));
        snprintf(buf, sizeof buf, "cause %s", dls_cause_name(f->cause));
        field(w, b, "cause", cq, buf);
        if (l) {
            field(w, b, "subject", l->subject, l->subject);
            field(w, b, "holder", l->holder, l->holder);
            forget(w, l);
        }
        emit(w, b);
    }
}

int dls_cmd_watch(int argc, char **argv)
{
    static const struct option opts[] = {
        {"journal", required_argument, 0, 'j'}, {"grantor", required_argument, 0, 'g'},
        {"keyring", required_argument, 0, 'k'}, {"json", no_argument, 0, 'J'},
        {"from", required_argument, 0, 'f'},    {"new", no_argument, 0, 'n'},
        {"no-follow", no_argument, 0, 'N'},     {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *journal = NULL, *grantor = NULL, *keyring = NULL;
    bool follow = true, from_end = false;
    uint64_t from = 0;
    watch w;
    memset(&w, 0, sizeof w);
    int c;
    optind = 1;
    opterr = 0;
    if (dls_cli_exact_options("watch", argc, argv, opts, 0))
        return DLS_EXIT_USAGE;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': journal = optarg; break;
        case 'g': grantor = optarg; break;
        case 'k': keyring = optarg; break;
        case 'J': w.json = true; break;
        case 'f': {
            char *end;
            from = strtoull(optarg, &end, 10);
            if (!*optarg || *end)
                return dls_cli_usage("watch", "--from takes a position (a number)");
            break;
        }
        case 'n': from_end = true; break;
        case 'N': follow = false; break;
        case 'h': fputs(usage_text, stdout); return DLS_EXIT_OK;
        default: return dls_cli_bad_option("watch", c, argv);
        }
    }
    if (!journal)
        return dls_cli_usage("watch", "--journal is required");
    if (optind != argc)
        return dls_cli_usage("watch", "unexpected argument");
    if (keyring && !grantor)
        return dls_cli_usage("watch", "--keyring needs --grantor");
    dls_keyring *kr = NULL;
    dls_where wh = {0};
    if (keyring && dls_keyring_load(&kr, keyring, &wh)) {
        dls_cli_error("watch", "%s: line %llu: %s", keyring, (unsigned long long)wh.line,
                      wh.reason ? wh.reason : "cannot be loaded");
        return DLS_EXIT_FAIL;
    }
    jv_reader jr;
    if (jv_open(&jr, "watch", journal, kr, grantor, from)) {
        dls_keyring_del(kr);
        return DLS_EXIT_FAIL;
    }
    dls_cli_catch_stop();
    dls_jbuf b = {0}, t = {0};
    jv_record r;
    bool skipping = from_end; /* --new: read marks to the end, print nothing */
    int code = DLS_EXIT_OK;
    unsigned stalls = 0;
    while (!dls_cli_stop_requested()) {
        int more = jv_next(&jr, &r);
        if (more == -2) {
            /* docs/cli.md `watch`: a journal cut back, or corrupt, is never
             * taken for its end */
            dls_cli_error("watch", "%s: position %" PRIu64 ": transport-error: %s", journal,
                          jr.err_position, jr.err.reason ? jr.err.reason : "cannot be read");
            code = DLS_EXIT_FAIL;
            break;
        }
        if (more < 0)
            break; /* sealed */
        if (more == 0) {
            skipping = false;
            /* a reader stops at a bad record: damage (CRC-valid records
             * after it) is an error, checked at the end and every
             * WATCH_CHECK_EVERY polls while following */
            if ((!follow || ++stalls % WATCH_CHECK_EVERY == 0) &&
                dls_cli_check_end("watch", journal)) {
                code = DLS_EXIT_FAIL;
                break;
            }
            if (!follow)
                break;
            dls_cli_sleep(POLL_NS);
            continue;
        }
        stalls = 0;
        if (r.kind == JV_MARK && !r.mark.continued) {
            w.pass = r.mark.pass;
            w.now = r.mark.now.ns;
            w.has_now = true;
            if (r.mark.takeover && !skipping) { /* judge.md rev 5, Standby judges */
                header(&w, &b, "takeover", r.position);
                emit(&w, &b);
            }
        } else if (r.kind == JV_FACT && !skipping) {
            on_fact(&w, &r, &b, &t);
        } else if (r.kind == JV_FACT && r.fact.kind == DLS_FACT_GRANT) {
            t.n = 0; /* remember subjects granted before the start, for lapses */
            if (dls_json_emit(&t, r.fact.subject.p, r.fact.subject.n, NULL))
                dls_jbuf_puts(&t, "null");
            size_t hs = t.n;
            dls_jbuf_string(&t, r.fact.holder.p, r.fact.holder.n);
            char *s = text(&t, 0), *h = text(&t, hs);
            if (s && h) {
                s[hs] = 0;
                remember(&w, r.fact.lease, s, h);
            }
            free(s);
            free(h);
        } else if (r.kind == JV_FACT && r.fact.kind == DLS_FACT_RECLAIM) {
            wl *l = find(&w, r.fact.lease);
            if (l)
                forget(&w, l);
        }
    }
    for (size_t i = 0; i < w.leases.n; i++) {
        free(LEASE(&w, i).subject);
        free(LEASE(&w, i).holder);
    }
    dls_vec_free(&w.leases);
    dls_jbuf_free(&b);
    dls_jbuf_free(&t);
    jv_close(&jr);
    dls_keyring_del(kr);
    return code;
}
