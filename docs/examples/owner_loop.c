/* owner_loop — the judge embedded in the loop of the process that owns the
 * resources (docs/judge.md).
 *
 * The owner possesses some jobs. A worker (simulated in this process, on
 * its own stream file) proposes to take job/7, is granted a lease, renews
 * it for a while and then falls silent, as a crashed worker would. The
 * owner's loop appends a tick from the host's monotonic clock, runs one
 * judge pass, and sleeps until the reading the pass says anything can fall
 * due next (at most one cadence). The judge reclaims the job by silence
 * through the owner's reclaim procedure and records `lapsed`.
 *
 *     example_owner_loop [DIR]     (DIR: where the streams go; default: a
 *                                   temporary directory, removed at the end)
 *
 * Afterwards `daolease audit` can re-check the run from DIR's files.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/stream.h"
#include "daolease/tick.h"


/* ---- the owner's resources ---------------------------------------------------------------- */

typedef struct owner {
    int reclaimed;      /* jobs taken back */
    dls_cause last_cause;
} owner;

/* The reclaim procedure: take the resource back. Idempotent; here it
 * always succeeds at once (answer DLS_RECLAIM_NOT_YET to be retried). */
static int reclaim(void *user, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    owner *o = user;
    printf("owner: reclaim lease %" PRIu64 " (%zu-byte subject), cause %s%s\n", lease, subject.n,
           dls_cause_name(cause), commit ? ", commit" : "");
    o->reclaimed++;
    o->last_cause = cause;
    return DLS_RECLAIM_DONE;
}

/* ---- a worker, simulated: it appends signed facts to its own stream --------------------------- */

typedef struct worker {
    dls_secret *key;
    dls_medium *stream;
    dls_cursor *journal; /* reads the grantor's journal for its grant */
    uint64_t lease, seq, renewals;
} worker;

static int worker_append(worker *w, const dls_fact *f)
{
    uint8_t fact[DLS_FACT_MAX], env[DLS_FACT_MAX + 256];
    size_t n, en;
    int rc = dls_fact_encode(f, fact, sizeof fact, &n);
    if (!rc)
        rc = dls_envelope_seal(w->key, dls_medium_id(w->stream), fact, n, env, sizeof env, &en);
    if (!rc)
        rc = dls_medium_append(w->stream, env, en, NULL, NULL);
    return rc;
}

static int worker_propose(worker *w)
{
    uint8_t subject[16], proposal[16];
    size_t sn, pn;
    dls_value_str(subject, sizeof subject, "job/7", 5, &sn);
    dls_value_str(proposal, sizeof proposal, "worker-1", 8, &pn);
    dls_fact f;
    dls_fact_proposal(&f, (dls_bytes){proposal, pn}, (dls_bytes){subject, sn}, 1);
    return worker_append(w, &f);
}

/* Looks for the grant answering its proposal (a real holder verifies it
 * with dls_resolver_attribute under the grantor's key). */
static void worker_read_journal(worker *w)
{
    dls_record rec;
    while (dls_cursor_next(w->journal, &rec, NULL) == DLS_NEXT_OK) {
        dls_attribution a;
        dls_record_classify(rec.p, rec.n, &a);
        dls_fact f;
        if (dls_fact_decode(a.fact.p, a.fact.n, &f, NULL) == 0 && f.kind == DLS_FACT_GRANT &&
            f.holder.n == 6 && memcmp(f.holder.p, "worker", 6) == 0) {
            w->lease = f.lease;
            printf("worker: granted lease %" PRIu64 " for %" PRIu64 " ms\n", f.lease,
                   (uint64_t)(f.duration.ns / DLS_MS));
        }
    }
}

static int worker_renew(worker *w)
{
    dls_fact f;
    dls_fact_renewal(&f, w->lease, ++w->seq);
    w->renewals++;
    return worker_append(w, &f);
}

/* ---- the owner's loop ------------------------------------------------------------------------- */

static void sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / DLS_NS_PER_S), (long)(ns % DLS_NS_PER_S)};
    nanosleep(&ts, NULL);
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "owner_loop: %s: %s\n", what, dls_strerror(rc));
    return 1;
}

int main(int argc, char **argv)
{
    char tmp[] = "/tmp/owner-loop-XXXXXX";
    const char *dir = argc > 1 ? argv[1] : mkdtemp(tmp);
    if (!dir)
        return 1;
    char jpath[512], wpath[512];
    snprintf(jpath, sizeof jpath, "%s/journal.dls", dir);
    snprintf(wpath, sizeof wpath, "%s/worker.dls", dir);

    /* Keys: the grantor signs the journal (Ed25519, always); the worker's
     * public key goes into the keyring the judge reads its stream with. */
    dls_secret *grantor;
    worker w = {0};
    dls_keyring *kr;
    int rc;
    if ((rc = dls_secret_generate(&grantor, "owner", DLS_KEY_ED25519)) ||
        (rc = dls_secret_generate(&w.key, "worker", DLS_KEY_ED25519)) ||
        (rc = dls_keyring_new(&kr)) ||
        (rc = dls_keyring_add(kr, (const uint8_t *)"worker", 6, DLS_KEY_ED25519,
                              dls_secret_public(w.key))))
        return fail("keys", rc);

    /* Streams: the journal and the worker's stream are files (they retain
     * everything, sync data); the ticks live in a memory ring. */
    dls_medium *journal, *ticks;
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    if ((rc = dls_medium_create(&journal, DLS_MEDIUM_FILE, jpath, &ms, NULL)) ||
        (rc = dls_medium_create(&w.stream, DLS_MEDIUM_FILE, wpath, &ms, NULL)) ||
        (rc = dls_ring_new(&ticks, &ms)))
        return fail("streams", rc);
    dls_resolver *wres, *tres;
    dls_tick *clock;
    dls_tick_settings tks;
    dls_tick_settings_default(&tks); /* the host's monotonic clock, bare ticks */
    if ((rc = dls_resolver_new_signed(&wres, dls_medium_id(w.stream), kr)) ||
        (rc = dls_resolver_new_medium(&tres, dls_medium_id(ticks), "ticker", NULL)) ||
        (rc = dls_tick_new(&clock, ticks, &tks, NULL)))
        return fail("resolvers", rc);

    /* The judge. */
    dls_judge_settings s;
    dls_judge_settings_default(&s);
    s.grantor = grantor;
    s.journal = journal;
    dls_judge_tick_source tick = {ticks, tres, "ticker", dls_tick_basis(clock), 0};
    s.ticks = &tick;
    s.nticks = 1;
    dls_judge_medium media[1] = {{w.stream, wres}};
    s.media = media;
    s.nmedia = 1;
    s.tolerance_ns = 100 * DLS_MS;
    s.cadence_ns = 100 * DLS_MS;
    dls_duration_make(&s.default_duration, DLS_UNIT_MS, 600);
    owner o = {0, DLS_CAUSE_NONE};
    dls_judge_callbacks cb = {.reclaim = reclaim};
    dls_judge *j;
    dls_where where = {0};
    if ((rc = dls_judge_new(&j, &s, &cb, &o, &where))) {
        fprintf(stderr, "owner_loop: judge: %s (%s)\n", dls_strerror(rc),
                where.reason ? where.reason : "");
        return 1;
    }
    if ((rc = dls_cursor_new(&w.journal, journal, 0)) || (rc = worker_propose(&w)))
        return fail("worker", rc);

    /* The loop: tick, pass, sleep until next_due (at most one cadence). */
    uint64_t last_renewal = 0;
    for (int i = 0; i < 1000 && o.reclaimed == 0; i++) {
        uint64_t now;
        if ((rc = dls_tick_now(clock, &now)))
            return fail("tick", rc);
        dls_judge_pass_result r;
        rc = dls_judge_pass(j, &r);
        if (dls_err_is_fatal(rc))
            return fail("pass (restart the judge from its journal)", rc);
        if (rc)
            return fail("pass", rc);
        if (r.drained || r.granted || r.lapsed[DLS_CAUSE_SILENCE])
            printf("judge: pass %" PRIu64 ": drained %" PRIu64 ", granted %" PRIu64
                   ", lapsed %" PRIu64 ", live %" PRIu64 "\n",
                   r.pass, r.drained, r.granted, r.lapsed[DLS_CAUSE_SILENCE], r.live);
        /* the worker: renews every 150 ms for five renewals, then dies */
        if (!w.lease)
            worker_read_journal(&w);
        else if (w.renewals < 5 && now - last_renewal >= 150 * DLS_MS) {
            if ((rc = worker_renew(&w)))
                return fail("renew", rc);
            last_renewal = now;
        }
        uint64_t wait = s.cadence_ns;
        if (r.next_due != DLS_JUDGE_NEVER && r.next_due > now && r.next_due - now < wait)
            wait = r.next_due - now;
        sleep_ns(wait);
    }
    printf("owner: %s\n", o.reclaimed && o.last_cause == DLS_CAUSE_SILENCE
                              ? "the silent worker's job was reclaimed by silence"
                              : "nothing was reclaimed");
    printf("audit it: daolease audit --journal %s --grantor owner ... --media %s\n", jpath, wpath);

    dls_cursor_del(w.journal);
    dls_judge_del(j);
    dls_tick_del(clock);
    dls_resolver_del(wres);
    dls_resolver_del(tres);
    dls_medium_del(ticks);
    dls_medium_del(w.stream);
    dls_medium_del(journal);
    dls_keyring_del(kr);
    dls_secret_del(w.key);
    dls_secret_del(grantor);
    if (argc <= 1) {
        remove(jpath);
        remove(wpath);
        char lock[600];
        snprintf(lock, sizeof lock, "%s.lock", jpath);
        remove(lock);
        remove(dir);
    }
    return o.reclaimed == 1 && o.last_cause == DLS_CAUSE_SILENCE ? 0 : 1;
}
