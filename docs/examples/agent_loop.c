/* agent_loop — a small agent that claims one piece of shared work under a
 * lease, works on it only while it may act, and releases it when done
 * (docs/holder.md).
 *
 *   agent_loop NAME SECRET KEYRING GRANTOR JOURNAL MEDIUM SUBJECT [UNITS]
 *
 *   NAME     the agent's party name (the `holder` its grants name)
 *   SECRET   the agent's secret key file (mode 0600), e.g. from
 *            `daolease keygen`
 *   KEYRING  a keyring holding the grantor's Ed25519 public key
 *   GRANTOR  the grantor's party name
 *   JOURNAL  the grantor's journal (a stream file written by the judge)
 *   MEDIUM   the agent's own stream file: its proposals, renewals and
 *            release go there (created when missing; the judge must be
 *            assembled with it and a resolver for NAME)
 *   SUBJECT  what to claim, written as a msgpack str
 *   UNITS    units of work to do (default 20), one per loop turn
 *
 * The agent reads no clock itself: the tick adapter (dls_tick_now) is the
 * only clock reader; the holder sees time through the ticks. The loop
 * sleeps with nanosleep between turns — sleeping is the agent's business.
 *
 * Exit status: 0 when the work was done and released, 1 when the lease
 * was refused or lost (bound reached, or reclaimed), 2 for usage errors,
 * 3 when the agent could not start.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/holder.h"
#include "daolease/stream.h"
#include "daolease/tick.h"

#define TURN_NS 50000000ull /* 50 ms between loop turns */

/* Everything the agent assembles, so that one function can free it all. */
struct agent {
    dls_secret *secret;
    dls_keyring *keyring;
    dls_medium *journal, *own, *ticks;
    dls_resolver *journal_resolver, *tick_resolver;
    dls_cursor *journal_cursor, *tick_cursor;
    dls_tick *tick;
    dls_holder *holder;
};

static void agent_free(struct agent *a)
{
    dls_holder_del(a->holder);
    dls_tick_del(a->tick);
    dls_cursor_del(a->journal_cursor);
    dls_cursor_del(a->tick_cursor);
    dls_resolver_del(a->journal_resolver);
    dls_resolver_del(a->tick_resolver);
    dls_medium_del(a->journal);
    dls_medium_del(a->own);
    dls_medium_del(a->ticks);
    dls_keyring_del(a->keyring);
    dls_secret_del(a->secret);
}

static int fail(const char *what, int rc, const dls_where *w)
{
    fprintf(stderr, "agent_loop: %s: %s%s%s\n", what, dls_strerror(rc),
            w && w->reason ? ": " : "", w && w->reason ? w->reason : "");
    return 3;
}

/* Opens the agent's own medium for append, creating it when missing. */
static int open_own(dls_medium **out, const char *path, dls_where *w)
{
    dls_medium_settings ms;
    dls_medium_settings_default(&ms); /* sync data: an ok renewal is on disk */
    int rc = dls_medium_open(out, path, DLS_OPEN_APPEND, &ms, w);
    if (rc == DLS_ERR_IO && w->sys_errno == ENOENT)
        rc = dls_medium_create(out, DLS_MEDIUM_FILE, path, &ms, w);
    return rc;
}

static int assemble(struct agent *a, char **argv)
{
    const char *name = argv[1];
    dls_where w = {0};
    int rc;
    if ((rc = dls_secret_load(&a->secret, argv[2], &w)) != 0)
        return fail("secret key", rc, &w);
    if ((rc = dls_keyring_load(&a->keyring, argv[3], &w)) != 0)
        return fail("keyring", rc, &w);
    if ((rc = dls_medium_open(&a->journal, argv[5], DLS_OPEN_READ, NULL, &w)) != 0)
        return fail("journal", rc, &w);
    if ((rc = open_own(&a->own, argv[6], &w)) != 0)
        return fail("own medium", rc, &w);

    /* Ticks: an in-memory ring written by the host tick adapter (bare
     * facts: only this process can write the ring). */
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.ring_capacity = 1024;
    if ((rc = dls_ring_new(&a->ticks, &ms)) != 0)
        return fail("tick ring", rc, NULL);
    dls_tick_settings ts;
    dls_tick_settings_default(&ts); /* host monotonic clock, ns */
    if ((rc = dls_tick_new(&a->tick, a->ticks, &ts, &w)) != 0)
        return fail("tick adapter", rc, &w);

    /* Resolvers: the journal's records count only when signed by the
     * grantor; the ticks are the tick adapter's ("ticks"). */
    if ((rc = dls_resolver_new_signed(&a->journal_resolver, dls_medium_id(a->journal),
                                      a->keyring)) != 0)
        return fail("journal resolver", rc, NULL);
    if ((rc = dls_resolver_new_medium(&a->tick_resolver, dls_medium_id(a->ticks),
                                      "ticks", NULL)) != 0)
        return fail("tick resolver", rc, NULL);
    if ((rc = dls_cursor_new(&a->journal_cursor, a->journal, 0)) != 0 ||
        (rc = dls_cursor_new(&a->tick_cursor, a->ticks, 0)) != 0)
        return fail("cursor", rc, NULL);

    dls_holder_parts parts = {
        .name = name,
        .secret = a->secret,
        .medium = a->own,
        .grantor = argv[4],
        .journal = a->journal_cursor,
        .journal_resolver = a->journal_resolver,
        .ticks = a->tick_cursor,
        .tick_resolver = a->tick_resolver,
        .tick_party = "ticks",
    };
    dls_holder_settings hs;
    dls_holder_settings_default(&hs);
    hs.tick_period_ns = TURN_NS; /* a tick each turn: readings at most a turn old */
    if ((rc = dls_holder_new(&a->holder, &parts, &hs, NULL, NULL, &w)) != 0)
        return fail("holder", rc, &w);
    return 0;
}

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / DLS_NS_PER_S), (long)(ns % DLS_NS_PER_S)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* One unit of work on the claimed subject. The lease id is the fencing
 * token: a real resource is handed it with every write and refuses tokens
 * older than the newest it has seen (docs/holder.md, "What the bound is
 * not"). */
static void work_one_unit(const char *subject, uint64_t token, int unit)
{
    printf("work %s unit %d fencing-token %" PRIu64 "\n", subject, unit, token);
}

int main(int argc, char **argv)
{
    if (argc < 8 || argc > 9) {
        fprintf(stderr, "usage: agent_loop NAME SECRET KEYRING GRANTOR JOURNAL MEDIUM "
                        "SUBJECT [UNITS]\n");
        return 2;
    }
    int units = argc == 9 ? atoi(argv[8]) : 20;
    struct agent a;
    memset(&a, 0, sizeof a);
    int status = assemble(&a, argv);
    if (status != 0) {
        agent_free(&a);
        return status;
    }

    /* Claim the subject: a msgpack str, asking for a 3 s term. */
    uint8_t subject[DLS_SUBJECT_MAX];
    size_t subject_len;
    if (dls_value_str(subject, sizeof subject, argv[7], strlen(argv[7]), &subject_len) != 0) {
        fprintf(stderr, "agent_loop: the subject is too long\n");
        agent_free(&a);
        return 2;
    }
    dls_duration ask;
    dls_duration_make(&ask, DLS_UNIT_S, 3);
    uint64_t proposal;
    int rc = dls_holder_propose(a.holder, subject, subject_len, &ask,
                                DLS_MODE_EXCLUSIVE, &proposal);
    if (rc != 0) {
        fprintf(stderr, "agent_loop: propose: %s\n", dls_holder_message(a.holder));
        agent_free(&a);
        return 3;
    }

    uint64_t lease = 0;
    int done = 0;
    int waited = 0;   /* turns since the release was appended */
    int unanswered = 0; /* turns without an answer to the proposal */
    status = -1;
    while (status < 0) {
        /* 1. the tick adapter reads the clock; 2. the holder steps */
        if ((rc = dls_tick_now(a.tick, NULL)) != 0) {
            fprintf(stderr, "agent_loop: tick: %s\n", dls_strerror(rc));
            status = 1; /* a holder that cannot measure time must stop */
            break;
        }
        dls_holder_result res;
        rc = dls_holder_step(a.holder, &res);
        for (size_t i = 0; i < res.n_events; i++) {
            const dls_holder_event *e = &res.events[i];
            printf("event %s lease %" PRIu64 "%s%s\n", dls_holder_event_name(e->kind),
                   e->lease, e->text_len ? " " : "", e->text);
            if (e->kind == DLS_HOLDER_GRANTED && e->proposal == proposal)
                lease = e->lease;
            else if (e->kind == DLS_HOLDER_REFUSED && e->proposal == proposal)
                status = 1;
            else if (e->kind == DLS_HOLDER_LAPSED && e->lease == lease)
                status = done == units ? 0 : 1; /* released, or reclaimed under us */
            else if (e->kind == DLS_HOLDER_BOUND && e->lease == lease)
                status = 1; /* lost: renewals did not land in time */
        }
        if (rc == DLS_ERR_TICKS_ENDED)
            status = 1;

        /* 3. act only while the holder may act */
        if (status < 0 && lease && done < units && dls_holder_may_act(a.holder, lease)) {
            work_one_unit(argv[7], lease, ++done);
            if (done == units) {
                rc = dls_holder_release(a.holder, lease, true); /* commit */
                printf("release lease %" PRIu64 ": %s\n", lease,
                       rc == 0 ? "appended" : dls_strerror(rc));
            }
        }
        /* Released: the grantor still reclaims and records `lapsed`; wait for
         * it a while (the judge's cadence), then leave — the release is on
         * the medium either way. */
        if (status < 0 && done == units && ++waited > 200)
            status = 0;
        if (status < 0 && !lease && ++unanswered > 1200) {
            fprintf(stderr, "agent_loop: no answer to the proposal within 60 s\n");
            status = 1;
        }
        fflush(stdout);
        if (status < 0)
            sleep_ns(TURN_NS);
    }
    agent_free(&a);
    return status;
}
