/* Benchmark of the holder's renewals (issue 13 item 2: the holder batches).
 * One holder with a secret (Ed25519) holds N leases on a file medium with
 * `group` sync and renews them all every step; measured with batch_max 1
 * (one envelope, one signature, one append, one sync per renewal: the
 * baseline, same run) and batch_max 64 (one batch envelope of up to 64).
 * Prints JSON Lines {"bench","metric","value","baseline","ratio"}:
 *
 *   holder_cpu_us_per_renewal_batch64    process CPU µs per renewal
 *   holder_wall_us_per_renewal_batch64   wall µs per renewal (syncs included)
 *   holder_renewals_per_s_batch64        renewals per wall second
 *
 * each with baseline the same at batch_max 1, ratio = value / baseline.
 * Usage: bench_holder [leases, default 256] [rounds, default 8] [dir, /tmp] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/holder.h"
#include "daolease/mark.h"
#include "daolease/stream.h"
#include "daolease/tick.h"
#include "common.h"


static void need(int rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "bench_holder: %s: %s\n", what, dls_strerror(rc));
        exit(1);
    }
}

static dls_secret *secret(const char *name, uint8_t b)
{
    uint8_t seed[32];
    memset(seed, b, sizeof seed);
    dls_secret *s;
    need(dls_secret_from_seed(&s, name, DLS_KEY_ED25519, seed), "secret");
    return s;
}

struct result {
    double cpu_us, wall_us;
    uint64_t renewals;
};

static struct result run(size_t leases, int rounds, size_t batch, const char *dir)
{
    dls_secret *grantor = secret("arbiter", 1), *agent = secret("agent-1", 2);
    dls_keyring *kr;
    need(dls_keyring_new(&kr), "keyring");
    need(dls_keyring_add(kr, (const uint8_t *)"arbiter", 7, DLS_KEY_ED25519,
                         dls_secret_public(grantor)),
         "keyring add");
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.ring_capacity = leases + 1024;
    dls_medium *journal, *tm, *hm;
    need(dls_ring_new(&journal, &ms), "journal");
    need(dls_ring_new(&tm, &ms), "ticks");
    char path[512];
    snprintf(path, sizeof path, "%s/bench-holder-%d-%zu.dls", dir, (int)getpid(), batch);
    unlink(path);
    dls_medium_settings_default(&ms);
    ms.sync = DLS_SYNC_GROUP;
    need(dls_medium_create(&hm, DLS_MEDIUM_FILE, path, &ms, NULL), "holder medium");
    dls_resolver *jres, *tres;
    need(dls_resolver_new_signed(&jres, dls_medium_id(journal), kr), "resolver");
    need(dls_resolver_new_medium(&tres, dls_medium_id(tm), "ticks", NULL), "resolver");
    dls_cursor *jcur, *tcur;
    need(dls_cursor_new(&jcur, journal, 0), "cursor");
    need(dls_cursor_new(&tcur, tm, 0), "cursor");
    dls_tick *tick;
    dls_tick_settings ts;
    dls_tick_settings_default(&ts);
    ts.source = DLS_TICK_MANUAL;
    need(dls_tick_new(&tick, tm, &ts, NULL), "tick");
    dls_holder_parts p = {
        .name = "agent-1", .secret = agent, .medium = hm, .grantor = "arbiter",
        .journal = jcur, .journal_resolver = jres, .ticks = tcur, .tick_resolver = tres,
        .tick_party = "ticks",
    };
    dls_holder_settings hs;
    dls_holder_settings_default(&hs);
    hs.max_leases = leases;
    hs.batch_max = batch;
    dls_holder *h;
    need(dls_holder_new(&h, &p, &hs, NULL, NULL, NULL), "holder");
    /* leases 1..N granted unsolicited, duration 3 s (renewed every 1 s) */
    uint64_t now = 10 * DLS_NS_PER_S;
    need(dls_tick_append(tick, now), "tick");
    static const uint8_t subject[] = {0xa3, 'j', 'o', 'b'};
    for (uint64_t id = 1; id <= leases; id++) {
        dls_fact g;
        dls_fact_grant(&g, id, (dls_bytes){subject, sizeof subject},
                       (dls_bytes){(const uint8_t *)"agent-1", 7},
                       dls_duration_from_ns(3 * DLS_NS_PER_S), dls_medium_id(hm));
        uint8_t fb[DLS_FACT_MAX], env[DLS_FACT_MAX + 256];
        size_t n, en;
        uint64_t pos;
        need(dls_fact_encode(&g, fb, sizeof fb, &n), "encode");
        need(dls_envelope_seal(grantor, dls_medium_id(journal), fb, n, env, sizeof env, &en),
             "seal");
        need(dls_medium_append(journal, env, en, &pos, NULL), "journal append");
    }
    dls_holder_result res;
    dls_holder_step(h, &res);
    struct result r = {0};
    double cpu = 0, wall = 0;
    for (int i = 0; i < rounds; i++) {
        now += DLS_NS_PER_S; /* every lease is due */
        need(dls_tick_append(tick, now), "tick");
        double c0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID), w0 = bench_clock_s(CLOCK_MONOTONIC);
        dls_holder_step(h, &res); /* reads last round's mark, renews every lease */
        cpu += bench_clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
        wall += bench_clock_s(CLOCK_MONOTONIC) - w0;
        for (size_t e = 0; e < res.n_events; e++)
            r.renewals += res.events[e].kind == DLS_HOLDER_RENEWED;
        /* a judge's pass mark draining the holder's medium (untimed): the
         * holder confirms the renewals at its next step (holder.md rev 4) */
        dls_holder_lease li;
        need(dls_holder_lease_info(h, leases, &li), "lease info");
        dls_mark_pos dp;
        memcpy(dp.medium, dls_medium_id(hm), DLS_MEDIUM_ID_LEN);
        dp.position = li.last_position + 1;
        dls_mark m = {.pass = (uint64_t)i + 1, .now_ns = now,
                      .basis = {(const uint8_t *)"b", 1}, .tolerance_ns = DLS_NS_PER_S / 4,
                      .cadence_ns = DLS_NS_PER_S / 10, .drained = &dp, .n_drained = 1};
        dls_mark_writer wr = {0};
        uint8_t mb[512], env[1024];
        size_t n, en;
        uint64_t pos;
        while (dls_mark_encode_next(&m, &wr, mb, sizeof mb, &n) == 1) {
            need(dls_envelope_seal(grantor, dls_medium_id(journal), mb, n, env, sizeof env,
                                   &en),
                 "seal mark");
            need(dls_medium_append(journal, env, en, &pos, NULL), "journal append");
        }
    }
    if (r.renewals != (uint64_t)leases * (uint64_t)rounds) {
        fprintf(stderr, "bench_holder: %llu renewals, expected %llu\n",
                (unsigned long long)r.renewals,
                (unsigned long long)((uint64_t)leases * (uint64_t)rounds));
        exit(1);
    }
    r.cpu_us = cpu * 1e6 / (double)r.renewals;
    r.wall_us = wall * 1e6 / (double)r.renewals;
    dls_holder_del(h);
    dls_tick_del(tick);
    dls_cursor_del(jcur);
    dls_cursor_del(tcur);
    dls_resolver_del(jres);
    dls_resolver_del(tres);
    dls_medium_del(journal);
    dls_medium_del(tm);
    dls_medium_del(hm);
    unlink(path);
    dls_keyring_del(kr);
    dls_secret_del(grantor);
    dls_secret_del(agent);
    return r;
}

int main(int argc, char **argv)
{
    size_t leases = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 256;
    int rounds = argc > 2 ? atoi(argv[2]) : 8;
    const char *dir = argc > 3 ? argv[3] : "/tmp";
    if (leases == 0 || rounds <= 0 || sodium_init() < 0)
        return 2;
    struct result one = run(leases, rounds, 1, dir);
    struct result many = run(leases, rounds, 64, dir);
    bench_line("holder", "holder_cpu_us_per_renewal_batch64", many.cpu_us, one.cpu_us);
    bench_line("holder", "holder_wall_us_per_renewal_batch64", many.wall_us, one.wall_us);
    bench_line("holder", "holder_renewals_per_s_batch64", 1e6 / many.wall_us, 1e6 / one.wall_us);
    return 0;
}
