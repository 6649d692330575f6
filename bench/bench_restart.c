/* bench_restart: restart of a judge from a checkpoint vs by full replay
 * (judge.md rev 4, Checkpoints; issue 17 "Measure").
 *
 * A judge on a segmented journal (16 MiB segments; BENCH_RESTART_JOURNAL=file
 * for a plain file) and one segmented lease-fact medium (8 MiB
 * segments: a cursor made at a position walks only the segment holding
 * it, where a plain file is walked from its start) grants N leases
 * (owner grants, 10,000 a pass; 16-byte subjects and holder names), then
 * H x N renewals arrive (H = history factor, 20,000 a pass, MAC-signed);
 * a checkpoint is written after the last pass. Printed (JSON Lines):
 *   checkpoint_write_s_<N>_h<H>        time to write + commit the checkpoint
 *   checkpoint_bytes_per_lease_<N>_h<H> file size / live leases
 *   restart_checkpoint_s_<N>_h<H>      dls_judge_new from the checkpoint
 *                                      (baseline: full replay; ratio)
 *   restart_replay_s_<N>_h<H>          dls_judge_new by full replay
 *   judge_new_checkpoint_s_<N>_h<H>    dls_judge_new alone from the checkpoint
 *                                      (without opening the media; baseline:
 *                                      dls_judge_new alone by full replay)
 * (restart_* include opening the journal for append — a scan of its file —
 * and the medium for reading.)
 *   restart_checkpoint_cpu_s_<N>_h<H>  CPU seconds of that restart
 *                                      (baseline: CPU seconds of full replay)
 *   checkpoint_write_thread_cpu_s_<N>_h<H>, restart_checkpoint_thread_cpu_s_<N>_h<H>
 *                                      CPU seconds of the calling thread alone
 *                                      (the digest is hashed on a second one)
 *   restart_trimmed_s|cpu_s|thread_cpu_s_<N>_h<H>
 *                                      the same restart after prune and trim
 *                                      (two checkpoints kept; the journal
 *                                      keeps what follows the older one;
 *                                      baseline: the untrimmed restart)
 *   restart_history_ratio_<N>          trimmed restart CPU seconds at the
 *                                      last history factor over the first
 *
 *   bench_restart [N ...]     default: 100000 1000000; history 1 and 10
 *   BENCH_RESTART_HISTORY="1 10" to choose the history factors.
 *   BENCH_RESTART_PERF=write|restart with DLS_BENCH_PERF_CTL (a `perf record
 *   --control fifo:` path): recording enabled around that step only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daolease/attrib.h"
#include "daolease/checkpoint.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/stream.h"
#include "common.h"

#define HOLDERS 64
#define GRANTS_PER_PASS 10000
#define RENEWALS_PER_PASS 20000

/* CPU seconds of the calling thread only: the library hashes a
 * checkpoint's digest on a second thread (judge/ckhash.c), so on a machine
 * with a core free the step takes about the larger of this and the
 * hashing thread's time. */
static double thread_cpu_s(void)
{
    return bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "bench_restart: %s: %s\n", what, dls_strerror(rc));
        exit(1);
    }
}

static int reclaim(void *u, dls_bytes s, uint64_t l, dls_cause c, bool commit)
{
    (void)u, (void)s, (void)l, (void)c, (void)commit;
    return DLS_RECLAIM_DONE;
}

typedef struct world {
    char dir[64], journal[96], medium[96], ckdir[96], lock[96];
    dls_secret *grantor, *holders[HOLDERS];
    dls_keyring *kr;
    dls_medium *j, *m, *ticks;
    dls_resolver *tr, *mr;
    dls_judge *judge;
    uint64_t now;
    double new_s;           /* dls_judge_new alone */
} world;

static void keys(world *w)
{
    uint8_t seed[32];
    memset(seed, 1, sizeof seed);
    check(dls_secret_from_seed(&w->grantor, "arbiter", DLS_KEY_ED25519, seed), "grantor");
    check(dls_keyring_new(&w->kr), "keyring");
    for (int i = 0; i < HOLDERS; i++) {
        char name[32];
        snprintf(name, sizeof name, "holder-%09d", i); /* 16 bytes */
        memset(seed, 2 + i, sizeof seed);
        check(dls_secret_from_seed(&w->holders[i], name, DLS_KEY_MAC, seed), "holder");
        check(dls_keyring_add(w->kr, (const uint8_t *)name, strlen(name), DLS_KEY_MAC,
                              dls_secret_public(w->holders[i])),
              "keyring add");
    }
}

static void open_judge(world *w, bool create, const char *ckdir)
{
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.sync = DLS_SYNC_DATA;
    ms.exclusive = true;
    /* A checkpointing judge's journal is segmented (docs/checkpoints.md,
     * Retention): opening it for append scans its last segment only, where
     * a plain file is scanned from its start (positions count records).
     * BENCH_RESTART_JOURNAL=file measures a plain file. */
    bool file = getenv("BENCH_RESTART_JOURNAL") && !strcmp(getenv("BENCH_RESTART_JOURNAL"), "file");
    if (!file)
        ms.segment_bytes = 16u << 20;
    check(create ? dls_medium_create(&w->j, file ? DLS_MEDIUM_FILE : DLS_MEDIUM_SEGMENTED,
                                     w->journal, &ms, NULL)
                 : dls_medium_open(&w->j, w->journal, DLS_OPEN_APPEND, &ms, NULL),
          "journal");
    ms.segment_bytes = 0;
    ms.sync = DLS_SYNC_NONE;
    ms.exclusive = false;
    /* the judge only reads a lease-fact medium: opening it for reading is
     * O(1); opening the journal for append scans its (last) file */
    ms.segment_bytes = 8u << 20; /* a cursor at a position walks one segment */
    check(create ? dls_medium_create(&w->m, DLS_MEDIUM_SEGMENTED, w->medium, &ms, NULL)
                 : dls_medium_open(&w->m, w->medium, DLS_OPEN_READ, &ms, NULL),
          "medium");
    dls_medium_settings rs;
    dls_medium_settings_default(&rs);
    rs.ring_capacity = 64;
    check(dls_ring_new(&w->ticks, &rs), "ticks");
    check(dls_resolver_new_medium(&w->tr, dls_medium_id(w->ticks), "ticker", NULL), "tickr");
    check(dls_resolver_new_signed(&w->mr, dls_medium_id(w->m), w->kr), "resolver");
    dls_judge_settings st;
    dls_judge_settings_default(&st);
    st.grantor = w->grantor;
    st.journal = w->j;
    st.journal_lock_path = w->lock;
    dls_judge_tick_source ts = {w->ticks, w->tr, "ticker", "bench", 0};
    st.ticks = &ts;
    st.nticks = 1;
    dls_judge_medium jm = {w->m, w->mr};
    st.media = &jm;
    st.nmedia = 1;
    st.tolerance_ns = 250 * DLS_NS_PER_MS;
    st.cadence_ns = 1000 * DLS_NS_PER_MS;
    check(dls_duration_make(&st.default_duration, DLS_UNIT_H, 24), "duration");
    st.drain_budget = 0;
    st.checkpoint_dir = ckdir;
    dls_judge_callbacks cb = {.reclaim = reclaim};
    dls_where wh = {0};
    double t0 = bench_now_s();
    int rc = dls_judge_new(&w->judge, &st, &cb, NULL, &wh);
    w->new_s = bench_now_s() - t0;
    if (rc)
        fprintf(stderr, "bench_restart: judge: %s\n", wh.reason ? wh.reason : "");
    check(rc, "judge");
}

static void close_judge(world *w)
{
    dls_judge_del(w->judge);
    dls_resolver_del(w->tr);
    dls_resolver_del(w->mr);
    dls_medium_del(w->ticks);
    dls_medium_del(w->m);
    dls_medium_del(w->j);
    w->judge = NULL;
}

static void pass(world *w)
{
    w->now += 10 * DLS_NS_PER_MS;
    dls_fact f;
    dls_duration d;
    check(dls_duration_make(&d, DLS_UNIT_NS, w->now), "duration");
    dls_fact_tick(&f, d);
    uint8_t buf[64];
    size_t n;
    check(dls_fact_encode(&f, buf, sizeof buf, &n), "encode");
    check(dls_medium_append(w->ticks, buf, n, NULL, NULL), "tick");
    dls_judge_pass_result r;
    check(dls_judge_pass(w->judge, &r), "pass");
}

static void grant_all(world *w, size_t n)
{
    for (size_t i = 0; i < n;) {
        for (size_t k = 0; k < GRANTS_PER_PASS && i < n; k++, i++) {
            char sub[32];
            uint8_t v[40];
            size_t vn;
            int len = snprintf(sub, sizeof sub, "s%015zu", i); /* 16 bytes */
            check(dls_value_str(v, sizeof v, sub, (size_t)len, &vn), "subject");
            const char *name = dls_secret_name(w->holders[i % HOLDERS]);
            check(dls_judge_grant(w->judge, (dls_bytes){v, vn},
                                  (dls_bytes){(const uint8_t *)name, strlen(name)}, 0, NULL,
                                  NULL, NULL),
                  "grant");
        }
        pass(w);
    }
}

/* Tells a `perf record --control fifo:` to enable or disable recording
 * around the step BENCH_RESTART_PERF names. */
static void perf_ctl(const char *step, const char *what)
{
    const char *path = getenv("DLS_BENCH_PERF_CTL"), *want = getenv("BENCH_RESTART_PERF");
    if (!path || !want || strcmp(want, step) != 0)
        return;
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%s\n", what);
        fclose(f);
    }
}

static void history(world *w, size_t n, size_t factor)
{
    uint64_t total = (uint64_t)n * factor, seq = 0;
    const uint8_t **recs = malloc(RENEWALS_PER_PASS * sizeof *recs);
    size_t *lens = malloc(RENEWALS_PER_PASS * sizeof *lens);
    uint8_t *buf = malloc((size_t)RENEWALS_PER_PASS * 256);
    if (!recs || !lens || !buf)
        check(DLS_ERR_NOMEM, "history");
    for (uint64_t r = 0; r < total;) {
        size_t k = 0, off = 0;
        for (; k < RENEWALS_PER_PASS && r < total; k++, r++) {
            uint64_t idx = r % n;
            seq = r / n + 1;
            dls_fact f;
            dls_fact_renewal(&f, idx + 1, seq);
            uint8_t fact[128];
            size_t fn, en;
            check(dls_fact_encode(&f, fact, sizeof fact, &fn), "encode");
            check(dls_envelope_seal(w->holders[idx % HOLDERS], dls_medium_id(w->m), fact, fn,
                                    buf + off, 256, &en),
                  "seal");
            recs[k] = buf + off;
            lens[k] = en;
            off += en;
        }
        uint64_t first;
        check(dls_medium_append_batch(w->m, recs, lens, k, &first, NULL), "append");
        pass(w);
    }
    free(recs);
    free(lens);
    free(buf);
}

/* One restart, measured: wall, process CPU and calling-thread CPU seconds,
 * and dls_judge_new alone; the judge must come back with `live` leases. */
typedef struct timing {
    double wall, cpu, thread, judge_new;
} timing;

static timing timed_open(world *w, const char *ckdir, size_t live, const char *what)
{
    timing t;
    double t0 = bench_now_s(), c0 = bench_cpu_s(), m0 = thread_cpu_s();
    open_judge(w, false, ckdir);
    t.wall = bench_now_s() - t0;
    t.cpu = bench_cpu_s() - c0;
    t.thread = thread_cpu_s() - m0;
    t.judge_new = w->new_s;
    if (dls_judge_live(w->judge) != live) {
        fprintf(stderr, "bench_restart: %s: ", what);
        check(DLS_ERR_STATE, "live leases");
    }
    close_judge(w);
    return t;
}

static void metric(const char *name, size_t n, size_t factor, double value, double baseline)
{
    char m[96];
    snprintf(m, sizeof m, "%s_%zu_h%zu", name, n, factor);
    bench_line("restart", m, value, baseline);
}

/* One renewal of lease `id` (its holder's seq), so the next pass marks. */
static void renew_one(world *w, uint64_t id, uint64_t seq)
{
    dls_fact f;
    dls_fact_renewal(&f, id, seq);
    uint8_t fact[128], env[256];
    size_t fn, en;
    check(dls_fact_encode(&f, fact, sizeof fact, &fn), "encode");
    check(dls_envelope_seal(w->holders[(id - 1) % HOLDERS], dls_medium_id(w->m), fact, fn, env,
                            sizeof env, &en),
          "seal");
    check(dls_medium_append(w->m, env, en, NULL, NULL), "append");
}

static double run(size_t n, size_t factor)
{
    world w;
    memset(&w, 0, sizeof w);
    snprintf(w.dir, sizeof w.dir, "/tmp/bench_restart.%d", (int)getpid());
    mkdir(w.dir, 0700);
    snprintf(w.journal, sizeof w.journal, "%s/journal.dls", w.dir);
    snprintf(w.medium, sizeof w.medium, "%s/medium.dls", w.dir);
    snprintf(w.ckdir, sizeof w.ckdir, "%s/journal.dls.ckpt", w.dir);
    snprintf(w.lock, sizeof w.lock, "%s/journal.lock", w.dir);
    keys(&w);
    open_judge(&w, true, NULL);
    w.now = 1000 * DLS_NS_PER_MS;
    grant_all(&w, n);
    history(&w, n, factor);
    pass(&w); /* a pass after the history: all drained */
    size_t live = dls_judge_live(w.judge);
    dls_judge_checkpoint_info info;
    /* an older checkpoint first, so that the journal can be trimmed below
     * (a trim needs two committed: docs/checkpoints.md, Retention) */
    check(dls_judge_checkpoint(w.judge, w.ckdir, &info, NULL), "first checkpoint");
    renew_one(&w, 1, factor + 1);
    pass(&w);
    perf_ctl("write", "enable");
    double t0 = bench_now_s(), c0 = bench_cpu_s(), m0 = thread_cpu_s();
    check(dls_judge_checkpoint(w.judge, w.ckdir, &info, NULL), "checkpoint");
    double tw = bench_now_s() - t0, cw = bench_cpu_s() - c0, mw = thread_cpu_s() - m0;
    perf_ctl("write", "disable");
    close_judge(&w);
    metric("checkpoint_write_s", n, factor, tw, 1.0);
    metric("checkpoint_write_cpu_s", n, factor, cw, 1.0);
    metric("checkpoint_write_thread_cpu_s", n, factor, mw, 1.0);
    metric("checkpoint_bytes_per_lease", n, factor, live ? (double)info.bytes / (double)live : 0,
           128);

    perf_ctl("restart", "enable");
    timing tc = timed_open(&w, w.ckdir, live, "restart from the checkpoint");
    for (int rep = getenv("BENCH_RESTART_REPEAT") ? atoi(getenv("BENCH_RESTART_REPEAT")) : 0;
         rep > 0; rep--) /* for profiling the restart alone */
        timed_open(&w, w.ckdir, live, "restart from the checkpoint");
    perf_ctl("restart", "disable");
    timing tr = {0};
    if (!getenv("BENCH_RESTART_NO_REPLAY")) /* profiling the checkpoint side only */
        tr = timed_open(&w, NULL, live, "full replay");
    metric("restart_checkpoint_s", n, factor, tc.wall, tr.wall);
    metric("restart_replay_s", n, factor, tr.wall, tr.wall);
    metric("judge_new_checkpoint_s", n, factor, tc.judge_new, tr.judge_new);
    metric("restart_checkpoint_cpu_s", n, factor, tc.cpu, tr.cpu);
    metric("restart_checkpoint_thread_cpu_s", n, factor, tc.thread, tc.cpu);

    /* Retention as a checkpointing judge runs it (checkpoint, prune, trim):
     * the journal keeps what follows the older checkpoint only, and a
     * restart no longer walks the grants' history when it opens it. */
    open_judge(&w, false, w.ckdir);
    uint64_t before = 0;
    check(dls_judge_prune_checkpoints(w.judge, w.ckdir, 2, NULL, NULL), "prune");
    check(dls_judge_trim_journal(w.judge, w.ckdir, &before, NULL, NULL), "trim");
    if (before == 0)
        check(DLS_ERR_STATE, "the journal was not trimmed");
    close_judge(&w);
    timing tt = timed_open(&w, w.ckdir, live, "restart on the trimmed journal");
    metric("restart_trimmed_s", n, factor, tt.wall, tc.wall);
    metric("restart_trimmed_cpu_s", n, factor, tt.cpu, tc.cpu);
    metric("restart_trimmed_thread_cpu_s", n, factor, tt.thread, tt.cpu);

    for (int i = 0; i < HOLDERS; i++)
        dls_secret_del(w.holders[i]);
    dls_secret_del(w.grantor);
    dls_keyring_del(w.kr);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", w.dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_restart: could not remove %s\n", w.dir);
    return tt.cpu;
}

int main(int argc, char **argv)
{
    size_t sizes[8] = {100000, 1000000};
    size_t nsizes = 2;
    if (argc > 1) {
        nsizes = 0;
        for (int i = 1; i < argc && nsizes < 8; i++)
            sizes[nsizes++] = (size_t)strtoull(argv[i], NULL, 10);
    }
    size_t hist[4] = {1, 10};
    size_t nhist = 2;
    const char *h = getenv("BENCH_RESTART_HISTORY");
    if (h) {
        nhist = 0;
        char *dup = strdup(h), *save = NULL;
        for (char *t = strtok_r(dup, " ,", &save); t && nhist < 4; t = strtok_r(NULL, " ,", &save))
            hist[nhist++] = (size_t)strtoull(t, NULL, 10);
        free(dup);
    }
    for (size_t s = 0; s < nsizes; s++) {
        double first = 0, last = 0;
        for (size_t k = 0; k < nhist; k++) {
            double t = run(sizes[s], hist[k]);
            if (k == 0)
                first = t;
            last = t;
        }
        if (nhist > 1) {
            char m[64];
            snprintf(m, sizeof m, "restart_history_ratio_%zu", sizes[s]);
            bench_line("restart", m, last / first, 1.2);
        }
    }
    return 0;
}
