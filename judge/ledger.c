/* The judge's ledger (judge.md, Ledger): leases, subjects, parties and
 * waiters, their hash indexes and heaps, and the per-lease rules of step 3
 * (classification) and of the grant policy (remaining term).
 *
 * Every table here is keyed with crypto_shorthash under the judge's hash
 * key (subjects, party names and lease ids arrive from whoever can write a
 * medium). Nothing written to the journal is ever taken from a table's
 * order: the tables are only probed, never iterated.
 */
#include <stdlib.h>
#include <string.h>

#include "judge/internal.h"
#include "judge/leases.h"

/* ---- vectors ---------------------------------------------------------------- */

/* ---- pools ------------------------------------------------------------------ */

int jpool_init(jpool *p, uint32_t item)
{
    memset(p, 0, sizeof *p);
    p->item = item;
    p->free = JNIL;
    return 0;
}

/* The freed-item chain lives in an item's last 4 bytes. */
static uint32_t *jpool_link(const jpool *p, uint32_t i)
{
    return (uint32_t *)((uint8_t *)jpool_at(p, i) + p->item - sizeof(uint32_t));
}

void jpool_free(jpool *p)
{
    for (uint32_t i = 0; i < p->nchunks; i++)
        free(p->chunks[i]);
    free(p->chunks);
    memset(p, 0, sizeof *p);
    p->free = JNIL;
}

int jpool_get(jpool *p, uint32_t *idx)
{
    uint32_t i;
    if (p->free != JNIL) {
        i = p->free;
        p->free = *jpool_link(p, i);
    } else {
        if (p->next == JNIL)
            return DLS_ERR_NOMEM;
        if ((p->next >> JPOOL_SHIFT) >= p->nchunks) {
            uint8_t **nc = realloc(p->chunks, (p->nchunks + 1) * sizeof *nc);
            if (!nc)
                return DLS_ERR_NOMEM;
            p->chunks = nc;
            nc[p->nchunks] = malloc((size_t)JPOOL_CHUNK * p->item);
            if (!nc[p->nchunks])
                return DLS_ERR_NOMEM;
            p->nchunks++;
        }
        i = p->next++;
    }
    memset(jpool_at(p, i), 0, p->item);
    p->used++;
    *idx = i;
    return 0;
}

void jpool_put(jpool *p, uint32_t idx)
{
    memset(jpool_at(p, idx), 0, p->item);
    p->used--;
    *jpool_link(p, idx) = p->free;
    p->free = idx;
}

size_t jpool_bytes(const jpool *p)
{
    return (size_t)p->nchunks * JPOOL_CHUNK * p->item + p->nchunks * sizeof(uint8_t *);
}

/* ---- hashing and the three indexes ------------------------------------------ */

uint32_t jl_hash(const dls_judge *j, const void *p, size_t n)
{
    uint8_t out[crypto_shorthash_BYTES];
    crypto_shorthash(out, p, n, j->hkey);
    uint32_t h;
    memcpy(&h, out, sizeof h);
    return h;
}

static uint32_t id_hash(const dls_judge *j, uint64_t id)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(id >> (8 * i));
    return jl_hash(j, b, sizeof b);
}

static bool lease_eq(const void *ctx, uint32_t ref, const void *key)
{
    return jl_lease_at(ctx, ref)->id == *(const uint64_t *)key;
}

typedef struct jkey {
    const uint8_t *p;
    size_t n;
} jkey;

static bool subject_eq(const void *ctx, uint32_t ref, const void *key)
{
    const jl_subject *s = jl_subject_at(ctx, ref);
    const jkey *k = key;
    return s->len == k->n && memcmp(jl_subject_bytes(s), k->p, k->n) == 0;
}

static uint32_t subject_hash(const void *ctx, uint32_t ref)
{
    const jl_subject *s = jl_subject_at(ctx, ref);
    return jl_hash(ctx, jl_subject_bytes(s), s->len);
}

static bool party_eq(const void *ctx, uint32_t ref, const void *key)
{
    const jl_party *pa = jl_party_at(ctx, ref);
    const jkey *k = key;
    return pa->len == k->n && memcmp(pa->name, k->p, k->n) == 0;
}

static void lease_moved(void *ctx, uint32_t ref, uint32_t pos)
{
    jl_lease_at(ctx, ref)->heap_pos = pos;
}

static void waiter_moved(void *ctx, uint32_t ref, uint32_t pos)
{
    dls_judge *j = ctx;
    JVEC_AT(j->waiters, jl_waiter *, ref)->heap_pos = pos;
}

static void delay_moved(void *ctx, uint32_t ref, uint32_t pos)
{
    /* only a subject with a side record is in the delay heap */
    ((jl_subx *)jpool_at(&((dls_judge *)ctx)->subx, jl_subject_at(ctx, ref)->x))->delay_pos = pos;
}

int jl_ledger_init(dls_judge *j)
{
    jpool_init(&j->leases, sizeof(jl_lease));
    jpool_init(&j->subjects, sizeof(jl_subject));
    jpool_init(&j->subx, sizeof(jl_subx));
    dls_heap_init(&j->deadlines, lease_moved, j);
    dls_heap_init(&j->waitheap, waiter_moved, j);
    dls_heap_init(&j->delays, delay_moved, j);
    return 0;
}

int jl_ledger_reserve(dls_judge *j, uint32_t n)
{
    int rc = jtab_reserve(&j->by_id, n);
    return rc ? rc : jset_reserve(&j->by_subject, n, subject_hash, j);
}

void jl_ledger_free(dls_judge *j)
{
    for (uint32_t i = 0; i < j->subjects.next; i++) {
        jl_subject *s = jl_subject_at(j, i);
        if ((s->flags & JS_USED) && s->len > JL_SUBJECT_INLINE)
            free((void *)jl_subject_bytes(s));
    }
    for (size_t i = 0; i < j->waiters.n; i++)
        free(JVEC_AT(j->waiters, jl_waiter *, i));
    for (size_t i = 0; i < j->parties.n; i++)
        free(jl_party_at(j, (uint32_t)i)->pseq);
    jvec_free(&j->waiters);
    jvec_free(&j->wfree);
    jvec_free(&j->answered);
    jvec_free(&j->answered_bytes);
    jtab_free(&j->answered_index);
    jvec_free(&j->parties);
    jpool_free(&j->leases);
    jpool_free(&j->subjects);
    jpool_free(&j->subx);
    jvec_free(&j->capped);
    jtab_free(&j->capped_index);
    jtab_free(&j->by_id);
    jvec_free(&j->by_id_bulk);
    j->bulk = false;
    jset_free(&j->by_subject);
    jtab_free(&j->by_party);
    dls_heap_free(&j->deadlines);
    dls_heap_free(&j->waitheap);
    dls_heap_free(&j->delays);
    jo_free(j);
    ja_run_free(j);
}

int jl_ledger_bulk(dls_judge *j, bool on)
{
    if (on) {
        j->bulk = true;
        return 0;
    }
    j->bulk = false;
    int rc = jtab_insert_bulk(&j->by_id, j->by_id_bulk.p, j->by_id_bulk.n);
    jvec_free(&j->by_id_bulk);
    return rc;
}

/* Indexes lease i by its id's hash h, now or at the end of a bulk load. */
static int index_id(dls_judge *j, uint32_t h, uint32_t i)
{
    if (!j->bulk)
        return jtab_insert(&j->by_id, h, i);
    uint64_t slot = jtab_slot(h, i);
    return jvec_push(&j->by_id_bulk, sizeof slot, &slot);
}

uint32_t jl_lease_find(const dls_judge *j, uint64_t id)
{
    return jtab_find(&j->by_id, id_hash(j, id), lease_eq, j, &id);
}

uint32_t jl_lease_hash(const dls_judge *j, uint64_t id) { return id_hash(j, id); }

void jl_lease_prefetch(const dls_judge *j, uint32_t h) { jtab_prefetch(&j->by_id, h); }

uint32_t jl_lease_find_h(const dls_judge *j, uint64_t id, uint32_t h)
{
    return jtab_find(&j->by_id, h, lease_eq, j, &id);
}

uint32_t jl_subject_find(const dls_judge *j, const uint8_t *p, size_t n)
{
    jkey k = {p, n};
    return jset_find(&j->by_subject, jl_hash(j, p, n), subject_eq, j, &k);
}

int jl_subject_get(dls_judge *j, const uint8_t *p, size_t n, uint32_t *idx)
{
    if (n == 0 || n > DLS_SUBJECT_MAX)
        return DLS_ERR_INVAL;
    return jl_subject_get_h(j, p, n, jl_hash(j, p, n), idx);
}

uint32_t jl_subject_hash(const dls_judge *j, const uint8_t *p, size_t n)
{
    return jl_hash(j, p, n);
}

void jl_subject_prefetch(const dls_judge *j, uint32_t h) { jset_prefetch(&j->by_subject, h); }

int jl_subject_get_h(dls_judge *j, const uint8_t *p, size_t n, uint32_t h, uint32_t *idx)
{
    if (n == 0 || n > DLS_SUBJECT_MAX)
        return DLS_ERR_INVAL;
    jkey k = {p, n};
    uint32_t s = jset_find(&j->by_subject, h, subject_eq, j, &k);
    if (s != JNIL) {
        *idx = s;
        return 0;
    }
    uint8_t *copy = NULL;
    if (n > JL_SUBJECT_INLINE && !(copy = malloc(n)))
        return DLS_ERR_NOMEM;
    int rc = jpool_get(&j->subjects, &s);
    if (rc) {
        free(copy);
        return rc;
    }
    /* Filled before it is indexed: growing the index rehashes it. */
    jl_subject *sub = jl_subject_at(j, s);
    sub->flags = JS_USED;
    sub->len = (uint16_t)n;
    sub->first_lease = JNIL;
    sub->x = JNIL;
    if (copy) {
        memcpy(copy, p, n);
        memcpy(sub->b, &copy, sizeof copy);
    } else {
        memcpy(sub->b, p, n);
    }
    rc = jset_insert(&j->by_subject, h, s, subject_hash, j);
    if (rc) {
        jpool_put(&j->subjects, s);
        free(copy);
        return rc;
    }
    if (copy)
        j->subject_bytes += n;
    *idx = s;
    return 0;
}

jl_subx *jl_subx_get(dls_judge *j, uint32_t s)
{
    jl_subject *sub = jl_subject_at(j, s);
    if (sub->x == JNIL) {
        uint32_t x;
        if (jpool_get(&j->subx, &x))
            return NULL;
        ((jl_subx *)jpool_at(&j->subx, x))->delay_pos = JNIL;
        sub->x = x;
    }
    return (jl_subx *)jpool_at(&j->subx, sub->x);
}

void jl_subject_release(dls_judge *j, uint32_t s)
{
    jl_subject *sub = jl_subject_at(j, s);
    if (sub->first_lease != JNIL || jl_subx_peek(j, sub)->nwaiters ||
        (sub->flags & (JS_DELAYED | JS_FREED | JS_REFUSED)))
        return;
    jset_remove(&j->by_subject, subject_hash(j, s), s, subject_hash, j);
    if (sub->x != JNIL)
        jpool_put(&j->subx, sub->x);
    if (sub->len > JL_SUBJECT_INLINE) {
        j->subject_bytes -= sub->len;
        free((void *)jl_subject_bytes(sub));
    }
    jpool_put(&j->subjects, s);
}

int jl_party_get(dls_judge *j, const uint8_t *name, size_t n, uint32_t *idx)
{
    if (n == 0 || n > DLS_ID_MAX)
        return DLS_ERR_INVAL;
    uint32_t h = jl_hash(j, name, n);
    jkey k = {name, n};
    uint32_t p = jtab_find(&j->by_party, h, party_eq, j, &k);
    if (p != JNIL) {
        *idx = p;
        return 0;
    }
    jl_party pa;
    memset(&pa, 0, sizeof pa);
    memcpy(pa.name, name, n);
    pa.len = (uint8_t)n;
    pa.hash = h;
    if (j->parties.n >= JNIL - 1)
        return DLS_ERR_NOMEM;
    p = (uint32_t)j->parties.n;
    int rc = jvec_push(&j->parties, sizeof pa, &pa);
    if (!rc)
        rc = jtab_insert(&j->by_party, h, p);
    if (rc) {
        j->parties.n = p;
        return rc;
    }
    *idx = p;
    return 0;
}

uint64_t jl_pseq_get(const dls_judge *j, uint32_t party, uint16_t medium)
{
    const jl_party *pa = jl_party_at(j, party);
    for (uint32_t i = 0; i < pa->npseq; i++)
        if (pa->pseq[i].medium == medium)
            return pa->pseq[i].seq;
    return 0;
}

int jl_pseq_set(dls_judge *j, uint32_t party, uint16_t medium, uint64_t seq)
{
    jl_party *pa = jl_party_at(j, party);
    for (uint32_t i = 0; i < pa->npseq; i++)
        if (pa->pseq[i].medium == medium) {
            pa->pseq[i].seq = seq;
            return 0;
        }
    jl_pseq *np = realloc(pa->pseq, (pa->npseq + 1) * sizeof *np);
    if (!np)
        return DLS_ERR_NOMEM;
    pa->pseq = np;
    np[pa->npseq].medium = medium;
    np[pa->npseq].seq = seq;
    pa->npseq++;
    return 0;
}

/* ---- tenure caps: a side table by lease id ------------------------------------ */

static bool capped_eq(const void *ctx, uint32_t ref, const void *key)
{
    const dls_judge *j = ctx;
    return JVEC_AT(j->capped, jl_capped, ref).id == *(const uint64_t *)key;
}

static int capped_add(dls_judge *j, uint64_t id, uint64_t max_ns)
{
    if (j->capped.n >= JNIL - 1)
        return DLS_ERR_NOMEM;
    int rc = jvec_reserve(&j->capped, sizeof(jl_capped), 1);
    if (!rc)
        rc = jtab_insert(&j->capped_index, id_hash(j, id), (uint32_t)j->capped.n);
    if (rc)
        return rc;
    jl_capped c = {id, max_ns};
    JVEC_AT(j->capped, jl_capped, j->capped.n++) = c;
    return 0;
}

/* Removes the lease's entry; the last entry moves into its place. */
static void capped_remove(dls_judge *j, uint64_t id)
{
    uint32_t h = id_hash(j, id);
    uint32_t ref = jtab_find(&j->capped_index, h, capped_eq, j, &id);
    if (ref == JNIL)
        return;
    jtab_remove(&j->capped_index, h, ref);
    uint32_t last = (uint32_t)j->capped.n - 1;
    if (ref != last) {
        jl_capped moved = JVEC_AT(j->capped, jl_capped, last);
        uint32_t mh = id_hash(j, moved.id);
        jtab_remove(&j->capped_index, mh, last);
        JVEC_AT(j->capped, jl_capped, ref) = moved;
        /* cannot fail: the table just lost two entries and grows at none */
        (void)jtab_insert(&j->capped_index, mh, ref);
    }
    j->capped.n--;
}

uint64_t jl_max_ns(const dls_judge *j, const jl_lease *l)
{
    if (!(l->flags & JL_CAPPED))
        return 0;
    uint32_t ref = jtab_find(&j->capped_index, id_hash(j, l->id), capped_eq, j, &l->id);
    return ref == JNIL ? 0 : JVEC_AT(j->capped, jl_capped, ref).max_ns;
}

/* ---- leases ----------------------------------------------------------------- */

int jl_lease_add(dls_judge *j, const jl_terms *t, uint32_t *idx)
{
    uint32_t i;
    int rc = jpool_get(&j->leases, &i);
    if (rc)
        return rc;
    uint32_t h = id_hash(j, t->id);
    rc = jo_reserve(j, i, t->holder);
    if (!rc && t->max_ns)
        rc = capped_add(j, t->id, t->max_ns);
    if (!rc) {
        rc = index_id(j, h, i);
        if (rc && t->max_ns)
            capped_remove(j, t->id);
    }
    if (rc) {
        jpool_put(&j->leases, i);
        return rc;
    }
    jl_lease *l = jl_lease_at(j, i);
    jl_subject *s = jl_subject_at(j, t->subject);
    l->flags = JL_USED | (t->mode == DLS_MODE_SHARED ? JL_SHARED : 0) | (t->max_ns ? JL_CAPPED : 0);
    l->subject = t->subject;
    l->id = t->id;
    l->duration_ns = t->duration_ns;
    l->tenure_start = t->now;
    l->last_obs = t->now;
    l->holder = t->holder;
    l->medium = t->medium;
    l->heap_pos = JNIL;
    l->epoch = t->medium != JL_NO_MEDIUM ? j->media[t->medium].gap_epoch : 0;
    l->subj_prev = JNIL;
    l->subj_next = s->first_lease;
    if (s->first_lease != JNIL)
        jl_lease_at(j, s->first_lease)->subj_prev = i;
    s->first_lease = i;
    if (t->mode == DLS_MODE_SHARED)
        s->n_shared++;
    else
        s->n_excl++;
    j->live++;
    if (t->id > j->highest)
        j->highest = t->id;
    jo_link(j, i);
    *idx = i;
    return 0;
}

void jl_lease_remove(dls_judge *j, uint32_t idx)
{
    jo_unlink(j, idx);
    jl_lease *l = jl_lease_at(j, idx);
    jl_subject *s = jl_subject_at(j, l->subject);
    if (l->subj_prev != JNIL)
        jl_lease_at(j, l->subj_prev)->subj_next = l->subj_next;
    else
        s->first_lease = l->subj_next;
    if (l->subj_next != JNIL)
        jl_lease_at(j, l->subj_next)->subj_prev = l->subj_prev;
    if (l->flags & JL_SHARED)
        s->n_shared--;
    else
        s->n_excl--;
    if (l->heap_pos != JNIL)
        dls_heap_remove(&j->deadlines, l->heap_pos);
    jtab_remove(&j->by_id, id_hash(j, l->id), idx);
    if (l->flags & JL_CAPPED)
        capped_remove(j, l->id);
    jpool_put(&j->leases, idx);
    j->live--;
}

void jl_normalize(dls_judge *j, jl_lease *l)
{
    if (l->medium == JL_NO_MEDIUM)
        return;
    const jm_medium *m = &j->media[l->medium];
    if (l->epoch != m->gap_epoch) {
        l->flags |= JL_UNKNOWN;
        l->resumed = m->gap_now;
        l->epoch = m->gap_epoch;
    }
}

/* The reading at which `d` has passed since base: base + d + 1 (strict). */
static uint64_t passes_at(uint64_t base, uint64_t d)
{
    return dls_add_sat(dls_add_sat(base, d), 1);
}

static uint64_t silence_at(const dls_judge *j, const jl_lease *l)
{
    uint64_t s = passes_at(l->last_obs, dls_add_sat(l->duration_ns, j->tolerance));
    if (l->flags & JL_UNKNOWN) {
        uint64_t r = passes_at(l->resumed, l->duration_ns);
        if (r > s)
            s = r;
    }
    return s;
}

uint64_t jl_deadline(const dls_judge *j, const jl_lease *l)
{
    if (l->flags & (JL_RELEASED | JL_ENDED | JL_PENDING))
        return 0;
    uint64_t d = silence_at(j, l);
    uint64_t max_ns = jl_max_ns(j, l);
    if (max_ns) {
        uint64_t c = passes_at(l->tenure_start, dls_add_sat(max_ns, j->tolerance));
        if (c < d)
            d = c;
    }
    return d;
}

uint64_t jl_next_key(const dls_judge *j, const jl_lease *l, uint64_t now, bool *suspended)
{
    uint64_t max_ns = jl_max_ns(j, l);
    uint64_t cap = max_ns ? passes_at(l->tenure_start, dls_add_sat(max_ns, j->tolerance))
                          : UINT64_MAX;
    uint64_t sil = silence_at(j, l);
    /* Held back only once silence holds: before that its deadline stands
     * (were the medium to recover, the lease falls due there). */
    *suspended = sil <= now && jl_suspended(j, l, now);
    if (*suspended) {
        uint64_t until = passes_at(j->media[l->medium].fail_since,
                                   dls_add_sat(l->duration_ns, j->tolerance));
        if (until > sil)
            sil = until;
    }
    return cap < sil ? cap : sil;
}

int jl_schedule(dls_judge *j, uint32_t idx, uint64_t key)
{
    jl_lease *l = jl_lease_at(j, idx);
    if (l->heap_pos != JNIL) {
        dls_heap_update(&j->deadlines, l->heap_pos, key);
        return 0;
    }
    return dls_heap_push(&j->deadlines, key, idx);
}

bool jl_suspended(const dls_judge *j, const jl_lease *l, uint64_t now)
{
    if (l->medium == JL_NO_MEDIUM)
        return false;
    const jm_medium *m = &j->media[l->medium];
    return m->failed && !dls_passed(m->fail_since, now, dls_add_sat(l->duration_ns, j->tolerance));
}

dls_cause jl_classify(dls_judge *j, jl_lease *l, uint64_t now)
{
    jl_normalize(j, l);
    if (l->flags & JL_PENDING)
        return (dls_cause)l->cause;
    if (l->flags & JL_RELEASED)
        return DLS_CAUSE_RELEASE;
    if ((l->flags & JL_CAPPED) &&
        dls_passed(l->tenure_start, now, dls_add_sat(jl_max_ns(j, l), j->tolerance)))
        return DLS_CAUSE_CAP;
    if (l->flags & JL_ENDED)
        return DLS_CAUSE_POLICY;
    if (jl_suspended(j, l, now))
        return DLS_CAUSE_NONE;
    if (!dls_passed(l->last_obs, now, dls_add_sat(l->duration_ns, j->tolerance)))
        return DLS_CAUSE_NONE;
    if ((l->flags & JL_UNKNOWN) && !dls_passed(l->resumed, now, l->duration_ns))
        return DLS_CAUSE_NONE;
    return DLS_CAUSE_SILENCE;
}

uint64_t jl_remaining(dls_judge *j, jl_lease *l, uint64_t now)
{
    jl_normalize(j, l);
    if (l->flags & JL_PENDING)
        return 0;
    uint64_t r = dls_sub_floor(dls_add_sat(l->duration_ns, j->tolerance),
                               dls_sub_floor(now, l->last_obs));
    if (l->flags & JL_UNKNOWN) {
        uint64_t u = dls_sub_floor(l->duration_ns, dls_sub_floor(now, l->resumed));
        if (u > r)
            r = u;
    }
    return r;
}

/* ---- waiters ---------------------------------------------------------------- */

int jl_waiter_add(dls_judge *j, uint32_t subject, const jl_prop *p, uint64_t now,
                  uint64_t bound, jl_waiter **out)
{
    jl_subx *x = jl_subx_get(j, subject);
    if (!x)
        return DLS_ERR_NOMEM;
    jl_waiter *w = calloc(1, sizeof *w);
    if (!w)
        return DLS_ERR_NOMEM;
    uint32_t slot;
    int rc = 0;
    if (j->wfree.n > 0) {
        slot = JVEC_AT(j->wfree, uint32_t, --j->wfree.n);
    } else {
        slot = (uint32_t)j->waiters.n;
        jl_waiter *none = NULL;
        rc = jvec_push(&j->waiters, sizeof none, &none);
        if (!rc)
            rc = jvec_reserve(&j->wfree, sizeof(uint32_t), j->waiters.n - j->wfree.n);
    }
    if (rc) {
        free(w);
        return rc;
    }
    w->self = slot;
    w->subject = subject;
    w->arrived_at = now;
    w->bound = bound;
    w->p = *p;
    w->p.subject = NULL;
    JVEC_AT(j->waiters, jl_waiter *, slot) = w;
    rc = dls_heap_push(&j->waitheap, passes_at(now, bound), slot);
    if (rc) {
        JVEC_AT(j->waiters, jl_waiter *, slot) = NULL;
        JVEC_AT(j->wfree, uint32_t, j->wfree.n++) = slot;
        free(w);
        return rc;
    }
    w->prev = x->wtail;
    if (x->wtail)
        x->wtail->next = w;
    else
        x->whead = w;
    x->wtail = w;
    x->nwaiters++;
    j->nwaiting++;
    *out = w;
    return 0;
}

void jl_waiter_remove(dls_judge *j, jl_waiter *w)
{
    jl_subx *s = (jl_subx *)jpool_at(&j->subx, jl_subject_at(j, w->subject)->x);
    if (w->prev)
        w->prev->next = w->next;
    else
        s->whead = w->next;
    if (w->next)
        w->next->prev = w->prev;
    else
        s->wtail = w->prev;
    s->nwaiters--;
    j->nwaiting--;
    dls_heap_remove(&j->waitheap, w->heap_pos);
    JVEC_AT(j->waiters, jl_waiter *, w->self) = NULL;
    JVEC_AT(j->wfree, uint32_t, j->wfree.n++) = w->self;
    free(w);
}

size_t jl_memory(const dls_judge *j)
{
    size_t b = jpool_bytes(&j->leases) + jpool_bytes(&j->subjects) + jpool_bytes(&j->subx);
    b += j->capped.cap * sizeof(jl_capped) + jtab_bytes(&j->capped_index);
    b += jtab_bytes(&j->by_id) + jset_bytes(&j->by_subject) + jtab_bytes(&j->by_party);
    b += dls_heap_bytes(&j->deadlines) + dls_heap_bytes(&j->waitheap) + dls_heap_bytes(&j->delays);
    b += j->parties.cap * sizeof(jl_party) + j->waiters.cap * sizeof(jl_waiter *);
    b += j->nwaiting * sizeof(jl_waiter) + j->pending.cap * sizeof(uint32_t);
    b += j->answered.cap * sizeof(jl_answered) + j->answered_bytes.cap +
         jtab_bytes(&j->answered_index);
    return b + j->subject_bytes + jo_memory(j);
}
