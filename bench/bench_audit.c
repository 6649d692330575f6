/* bench_audit: the audit replay against a raw scan of the same files
 * (issue 13 item 7; docs/audit.md, "Speed").
 *
 * A run of N leases is written as stream files in a temporary directory:
 * a journal (grantor-signed Ed25519 envelopes: one restarted mark, N
 * grants, then one mark per round) and M lease-fact media holding R rounds
 * of renewals of every lease (MAC envelopes, one holder per medium, as the
 * fast path of a real deployment). No lease falls due. Then:
 *
 *   audit_records_per_s_<n>   records the audit replays per CPU second (journal
 *                             and media records); baseline: a raw scan of
 *                             the same files through the stream cursor
 *                             (CRC checked, no decoding); ratio = audit /
 *                             scan (target >= 0.3)
 *   audit_rss_bytes_<n>       the process's resident growth over the audit
 *                             run without renewal points (the CLI without
 *                             --svg), the audit still alive; baseline: the
 *                             same with R doubled (memory must not grow
 *                             with the renewals: ratio ~1)
 *   audit_rss_bytes_per_lease_<n>  the first divided by N
 *   audit_vs_verify_1thread   records the audit replays per CPU second on one
 *                             thread; baseline: bare verification of the
 *                             same records (the resolvers' attribution of
 *                             each journal and media record, nothing
 *                             applied); ratio = audit / verification
 *                             (target >= 0.9)
 *   audit_thread_scaling      records audited per wall second on as many
 *                             threads as cores online (settings.threads);
 *                             baseline: the same on one thread; ratio =
 *                             all cores / one (target >= 1.7 on 2 cores; on
 *                             a shared machine wall time measures the
 *                             neighbours too)
 *   audit_incremental_ratio   CPU seconds of a night's audit after one day
 *                             (--from-checkpoint: the checkpoint at the end
 *                             of day 9) over a full audit of 10 days, both
 *                             on one thread with the checkpoint folder, of
 *                             a real judge's run (in process: L leases of
 *                             one MAC holder renewed every pass, P passes
 *                             a day, a checkpoint at the end of each day);
 *                             value = the night's, baseline = the full
 *                             audit's; ratio target <= 0.15
 *
 * Usage: bench_audit [N (default 100000)] [R (default 4)]
 *                    [memory | threads | incremental [L (2000)] [P (24)]].
 * `threads` measures only audit_vs_verify_1thread and audit_thread_scaling,
 * `incremental` only audit_incremental_ratio. With
 * `memory` only audit_rss_bytes (and per lease) are measured, on one run,
 * baseline 0: for 10^6 leases, whose one Ed25519 grant record each takes
 * minutes to write and verify on this machine. docs/audit.md gives the
 * figures. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daolease/attrib.h"
#include "daolease/audit.h"
#include "daolease/checkpoint.h"
#include "daolease/judge.h"
#include "daolease/fact.h"
#include "daolease/mark.h"
#include "daolease/stream.h"
#include "common.h"

#define MEDIA 4
#define BATCH 256
#define BASIS "bench-basis"

/* Process CPU time: the machine these figures come from is shared, and
 * wall time there measures the neighbours as much as the audit. */
static double now_s(void)
{
    return bench_clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

static long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
            rss = 0;
        fclose(f);
    }
    return rss * sysconf(_SC_PAGESIZE);
}

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "bench_audit: %s: %s\n", what, dls_strerror(rc));
        exit(1);
    }
}

typedef struct run {
    char dir[256];
    dls_secret *grantor, *holders[MEDIA];
    dls_keyring *kr;
    dls_medium *journal, *media[MEDIA];
    uint64_t next[MEDIA];       /* each medium's next position */
    uint64_t records;           /* journal + media records written */
} run;

static dls_medium *create(run *r, const char *name, uint8_t tag)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", r->dir, name);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    uint8_t id[16];
    memset(id, tag, sizeof id);
    ms.id = id;
    ms.sync = DLS_SYNC_NONE;
    dls_medium *m = NULL;
    check(dls_medium_create(&m, DLS_MEDIUM_FILE, path, &ms, NULL), "create a medium");
    return m;
}

static void put(run *r, dls_medium *m, const dls_secret *s, const dls_fact *f)
{
    static uint8_t fact[DLS_FACT_MAX], env[DLS_RECORD_MAX];
    size_t n = 0, en = 0;
    check(dls_fact_encode(f, fact, sizeof fact, &n), "encode");
    check(dls_envelope_seal(s, dls_medium_id(m), fact, n, env, sizeof env, &en), "seal");
    check(dls_medium_append(m, env, en, NULL, NULL), "append");
    r->records++;
}

static void put_mark(run *r, uint64_t pass, bool restarted)
{
    dls_mark_pos drained[MEDIA];
    for (int i = 0; i < MEDIA; i++) {
        memcpy(drained[i].medium, dls_medium_id(r->media[i]), 16);
        drained[i].position = r->next[i];
    }
    dls_mark m;
    memset(&m, 0, sizeof m);
    m.pass = pass;
    m.now_ns = pass * DLS_NS_PER_S;
    m.basis = (dls_bytes){(const uint8_t *)BASIS, strlen(BASIS)};
    m.tolerance_ns = 250000000ull;
    m.cadence_ns = DLS_NS_PER_S;
    m.drained = drained;
    m.n_drained = MEDIA;
    m.restarted = restarted;
    dls_mark_writer wr;
    memset(&wr, 0, sizeof wr);
    static uint8_t buf[DLS_JOURNAL_RECORD_MAX], env[DLS_JOURNAL_RECORD_MAX + 256];
    size_t len, en;
    int rc;
    while ((rc = dls_mark_encode_next(&m, &wr, buf, dls_mark_limit(7), &len)) == 1) {
        check(dls_envelope_seal(r->grantor, dls_medium_id(r->journal), buf, len, env, sizeof env,
                                &en),
              "seal a mark");
        check(dls_medium_append(r->journal, env, en, NULL, NULL), "append a mark");
        r->records++;
    }
    check(rc, "encode a mark");
}

/* N leases, R rounds of renewals: files in r->dir. */
static void write_run(run *r, size_t n, unsigned rounds)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s/bench-audit-XXXXXX",
             getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(r->dir)) {
        perror("mkdtemp");
        exit(1);
    }
    uint8_t seed[32];
    memset(seed, 1, sizeof seed);
    check(dls_secret_from_seed(&r->grantor, "arbiter", DLS_KEY_ED25519, seed), "grantor");
    check(dls_keyring_new(&r->kr), "keyring");
    check(dls_keyring_add(r->kr, (const uint8_t *)"arbiter", 7, DLS_KEY_ED25519,
                          dls_secret_public(r->grantor)),
          "keyring add");
    r->journal = create(r, "journal.dls", 0x4a);
    for (int i = 0; i < MEDIA; i++) {
        char name[32];
        snprintf(name, sizeof name, "holder-%d", i);
        memset(seed, 0x40 + i, sizeof seed);
        check(dls_secret_from_seed(&r->holders[i], name, DLS_KEY_MAC, seed), "holder");
        check(dls_keyring_add(r->kr, (const uint8_t *)name, strlen(name), DLS_KEY_MAC,
                              dls_secret_public(r->holders[i])),
              "keyring add");
        snprintf(name, sizeof name, "m%d.dls", i);
        r->media[i] = create(r, name, (uint8_t)(0x10 + i));
    }
    put_mark(r, 1, true);
    dls_duration d;
    check(dls_duration_make(&d, DLS_UNIT_S, 10), "duration");
    for (size_t i = 0; i < n; i++) {
        uint8_t subj[32];
        char s[24];
        size_t sn = 0;
        int len = snprintf(s, sizeof s, "item-%zu", i);
        check(dls_value_str(subj, sizeof subj, s, (size_t)len, &sn), "subject");
        const char *holder = dls_secret_name(r->holders[i % MEDIA]);
        dls_fact f;
        dls_fact_grant(&f, i + 1, (dls_bytes){subj, sn},
                       (dls_bytes){(const uint8_t *)holder, strlen(holder)}, d,
                       dls_medium_id(r->media[i % MEDIA]));
        put(r, r->journal, r->grantor, &f);
    }
    /* renewals: appended in batches of BATCH per medium (setup speed only) */
    static uint8_t bufs[MEDIA][BATCH][512];
    static const uint8_t *recs[MEDIA][BATCH];
    static size_t lens[MEDIA][BATCH], cnt[MEDIA];
    for (unsigned round = 1; round <= rounds; round++) {
        for (size_t i = 0; i < n; i++) {
            int k = (int)(i % MEDIA);
            dls_fact f;
            dls_fact_renewal(&f, i + 1, round);
            uint8_t fact[DLS_FACT_MAX];
            size_t fn = 0;
            check(dls_fact_encode(&f, fact, sizeof fact, &fn), "encode");
            check(dls_envelope_seal(r->holders[k], dls_medium_id(r->media[k]), fact, fn,
                                    bufs[k][cnt[k]], sizeof bufs[k][0], &lens[k][cnt[k]]),
                  "seal");
            recs[k][cnt[k]] = bufs[k][cnt[k]];
            if (++cnt[k] == BATCH || i + MEDIA >= n) {
                check(dls_medium_append_batch(r->media[k], recs[k], lens[k], cnt[k], NULL, NULL),
                      "append");
                r->next[k] += cnt[k];
                r->records += cnt[k];
                cnt[k] = 0;
            }
        }
        put_mark(r, 1 + round, false);
    }
}

static void close_run(run *r)
{
    dls_medium_del(r->journal);
    for (int i = 0; i < MEDIA; i++) {
        dls_medium_del(r->media[i]);
        dls_secret_del(r->holders[i]);
    }
    dls_secret_del(r->grantor);
    dls_keyring_del(r->kr);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_audit: could not remove %s\n", r->dir);
}

/* Reads every file once through a cursor (CRC checked, nothing decoded). */
static uint64_t raw_scan(run *r)
{
    uint64_t n = 0;
    dls_medium *all[MEDIA + 1] = {r->journal};
    for (int i = 0; i < MEDIA; i++)
        all[i + 1] = r->media[i];
    for (int i = 0; i <= MEDIA; i++) {
        dls_cursor *c = NULL;
        check(dls_cursor_new(&c, all[i], 0), "cursor");
        dls_record rec;
        while (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK)
            n++;
        dls_cursor_del(c);
    }
    return n;
}

/* Bare verification of every record of the run (journal: one fact a
 * record; media: batches allowed), nothing applied: records verified. */
static uint64_t raw_verify(run *r)
{
    uint64_t n = 0;
    dls_medium *all[MEDIA + 1] = {r->journal};
    for (int i = 0; i < MEDIA; i++)
        all[i + 1] = r->media[i];
    for (int i = 0; i <= MEDIA; i++) {
        dls_resolver *res = NULL;
        check(dls_resolver_new_signed(&res, dls_medium_id(all[i]), r->kr), "resolver");
        dls_cursor *c = NULL;
        check(dls_cursor_new(&c, all[i], 0), "cursor");
        dls_record rec;
        while (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK) {
            dls_attribution at;
            dls_facts it;
            if (i == 0)
                dls_resolver_attribute(res, rec.p, rec.n, &at);
            else
                dls_resolver_attribute_facts(res, rec.p, rec.n, &at, &it);
            if (!at.attributed) {
                fprintf(stderr, "bench_audit: a record does not verify\n");
                exit(1);
            }
            n++;
        }
        dls_cursor_del(c);
        dls_resolver_del(res);
    }
    return n;
}

static dls_audit *audit_threads(run *r, bool keep_points, unsigned threads)
{
    dls_audit_settings s;
    dls_audit_settings_default(&s);
    s.keep_renewal_points = keep_points;
    s.threads = threads;
    dls_audit_medium am[MEDIA];
    for (int i = 0; i < MEDIA; i++)
        am[i] = (dls_audit_medium){r->media[i], NULL};
    dls_audit *a = NULL;
    dls_where w;
    memset(&w, 0, sizeof w);
    check(dls_audit_run(&a, &s, r->journal, "arbiter", r->kr, am, MEDIA, &w), "audit");
    if (dls_audit_exit_status(a) != 0 || dls_audit_lease_count(a) == 0) {
        fprintf(stderr, "bench_audit: the run does not audit clean\n");
        exit(1);
    }
    return a;
}

static dls_audit *audit(run *r, bool keep_points)
{
    return audit_threads(r, keep_points, 1);
}

static unsigned cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : n > 64 ? 64u : (unsigned)n;
}

/* audit_vs_verify_1thread and audit_thread_scaling on run r (the best of
 * two of each, interleaved). */
static void threads_metrics(run *r, size_t n)
{
    double ver = 1e300, one = 1e300, wall1 = 1e300, wallk = 1e300, cpuk = 1e300;
    double applyk = 1e300; /* CPU of the replay's (calling) thread, k threads */
    uint64_t verified = 0, audited = 0;
    unsigned k = cores();
    for (int rep = 0; rep < 2; rep++) {
        double t0 = now_s();
        verified = raw_verify(r);
        double t1 = now_s();
        double w1 = bench_now_s();
        dls_audit *a = audit_threads(r, false, 1);
        double t2 = now_s(), w2 = bench_now_s();
        const dls_audit_summary *s = dls_audit_summary_of(a);
        audited = s->journal_records + s->media_records;
        dls_audit_del(a);
        double c2 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
        a = audit_threads(r, false, k);
        double w3 = bench_now_s(), t3 = now_s();
        double c3 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
        if (c3 - c2 < applyk)
            applyk = c3 - c2;
        dls_audit_del(a);
        if (t3 - t2 < cpuk)
            cpuk = t3 - t2;
        if (t1 - t0 < ver)
            ver = t1 - t0;
        if (t2 - t1 < one)
            one = t2 - t1;
        if (w2 - w1 < wall1)
            wall1 = w2 - w1;
        if (w3 - w2 < wallk)
            wallk = w3 - w2;
    }
    if (verified != audited) {
        fprintf(stderr, "bench_audit: verified %" PRIu64 " records, audited %" PRIu64 "\n",
                verified, audited);
        exit(1);
    }
    /* CPU seconds of all the threads: what the threads add beside the work */
    /* and the scaling an idle machine would show: one thread's CPU over the
     * longer of the replay thread's CPU and all threads' CPU / k (wall time
     * here measures the neighbours too) */
    double bound = applyk > cpuk / k ? applyk : cpuk / k;
    fprintf(stderr, "bench_audit: %" PRIu64 " records; one thread %.3f s CPU, %.3f s wall; %u "
                    "threads %.3f s CPU (all threads; the replay's thread %.3f s), %.3f s wall; "
                    "idle-machine bound of the scaling %.2f\n",
            audited, one, wall1, k, cpuk, applyk, wallk, one / bound);
    char m[96];
    snprintf(m, sizeof m, "audit_vs_verify_1thread_%zu", n);
    bench_line("audit", m, (double)audited / one, (double)verified / ver);
    snprintf(m, sizeof m, "audit_thread_scaling_%zu_%uthreads", n, k);
    bench_line("audit", m, (double)audited / wallk, (double)audited / wall1);
}

/* ---- audit_incremental_ratio: a real judge's run with daily checkpoints ---- */

typedef struct irun {
    char dir[256], jpath[400], mpath[400], ckpt[400];
    dls_secret *grantor, *holder;
    dls_keyring *kr;
    uint64_t last_ckpt;         /* the pass of the checkpoint ending day 9 */
} irun;

static void put_raw(dls_medium *m, const dls_fact *f, const dls_secret *s)
{
    static uint8_t fact[DLS_FACT_MAX], env[DLS_RECORD_MAX];
    size_t n = 0, en = 0;
    check(dls_fact_encode(f, fact, sizeof fact, &n), "encode");
    if (!s) {
        check(dls_medium_append(m, fact, n, NULL, NULL), "append a tick");
        return;
    }
    check(dls_envelope_seal(s, dls_medium_id(m), fact, n, env, sizeof env, &en), "seal");
    check(dls_medium_append(m, env, en, NULL, NULL), "append");
}

static int irun_reclaim(void *u, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    (void)u, (void)subject, (void)lease, (void)cause, (void)commit;
    return DLS_RECLAIM_DONE;
}

/* `days` days of `per_day` passes: L leases proposed on the first pass,
 * granted, then renewed every pass; a checkpoint after each day. */
static void irun_write(irun *r, size_t leases, unsigned per_day, unsigned days)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s/bench-audit-XXXXXX",
             getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(r->dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(r->jpath, sizeof r->jpath, "%s/journal.dls", r->dir);
    snprintf(r->mpath, sizeof r->mpath, "%s/m.dls", r->dir);
    snprintf(r->ckpt, sizeof r->ckpt, "%s/journal.dls.ckpt", r->dir);
    uint8_t seed[32];
    memset(seed, 1, sizeof seed);
    check(dls_secret_from_seed(&r->grantor, "arbiter", DLS_KEY_ED25519, seed), "grantor");
    memset(seed, 2, sizeof seed);
    check(dls_secret_from_seed(&r->holder, "worker", DLS_KEY_MAC, seed), "holder");
    check(dls_keyring_new(&r->kr), "keyring");
    check(dls_keyring_add(r->kr, (const uint8_t *)"arbiter", 7, DLS_KEY_ED25519,
                          dls_secret_public(r->grantor)), "keyring add");
    check(dls_keyring_add(r->kr, (const uint8_t *)"worker", 6, DLS_KEY_MAC,
                          dls_secret_public(r->holder)), "keyring add");
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    uint8_t jid[16], mid[16], tid[16];
    memset(jid, 0x4a, 16);
    memset(mid, 0x10, 16);
    memset(tid, 0x7e, 16);
    ms.sync = DLS_SYNC_NONE;
    dls_medium *journal = NULL, *m = NULL, *tick = NULL;
    ms.id = jid;
    ms.sync = DLS_SYNC_DATA; /* the judge requires it of its journal */
    check(dls_medium_create(&journal, DLS_MEDIUM_FILE, r->jpath, &ms, NULL), "journal");
    ms.sync = DLS_SYNC_NONE;
    ms.id = mid;
    check(dls_medium_create(&m, DLS_MEDIUM_FILE, r->mpath, &ms, NULL), "medium");
    dls_medium_settings rs;
    dls_medium_settings_default(&rs);
    rs.id = tid;
    rs.ring_capacity = 1u << 16;
    check(dls_ring_new(&tick, &rs), "tick ring");
    dls_resolver *tres = NULL, *mres = NULL;
    check(dls_resolver_new_medium(&tres, tid, "ticker", NULL), "tick resolver");
    check(dls_resolver_new_signed(&mres, mid, r->kr), "resolver");
    dls_judge_medium jm = {m, mres};
    dls_judge_settings s;
    dls_judge_settings_default(&s);
    s.grantor = r->grantor;
    s.journal = journal;
    dls_judge_tick_source ts = {tick, tres, "ticker", BASIS, 0};
    s.ticks = &ts;
    s.nticks = 1;
    s.media = &jm;
    s.nmedia = 1;
    s.tolerance_ns = 250 * DLS_NS_PER_MS;
    s.cadence_ns = DLS_NS_PER_S;
    check(dls_duration_make(&s.default_duration, DLS_UNIT_S, 10), "duration");
    dls_judge_callbacks cb = {.reclaim = irun_reclaim};
    dls_judge *j = NULL;
    check(dls_judge_new(&j, &s, &cb, NULL, NULL), "judge");
    uint64_t *seq = calloc(leases + 1, sizeof *seq);
    if (!seq)
        check(DLS_ERR_NOMEM, "seqs");
    for (unsigned pass = 1; pass <= per_day * days; pass++) {
        dls_fact f;
        if (pass == 1) {
            for (size_t i = 0; i < leases; i++) {
                uint8_t sb[32], pb[32];
                size_t sn = 0, pn = 0;
                char t[24];
                int n = snprintf(t, sizeof t, "item-%zu", i);
                check(dls_value_str(sb, sizeof sb, t, (size_t)n, &sn), "subject");
                n = snprintf(t, sizeof t, "p-%zu", i);
                check(dls_value_str(pb, sizeof pb, t, (size_t)n, &pn), "proposal");
                dls_fact_proposal(&f, (dls_bytes){pb, pn}, (dls_bytes){sb, sn}, i + 1);
                put_raw(m, &f, r->holder);
            }
        } else {
            uint64_t top = dls_judge_highest_lease(j);
            for (uint64_t id = 1; id <= top && id <= leases; id++) {
                dls_fact_renewal(&f, id, ++seq[id]);
                put_raw(m, &f, r->holder);
            }
        }
        dls_duration d;
        check(dls_duration_make(&d, DLS_UNIT_MS, 1000ull * pass), "tick");
        dls_fact_tick(&f, d);
        put_raw(tick, &f, NULL);
        dls_judge_pass_result pr;
        check(dls_judge_pass(j, &pr), "pass");
        if (pass % per_day == 0) {
            dls_judge_checkpoint_info ci;
            check(dls_judge_checkpoint(j, r->ckpt, &ci, NULL), "checkpoint");
            if (pass / per_day == days - 1)
                r->last_ckpt = ci.pass;
        }
    }
    free(seq);
    dls_judge_del(j);
    dls_resolver_del(tres);
    dls_resolver_del(mres);
    dls_medium_del(tick);
    dls_medium_del(m);
    dls_medium_del(journal);
}

/* CPU seconds of one audit of the run from checkpoint `from` (0: all). */
static double irun_audit(irun *r, uint64_t from, uint64_t *records)
{
    dls_medium *j = NULL, *m = NULL;
    check(dls_medium_open(&j, r->jpath, DLS_OPEN_READ, NULL, NULL), "open the journal");
    check(dls_medium_open(&m, r->mpath, DLS_OPEN_READ, NULL, NULL), "open the medium");
    dls_audit_settings s;
    dls_audit_settings_default(&s);
    s.keep_renewal_points = false;
    s.checkpoints = r->ckpt;
    s.from_checkpoint = from;
    dls_audit_medium am = {m, NULL};
    dls_audit *a = NULL;
    double t0 = now_s();
    check(dls_audit_run(&a, &s, j, "arbiter", r->kr, &am, 1, NULL), "audit");
    double t1 = now_s();
    const dls_audit_summary *sum = dls_audit_summary_of(a);
    if (dls_audit_exit_status(a) != 0 || (from && sum->start_checkpoint != from)) {
        fprintf(stderr, "bench_audit: the judge's run does not audit clean from %" PRIu64
                        " (exit %d%s%s)\n", from, dls_audit_exit_status(a),
                sum->incomplete ? ": " : "", sum->incomplete ? sum->incomplete : "");
        exit(1);
    }
    *records = sum->journal_records + sum->media_records;
    dls_audit_del(a);
    dls_medium_del(m);
    dls_medium_del(j);
    return t1 - t0;
}

static void incremental_metric(size_t leases, unsigned per_day)
{
    irun r;
    irun_write(&r, leases, per_day, 10);
    double full = 1e300, night = 1e300;
    uint64_t nf = 0, nn = 0;
    for (int rep = 0; rep < 2; rep++) {
        double t = irun_audit(&r, 0, &nf);
        if (t < full)
            full = t;
        t = irun_audit(&r, r.last_ckpt, &nn);
        if (t < night)
            night = t;
    }
    fprintf(stderr, "bench_audit: incremental: %zu leases, %u passes a day, 10 days: the full "
                    "audit replays %" PRIu64 " records, the night's from checkpoint %" PRIu64
                    " %" PRIu64 "\n", leases, per_day, nf, r.last_ckpt, nn);
    bench_line("audit", "audit_incremental_ratio", night, full);
    dls_secret_del(r.grantor);
    dls_secret_del(r.holder);
    dls_keyring_del(r.kr);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", r.dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_audit: could not remove %s\n", r.dir);
}

/* Resident growth over one audit of run r (the audit alive when measured). */
static long rss_of(run *rp)
{
    run r = *rp;
    long rss0 = rss_bytes();
    dls_audit *a = audit(&r, false);
    long rss1 = rss_bytes();
    dls_audit_del(a);
    return rss1 - rss0;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 100000;
    unsigned rounds = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 4;
    if (!n || !rounds) {
        fprintf(stderr, "usage: bench_audit [N] [R] [memory]\n");
        return 2;
    }
    char m[96];
    if (argc > 3 && strcmp(argv[3], "incremental") == 0) {
        size_t leases = argc > 4 ? (size_t)strtoull(argv[4], NULL, 10) : 2000;
        unsigned per_day = argc > 5 ? (unsigned)strtoul(argv[5], NULL, 10) : 24;
        incremental_metric(leases ? leases : 2000, per_day ? per_day : 24);
        return 0;
    }
    if (argc > 3 && strcmp(argv[3], "threads") == 0) {
        run r;
        write_run(&r, n, rounds);
        threads_metrics(&r, n);
        close_run(&r);
        return 0;
    }
    if (argc > 3 && strcmp(argv[3], "memory") == 0) {
        run r1;
        write_run(&r1, n, rounds);
        long rss = rss_of(&r1);
        close_run(&r1);
        snprintf(m, sizeof m, "audit_rss_bytes_%zu", n);
        bench_line("audit", m, (double)rss, 0);
        snprintf(m, sizeof m, "audit_rss_bytes_per_lease_%zu", n);
        bench_line("audit", m, (double)rss / (double)n, 0);
        return 0;
    }

    /* speed: the same files scanned raw, then audited (twice each, the
     * best of two, so the page cache is warm for both) */
    run r;
    write_run(&r, n, rounds);
    double scan = 1e300, aud = 1e300;
    uint64_t scanned = 0;
    for (int k = 0; k < 2; k++) {
        double t0 = now_s();
        scanned = raw_scan(&r);
        double t1 = now_s();
        dls_audit *a = audit(&r, false);
        double t2 = now_s();
        const dls_audit_summary *s = dls_audit_summary_of(a);
        if (s->journal_records + s->media_records != scanned || scanned != r.records) {
            fprintf(stderr, "bench_audit: audited %" PRIu64 " + %" PRIu64 " records of %" PRIu64
                            "\n", s->journal_records, s->media_records, scanned);
            return 1;
        }
        dls_audit_del(a);
        if (t1 - t0 < scan)
            scan = t1 - t0;
        if (t2 - t1 < aud)
            aud = t2 - t1;
    }
    snprintf(m, sizeof m, "audit_records_per_s_%zu", n);
    bench_line("audit", m, (double)scanned / aud, (double)scanned / scan);

    threads_metrics(&r, n);

    /* memory: independent of the renewals (the same leases, twice the
     * rounds) */
    long rss = rss_of(&r);
    close_run(&r);
    run r2;
    write_run(&r2, n, rounds * 2);
    long rss2 = rss_of(&r2);
    close_run(&r2);
    snprintf(m, sizeof m, "audit_rss_bytes_%zu", n);
    bench_line("audit", m, (double)rss, (double)rss2);
    snprintf(m, sizeof m, "audit_rss_bytes_per_lease_%zu", n);
    bench_line("audit", m, (double)rss / (double)n, (double)rss2 / (double)n);
    incremental_metric(2000, 24);
    return 0;
}
