/* bench_e2e — renewals end to end, in real processes (issue 13, Measure:
 * bench_e2e).
 *
 * One judge process passes in a loop (appending a tick from the monotonic
 * clock, then dls_judge_pass) with a real journal (a file medium, `data`
 * sync, opened exclusive); H holder processes each run a library holder
 * (dls_holder, an Ed25519 secret, or a MAC secret under E2E_ATTRIB=mac)
 * over its own file medium with `group` sync, reading the journal and the
 * tick file. The judge grants L leases to each holder (unsolicited,
 * duration 10 s; up to 10,000 grant requests before each pass, holders in
 * turn, and never more than 4,096 ahead of what a holder took up, so a
 * slow start-up does not let leases lapse before their holder sees them;
 * start-up verifies every grant: the grantor's key is always Ed25519,
 * attribution.md, and the judge refuses a MAC grantor); each holder drains
 * at most 4,096 journal records a step (journal_budget) and renews every
 * lease every 500 ms (renew_interval_ns), so the demand is H·L/0.5
 * renewals a second; the judge passes every 20 ms. Measured for
 * settings.batch_max 1 and 64 (E2E_BATCHES); unbatched, each holder takes
 * L/32 leases (with Ed25519, a signature a renewal: more would fall behind,
 * and a holder that cannot renew in time stops acting on its leases, as it
 * must).
 *
 * Start-up (every grant appended and every holder holding all its leases)
 * is not measured in the window: once it is over, the warm-up (min(S/2, 4)
 * seconds) runs, then the window, until S seconds after start-up.
 *
 *   e2e_renewals_per_s_batch<B>      renewals the judge counted per wall
 *                                    second in the window
 *   judge_cpu_us_per_renewal_batch<B>  the judge process's CPU (its own
 *                                    getrusage: user + system) in the window
 *                                    per renewal it counted in the window
 *   holder_cpu_us_per_renewal_batch<B> the holders' CPU in the window per
 *                                    renewal they appended in the window
 *   *_whole_run_batch<B>             the same over the whole run, from the
 *                                    parent's wait4 rusage of each child
 *                                    (grant signing and start-up included)
 *   judge_granted_s_batch<B>         seconds from the run's start until the
 *                                    pass that appended the last grant ended
 *   holder_startup_s_batch<B>        ... until the slowest holder held all
 *                                    its leases (-1: one never did); baseline
 *                                    judge_granted_s
 *
 * the other batch sizes' lines with baseline the batch-1 figure (when batch
 * 1 ran first; else the figure itself); the batch-1 rate and
 * e2e_renewals_per_s_batch<B>_of_demand with baseline the demand (a ratio
 * near 1: the run was bound by its demand, not by the processes). Under
 * E2E_ATTRIB=mac every metric name ends in _mac. Targets (issue 13): e2e
 * >= 500,000/s with batches of 64, judge CPU <= 1 µs a renewal.
 *
 * Usage: bench_e2e [seconds per configuration S, default 10] [leases per
 * holder, default 10000] [holders, default 2] [dir, default /tmp].
 * Environment: E2E_ATTRIB=ed25519 (default) or mac: the holders' keys (the
 * judge's keyring holds their MAC keys); E2E_BATCHES="1 64" (default): the
 * batch_max values run, in order; E2E_DEBUG=1 prints every holder event
 * other than a renewal, and a line a second of the judge's passes (count,
 * facts, media behind, forged, ignored, longest pass) (stderr).
 * Benchmarks may read the clock; the library never does. */
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/holder.h"
#include "daolease/judge.h"
#include "daolease/stream.h"
#include "daolease/tick.h"
#include "common.h"

#define HOLDERS_MAX 16
#define RENEW_MS 500 /* each holder renews each lease every 500 ms */
#define PASS_MS 20  /* the judge passes every 20 ms (or back to back when slower) */
#define GRANT_SLICE 10000 /* grants requested before each pass until all are */
#define GRANT_AHEAD 4096 /* grants to one holder requested and not yet taken up, at most */
#define JOURNAL_BUDGET 4096 /* journal records a holder step drains at most */
#define STARTUP_MAX_S 300 /* a start-up longer than this ends the run (failed) */

/* The run's clock, shared by the processes (an anonymous shared mapping made
 * before the fork): the measured window starts only once every holder holds
 * all its leases (start-up is reported on its own), so a long start-up does
 * not eat the window. */
typedef struct clock_shared {
    uint64_t start;              /* the run's start (set before the fork) */
    _Atomic uint64_t ready;      /* holders holding all their leases */
    _Atomic uint64_t wstart;     /* the window's start; 0 until start-up ended */
    _Atomic uint64_t end;        /* the run's end; 0 until start-up ended */
    _Atomic uint64_t taken[HOLDERS_MAX]; /* grants each holder took up so far */
} clock_shared;

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * DLS_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void need(int rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "bench_e2e[%d]: %s: %s\n", (int)getpid(), what, dls_strerror(rc));
        exit(1);
    }
}

typedef struct config {
    double seconds, warmup;
    size_t leases, holders, batch;
    size_t drain_per_s;  /* the judge's budget sized to the ticks (E2E_DRAIN_PER_S) */
    dls_key_kind attrib; /* the holders' keys (E2E_ATTRIB); the grantor's is always Ed25519 */
    char dir[1024];
} config;

static dls_secret *secret(const char *name, uint8_t b, dls_key_kind kind)
{
    uint8_t seed[32];
    memset(seed, b, sizeof seed);
    dls_secret *s;
    need(dls_secret_from_seed(&s, name, kind, seed), "secret");
    return s;
}

static void path_of(char *out, size_t cap, const config *c, const char *name)
{
    snprintf(out, cap, "%s/%s.dls", c->dir, name);
}

static dls_medium *open_medium(const config *c, const char *name, dls_open_mode mode,
                               dls_sync sync, bool exclusive)
{
    char p[1200];
    path_of(p, sizeof p, c, name);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.sync = sync;
    ms.exclusive = exclusive;
    dls_medium *m;
    dls_where w;
    memset(&w, 0, sizeof w);
    need(dls_medium_open(&m, p, mode, &ms, &w), name);
    return m;
}

/* A child's result: a count in the measured window, a count over the whole
 * run, its CPU in the window (µs, getrusage of itself), and its start-up
 * (seconds from the run's start: the judge: the pass that appended the
 * last grant ended; a holder: it held all its leases; -1 when that never
 * happened). */
static void write_result(const config *c, const char *name, uint64_t a, uint64_t b,
                         double cpu, double startup)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s.result", c->dir, name);
    FILE *f = fopen(p, "w");
    if (!f ||
        fprintf(f, "%" PRIu64 " %" PRIu64 " %.0f %.6f\n", a, b, cpu * 1e6, startup) < 0 ||
        fclose(f) != 0)
        exit(1);
}

static void read_result(const config *c, const char *name, uint64_t *a, uint64_t *b,
                        double *cpu_us, double *startup)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s.result", c->dir, name);
    FILE *f = fopen(p, "r");
    if (!f || fscanf(f, "%" SCNu64 " %" SCNu64 " %lf %lf", a, b, cpu_us, startup) != 4) {
        fprintf(stderr, "bench_e2e: no result from %s\n", name);
        exit(1);
    }
    fclose(f);
}

/* A second count of a child: leases the judge lapsed, or leases a holder
 * lost (reached their bound, or saw them lapsed) — every holder here keeps
 * renewing every lease it holds, so each is a lease of a renewing holder. */
static void write_count(const config *c, const char *name, uint64_t n)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s.lost", c->dir, name);
    FILE *f = fopen(p, "w");
    if (!f || fprintf(f, "%" PRIu64 "\n", n) < 0 || fclose(f) != 0)
        exit(1);
}

static uint64_t read_count(const config *c, const char *name)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s.lost", c->dir, name);
    FILE *f = fopen(p, "r");
    uint64_t n = 0;
    if (!f || fscanf(f, "%" SCNu64, &n) != 1) {
        fprintf(stderr, "bench_e2e: no count from %s\n", name);
        exit(1);
    }
    fclose(f);
    return n;
}

/* E2E_LOAD: a competing CPU load the run starts itself — a child that
 * spins for duty × 10 ms of every 10 ms (duty 0.25: a quarter of a core)
 * from before the fork of the judge and holders until they have exited.
 * Returns its pid, or 0 without a load. */
static pid_t load_start(double duty)
{
    if (duty <= 0)
        return 0;
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench_e2e: fork");
        exit(1);
    }
    if (pid > 0)
        return pid;
    uint64_t period = 10 * DLS_NS_PER_MS, busy = (uint64_t)(duty * (double)period);
    volatile uint64_t sink = 0;
    for (;;) {
        uint64_t t0 = mono_ns();
        while (mono_ns() - t0 < busy)
            sink++;
        if (busy < period)
            usleep((useconds_t)((period - busy) / 1000));
    }
}

/* E2E_LOAD_IO=1: beside the CPU load, a second child writes 8 MiB and
 * syncs it (fdatasync) in a loop in the run's directory, as a build or a
 * test suite beside the judge does: the judge's journal syncs wait behind
 * it. Returns its pid, or 0. */
static pid_t load_io_start(const config *c)
{
    const char *v = getenv("E2E_LOAD_IO");
    if (!v || strcmp(v, "1") != 0)
        return 0;
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench_e2e: fork");
        exit(1);
    }
    if (pid > 0)
        return pid;
    char p[1200];
    snprintf(p, sizeof p, "%s/io-load", c->dir);
    static uint8_t buf[1 << 20];
    memset(buf, 0x5a, sizeof buf);
    for (;;) {
        FILE *f = fopen(p, "w");
        if (!f)
            _exit(1);
        for (int k = 0; k < 8; k++)
            if (fwrite(buf, 1, sizeof buf, f) != sizeof buf)
                _exit(1);
        fflush(f);
        fdatasync(fileno(f));
        fclose(f);
    }
}

static void load_stop(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static int reclaim(void *u, dls_bytes s, uint64_t l, dls_cause cause, bool commit)
{
    (void)u, (void)s, (void)l, (void)cause, (void)commit;
    return DLS_RECLAIM_DONE;
}

/* The judge: grants (GRANT_SLICE before each pass, holders in turn), passes
 * every PASS_MS, and once every holder holds all its leases opens the
 * measured window (after the warm-up) and sets the run's end. Result:
 * renewals counted in the window, and over the whole run. */
/* E2E_DEBUG: the judge's passes summed over each second of the run. */
typedef struct jdebug {
    uint64_t since, passes, facts, behind, forged, ignored, took_max;
} jdebug;

static void judge_debug(jdebug *d, const dls_judge_pass_result *r, uint64_t now, uint64_t took)
{
    if (!d->since)
        d->since = now;
    d->passes++;
    d->facts += r->facts;
    d->behind += r->behind;
    d->forged += r->forged;
    d->ignored += r->ignored_replayed + r->ignored_unknown_lease;
    if (took > d->took_max)
        d->took_max = took;
    if (now - d->since < DLS_NS_PER_S)
        return;
    fprintf(stderr,
            "judge: %" PRIu64 " passes, %" PRIu64 " facts, %" PRIu64 " behind, %" PRIu64
            " forged, %" PRIu64 " ignored, longest pass %.1f ms\n",
            d->passes, d->facts, d->behind, d->forged, d->ignored, (double)d->took_max / 1e6);
    *d = (jdebug){.since = now};
}

static void judge_main(const config *c, clock_shared *clk)
{
    uint64_t start = clk->start;
    dls_secret *grantor = secret("arbiter", 1, DLS_KEY_ED25519);
    dls_keyring *kr;
    need(dls_keyring_new(&kr), "keyring");
    dls_secret *hs[HOLDERS_MAX];
    for (size_t i = 0; i < c->holders; i++) {
        char name[32];
        snprintf(name, sizeof name, "h%zu", i);
        hs[i] = secret(name, (uint8_t)(10 + i), c->attrib);
        /* MAC: the shared key itself (dls_secret_public answers it) */
        need(dls_keyring_add(kr, (const uint8_t *)name, strlen(name), c->attrib,
                             dls_secret_public(hs[i])),
             "keyring add");
    }
    dls_medium *journal = open_medium(c, "journal", DLS_OPEN_APPEND, DLS_SYNC_DATA, true);
    dls_medium *tm = open_medium(c, "ticks", DLS_OPEN_APPEND, DLS_SYNC_NONE, false);
    dls_medium *hm[HOLDERS_MAX];
    dls_resolver *res[HOLDERS_MAX], *tres;
    dls_judge_medium jm[HOLDERS_MAX];
    for (size_t i = 0; i < c->holders; i++) {
        char name[32];
        snprintf(name, sizeof name, "h%zu", i);
        hm[i] = open_medium(c, name, DLS_OPEN_READ, DLS_SYNC_NONE, false);
        need(dls_resolver_new_signed(&res[i], dls_medium_id(hm[i]), kr), "resolver");
        jm[i] = (dls_judge_medium){hm[i], res[i]};
    }
    need(dls_resolver_new_medium(&tres, dls_medium_id(tm), "ticker", NULL), "tick resolver");
    dls_tick *tick;
    dls_tick_settings ts;
    dls_tick_settings_default(&ts);
    ts.source = DLS_TICK_MANUAL;
    ts.basis = "bench";
    need(dls_tick_new(&tick, tm, &ts, NULL), "tick");
    dls_judge_settings st;
    dls_judge_settings_default(&st);
    st.grantor = grantor;
    st.journal = journal;
    dls_judge_tick_source src = {tm, tres, "ticker", "bench", 0};
    st.ticks = &src;
    st.nticks = 1;
    st.media = jm;
    st.nmedia = c->holders;
    st.tolerance_ns = 500 * DLS_NS_PER_MS;
    st.cadence_ns = 1000 * DLS_NS_PER_MS;
    need(dls_duration_make(&st.default_duration, DLS_UNIT_MS, 10000), "duration");
    st.drain_per_s = c->drain_per_s;
    dls_judge_callbacks cb = {.reclaim = reclaim};
    dls_judge *j;
    need(dls_judge_new(&j, &st, &cb, NULL, NULL), "judge");
    bool debug = getenv("E2E_DEBUG") != NULL;
    jdebug dbg = {0};
    size_t g = 0, grants = c->holders * c->leases; /* grant g: holder g % H */
    double granted = -1; /* the pass that appended (and signed) the last grant ended */
    uint64_t total = 0, window = 0, lapsed = 0, wstart = 0;
    double cpu0 = -1;
    for (;;) {
        uint64_t now = mono_ns(), end = atomic_load(&clk->end);
        if (end && now >= end)
            break;
        if (!end && granted >= 0 && atomic_load(&clk->ready) == c->holders) {
            wstart = now + (uint64_t)(c->warmup * (double)DLS_NS_PER_S);
            atomic_store(&clk->wstart, wstart);
            atomic_store(&clk->end, now + (uint64_t)(c->seconds * (double)DLS_NS_PER_S));
        } else if (!end && now - start > (uint64_t)STARTUP_MAX_S * DLS_NS_PER_S) {
            fprintf(stderr, "bench_e2e: start-up took over %d s: giving up\n", STARTUP_MAX_S);
            atomic_store(&clk->end, now);
            break;
        }
        if (wstart && now >= wstart && cpu0 < 0)
            cpu0 = bench_cpu_s();
        for (size_t s = 0; s < GRANT_SLICE && g < grants; s++, g++) {
            size_t i = g % c->holders, k = g / c->holders;
            if (k >= GRANT_AHEAD + atomic_load(&clk->taken[i]))
                break; /* holder i trails: a grant it cannot take up in time would lapse */
            char sub[32];
            uint8_t v[40];
            size_t vn;
            int len = snprintf(sub, sizeof sub, "h%zu-%zu", i, k);
            need(dls_value_str(v, sizeof v, sub, (size_t)len, &vn), "subject");
            char name[32];
            snprintf(name, sizeof name, "h%zu", i);
            need(dls_judge_grant(j, (dls_bytes){v, vn},
                                 (dls_bytes){(const uint8_t *)name, strlen(name)}, (uint32_t)i,
                                 NULL, NULL, NULL),
                 "grant");
        }
        bool last_grants = g == grants && granted < 0;
        need(dls_tick_append(tick, now), "tick append");
        dls_judge_pass_result r;
        need(dls_judge_pass(j, &r), "pass");
        uint64_t took = mono_ns() - now;
        if (last_grants)
            granted = (double)(now + took - start) / (double)DLS_NS_PER_S;
        if (took < PASS_MS * DLS_NS_PER_MS)
            usleep((useconds_t)((PASS_MS * DLS_NS_PER_MS - took) / 1000));
        total += r.facts;
        if (wstart && now >= wstart)
            window += r.facts;
        if (debug) /* one line a second: what the judge's passes did */
            judge_debug(&dbg, &r, now, took);
        for (int k = 1; k < 5; k++)
            lapsed += r.lapsed[k];
    }
    if (lapsed)
        fprintf(stderr, "bench_e2e: the judge lapsed %" PRIu64 " leases (holders too slow)\n",
                lapsed);
    write_result(c, "judge", window, total, bench_cpu_s() - (cpu0 < 0 ? 0 : cpu0), granted);
    write_count(c, "judge", lapsed);
    dls_judge_del(j);
    exit(0);
}

/* A holder: steps until the run's end; says when it holds all its leases.
 * Result: renewals appended. */
static void holder_main(const config *c, size_t i, clock_shared *clk)
{
    uint64_t start = clk->start;
    char name[32];
    snprintf(name, sizeof name, "h%zu", i);
    dls_secret *grantor = secret("arbiter", 1, DLS_KEY_ED25519);
    dls_secret *me = secret(name, (uint8_t)(10 + i), c->attrib);
    dls_keyring *kr;
    need(dls_keyring_new(&kr), "keyring");
    need(dls_keyring_add(kr, (const uint8_t *)"arbiter", 7, DLS_KEY_ED25519,
                         dls_secret_public(grantor)),
         "keyring add");
    dls_medium *journal = open_medium(c, "journal", DLS_OPEN_READ, DLS_SYNC_NONE, false);
    dls_medium *tm = open_medium(c, "ticks", DLS_OPEN_READ, DLS_SYNC_NONE, false);
    dls_medium *hm = open_medium(c, name, DLS_OPEN_APPEND, DLS_SYNC_GROUP, true);
    dls_resolver *jres, *tres;
    need(dls_resolver_new_signed(&jres, dls_medium_id(journal), kr), "resolver");
    need(dls_resolver_new_medium(&tres, dls_medium_id(tm), "ticker", NULL), "resolver");
    dls_cursor *jcur, *tcur;
    need(dls_cursor_new(&jcur, journal, 0), "cursor");
    need(dls_cursor_new(&tcur, tm, 0), "cursor");
    dls_holder_parts p = {
        .name = name, .secret = me, .medium = hm, .grantor = "arbiter",
        .journal = jcur, .journal_resolver = jres, .ticks = tcur, .tick_resolver = tres,
        .tick_party = "ticker",
    };
    dls_holder_settings hs;
    dls_holder_settings_default(&hs);
    hs.max_leases = c->leases;
    hs.batch_max = c->batch;
    hs.renew_interval_ns = RENEW_MS * DLS_NS_PER_MS;
    hs.journal_budget = JOURNAL_BUDGET; /* taking up many grants, it renews between bites */
    dls_holder *h;
    need(dls_holder_new(&h, &p, &hs, NULL, NULL, NULL), "holder");
    uint64_t renewed = 0, window = 0, held = 0, lost = 0;
    double startup = -1;
    double cpu0 = -1;
    bool debug = getenv("E2E_DEBUG") != NULL;
    for (;;) {
        uint64_t now = mono_ns(), end = atomic_load(&clk->end), wstart = atomic_load(&clk->wstart);
        if (end && now >= end)
            break;
        if (wstart && now >= wstart && cpu0 < 0)
            cpu0 = bench_cpu_s();
        dls_holder_result r;
        int rc = dls_holder_step(h, &r);
        if (rc && rc != DLS_ERR_TRANSPORT)
            need(rc, "step");
        size_t did = 0;
        for (size_t e = 0; e < r.n_events; e++) {
            did += r.events[e].kind == DLS_HOLDER_RENEWED;
            held += r.events[e].kind == DLS_HOLDER_GRANTED;
            lost += r.events[e].kind == DLS_HOLDER_BOUND || r.events[e].kind == DLS_HOLDER_LAPSED;
            if (debug && r.events[e].kind != DLS_HOLDER_RENEWED)
                fprintf(stderr, "%s: %s %s\n", name, dls_holder_event_name(r.events[e].kind),
                        r.events[e].text);
        }
        renewed += did;
        atomic_store(&clk->taken[i], held);
        if (startup < 0 && held >= c->leases) {
            startup = (double)(mono_ns() - start) / (double)DLS_NS_PER_S;
            atomic_fetch_add(&clk->ready, 1);
        }
        if (cpu0 >= 0)
            window += did;
        if (!did && !r.more)
            usleep(1000);
    }
    write_result(c, name, window, renewed, bench_cpu_s() - (cpu0 < 0 ? 0 : cpu0), startup);
    write_count(c, name, lost);
    exit(0);
}

static double cpu_s(const struct rusage *ru)
{
    return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
           (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

typedef struct outcome {
    double rate, judge_us, holder_us; /* in the window */
    double judge_us_all, holder_us_all; /* over the whole run (grants included) */
    double demand;                      /* renewals a second the leases ask for */
    double granted, taken;              /* start-up: the pass that appended the last
                                           grant ended; the slowest holder held all
                                           its leases (-1: some holder never did) */
    uint64_t lapsed, lost;              /* leases the judge lapsed; leases the holders
                                           lost (bound or lapsed) — all renewing */
    double made;                        /* renewals a second the holders appended */
} outcome;

static outcome run(config *c, size_t batch, double load)
{
    c->batch = batch;
    size_t leases = c->leases;
    if (batch == 1) /* unbatched: a demand the holders can meet (see docs/bench.md) */
        c->leases = leases / 32 ? leases / 32 : 1;
    char base[256];
    snprintf(base, sizeof base, "%.200s", c->dir);
    snprintf(c->dir, sizeof c->dir, "%s/bench_e2e.%d.%zu", base, (int)getpid(), batch);
    if (mkdir(c->dir, 0700) != 0) {
        perror("bench_e2e: mkdir");
        exit(1);
    }
    const char *names[2 + HOLDERS_MAX] = {"journal", "ticks"};
    char hn[HOLDERS_MAX][32];
    for (size_t i = 0; i < c->holders; i++) {
        snprintf(hn[i], sizeof hn[i], "h%zu", i);
        names[2 + i] = hn[i];
    }
    for (size_t i = 0; i < 2 + c->holders; i++) {
        char p[1200];
        path_of(p, sizeof p, c, names[i]);
        dls_medium *m;
        need(dls_medium_create(&m, DLS_MEDIUM_FILE, p, NULL, NULL), names[i]);
        dls_medium_del(m);
    }
    clock_shared *clk = mmap(NULL, sizeof *clk, PROT_READ | PROT_WRITE,
                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (clk == MAP_FAILED) {
        perror("bench_e2e: mmap");
        exit(1);
    }
    clk->start = mono_ns();
    atomic_init(&clk->ready, 0);
    atomic_init(&clk->wstart, 0);
    atomic_init(&clk->end, 0);
    for (size_t i = 0; i < HOLDERS_MAX; i++)
        atomic_init(&clk->taken[i], 0);
    pid_t pids[1 + HOLDERS_MAX];
    pid_t loader = load_start(load);
    pid_t io_loader = load > 0 ? load_io_start(c) : 0;
    for (size_t i = 0; i <= c->holders; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("bench_e2e: fork");
            exit(1);
        }
        if (pid == 0) {
            if (i == 0)
                judge_main(c, clk);
            holder_main(c, i - 1, clk);
        }
        pids[i] = pid;
    }
    double judge_cpu = 0, holder_cpu = 0;
    for (size_t i = 0; i <= c->holders; i++) {
        int status;
        struct rusage ru;
        if (wait4(pids[i], &status, 0, &ru) != pids[i] || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0) {
            fprintf(stderr, "bench_e2e: process %zu failed\n", i);
            exit(1);
        }
        if (i == 0)
            judge_cpu = cpu_s(&ru);
        else
            holder_cpu += cpu_s(&ru);
    }
    load_stop(loader);
    load_stop(io_loader);
    munmap(clk, sizeof *clk);
    uint64_t window, total, renewed = 0, hwindow = 0, lost = 0;
    double jcpu_w, hcpu_w = 0, granted, taken = 0;
    read_result(c, "judge", &window, &total, &jcpu_w, &granted);
    for (size_t i = 0; i < c->holders; i++) {
        uint64_t w, r;
        double cpu, up;
        read_result(c, hn[i], &w, &r, &cpu, &up);
        if (taken >= 0)
            taken = up < 0 ? -1 : up > taken ? up : taken;
        renewed += r;
        lost += read_count(c, hn[i]);
        hwindow += w;
        hcpu_w += cpu;
    }
    if (window == 0 || hwindow == 0) {
        fprintf(stderr,
                "bench_e2e: judge %" PRIu64 "/%" PRIu64 ", holders %" PRIu64 "/%" PRIu64
                " (last grant appended at %.3f s, holders held all leases at %.3f s, "
                "-1: never)\n",
                window, total, hwindow, renewed, granted, taken);
        fprintf(stderr, "bench_e2e: no renewals counted (batch %zu)\n", batch);
        exit(1);
    }
    if (total > renewed) {
        fprintf(stderr, "bench_e2e: the judge counted more renewals than were made\n");
        exit(1);
    }
    outcome o = {(double)window / (c->seconds - c->warmup), jcpu_w / (double)window,
                 hcpu_w / (double)hwindow, judge_cpu * 1e6 / (double)total,
                 holder_cpu * 1e6 / (double)renewed, 0, granted, taken,
                 read_count(c, "judge"), lost, 0};
    o.made = (double)hwindow / (c->seconds - c->warmup);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", c->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_e2e: could not remove %s\n", c->dir);
    o.demand = (double)(c->leases * c->holders) * 1000.0 / RENEW_MS;
    snprintf(c->dir, sizeof c->dir, "%s", base);
    c->leases = leases;
    return o;
}

static const char *g_suffix = ""; /* "_mac" under E2E_ATTRIB=mac */

/* One metric: NAME_batch<B> + the attribution suffix. */
static void line(const char *name, size_t batch, const char *more, double value,
                 double baseline)
{
    char metric[160];
    snprintf(metric, sizeof metric, "%s_batch%zu%s%s", name, batch, more, g_suffix);
    bench_line("e2e", metric, value, baseline);
}

#define BATCHES_MAX 8

/* E2E_LOAD: the same configuration again beside a competing load, and the
 * two side by side (docs/bench.md, Overload): counted ÷ demand, leases of
 * renewing holders lapsed (the judge's lapsed; the holders' lost: bound
 * reached or lapsed observed), the judge's CPU a renewal. */
static void loaded(config *c, size_t b, double load, const outcome *q)
{
    outcome o = run(c, b, load);
    if (!q)
        q = &o;
    line("e2e_renewals_per_s", b, "_loaded_of_demand", o.rate, o.demand);
    line("e2e_renewals_per_s", b, "_loaded_of_quiet", o.rate, q->rate);
    line("judge_cpu_us_per_renewal", b, "_loaded", o.judge_us, q->judge_us);
    line("holder_cpu_us_per_renewal", b, "_loaded", o.holder_us, q->holder_us);
    line("holder_renewals_per_s", b, "_loaded_of_demand", o.made, o.demand);
    line("judge_lapsed", b, "_loaded", (double)o.lapsed, (double)q->lapsed);
    line("holder_lost", b, "_loaded", (double)o.lost, (double)q->lost);
    fprintf(stderr,
            "bench_e2e batch %zu%s, load %.2f core: counted/demand quiet %.3f loaded %.3f; "
            "made/demand quiet %.3f loaded %.3f; "
            "leases lapsed (judge) quiet %" PRIu64 " loaded %" PRIu64
            "; lost (holders) quiet %" PRIu64 " loaded %" PRIu64
            "; judge us/renewal quiet %.3f loaded %.3f\n",
            b, g_suffix, load, q->rate / q->demand, o.rate / o.demand, q->made / q->demand,
            o.made / o.demand, q->lapsed, o.lapsed,
            q->lost, o.lost, q->judge_us, o.judge_us);
}

int main(int argc, char **argv)
{
    config c;
    memset(&c, 0, sizeof c);
    c.seconds = argc > 1 ? atof(argv[1]) : 10;
    c.leases = argc > 2 ? strtoul(argv[2], NULL, 10) : 10000;
    c.holders = argc > 3 ? strtoul(argv[3], NULL, 10) : 2;
    snprintf(c.dir, sizeof c.dir, "%.200s", argc > 4 ? argv[4] : "/tmp");
    c.warmup = c.seconds / 2 < 4 ? c.seconds / 2 : 4;
    c.attrib = DLS_KEY_ED25519;
    const char *attrib = getenv("E2E_ATTRIB");
    if (attrib && strcmp(attrib, "mac") == 0) {
        c.attrib = DLS_KEY_MAC;
        g_suffix = "_mac";
    } else if (attrib && strcmp(attrib, "ed25519") != 0) {
        fprintf(stderr, "bench_e2e: E2E_ATTRIB is ed25519 or mac\n");
        return 2;
    }
    /* E2E_BATCHES: the batch_max values to run, in order (default "1 64") */
    size_t batches[BATCHES_MAX], nb = 0;
    const char *bl = getenv("E2E_BATCHES");
    for (const char *p = bl ? bl : "1 64"; *p;) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p || v == 0 || v > DLS_BATCH_COUNT_MAX || nb == BATCHES_MAX) {
            fprintf(stderr, "bench_e2e: E2E_BATCHES is up to %d batch sizes 1..%d, e.g. \"1 64\"\n",
                    BATCHES_MAX, DLS_BATCH_COUNT_MAX);
            return 2;
        }
        batches[nb++] = v;
        p = end;
        while (*p == ' ' || *p == ',')
            p++;
    }
    /* E2E_DRAIN_PER_S: the judge's drain_per_s (default: its drain_budget
     * a PASS_MS, so a pass PASS_MS after the last drains what it did before;
     * 0: the fixed budget a pass) */
    const char *dps = getenv("E2E_DRAIN_PER_S");
    c.drain_per_s = dps ? strtoul(dps, NULL, 10) : 20000 * 1000 / PASS_MS;
    /* E2E_LOAD: a competing load of this many cores (0 < load < 1) */
    const char *ls = getenv("E2E_LOAD");
    double load = ls ? atof(ls) : 0;
    if (ls && (load <= 0 || load >= 1)) {
        fprintf(stderr, "bench_e2e: E2E_LOAD is a fraction of a core, e.g. 0.25\n");
        return 2;
    }
    if (c.seconds <= 0 || c.leases == 0 || c.holders == 0 || c.holders > HOLDERS_MAX || nb == 0 ||
        sodium_init() < 0)
        return 2;
    outcome one;
    memset(&one, 0, sizeof one);
    bool have_one = false; /* batch 1 ran: the baseline of the others */
    /* E2E_QUIET=0 (with E2E_LOAD): the loaded runs only; their lines'
     * baselines are then the loaded figures themselves */
    const char *qs = getenv("E2E_QUIET");
    bool quiet = !(load > 0 && qs && strcmp(qs, "0") == 0);
    for (size_t k = 0; k < nb; k++) {
        size_t b = batches[k];
        if (!quiet) {
            loaded(&c, b, load, NULL);
            continue;
        }
        outcome o = run(&c, b, 0);
        if (b == 1) {
            one = o, have_one = true;
            line("e2e_renewals_per_s", b, "", o.rate, o.demand);
            line("judge_cpu_us_per_renewal", b, "", o.judge_us, o.judge_us);
            line("holder_cpu_us_per_renewal", b, "", o.holder_us, o.holder_us);
            line("judge_cpu_us_per_renewal_whole_run", b, "", o.judge_us_all, o.judge_us_all);
            line("holder_cpu_us_per_renewal_whole_run", b, "", o.holder_us_all, o.holder_us_all);
        } else {
            /* baseline batch 1 when it ran, else the figure itself */
            const outcome *base = have_one ? &one : &o;
            line("e2e_renewals_per_s", b, "", o.rate, base->rate);
            line("e2e_renewals_per_s", b, "_of_demand", o.rate, o.demand);
            line("judge_cpu_us_per_renewal", b, "", o.judge_us, base->judge_us);
            line("holder_cpu_us_per_renewal", b, "", o.holder_us, base->holder_us);
            line("judge_cpu_us_per_renewal_whole_run", b, "", o.judge_us_all, base->judge_us_all);
            line("holder_cpu_us_per_renewal_whole_run", b, "", o.holder_us_all,
                 base->holder_us_all);
        }
        /* start-up (not in the window): the holders' baseline is the judge's last
         * grant appended, so the ratio shows how far the holders trailed it */
        line("judge_granted_s", b, "", o.granted, o.granted);
        line("holder_startup_s", b, "", o.taken, o.granted);
        if (load > 0)
            loaded(&c, b, load, &o);
    }
    return 0;
}
