/* bench_prune: what the judge's retention costs after a checkpoint
 * (judge.md rev 4, Checkpoints, Commit and Retention; docs/checkpoints.md,
 * "Prune verifies what it keeps").
 *
 * A judge on a segmented journal (1 MiB segments, no bound) grants N
 * leases (owner grants, 10,000 a pass; 16-byte subjects and holder names)
 * and writes three checkpoints, a few passes apart. Then, as the CLI judge
 * does after each checkpoint, dls_judge_prune_checkpoints (keep 2: the two
 * newest committed checkpoints are read whole and their digests checked,
 * the oldest deleted) and dls_judge_trim_journal (the two newest checked
 * again, whole segments deleted). Printed (JSON Lines), baseline the third
 * checkpoint's write (encode + write + fsync + commit):
 *   checkpoint_write_s_<N>         the checkpoint write itself (ratio 1)
 *   checkpoint_bytes_<N>           its file size (baseline: none)
 *   prune_s_<N>                    the prune (baseline: the write)
 *   trim_s_<N>                     the trim (baseline: the write)
 *   verify_mb_per_s_<N>            2 checkpoints' bytes / prune seconds
 * CPU seconds of each are printed as *_cpu_s_<N> (the machine is shared).
 *
 *   bench_prune [N ...]     default: 100000
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

static void check(int rc, const char *what, const dls_where *w)
{
    if (rc) {
        fprintf(stderr, "bench_prune: %s: %s (%s)\n", what, dls_strerror(rc),
                w && w->reason ? w->reason : "");
        exit(1);
    }
}

static int reclaim(void *u, dls_bytes s, uint64_t l, dls_cause c, bool commit)
{
    (void)u, (void)s, (void)l, (void)c, (void)commit;
    return DLS_RECLAIM_DONE;
}

typedef struct world {
    char dir[64], journal[96], ckdir[112];
    dls_secret *grantor;
    dls_medium *j, *ticks, *m;
    dls_resolver *tr, *mr;
    dls_judge *judge;
    uint64_t now;
} world;

static void pass(world *w)
{
    w->now += 10 * DLS_NS_PER_MS;
    dls_fact f;
    dls_duration d;
    check(dls_duration_make(&d, DLS_UNIT_NS, w->now), "duration", NULL);
    dls_fact_tick(&f, d);
    uint8_t buf[64];
    size_t n;
    check(dls_fact_encode(&f, buf, sizeof buf, &n), "encode", NULL);
    check(dls_medium_append(w->ticks, buf, n, NULL, NULL), "tick", NULL);
    dls_judge_pass_result r;
    check(dls_judge_pass(w->judge, &r), "pass", NULL);
}

static void run(size_t n)
{
    world w;
    memset(&w, 0, sizeof w);
    snprintf(w.dir, sizeof w.dir, "/tmp/bench_prune.%d", (int)getpid());
    mkdir(w.dir, 0700);
    snprintf(w.journal, sizeof w.journal, "%s/journal.seg", w.dir);
    snprintf(w.ckdir, sizeof w.ckdir, "%s/journal.seg.ckpt", w.dir);
    uint8_t seed[32];
    memset(seed, 1, sizeof seed);
    check(dls_secret_from_seed(&w.grantor, "arbiter", DLS_KEY_ED25519, seed), "grantor", NULL);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.sync = DLS_SYNC_DATA;
    ms.exclusive = true;
    ms.segment_bytes = 1u << 20;
    check(dls_medium_create(&w.j, DLS_MEDIUM_SEGMENTED, w.journal, &ms, NULL), "journal", NULL);
    dls_medium_settings rs;
    dls_medium_settings_default(&rs);
    rs.ring_capacity = 64;
    check(dls_ring_new(&w.ticks, &rs), "ticks", NULL);
    check(dls_resolver_new_medium(&w.tr, dls_medium_id(w.ticks), "ticker", NULL), "tickr", NULL);
    check(dls_ring_new(&w.m, &rs), "medium", NULL); /* the leases' medium: nothing on it */
    check(dls_resolver_new_medium(&w.mr, dls_medium_id(w.m), "holder-000000000", NULL), "mr",
          NULL);
    dls_judge_settings st;
    dls_judge_settings_default(&st);
    st.grantor = w.grantor;
    st.journal = w.j;
    dls_judge_tick_source ts = {w.ticks, w.tr, "ticker", "bench", 0};
    st.ticks = &ts;
    st.nticks = 1;
    dls_judge_medium jm = {w.m, w.mr};
    st.media = &jm;
    st.nmedia = 1;
    st.tolerance_ns = 250 * DLS_NS_PER_MS;
    st.cadence_ns = 1000 * DLS_NS_PER_MS;
    check(dls_duration_make(&st.default_duration, DLS_UNIT_H, 24), "duration", NULL);
    st.drain_budget = 0;
    st.checkpoint_dir = w.ckdir;
    dls_judge_callbacks cb = {.reclaim = reclaim};
    dls_where wh = {0};
    check(dls_judge_new(&w.judge, &st, &cb, NULL, &wh), "judge", &wh);
    w.now = 1000 * DLS_NS_PER_MS;
    dls_judge_checkpoint_info info;
    double tw = 0, cw = 0;
    for (size_t i = 0; i < n + 3;) {
        /* the last 3 grants one a pass: a marked pass before each checkpoint */
        size_t per = i < n ? GRANTS_PER_PASS : 1;
        for (size_t k = 0; k < per && (i < n || k == 0); k++, i++) {
            char sub[32], holder[32];
            uint8_t v[40];
            size_t vn;
            int len = snprintf(sub, sizeof sub, "s%015zu", i); /* 16 bytes */
            snprintf(holder, sizeof holder, "holder-%09zu", i % HOLDERS); /* 16 bytes */
            check(dls_value_str(v, sizeof v, sub, (size_t)len, &vn), "subject", NULL);
            check(dls_judge_grant(w.judge, (dls_bytes){v, vn},
                                  (dls_bytes){(const uint8_t *)holder, strlen(holder)}, 0, NULL,
                                  NULL, NULL),
                  "grant", NULL);
        }
        pass(&w);
        if (i <= n)
            continue;
        double t0 = bench_now_s(), c0 = bench_cpu_s();
        check(dls_judge_checkpoint(w.judge, w.ckdir, &info, &wh), "checkpoint", &wh);
        tw = bench_now_s() - t0;
        cw = bench_cpu_s() - c0;
    }
    size_t deleted = 0;
    double t0 = bench_now_s(), c0 = bench_cpu_s();
    check(dls_judge_prune_checkpoints(w.judge, w.ckdir, 2, &deleted, &wh), "prune", &wh);
    double tp = bench_now_s() - t0, cp = bench_cpu_s() - c0;
    if (deleted != 1)
        check(DLS_ERR_STATE, "prune deleted other than one checkpoint", NULL);
    uint64_t before = 0;
    t0 = bench_now_s();
    c0 = bench_cpu_s();
    check(dls_judge_trim_journal(w.judge, w.ckdir, &before, NULL, &wh), "trim", &wh);
    double tt = bench_now_s() - t0, ct = bench_cpu_s() - c0;
    if (before == 0)
        check(DLS_ERR_STATE, "nothing trimmed", NULL);
    char m[96];
    snprintf(m, sizeof m, "checkpoint_write_s_%zu", n);
    bench_line("prune", m, tw, tw);
    snprintf(m, sizeof m, "checkpoint_write_cpu_s_%zu", n);
    bench_line("prune", m, cw, cw);
    snprintf(m, sizeof m, "checkpoint_bytes_%zu", n);
    bench_line("prune", m, (double)info.bytes, 0);
    snprintf(m, sizeof m, "prune_s_%zu", n);
    bench_line("prune", m, tp, tw);
    snprintf(m, sizeof m, "prune_cpu_s_%zu", n);
    bench_line("prune", m, cp, cw);
    snprintf(m, sizeof m, "trim_s_%zu", n);
    bench_line("prune", m, tt, tw);
    snprintf(m, sizeof m, "trim_cpu_s_%zu", n);
    bench_line("prune", m, ct, cw);
    snprintf(m, sizeof m, "verify_mb_per_s_%zu", n);
    bench_line("prune", m, tp > 0 ? 2.0 * (double)info.bytes / 1e6 / tp : 0, 0);

    dls_judge_del(w.judge);
    dls_resolver_del(w.tr);
    dls_resolver_del(w.mr);
    dls_medium_del(w.ticks);
    dls_medium_del(w.m);
    dls_medium_del(w.j);
    dls_secret_del(w.grantor);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", w.dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_prune: could not remove %s\n", w.dir);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        run(100000);
        return 0;
    }
    for (int i = 1; i < argc; i++)
        run((size_t)strtoull(argv[i], NULL, 10));
    return 0;
}
