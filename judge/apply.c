/* Step 2 of the pass, record by record (judge.md, The pass; attribution.md,
 * gates 1 and 2; vocabulary.md, seq and rule 6). Shared by the live pass
 * and by the journal replay of a restart, so that both count exactly the
 * same evidence.
 *
 * Each record is attributed by its medium's resolver, decoded, stamped
 * with `now` and applied:
 *   - a renewal counts when it names a live lease, arrived on the lease's
 *     registered medium, is authored by the lease's holder and carries a
 *     seq above the last counted one: the last relevant observation becomes
 *     now and the evidence known;
 *   - a release counts under the same three conditions and marks the lease
 *     released (a second one is defective by rule 6);
 *   - a proposal counts when its seq exceeds its author's last on that
 *     medium and, on a medium whose history the replay lost, the journal
 *     has not answered it already: it joins this pass's proposals;
 *   - anything else is counted and ignored.
 */
#include <stdlib.h>
#include <string.h>

#include "judge/internal.h"

void jl_prop_free(jl_prop *p)
{
    free(p->subject);
    p->subject = NULL;
}

void ja_gap(dls_judge *j, uint16_t mi, uint64_t now)
{
    jm_medium *m = &j->media[mi];
    m->gap_epoch++;
    m->gap_now = now;
}

static bool is_holder(const dls_judge *j, const jl_lease *l, dls_bytes author)
{
    const jl_party *pa = jl_party_at(j, l->holder);
    return pa->len == author.n && memcmp(pa->name, author.p, author.n) == 0;
}

/* The lease a renewal or release names, when it may count for it. */
static jl_lease *evidence_for(dls_judge *j, uint16_t mi, dls_bytes author, uint64_t id,
                              uint32_t idx)
{
    dls_judge_pass_result *r = j->res;
    if (idx == JNIL) {
        r->ignored_unknown_lease++;
        /* Evidence of a lease the journal never granted: the journal is
         * shorter than the holders' evidence (judge.md, Restart, Lost
         * ledger). Noted by replay, refused at assembly. */
        if (j->replaying && id > j->highest && id > j->evidence_lease) {
            j->evidence_lease = id;
            j->evidence_medium = mi;
        }
        return NULL;
    }
    jl_lease *l = jl_lease_at(j, idx);
    if (l->medium != mi) { /* gate 2: only the registered medium */
        r->ignored_misplaced++;
        return NULL;
    }
    if (!is_holder(j, l, author)) { /* gate 1 */
        r->ignored_wrong_author++;
        return NULL;
    }
    return l;
}

static void apply_renewal(dls_judge *j, uint16_t mi, dls_bytes author, const dls_fact *f,
                          uint32_t idx, uint64_t now, bool replay)
{
    jl_lease *l = evidence_for(j, mi, author, f->lease, idx);
    if (!l)
        return;
    if (f->seq <= l->last_seq) {
        j->res->ignored_replayed++;
        return;
    }
    /* Counted whatever else holds (pending, released, ended). */
    if (!replay)
        j->res->renewals++;
    if (!replay && dls_passed(l->last_obs, now, l->duration_ns / 2))
        j->res->late_renewals++;
    l->last_seq = f->seq;
    l->last_obs = now;
    l->flags &= ~(uint32_t)JL_UNKNOWN;
    l->epoch = j->media[mi].gap_epoch;
    /* The deadline moved later: the heap's lower bound stays valid. */
}

static void apply_release(dls_judge *j, uint16_t mi, dls_bytes author, const dls_fact *f,
                          uint32_t idx)
{
    jl_lease *l = evidence_for(j, mi, author, f->lease, idx);
    if (!l)
        return;
    if (l->flags & JL_RELEASED) { /* rule 6: the first release stands */
        j->res->defective[6]++;
        return;
    }
    l->flags |= JL_RELEASED | (f->commit ? JL_COMMIT : 0);
    if (l->heap_pos != JNIL)
        dls_heap_update(&j->deadlines, l->heap_pos, 0);
}

static uint32_t prop_hash(const dls_judge *j, const jl_party *pa, const uint8_t *prop,
                          size_t plen)
{
    uint8_t key[1 + DLS_ID_MAX + JL_PROPOSAL_MAX];
    key[0] = pa->len;
    memcpy(key + 1, pa->name, pa->len);
    memcpy(key + 1 + pa->len, prop, plen);
    return jl_hash(j, key, 1 + pa->len + plen);
}

typedef struct prop_key {
    uint32_t holder;
    const uint8_t *p;
    size_t n;
} prop_key;

static bool answered_eq(const void *ctx, uint32_t ref, const void *key)
{
    const dls_judge *j = ctx;
    const jl_answered *a = &JVEC_AT(j->answered, jl_answered, ref);
    const prop_key *k = key;
    return a->holder == k->holder && a->plen == k->n &&
           memcmp(&JVEC_AT(j->answered_bytes, uint8_t, a->off), k->p, k->n) == 0;
}

static uint32_t answered_find(const dls_judge *j, uint32_t h, const prop_key *k)
{
    return jtab_find(&j->answered_index, h, answered_eq, j, k);
}

static int apply_proposal(dls_judge *j, uint16_t mi, dls_bytes author, const dls_fact *f,
                          bool replay)
{
    uint32_t party;
    int rc = jl_party_get(j, author.p, author.n, &party);
    if (rc)
        return rc;
    if (f->seq <= jl_pseq_get(j, party, mi)) {
        j->res->ignored_replayed++;
        return 0;
    }
    /* The seq this author last counted here was lost with the medium's
     * history; the journal still names what it answered, and a holder never
     * reuses a proposal id: such a proposal is a copy. */
    if (j->media[mi].lost && j->answered.n) {
        prop_key k = {party, f->proposal.p, f->proposal.n};
        uint32_t h = prop_hash(j, jl_party_at(j, party), k.p, k.n);
        if (answered_find(j, h, &k) != JNIL) {
            j->res->ignored_replayed++;
            return 0;
        }
    }
    jl_prop p;
    memset(&p, 0, sizeof p);
    p.subject = malloc(f->subject.n);
    if (!p.subject)
        return DLS_ERR_NOMEM;
    rc = jl_pseq_set(j, party, mi, f->seq);
    if (!rc)
        rc = jvec_reserve(&j->props, sizeof p, 1);
    if (rc) {
        free(p.subject);
        return rc;
    }
    memcpy(p.subject, f->subject.p, f->subject.n);
    p.slen = (uint16_t)f->subject.n;
    p.arrival = ++j->arrival;
    p.holder = party;
    p.medium = mi;
    p.plen = (uint8_t)f->proposal.n;
    memcpy(p.proposal, f->proposal.p, f->proposal.n);
    p.has_mode = (f->keys & DLS_K_MODE) != 0;
    p.mode = f->mode;
    p.has_ask = (f->keys & DLS_K_DURATION) != 0;
    p.ask = f->duration;
    if (replay) {
        uint32_t h = prop_hash(j, jl_party_at(j, party), p.proposal, p.plen);
        rc = jtab_insert(&j->prop_index, h, (uint32_t)j->props.n);
        if (rc) {
            free(p.subject);
            return rc;
        }
    }
    JVEC_AT(j->props, jl_prop, j->props.n++) = p;
    return 0;
}

/* One decoded fact, as if it stood alone (attribution.md rev 4: each fact
 * of a batch counts at (position, index)). `idx` is the lease a renewal or
 * release names (jl_lease_find), looked up by the caller. */
static int apply_decoded(dls_judge *j, uint16_t mi, dls_bytes author, const dls_fact *f,
                         uint32_t idx, uint64_t now, bool replay)
{
    dls_judge_pass_result *r = j->res;
    switch (f->kind) {
    case DLS_FACT_NONE:
        r->not_lease++;
        return 0;
    case DLS_FACT_RENEWAL:
        apply_renewal(j, mi, author, f, idx, now, replay);
        return 0;
    case DLS_FACT_RELEASE:
        apply_release(j, mi, author, f, idx);
        return 0;
    case DLS_FACT_PROPOSAL:
        return apply_proposal(j, mi, author, f, replay);
    default: /* grants, refusals, lapsed and ticks do not belong here */
        r->ignored_misplaced++;
        return 0;
    }
}

static bool names_lease(const dls_fact *f)
{
    return f->kind == DLS_FACT_RENEWAL || f->kind == DLS_FACT_RELEASE;
}

/* Decodes one fact; a defective one is counted by its rule and answers
 * false. */
static bool decode(dls_judge *j, dls_bytes fact, dls_fact *f)
{
    dls_where w = {0};
    if (dls_fact_decode(fact.p, fact.n, f, &w) == 0)
        return true;
    int rule = w.rule >= 1 && w.rule <= 7 ? w.rule : 1;
    j->res->defective[rule]++;
    return false;
}

/* Facts of a batch are applied in runs of RUN: all of a run are decoded and
 * their lease lookups' hash slots prefetched, then all looked up and their
 * leases prefetched, before the first is applied, so the cache misses of a
 * large ledger overlap (measured in docs/bench.md). Step 2
 * adds and removes no lease, so a lookup made before the run's earlier
 * facts are applied answers the same. */
#define RUN 16

static inline uint32_t find_prefetch(const dls_judge *j, const dls_fact *f, uint32_t h)
{
    uint32_t idx = jl_lease_find_h(j, f->lease, h);
    if (idx != JNIL)
        __builtin_prefetch(jl_lease_at(j, idx));
    return idx;
}

int ja_apply(dls_judge *j, uint16_t mi, const uint8_t *rec, size_t n, uint64_t now,
             bool replay)
{
    dls_judge_pass_result *r = j->res;
    dls_attribution a;
    dls_facts it;
    /* A batch envelope (attribution.md rev 4) is verified once for all its
     * facts; a record that is not attributed is one forged record. */
    dls_resolver_attribute_facts(j->media[mi].r, rec, n, &a, &it);
    if (!a.attributed) {
        r->forged++;
        return 0;
    }
    if (a.kind == DLS_REC_BATCH)
        r->batches++;
    dls_fact f[RUN];
    uint32_t h[RUN], idx[RUN];
    bool ok[RUN];
    dls_bytes fact;
    for (;;) {
        size_t k = 0;
        while (k < RUN && dls_facts_next(&it, &fact, NULL)) {
            ok[k] = decode(j, fact, &f[k]);
            if (ok[k] && names_lease(&f[k])) {
                h[k] = jl_lease_hash(j, f[k].lease);
                jl_lease_prefetch(j, h[k]);
            }
            k++;
        }
        for (size_t i = 0; i < k; i++)
            idx[i] = ok[i] && names_lease(&f[i]) ? find_prefetch(j, &f[i], h[i]) : JNIL;
        for (size_t i = 0; i < k; i++) {
            if (!ok[i])
                continue;
            int rc = apply_decoded(j, mi, a.author, &f[i], idx[i], now, replay);
            if (rc)
                return rc;
        }
        if (k < RUN)
            return 0;
    }
}

/* ---- the live pass's runs of records ------------------------------------------ */

int ja_run_flush(dls_judge *j)
{
    size_t k = j->nrun;
    j->nrun = 0;
    ja_item *run = j->run;
    for (size_t i = 0; i < k; i++)
        run[i].idx = run[i].ok && names_lease(&run[i].f) ? find_prefetch(j, &run[i].f, run[i].h)
                                                          : JNIL;
    for (size_t i = 0; i < k; i++) {
        if (!run[i].ok)
            continue;
        int rc = apply_decoded(j, j->run_medium, run[i].author, &run[i].f, run[i].idx,
                               j->run_now, false);
        if (rc)
            return rc;
    }
    return 0;
}

int ja_run_add(dls_judge *j, uint16_t mi, const uint8_t *rec, size_t n, uint64_t now,
               size_t facts_in)
{
    if (j->nrun && (mi != j->run_medium || now != j->run_now)) {
        int rc = ja_run_flush(j);
        if (rc)
            return rc;
    }
    dls_attribution a;
    if (n > JA_RUN_RECORD || facts_in > 1) {
        int rc = ja_run_flush(j);
        return rc ? rc : ja_apply(j, mi, rec, n, now, false);
    }
    if (!j->run) { /* made once, by the first pass that reads a record */
        j->run = malloc(JA_RUN * sizeof *j->run);
        j->run_buf = malloc((size_t)JA_RUN * JA_RUN_RECORD);
        if (!j->run || !j->run_buf) {
            ja_run_free(j);
            return DLS_ERR_NOMEM;
        }
    }
    uint8_t *copy = j->run_buf + j->nrun * JA_RUN_RECORD;
    memcpy(copy, rec, n);
    ja_item *it = &j->run[j->nrun];
    dls_facts facts;
    dls_bytes fact;
    dls_resolver_attribute_facts(j->media[mi].r, copy, n, &a, &facts);
    it->ok = false;
    if (!a.attributed) {
        j->res->forged++;
    } else if (dls_facts_next(&facts, &fact, NULL)) { /* the one fact */
        if (a.kind == DLS_REC_BATCH)
            j->res->batches++; /* a batch of one */
        it->author = a.author;
        it->ok = decode(j, fact, &it->f);
        if (it->ok && names_lease(&it->f)) {
            it->h = jl_lease_hash(j, it->f.lease);
            jl_lease_prefetch(j, it->h);
        }
    }
    j->run_medium = mi;
    j->run_now = now;
    if (++j->nrun == JA_RUN)
        return ja_run_flush(j);
    return 0;
}

void ja_run_free(dls_judge *j)
{
    free(j->run);
    free(j->run_buf);
    j->run = NULL;
    j->run_buf = NULL;
    j->nrun = 0;
}

size_t ja_facts(const uint8_t *rec, size_t n)
{
    dls_attribution a;
    dls_record_classify(rec, n, &a);
    return a.count > 1 ? a.count : 1;
}

/* ---- replay: answers remove unanswered proposals ----------------------------- */

static bool prop_eq(const void *ctx, uint32_t ref, const void *key)
{
    const dls_judge *j = ctx;
    const jl_prop *p = &JVEC_AT(j->props, jl_prop, ref);
    const prop_key *k = key;
    return !p->dead && p->holder == k->holder && p->plen == k->n &&
           memcmp(p->proposal, k->p, k->n) == 0;
}

/* Remembers an answered proposal the replay did not read. */
static int remember_answered(dls_judge *j, uint32_t h, const prop_key *k)
{
    size_t off = j->answered_bytes.n;
    if (off + k->n > UINT32_MAX || j->answered.n >= JNIL - 1)
        return DLS_ERR_NOMEM;
    int rc = jvec_reserve(&j->answered_bytes, 1, k->n);
    if (!rc)
        rc = jvec_reserve(&j->answered, sizeof(jl_answered), 1);
    if (!rc)
        rc = jtab_insert(&j->answered_index, h, (uint32_t)j->answered.n);
    if (rc)
        return rc;
    memcpy(&JVEC_AT(j->answered_bytes, uint8_t, off), k->p, k->n);
    j->answered_bytes.n += k->n;
    jl_answered a = {k->holder, (uint32_t)off, (uint8_t)k->n};
    JVEC_AT(j->answered, jl_answered, j->answered.n++) = a;
    return 0;
}

/* A grant or refusal on the journal answered (holder, proposal): the
 * proposal this replay read is answered; one it did not read because its
 * medium's history was lost (`lost`) is remembered, so that no copy of it
 * counts again (apply_proposal). Every proposal answered was drained by the
 * mark before its answer, and the replay reads the media up to a mark's
 * positions before the records of its pass: an answered proposal on a
 * medium not lost so far was read. */
int ja_answered(dls_judge *j, dls_bytes holder, dls_bytes proposal, bool lost)
{
    uint32_t party;
    if (proposal.n == 0 || proposal.n > JL_PROPOSAL_MAX)
        return 0;
    int rc = jl_party_get(j, holder.p, holder.n, &party);
    if (rc)
        return rc == DLS_ERR_NOMEM ? rc : 0;
    uint32_t h = prop_hash(j, jl_party_at(j, party), proposal.p, proposal.n);
    prop_key k = {party, proposal.p, proposal.n};
    uint32_t ref = jtab_find(&j->prop_index, h, prop_eq, j, &k);
    if (ref == JNIL)
        return lost && answered_find(j, h, &k) == JNIL ? remember_answered(j, h, &k) : 0;
    jl_prop *p = &JVEC_AT(j->props, jl_prop, ref);
    jtab_remove(&j->prop_index, h, ref);
    p->dead = 1;
    jl_prop_free(p);
    return 0;
}

/* A standby's replay lives on (judge.md rev 5, Standby judges): the
 * proposals it read and the journal answered since are dropped from the
 * vector once they are most of it, and the index is rebuilt, so following
 * holds what is unanswered, not everything ever proposed. Drain order is
 * kept. 0 or DLS_ERR_NOMEM (the vector and index unchanged). */
int ja_props_compact(dls_judge *j)
{
    size_t live = 0;
    for (size_t i = 0; i < j->props.n; i++)
        live += !JVEC_AT(j->props, jl_prop, i).dead;
    if (j->props.n < 64 || live * 2 > j->props.n)
        return 0;
    jtab index;
    memset(&index, 0, sizeof index);
    size_t k = 0;
    for (size_t i = 0; i < j->props.n; i++) {
        const jl_prop *p = &JVEC_AT(j->props, jl_prop, i);
        if (p->dead)
            continue;
        uint32_t h = prop_hash(j, jl_party_at(j, p->holder), p->proposal, p->plen);
        if (jtab_insert(&index, h, (uint32_t)k++)) {
            jtab_free(&index);
            return DLS_ERR_NOMEM;
        }
    }
    k = 0;
    for (size_t i = 0; i < j->props.n; i++) {
        jl_prop p = JVEC_AT(j->props, jl_prop, i);
        if (!p.dead)
            JVEC_AT(j->props, jl_prop, k++) = p;
    }
    j->props.n = k;
    jtab_free(&j->prop_index);
    j->prop_index = index;
    return 0;
}
