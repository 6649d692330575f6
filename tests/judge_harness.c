/* The judge's test harness (judge_harness.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daolease/medium_impl.h"
#include "judge_harness.h"

#define MS DLS_MS

char *make_tmpdir(void)
{
    char *d = strdup("/tmp/dls-judge-XXXXXX");
    assert_non_null(mkdtemp(d));
    return d;
}

void rm_rf(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

val str_val(const char *s)
{
    val v;
    assert_int_equal(dls_value_str(v.b, sizeof v.b, s, strlen(s), &v.n), 0);
    return v;
}

/* ---- the harness --------------------------------------------------------------------- */

int h_reclaim(void *u, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    harness *h = u;
    (void)subject;
    if (h->reenter) {
        dls_judge_pass_result r;
        h->reenter_rc = dls_judge_pass(h->j, &r);
    }
    if (h->ncalls < JH_CALLS)
        h->calls[h->ncalls++] = (reclaim_call){lease, cause, commit, h->now};
    if (lease == h->refuse_lease)
        return DLS_RECLAIM_FAILED;
    return h->answer;
}

void h_keys(harness *h, size_t nholders, dls_key_kind holder_kind)
{
    assert_int_equal(dls_keyring_new(&h->kr), 0);
    uint8_t seed[32];
    memset(seed, 7, sizeof seed);
    assert_int_equal(dls_secret_from_seed(&h->grantor, "arbiter", DLS_KEY_ED25519, seed), 0);
    for (size_t i = 0; i < nholders; i++) {
        char name[32];
        snprintf(name, sizeof name, "holder-%zu", i);
        memset(seed, (int)(0x40 + i), sizeof seed);
        assert_int_equal(dls_secret_from_seed(&h->holders[i], name, holder_kind, seed), 0);
        assert_int_equal(dls_keyring_add(h->kr, (const uint8_t *)name, strlen(name),
                                         holder_kind, dls_secret_public(h->holders[i])),
                         0);
    }
}

dls_medium *ring_with_id(uint8_t tag, size_t cap)
{
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    uint8_t id[16];
    memset(id, tag, sizeof id);
    ms.id = id;
    ms.ring_capacity = cap;
    dls_medium *m;
    assert_int_equal(dls_ring_new(&m, &ms), 0);
    return m;
}

void jh_init(harness *h, size_t nmedia, size_t nholders, const jh_options *o)
{
    memset(h, 0, sizeof *h);
    h->dir = make_tmpdir();
    snprintf(h->journal_path, sizeof h->journal_path, "%s/journal.dls", h->dir);
    h_keys(h, nholders, o && o->mac_holders ? DLS_KEY_MAC : DLS_KEY_ED25519);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    uint8_t jid[16];
    memset(jid, 0x4a, sizeof jid); /* fixed: journals of two runs compare byte for byte */
    ms.id = jid;
    dls_medium *inner;
    assert_int_equal(dls_medium_create(&inner, DLS_MEDIUM_FILE, h->journal_path, &ms, NULL), 0);
    h->journal = o && o->wrap_journal ? o->wrap_journal(h, inner) : inner;
    h->tickm = ring_with_id(0xee, 4096);
    assert_int_equal(dls_resolver_new_medium(&h->tickr, dls_medium_id(h->tickm), "ticker", NULL),
                     0);
    h->nmedia = nmedia;
    for (size_t i = 0; i < nmedia; i++) {
        h->media[i] = ring_with_id((uint8_t)(0x10 + i), o && o->ring_capacity ? o->ring_capacity : 4096);
        assert_int_equal(dls_resolver_new_signed(&h->res[i], dls_medium_id(h->media[i]), h->kr),
                         0);
        h->jm[i] = (dls_judge_medium){h->media[i], h->res[i]};
    }
    dls_judge_settings_default(&h->s);
    h->s.grantor = h->grantor;
    h->s.journal = h->journal;
    snprintf(h->lock_path, sizeof h->lock_path, "%s/journal.lock", h->dir);
    snprintf(h->ckpt_dir, sizeof h->ckpt_dir, "%s/journal.dls.ckpt", h->dir);
    if (o && o->lock)
        h->s.journal_lock_path = h->lock_path;
    h->tick = (dls_judge_tick_source){h->tickm, h->tickr, "ticker", "test-basis", 0};
    h->s.ticks = &h->tick;
    h->s.nticks = 1;
    h->s.media = h->jm;
    h->s.nmedia = nmedia;
    h->s.tolerance_ns = 250 * MS;
    h->s.cadence_ns = 1000 * MS;
    assert_int_equal(dls_duration_make(&h->s.default_duration, DLS_UNIT_S, 3), 0);
    memset(h->hash_key, 0x5a, sizeof h->hash_key);
    h->s.hash_key = h->hash_key;
    h->answer = DLS_RECLAIM_DONE;
}

int h_try_open(harness *h, dls_where *w)
{
    dls_judge_callbacks cb = {.reclaim = h_reclaim};
    return dls_judge_new(&h->j, &h->s, &cb, h, w);
}

void h_open(harness *h)
{
    dls_where w = {0};
    int rc = h_try_open(h, &w);
    if (rc)
        fprintf(stderr, "dls_judge_new: %s (%s)\n", dls_strerror(rc), w.reason ? w.reason : "");
    assert_int_equal(rc, 0);
}

void h_close_judge(harness *h)
{
    dls_judge_del(h->j);
    h->j = NULL;
}

void h_fini(harness *h)
{
    h_close_judge(h);
    dls_medium_del(h->journal);
    for (size_t i = 0; i < h->nmedia; i++) {
        dls_resolver_del(h->res[i]);
        dls_medium_del(h->media[i]);
    }
    dls_resolver_del(h->tickr);
    dls_medium_del(h->tickm);
    for (size_t i = 0; i < JH_MAXH; i++)
        dls_secret_del(h->holders[i]);
    dls_secret_del(h->grantor);
    dls_keyring_del(h->kr);
    rm_rf(h->dir);
    free(h->dir);
}

void append_fact(dls_medium *m, const dls_fact *f, const dls_secret *signer)
{
    uint8_t fact[DLS_FACT_MAX], env[DLS_FACT_MAX + 256];
    size_t n, en;
    assert_int_equal(dls_fact_encode(f, fact, sizeof fact, &n), 0);
    if (signer) {
        assert_int_equal(dls_envelope_seal(signer, dls_medium_id(m), fact, n, env, sizeof env, &en),
                         0);
        assert_int_equal(dls_medium_append(m, env, en, NULL, NULL), 0);
    } else {
        assert_int_equal(dls_medium_append(m, fact, n, NULL, NULL), 0);
    }
}

void h_tick(harness *h, uint64_t reading)
{
    dls_fact f;
    dls_duration d;
    assert_int_equal(dls_duration_make(&d, DLS_UNIT_NS, reading), 0);
    dls_fact_tick(&f, d);
    append_fact(h->tickm, &f, NULL);
    h->now = reading;
}

void h_propose_full(harness *h, size_t holder, size_t medium, const char *subject,
                           const char *prop, uint64_t ask_ms, const dls_mode *mode)
{
    dls_fact f;
    val s = str_val(subject), p = str_val(prop);
    dls_fact_proposal(&f, (dls_bytes){p.b, p.n}, (dls_bytes){s.b, s.n},
                      ++h->seq[holder][medium]);
    if (ask_ms) {
        assert_int_equal(dls_duration_make(&f.duration, DLS_UNIT_MS, ask_ms), 0);
        f.keys |= DLS_K_DURATION;
    }
    if (mode) {
        f.mode = *mode;
        f.keys |= DLS_K_MODE;
    }
    append_fact(h->media[medium], &f, h->holders[holder]);
}

void h_propose(harness *h, size_t holder, size_t medium, const char *subject,
                      const char *prop, uint64_t ask_ms)
{
    h_propose_full(h, holder, medium, subject, prop, ask_ms, NULL);
}

void h_renew(harness *h, size_t holder, size_t medium, uint64_t lease)
{
    dls_fact f;
    dls_fact_renewal(&f, lease, ++h->rseq[holder][lease % 64]);
    append_fact(h->media[medium], &f, h->holders[holder]);
}

void h_release(harness *h, size_t holder, size_t medium, uint64_t lease, bool commit)
{
    dls_fact f;
    dls_fact_release(&f, lease, commit);
    append_fact(h->media[medium], &f, h->holders[holder]);
}

dls_judge_pass_result h_pass(harness *h)
{
    dls_judge_pass_result r;
    int rc = dls_judge_pass(h->j, &r);
    if (rc)
        fprintf(stderr, "pass: %s\n", dls_strerror(rc));
    assert_int_equal(rc, 0);
    return r;
}


/* ---- a dead holder under a takeover ------------------------------------------------------ */

/* One step of 250 ms: holder 0 renews lease 1 while alive; the judge of the
 * step passes (and the standby, while it only follows). */
static void h_dead_step(harness *h, dls_judge *j, dls_judge *standby, bool alive)
{
    h_tick(h, h->now + 250 * MS);
    if (alive)
        h_renew(h, 0, 0, 1);
    dls_judge_pass_result r;
    assert_int_equal(dls_judge_pass(j, &r), 0);
    if (standby && standby != j)
        assert_int_equal(dls_judge_pass(standby, &r), 0);
}

uint64_t h_dead_holder_reclaimed_at(harness *h, dls_judge *standby, size_t kill_at)
{
    h_tick(h, 1000 * MS);
    h_propose(h, 0, 0, "s-dead", "p-dead", 2000);
    h_pass(h);
    dls_judge *j = h->j;
    for (size_t p = 0; p < 40; p++) {
        if (standby && p == kill_at)
            j = standby; /* the owner's process is gone: h->j is never stepped again */
        h_dead_step(h, j, standby, p < 8);
    }
    uint64_t at = 0;
    for (size_t i = 0; i < h->ncalls; i++) {
        assert_int_equal(h->calls[i].lease, 1);
        assert_int_equal(h->calls[i].cause, DLS_CAUSE_SILENCE);
        assert_int_equal(at, 0); /* reclaimed once (the callback answers done) */
        at = h->calls[i].pass_now;
    }
    return at;
}
