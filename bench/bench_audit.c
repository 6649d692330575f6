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
 *
 * Usage: bench_audit [N (default 100000)] [R (default 4)] [memory]. With
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

static dls_audit *audit(run *r, bool keep_points)
{
    dls_audit_settings s;
    dls_audit_settings_default(&s);
    s.keep_renewal_points = keep_points;
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
    return 0;
}
