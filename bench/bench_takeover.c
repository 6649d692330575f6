/* bench_takeover: a hot standby's takeover of a file journal, and what
 * following costs (judge.md rev 5, Standby judges and takeover;
 * docs/standby.md, Figures).
 *
 * Two processes. A child process is the active judge: on a data-synced
 * file journal and one segmented lease-fact medium (8 MiB segments) it
 * grants N leases (owner grants, 10,000 a pass; 16-byte subjects and
 * holder names), then runs passes one reading step (100 ms) apart, each
 * draining 10,000 MAC-signed renewals: 100,000 renewals a second of
 * readings. The parent is the
 * standby: assembled on a read handle of the journal (as `daolease judge
 * --standby` is), it steps after each of the active's passes, in lock
 * step through a pipe, with the same tick readings on its own tick ring.
 *
 * Death is real: after one more active pass that the standby has not read
 * (the tail) and 10,000 renewals written after that pass's mark, the
 * parent kills the child with SIGKILL, so the kernel frees the journal's
 * writer lock when it tears the process down; nothing is closed cleanly.
 * The parent waits for the child (waitpid: the process is gone, its
 * files closed, so the lock is free), then calls the standby's pass once,
 * which applies the tail, obtains the lock, reads the journal to its end,
 * ends the replay, opens the journal for append and calls took_over, then
 * runs the first pass of the restarted judge, whose mark is synced before
 * the call returns. Printed (JSON Lines; <N> the live leases):
 *   takeover_s                  SIGKILL to the first mark landed
 *                               (baseline: a restart by full replay of the
 *                               same journal, dls_judge_new with opening
 *                               the media, measured after the takeover)
 *   takeover_vs_target_s        the same (baseline: the 100 ms target)
 *   takeover_lock_s             SIGKILL to waitpid's return: the kernel
 *                               ending the process and freeing the lock
 *                               (baseline: takeover_s)
 *   takeover_replay_s           the standby's call to took_over: tail
 *                               applied, lock tried and held, journal read
 *                               to its end, replay ended, journal opened
 *                               for append (baseline: takeover_s)
 *   takeover_first_pass_s       took_over to the first mark landed
 *                               (baseline: the active's mean pass, wall)
 *   takeover_tail_records       journal records the standby had not read
 *                               at the kill (baseline: records a pass
 *                               appends on average)
 *   standby_cpu_s               thread CPU seconds of the standby's steps
 *                               over the following passes (baseline: the
 *                               active's passes over the same journal
 *                               growth; target ratio <= 0.05)
 *   standby_assembly_s          the standby's dls_judge_new (the initial
 *                               replay; baseline: the restart)
 *   journal_open_append_s       opening the journal for append alone, as
 *                               the restart does (a scan of the file; the
 *                               takeover opens it so too; baseline:
 *                               takeover_replay_s)
 * Not included anywhere: a deployment's wait between the lock's release
 * and the standby's next step (`daolease judge --standby` steps every
 * cadence / 2).
 *
 *   bench_takeover [N]     default 1000000
 *   BENCH_TAKEOVER_PERF=follow|takeover with DLS_BENCH_PERF_CTL (a `perf
 *   record --control fifo:` path): recording enabled around the standby's
 *   following steps or its takeover call only.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/stream.h"
#include "common.h"

#define HOLDERS 64
#define GRANTS_PER_PASS 10000
#define STEP_NS (100 * DLS_NS_PER_MS)
#define RENEWALS_PER_PASS 10000 /* 100,000 a second of readings */
#define FOLLOW_PASSES 50

/* Tells a `perf record --control fifo:` to enable or disable recording
 * around the step BENCH_TAKEOVER_PERF names. */
static void perf_ctl(const char *step, const char *what)
{
    const char *path = getenv("DLS_BENCH_PERF_CTL"), *want = getenv("BENCH_TAKEOVER_PERF");
    if (!path || !want || strcmp(want, step) != 0)
        return;
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%s\n", what);
        fclose(f);
    }
}

static void check(int rc, const char *what)
{
    if (rc) {
        fprintf(stderr, "bench_takeover: %s: %s\n", what, dls_strerror(rc));
        exit(1);
    }
}

static double thread_cpu_s(void)
{
    return bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
}

typedef struct world {
    char dir[64], journal[96], medium[96];
    size_t n;
    dls_secret *grantor, *holders[HOLDERS];
    dls_keyring *kr;
    dls_medium *j, *m, *ticks;
    dls_resolver *tr, *mr;
    dls_judge *judge;
    uint64_t now;
    uint32_t *seq;  /* the active side: each lease's last renewal seq */
    uint64_t next;  /* the next lease to renew (round robin) */
    double took_over_at; /* the standby side: when took_over was called */
} world;

/* What the active answers for each command: its pass, measured. */
typedef struct reply {
    double cpu, wall;
    uint64_t now, appended;
} reply;

static int reclaim(void *u, dls_bytes s, uint64_t l, dls_cause c, bool commit)
{
    (void)u, (void)s, (void)l, (void)c, (void)commit;
    return DLS_RECLAIM_DONE;
}

static void took_over(void *u, uint64_t pass)
{
    (void)pass;
    ((world *)u)->took_over_at = bench_now_s();
}

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

/* The media: the active creates them (journal for append, exclusive,
 * data-synced); the standby opens both for reading. */
static void open_media(world *w, bool active)
{
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    if (active) {
        ms.sync = DLS_SYNC_DATA;
        ms.exclusive = true;
        check(dls_medium_create(&w->j, DLS_MEDIUM_FILE, w->journal, &ms, NULL), "journal");
        ms.sync = DLS_SYNC_NONE;
        ms.exclusive = false;
        ms.segment_bytes = 8u << 20; /* a cursor at a position walks one segment */
        check(dls_medium_create(&w->m, DLS_MEDIUM_SEGMENTED, w->medium, &ms, NULL), "medium");
    } else {
        check(dls_medium_open(&w->j, w->journal, DLS_OPEN_READ, NULL, NULL), "journal (read)");
        check(dls_medium_open(&w->m, w->medium, DLS_OPEN_READ, NULL, NULL), "medium (read)");
    }
    dls_medium_settings rs;
    dls_medium_settings_default(&rs);
    rs.ring_capacity = 64;
    check(dls_ring_new(&w->ticks, &rs), "ticks");
    check(dls_resolver_new_medium(&w->tr, dls_medium_id(w->ticks), "ticker", NULL), "tickr");
    check(dls_resolver_new_signed(&w->mr, dls_medium_id(w->m), w->kr), "resolver");
}

/* The judge on the open media: the active, the standby, or (for the
 * baseline) a judge restarted on the journal opened for append. */
static double open_judge(world *w, bool standby)
{
    dls_judge_settings st;
    dls_judge_settings_default(&st);
    st.grantor = w->grantor;
    st.journal = w->j;
    st.standby = standby;
    dls_judge_tick_source ts = {w->ticks, w->tr, "ticker", "bench", 0};
    st.ticks = &ts;
    st.nticks = 1;
    dls_judge_medium jm = {w->m, w->mr};
    st.media = &jm;
    st.nmedia = 1;
    st.tolerance_ns = 250 * DLS_NS_PER_MS;
    st.cadence_ns = STEP_NS;
    check(dls_duration_make(&st.default_duration, DLS_UNIT_H, 24), "duration");
    st.drain_budget = 0;
    dls_judge_callbacks cb = {.reclaim = reclaim, .took_over = took_over};
    dls_where wh = {0};
    double t0 = bench_now_s();
    int rc = dls_judge_new(&w->judge, &st, &cb, w, &wh);
    double t = bench_now_s() - t0;
    if (rc)
        fprintf(stderr, "bench_takeover: judge: %s\n", wh.reason ? wh.reason : "");
    check(rc, "judge");
    return t;
}

static void close_all(world *w)
{
    dls_judge_del(w->judge);
    dls_resolver_del(w->tr);
    dls_resolver_del(w->mr);
    dls_medium_del(w->ticks);
    dls_medium_del(w->m);
    dls_medium_del(w->j);
    w->judge = NULL;
}

/* The next reading on this side's tick ring. */
static void tick(world *w, uint64_t now)
{
    w->now = now;
    dls_fact f;
    dls_duration d;
    check(dls_duration_make(&d, DLS_UNIT_NS, now), "duration");
    dls_fact_tick(&f, d);
    uint8_t buf[64];
    size_t n;
    check(dls_fact_encode(&f, buf, sizeof buf, &n), "encode");
    check(dls_medium_append(w->ticks, buf, n, NULL, NULL), "tick");
}

/* ---- the active judge (the child process) ------------------------------------------------ */

static void grant_all(world *w)
{
    for (size_t i = 0; i < w->n;) {
        for (size_t k = 0; k < GRANTS_PER_PASS && i < w->n; k++, i++) {
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
        tick(w, w->now + STEP_NS);
        check(dls_judge_pass(w->judge, NULL), "pass");
    }
}

/* The holders' work (not measured): one renewal for each of the next
 * RENEWALS_PER_PASS leases, round robin, appended in one batch. */
static void renew(world *w)
{
    static const uint8_t *recs[RENEWALS_PER_PASS];
    static size_t lens[RENEWALS_PER_PASS];
    static uint8_t buf[(size_t)RENEWALS_PER_PASS * 160];
    size_t off = 0;
    for (size_t k = 0; k < RENEWALS_PER_PASS; k++) {
        uint64_t idx = w->next++ % w->n;
        dls_fact f;
        dls_fact_renewal(&f, idx + 1, ++w->seq[idx]);
        uint8_t fact[128];
        size_t fn, en;
        check(dls_fact_encode(&f, fact, sizeof fact, &fn), "encode");
        check(dls_envelope_seal(w->holders[idx % HOLDERS], dls_medium_id(w->m), fact, fn,
                                buf + off, 160, &en),
              "seal");
        recs[k] = buf + off;
        lens[k] = en;
        off += en;
    }
    uint64_t first;
    check(dls_medium_append_batch(w->m, recs, lens, RENEWALS_PER_PASS, &first, NULL), "renewals");
}

static bool put(int fd, const void *p, size_t n)
{
    return write(fd, p, n) == (ssize_t)n;
}

static bool get(int fd, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, (char *)p + got, n - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        got += (size_t)k;
    }
    return true;
}

/* The child: grants, then one pass per command ('P'; 'L': renewals are
 * written after the pass too, for the first pass after a takeover to
 * drain) until killed or the pipe closes. */
static void active(world *w, int in, int out)
{
    w->seq = calloc(w->n, sizeof *w->seq);
    if (!w->seq)
        check(DLS_ERR_NOMEM, "seq");
    open_media(w, true);
    open_judge(w, false);
    w->now = 1000 * DLS_NS_PER_MS;
    grant_all(w);
    reply r = {.now = w->now};
    char c;
    for (bool ok = put(out, &r, sizeof r); ok && get(in, &c, 1); ok = put(out, &r, sizeof r)) {
        renew(w);
        tick(w, w->now + STEP_NS);
        dls_judge_pass_result pr;
        double t0 = bench_now_s(), c0 = thread_cpu_s();
        check(dls_judge_pass(w->judge, &pr), "pass");
        r = (reply){thread_cpu_s() - c0, bench_now_s() - t0, w->now, pr.appended};
        if (pr.renewals != RENEWALS_PER_PASS)
            check(DLS_ERR_STATE, "renewals not all counted");
        if (c == 'L')
            renew(w);
    }
    _exit(0);
}

/* ---- the standby (the parent process) ---------------------------------------------------- */

static void metric(const world *w, const char *name, double value, double baseline)
{
    char m[96];
    snprintf(m, sizeof m, "%s_%zu", name, w->n);
    bench_line("takeover", m, value, baseline);
}

static void step(world *w, uint64_t now, dls_judge_pass_result *r)
{
    tick(w, now);
    check(dls_judge_pass(w->judge, r), "standby pass");
}

/* Asks the active for one pass and waits for it. */
static reply command(int to, int from, char c)
{
    reply r = {0};
    if (!put(to, &c, 1) || !get(from, &r, sizeof r))
        check(DLS_ERR_STATE, "the active judge's process ended");
    return r;
}

typedef struct followed {
    double active_cpu, active_wall, standby_cpu, appended;
} followed;

static followed follow(world *w, int to, int from)
{
    followed f = {0};
    dls_judge_pass_result r;
    for (int p = 0; p < FOLLOW_PASSES; p++) {
        reply a = command(to, from, 'P');
        f.active_cpu += a.cpu;
        f.active_wall += a.wall;
        f.appended += (double)a.appended;
        perf_ctl("follow", "enable");
        double c0 = thread_cpu_s();
        step(w, a.now, &r);
        f.standby_cpu += thread_cpu_s() - c0;
        perf_ctl("follow", "disable");
        if (!r.standby)
            check(DLS_ERR_STATE, "the standby took over a live judge's journal");
    }
    return f;
}

typedef struct takeover {
    double lock, replay, first_pass, total;
    uint64_t tail;
} takeover;

/* The tail, the kill, the standby's one call. */
static takeover kill_and_take_over(world *w, pid_t child, int to, int from)
{
    takeover t = {0};
    reply a = command(to, from, 'L');
    dls_judge_standby_info si;
    check(dls_judge_standby_status(w->judge, &si), "standby status");
    t.tail = si.behind_records;
    double t0 = bench_now_s();
    if (kill(child, SIGKILL) != 0 || waitpid(child, NULL, 0) != child)
        check(DLS_ERR_STATE, "kill");
    double t1 = bench_now_s();
    dls_judge_pass_result r;
    w->took_over_at = 0;
    perf_ctl("takeover", "enable");
    step(w, a.now + STEP_NS, &r);
    double t2 = bench_now_s();
    perf_ctl("takeover", "disable");
    if (!r.took_over || !r.mark || r.live != w->n || !w->took_over_at)
        check(DLS_ERR_STATE, "no takeover");
    if (r.renewals != RENEWALS_PER_PASS) /* written after the dead judge's last mark */
        check(DLS_ERR_STATE, "the first pass did not count the renewals");
    t.lock = t1 - t0;
    t.replay = w->took_over_at - t1;
    t.first_pass = t2 - w->took_over_at;
    t.total = t2 - t0;
    return t;
}

/* A judge restarted by full replay on the journal as the takeover left it
 * (the baseline): opening the media and dls_judge_new. */
static double restart(world *w, double *open_s)
{
    double t0 = bench_now_s();
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.sync = DLS_SYNC_DATA;
    ms.exclusive = true;
    check(dls_medium_open(&w->j, w->journal, DLS_OPEN_APPEND, &ms, NULL), "journal (append)");
    *open_s = bench_now_s() - t0;
    check(dls_medium_open(&w->m, w->medium, DLS_OPEN_READ, NULL, NULL), "medium (read)");
    dls_medium_settings rs;
    dls_medium_settings_default(&rs);
    rs.ring_capacity = 64;
    check(dls_ring_new(&w->ticks, &rs), "ticks");
    check(dls_resolver_new_medium(&w->tr, dls_medium_id(w->ticks), "ticker", NULL), "tickr");
    check(dls_resolver_new_signed(&w->mr, dls_medium_id(w->m), w->kr), "resolver");
    open_judge(w, false);
    double t = bench_now_s() - t0;
    if (dls_judge_live(w->judge) != w->n)
        check(DLS_ERR_STATE, "the restart's live leases");
    close_all(w);
    return t;
}

static void run(size_t n)
{
    world w;
    memset(&w, 0, sizeof w);
    w.n = n;
    snprintf(w.dir, sizeof w.dir, "/tmp/bench_takeover.%d", (int)getpid());
    mkdir(w.dir, 0700);
    snprintf(w.journal, sizeof w.journal, "%s/journal.dls", w.dir);
    snprintf(w.medium, sizeof w.medium, "%s/medium.dls", w.dir);
    keys(&w);
    int down[2], up[2];
    if (pipe(down) || pipe(up))
        check(DLS_ERR_IO, "pipe");
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        check(DLS_ERR_IO, "fork");
    if (child == 0) {
        close(down[1]);
        close(up[0]);
        active(&w, down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    reply ready;
    if (!get(up[0], &ready, sizeof ready))
        check(DLS_ERR_STATE, "the active judge did not start");
    open_media(&w, false);
    double assembly = open_judge(&w, true);
    dls_judge_pass_result r;
    step(&w, ready.now, &r); /* caught up */
    followed f = follow(&w, down[1], up[0]);
    takeover t = kill_and_take_over(&w, child, down[1], up[0]);
    close(down[1]);
    close(up[0]);
    close_all(&w);
    double open_s;
    double base = restart(&w, &open_s);
    metric(&w, "takeover_s", t.total, base);
    metric(&w, "takeover_vs_target_s", t.total, 0.100);
    metric(&w, "takeover_lock_s", t.lock, t.total);
    metric(&w, "takeover_replay_s", t.replay, t.total);
    metric(&w, "takeover_first_pass_s", t.first_pass, f.active_wall / FOLLOW_PASSES);
    metric(&w, "takeover_tail_records", (double)t.tail, f.appended / FOLLOW_PASSES);
    metric(&w, "standby_cpu_s", f.standby_cpu, f.active_cpu);
    metric(&w, "standby_assembly_s", assembly, base);
    metric(&w, "journal_open_append_s", open_s, t.replay);
    for (int i = 0; i < HOLDERS; i++)
        dls_secret_del(w.holders[i]);
    dls_secret_del(w.grantor);
    dls_keyring_del(w.kr);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", w.dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_takeover: could not remove %s\n", w.dir);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1000000;
    if (n < RENEWALS_PER_PASS) {
        fprintf(stderr, "bench_takeover: N must be at least %d\n", RENEWALS_PER_PASS);
        return 2;
    }
    run(n);
    return 0;
}
