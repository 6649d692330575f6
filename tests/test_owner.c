/* Tests for the owner's view of the judge (issue 15 item 2;
 * include/daolease/judge_view.h, judge/leases.c): the `granted` callback,
 * live leases listed, by subject and by holder, due-by readings that the
 * judge's own classification honours, and the owner's policy starting from
 * the default answer. Scenarios run on ring media with bare facts
 * attributed by `medium` resolvers, a file journal and manual ticks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/judge_view.h"
#include "daolease/owner.h"
#include "daolease/stream.h"
#include "daolease/tick.h"

#define MS DLS_MS
#define SEC (1000 * MS)
#define NMEDIA 2

typedef struct granted_call {
    uint64_t lease;
    char subject[64];
    char holder[64];
    uint64_t tenure_start;
    int lease_rc; /* dls_judge_lease from inside the callback */
} granted_call;

typedef struct fixture {
    char dir[64];
    dls_secret *grantor;
    dls_medium *journal;
    dls_medium *tickm;
    dls_tick *tick;
    dls_resolver *tickr;
    dls_medium *media[NMEDIA];
    dls_resolver *res[NMEDIA];
    dls_judge *j;
    uint64_t seq[NMEDIA];
    granted_call granted[2048];
    size_t ngranted;
    size_t nreclaimed;
    const char *refuse_subject; /* the owner's policy refuses it */
    int policy_calls;
    dls_judge_verdict seen_default; /* the verdict the policy was handed */
} fixture;

static const char *holders[NMEDIA] = {"agent-1", "agent-2"};

static void copy_str(char *out, dls_bytes b)
{
    /* subjects are msgpack fixstr: skip the one-byte header */
    size_t n = b.n && (b.p[0] & 0xe0) == 0xa0 ? b.n - 1 : b.n;
    const uint8_t *p = b.n && (b.p[0] & 0xe0) == 0xa0 ? b.p + 1 : b.p;
    memcpy(out, p, n < 63 ? n : 63);
    out[n < 63 ? n : 63] = 0;
}

static int on_reclaim(void *u, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    (void)subject, (void)lease, (void)cause, (void)commit;
    ((fixture *)u)->nreclaimed++;
    return DLS_RECLAIM_DONE;
}

static void on_granted(void *u, const dls_judge_lease_info *l)
{
    fixture *f = u;
    granted_call *g = &f->granted[f->ngranted++];
    g->lease = l->lease;
    copy_str(g->subject, l->subject);
    memcpy(g->holder, l->holder.p, l->holder.n);
    g->holder[l->holder.n] = 0;
    g->tenure_start = l->tenure_start;
    dls_judge_lease_info again;
    g->lease_rc = dls_judge_lease(f->j, l->lease, &again);
}

static int on_policy(void *u, const dls_judge_ask *a, dls_judge_answer *ans)
{
    fixture *f = u;
    f->policy_calls++;
    f->seen_default = ans->verdict;
    char s[64];
    copy_str(s, a->subject);
    if (f->refuse_subject && !strcmp(s, f->refuse_subject)) {
        ans->verdict = DLS_JUDGE_REFUSE;
        ans->reason = "finished";
    }
    return 0; /* everything else: the default's answer, untouched */
}

static void append_fact(fixture *f, int m, const dls_fact *fact)
{
    uint8_t buf[DLS_FACT_MAX];
    size_t n;
    assert_int_equal(dls_fact_encode(fact, buf, sizeof buf, &n), 0);
    assert_int_equal(dls_medium_append(f->media[m], buf, n, NULL, NULL), 0);
}

static void propose(fixture *f, int m, const char *subject)
{
    uint8_t s[64], p[80];
    size_t sn, pn;
    char id[64];
    snprintf(id, sizeof id, "%s-%llu", holders[m], (unsigned long long)f->seq[m] + 1);
    assert_int_equal(dls_value_str(s, sizeof s, subject, strlen(subject), &sn), 0);
    assert_int_equal(dls_value_str(p, sizeof p, id, strlen(id), &pn), 0);
    dls_fact fact;
    dls_fact_proposal(&fact, (dls_bytes){p, pn}, (dls_bytes){s, sn}, ++f->seq[m]);
    dls_duration d;
    dls_duration_make(&d, DLS_UNIT_S, 2);
    fact.duration = d;
    fact.keys |= DLS_K_DURATION;
    append_fact(f, m, &fact);
}

static void release(fixture *f, int m, uint64_t lease)
{
    dls_fact fact;
    dls_fact_release(&fact, lease, true);
    append_fact(f, m, &fact);
}

static dls_judge_pass_result pass_at(fixture *f, uint64_t now)
{
    assert_int_equal(dls_tick_append(f->tick, now), 0);
    dls_judge_pass_result r;
    assert_int_equal(dls_judge_pass(f->j, &r), 0);
    return r;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    strcpy(f->dir, "/tmp/dls-owner-XXXXXX");
    assert_non_null(mkdtemp(f->dir));
    char path[128];
    snprintf(path, sizeof path, "%s/journal.dls", f->dir);
    assert_int_equal(dls_secret_generate(&f->grantor, "arbiter", DLS_KEY_ED25519), 0);
    assert_int_equal(dls_medium_create(&f->journal, DLS_MEDIUM_FILE, path, NULL, NULL), 0);
    assert_int_equal(dls_ring_new(&f->tickm, NULL), 0);
    dls_tick_settings ts;
    dls_tick_settings_default(&ts);
    ts.source = DLS_TICK_MANUAL;
    assert_int_equal(dls_tick_new(&f->tick, f->tickm, &ts, NULL), 0);
    assert_int_equal(dls_resolver_new_medium(&f->tickr, dls_medium_id(f->tickm), "ticks", NULL), 0);
    dls_judge_medium jm[NMEDIA];
    for (int m = 0; m < NMEDIA; m++) {
        dls_medium_settings ms;
        dls_medium_settings_default(&ms);
        ms.ring_capacity = 1 << 16;
        assert_int_equal(dls_ring_new(&f->media[m], &ms), 0);
        assert_int_equal(dls_resolver_new_medium(&f->res[m], dls_medium_id(f->media[m]),
                                                 holders[m], NULL), 0);
        jm[m] = (dls_judge_medium){f->media[m], f->res[m]};
    }
    dls_judge_tick_source tsrc = {f->tickm, f->tickr, "ticks", "manual", 0};
    dls_judge_settings s;
    dls_judge_settings_default(&s);
    s.grantor = f->grantor;
    s.journal = f->journal;
    s.ticks = &tsrc;
    s.nticks = 1;
    s.media = jm;
    s.nmedia = NMEDIA;
    s.tolerance_ns = 250 * MS;
    s.cadence_ns = 100 * MS;
    s.drain_budget = 0;
    dls_judge_callbacks cb = {.reclaim = on_reclaim, .granted = on_granted, .policy = on_policy};
    assert_int_equal(dls_judge_new(&f->j, &s, &cb, f, NULL), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    dls_judge_del(f->j);
    for (int m = 0; m < NMEDIA; m++) {
        dls_resolver_del(f->res[m]);
        dls_medium_del(f->media[m]);
    }
    dls_resolver_del(f->tickr);
    dls_tick_del(f->tick);
    dls_medium_del(f->tickm);
    dls_medium_del(f->journal);
    dls_secret_del(f->grantor);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
    assert_int_equal(system(cmd), 0);
    free(f);
    return 0;
}

static size_t count(dls_judge_iter *it, uint64_t *ids)
{
    dls_judge_lease_info l;
    size_t n = 0;
    while (dls_judge_leases_next(it, &l, NULL))
        ids[n++] = l.lease;
    return n;
}

/* Issue 15 item 2: `granted` is called once per grant, in grant order, at
 * the end of the pass, with the lease's terms; dls_judge_lease works from
 * inside it. */
static void test_granted_callback(void **state)
{
    fixture *f = *state;
    propose(f, 0, "job/1");
    propose(f, 1, "job/2");
    propose(f, 1, "job/1"); /* waits: job/1 is held */
    dls_judge_pass_result r = pass_at(f, 10 * SEC);
    assert_int_equal(r.granted, 2);
    assert_int_equal(f->ngranted, 2);
    assert_string_equal(f->granted[0].subject, "job/1");
    assert_string_equal(f->granted[0].holder, "agent-1");
    assert_string_equal(f->granted[1].subject, "job/2");
    assert_string_equal(f->granted[1].holder, "agent-2");
    assert_int_equal(f->granted[0].tenure_start, 10 * SEC);
    assert_int_equal(f->granted[0].lease_rc, 0);
    assert_int_equal(f->granted[0].lease + 1, f->granted[1].lease);
    /* job/1 released: the waiter is granted at the next pass, and told */
    release(f, 0, f->granted[0].lease);
    r = pass_at(f, 11 * SEC);
    assert_int_equal(r.granted, 1);
    assert_int_equal(f->ngranted, 3);
    assert_string_equal(f->granted[2].subject, "job/1");
    assert_string_equal(f->granted[2].holder, "agent-2");
}

/* Issue 15 item 2: live leases listed all, by subject, by holder; a lapsed
 * lease leaves every list; unknown subjects and holders list nothing. */
static void test_iterate_by_subject_and_holder(void **state)
{
    fixture *f = *state;
    propose(f, 0, "a");
    propose(f, 0, "b");
    propose(f, 1, "c");
    pass_at(f, 10 * SEC);
    uint64_t ids[16];
    dls_judge_iter it;
    assert_int_equal(dls_judge_leases(f->j, &it), 0);
    assert_int_equal(count(&it, ids), 3);
    assert_int_equal(dls_judge_leases_by_holder(f->j, (dls_bytes){(const uint8_t *)"agent-1", 7},
                                                &it), 0);
    assert_int_equal(count(&it, ids), 2);
    assert_int_equal(dls_judge_leases_by_holder(f->j, (dls_bytes){(const uint8_t *)"agent-2", 7},
                                                &it), 0);
    assert_int_equal(count(&it, ids), 1);
    uint64_t c_lease = ids[0];
    uint8_t sb[8];
    size_t sn;
    dls_value_str(sb, sizeof sb, "c", 1, &sn);
    assert_int_equal(dls_judge_leases_by_subject(f->j, (dls_bytes){sb, sn}, &it), 0);
    dls_judge_lease_info l;
    uint64_t due_by;
    assert_true(dls_judge_leases_next(&it, &l, &due_by));
    assert_int_equal(l.lease, c_lease);
    assert_int_equal(l.holder.n, 7);
    assert_memory_equal(l.holder.p, "agent-2", 7);
    assert_false(dls_judge_leases_next(&it, &l, NULL));
    /* unknown subject and holder: empty, no error */
    dls_value_str(sb, sizeof sb, "zz", 2, &sn);
    assert_int_equal(dls_judge_leases_by_subject(f->j, (dls_bytes){sb, sn}, &it), 0);
    assert_false(dls_judge_leases_next(&it, &l, NULL));
    assert_int_equal(dls_judge_leases_by_holder(f->j, (dls_bytes){(const uint8_t *)"nobody", 6},
                                                &it), 0);
    assert_false(dls_judge_leases_next(&it, &l, NULL));
    /* agent-2 releases c: gone from its holder's list after the pass */
    release(f, 1, c_lease);
    pass_at(f, 11 * SEC);
    assert_int_equal(dls_judge_leases_by_holder(f->j, (dls_bytes){(const uint8_t *)"agent-2", 7},
                                                &it), 0);
    assert_int_equal(count(&it, ids), 0);
    assert_int_equal(dls_judge_leases(f->j, &it), 0);
    assert_int_equal(count(&it, ids), 2);
}

/* judge.md silence: the due-by reading the view reports is the first
 * reading at which the judge finds the lease due — not due one ns before,
 * due at it (issue 15 item 2: due-by on the judge's ticks). */
static void test_due_by_is_when_the_judge_reclaims(void **state)
{
    fixture *f = *state;
    propose(f, 0, "x");
    pass_at(f, 10 * SEC);
    dls_judge_iter it;
    dls_judge_lease_info l;
    uint64_t due_by = 0;
    dls_judge_leases(f->j, &it);
    assert_true(dls_judge_leases_next(&it, &l, &due_by));
    /* duration 2 s + tolerance 250 ms after the grant, strictly passed */
    assert_int_equal(due_by, 10 * SEC + 2 * SEC + 250 * MS + 1);
    dls_judge_pass_result r = pass_at(f, due_by - 1);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 0);
    r = pass_at(f, due_by);
    assert_int_equal(r.lapsed[DLS_CAUSE_SILENCE], 1);
    assert_int_equal(f->nreclaimed, 1);
    dls_judge_leases(f->j, &it);
    assert_false(dls_judge_leases_next(&it, &l, NULL));
}

/* The owner's policy is handed the default policy's answer: returning 0
 * untouched keeps it (grant), a refusal for one subject holds (issue 15
 * item 4: finished items are refused). */
static void test_policy_starts_from_default(void **state)
{
    fixture *f = *state;
    f->refuse_subject = "done";
    propose(f, 0, "done");
    propose(f, 0, "open");
    dls_judge_pass_result r = pass_at(f, 10 * SEC);
    assert_int_equal(f->policy_calls, 2);
    assert_int_equal(f->seen_default, DLS_JUDGE_GRANT);
    assert_int_equal(r.granted, 1);
    assert_int_equal(r.refused, 1);
    assert_int_equal(f->ngranted, 1);
    assert_string_equal(f->granted[0].subject, "open");
}

/* Many leases of two holders: each holder's list holds exactly its own,
 * after removals from the middle of the lists (issue 15 item 2). */
static void test_holder_lists_under_churn(void **state)
{
    fixture *f = *state;
    char s[32];
    for (int i = 0; i < 600; i++) {
        snprintf(s, sizeof s, "s%d", i);
        propose(f, i % 2, s);
    }
    pass_at(f, 10 * SEC);
    assert_int_equal(f->ngranted, 600);
    /* every third lease released */
    for (size_t i = 0; i < f->ngranted; i += 3)
        release(f, f->granted[i].holder[6] == '1' ? 0 : 1, f->granted[i].lease);
    pass_at(f, 11 * SEC);
    static uint64_t ids[1024];
    dls_judge_iter it;
    for (int m = 0; m < NMEDIA; m++) {
        dls_judge_leases_by_holder(f->j, (dls_bytes){(const uint8_t *)holders[m], 7}, &it);
        size_t n = count(&it, ids);
        assert_int_equal(n, 200);
        for (size_t k = 0; k < n; k++) {
            dls_judge_lease_info l;
            assert_int_equal(dls_judge_lease(f->j, ids[k], &l), 0);
            assert_memory_equal(l.holder.p, holders[m], 7);
            assert_int_not_equal((ids[k] - f->granted[0].lease) % 3, 0);
        }
    }
    assert_int_equal(dls_judge_live(f->j), 400);
}

/* dls_owner_new (include/daolease/owner.h, the convenience assembly): a
 * missing key, a key naming another party and a missing medium fail with
 * their codes, the medium's index in w.offset and nothing left open; a good
 * configuration assembles a judge that passes; a second owner on the same
 * journal is refused. */
static void test_owner_assembly_errors(void **state)
{
    fixture *f = *state;
    char key[128], other[128], ring[128], journal[128], medium[128], line[256];
    snprintf(key, sizeof key, "%s/arbiter.secret", f->dir);
    snprintf(other, sizeof other, "%s/other.secret", f->dir);
    snprintf(ring, sizeof ring, "%s/keyring", f->dir);
    snprintf(journal, sizeof journal, "%s/owner-journal.dls", f->dir);
    snprintf(medium, sizeof medium, "%s/agent-1.dls", f->dir);
    assert_int_equal(dls_secret_save(f->grantor, key, NULL), 0);
    dls_secret *o2;
    assert_int_equal(dls_secret_generate(&o2, "other", DLS_KEY_ED25519), 0);
    assert_int_equal(dls_secret_save(o2, other, NULL), 0);
    dls_secret_del(o2);
    assert_int_equal(dls_secret_keyring_line(f->grantor, line, sizeof line), 0);
    FILE *kf = fopen(ring, "w");
    assert_non_null(kf);
    fprintf(kf, "%s\n", line);
    fclose(kf);
    dls_medium *m;
    assert_int_equal(dls_medium_create(&m, DLS_MEDIUM_FILE, medium, NULL, NULL), 0);
    dls_medium_del(m);

    dls_owner_config c;
    dls_owner_config_default(&c);
    dls_judge_callbacks cb = {.reclaim = on_reclaim};
    dls_owner *o = (dls_owner *)1;
    dls_where w;
    assert_int_equal(dls_owner_new(&o, &c, &cb, f, &w), DLS_ERR_INVAL);
    c.party = "arbiter", c.key = "/nonexistent.secret", c.keyring = ring, c.journal = journal;
    assert_int_equal(dls_owner_new(&o, &c, &cb, f, &w), DLS_ERR_IO);
    assert_null(o);
    assert_non_null(w.reason);
    c.key = other;
    assert_int_equal(dls_owner_new(&o, &c, &cb, f, &w), DLS_ERR_NO_GRANTOR);
    c.key = key;
    c.media = (const char *[]){medium, "/nonexistent.dls", NULL};
    assert_int_equal(dls_owner_new(&o, &c, &cb, f, &w), DLS_ERR_NOTFOUND);
    assert_int_equal(w.offset, 1);
    c.media = (const char *[]){medium, NULL};
    assert_int_equal(dls_owner_new(&o, &c, &cb, f, &w), 0);
    dls_judge_pass_result r;
    assert_int_equal(dls_owner_pass(o, &r), 0);
    assert_true(r.has_now);
    assert_int_equal(r.pass, 1);
    uint64_t wait = dls_owner_wait_ns(o, &r);
    assert_true(wait >= 100000 && wait <= 50 * MS);
    assert_non_null(dls_owner_judge(o));
    /* judge.md, Assembly: one judge at a time holds the journal; a second
     * owner on the same configuration is refused with the judge's code */
    dls_owner *second = (dls_owner *)1;
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_owner_new(&second, &c, &cb, f, &w), DLS_ERR_JOURNAL_LOCKED);
    assert_null(second);
    assert_non_null(w.reason);
    dls_owner_del(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_granted_callback, setup, teardown),
        cmocka_unit_test_setup_teardown(test_iterate_by_subject_and_holder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_due_by_is_when_the_judge_reclaims, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_starts_from_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_holder_lists_under_churn, setup, teardown),
        cmocka_unit_test_setup_teardown(test_owner_assembly_errors, setup, teardown),
    };
    return cmocka_run_group_tests_name("owner", tests, NULL, NULL);
}
