/* The judge: assembly and the pass (judge.md, Assembly; The pass, steps
 * 1–6; step 7 lives in policy.c, the journal in journal.c, restart in
 * replay.c).
 */
#include <stdlib.h>
#include <string.h>

#include "daolease/redis.h"
#include "judge/internal.h"

/* ---- settings ---------------------------------------------------------------- */

void dls_judge_settings_default(dls_judge_settings *s)
{
    if (!s)
        return;
    memset(s, 0, sizeof *s);
    s->tolerance_ns = DLS_JUDGE_UNSET;
    s->cadence_ns = DLS_JUDGE_UNSET;
    (void)dls_duration_make(&s->default_duration, DLS_UNIT_S, 10);
    (void)dls_duration_make(&s->min_duration, DLS_UNIT_NS, 0);
    (void)dls_duration_make(&s->max_duration, DLS_UNIT_NS, 0);
    (void)dls_duration_make(&s->tenure_max, DLS_UNIT_NS, 0);
    s->drain_budget = 100000;
}

/* ---- assembly checks ---------------------------------------------------------- */

static int refuse(dls_where *w, int code, uint64_t index, const char *reason)
{
    if (w) {
        w->offset = index;
        w->reason = reason;
    }
    return code;
}

static int check_grantor(const dls_judge_settings *s, dls_where *w)
{
    if (!s->grantor || !dls_secret_name(s->grantor) || !dls_secret_name(s->grantor)[0])
        return refuse(w, DLS_ERR_NO_GRANTOR, 0, "no grantor name and Ed25519 key");
    if (dls_secret_kind(s->grantor) != DLS_KEY_ED25519)
        return refuse(w, DLS_ERR_KEYKIND, 0,
                      "the grantor's key must be Ed25519 (a MAC key would let its holders forge the journal)");
    return 0;
}

static int check_journal(const dls_judge_settings *s, dls_where *w)
{
    if (!s->journal)
        return refuse(w, DLS_ERR_NO_JOURNAL, 0, "no journal");
    if (dls_medium_mode(s->journal) != DLS_OPEN_APPEND)
        return refuse(w, DLS_ERR_STATE, 0, "the journal is not opened for append");
    if (dls_medium_retention(s->journal) != DLS_RETAIN_ALL)
        return refuse(w, DLS_ERR_RETENTION, 0,
                      "the journal must retain everything (an evict-oldest journal is refused)");
    if (dls_medium_sync(s->journal) == DLS_SYNC_NONE)
        return refuse(w, DLS_ERR_JOURNAL_SYNC, 0,
                      "the journal must be opened with sync data or group, not none");
    if (dls_medium_kind_of(s->journal) != DLS_MEDIUM_FILE && !dls_redis_is_medium(s->journal) &&
        !s->journal_lock_path)
        return refuse(w, DLS_ERR_CONFIG, 0,
                      "a journal that is not a file needs journal_lock_path (one judge at a time)");
    return 0;
}

static int check_retention(dls_medium *m)
{
    dls_retention r = dls_medium_retention(m);
    return r == DLS_RETAIN_ALL || r == DLS_RETAIN_EVICT_OLDEST ? 0 : DLS_ERR_RETENTION;
}

static int check_ticks(const dls_judge_settings *s, dls_where *w)
{
    if (!s->ticks || s->nticks == 0)
        return refuse(w, DLS_ERR_NO_TICKS, 0, "no tick cursor");
    for (size_t i = 0; i < s->nticks; i++) {
        const dls_judge_tick_source *t = &s->ticks[i];
        if (!t->medium || !t->adapter || !t->basis || !t->basis[0])
            return refuse(w, DLS_ERR_NO_TICKS, i,
                          "a tick source needs a medium, its adapter's name and a reading basis");
        if (!dls_name_valid((const uint8_t *)t->adapter, strlen(t->adapter)))
            return refuse(w, DLS_ERR_INVAL, i, "the tick adapter's name is not a valid party name");
        int rc = dls_resolver_check(t->resolver, dls_medium_id(t->medium));
        if (rc)
            return refuse(w, rc, i,
                          rc == DLS_ERR_NORESOLVER ? "a tick medium has no resolver"
                                                   : "a tick resolver is bound to another medium");
        if (check_retention(t->medium))
            return refuse(w, DLS_ERR_RETENTION, i,
                          "a tick medium neither retains everything nor evicts the oldest");
        if (strcmp(t->basis, s->ticks[0].basis) != 0)
            return refuse(w, DLS_ERR_BASIS, i, "tick sources on different reading bases");
    }
    return 0;
}

static int check_media(const dls_judge_settings *s, dls_where *w)
{
    if (s->nmedia > DLS_JUDGE_MEDIA_MAX)
        return refuse(w, DLS_ERR_TOO_MANY_MEDIA, s->nmedia, "more than 1024 lease-fact media");
    if (s->nmedia && !s->media)
        return refuse(w, DLS_ERR_INVAL, 0, "nmedia without media");
    for (size_t i = 0; i < s->nmedia; i++) {
        const dls_judge_medium *m = &s->media[i];
        if (!m->medium)
            return refuse(w, DLS_ERR_INVAL, i, "a lease-fact medium is NULL");
        int rc = dls_resolver_check(m->resolver, dls_medium_id(m->medium));
        if (rc)
            return refuse(w, rc, i,
                          rc == DLS_ERR_NORESOLVER ? "a lease-fact medium has no resolver"
                                                   : "a resolver is bound to another medium");
        if (check_retention(m->medium))
            return refuse(w, DLS_ERR_RETENTION, i,
                          "a medium neither retains everything nor evicts the oldest");
        for (size_t k = 0; k < i; k++)
            if (memcmp(dls_medium_id(s->media[k].medium), dls_medium_id(m->medium),
                       DLS_MEDIUM_ID_LEN) == 0)
                return refuse(w, DLS_ERR_DUPLICATE, i, "one medium listed twice");
    }
    return 0;
}

static int check_terms(const dls_judge_settings *s, dls_where *w)
{
    if (s->tolerance_ns == DLS_JUDGE_UNSET || s->tolerance_ns > DLS_NS_MAX)
        return refuse(w, DLS_ERR_CONFIG, 0, "no tolerance (it may be zero, but must be given)");
    if (s->cadence_ns == DLS_JUDGE_UNSET || s->cadence_ns == 0 || s->cadence_ns > DLS_NS_MAX)
        return refuse(w, DLS_ERR_CONFIG, 0, "no declared cadence");
    if (s->default_duration.ns == 0 || s->default_duration.ns > DLS_NS_MAX)
        return refuse(w, DLS_ERR_CONFIG, 0, "the default duration must be at least 1 ns");
    if (s->min_duration.ns && s->max_duration.ns && s->min_duration.ns > s->max_duration.ns)
        return refuse(w, DLS_ERR_CONFIG, 0, "min_duration exceeds max_duration");
    if (s->max_duration.ns > DLS_NS_MAX || s->tenure_max.ns > DLS_NS_MAX ||
        s->lock_delay_ns > DLS_NS_MAX)
        return refuse(w, DLS_ERR_CONFIG, 0, "a duration above 2^63-1 ns");
    return 0;
}

static int check_assembly(const dls_judge_settings *s, const dls_judge_callbacks *cb,
                          dls_where *w)
{
    int rc;
    if ((rc = check_grantor(s, w)) || (rc = check_journal(s, w)) || (rc = check_ticks(s, w)) ||
        (rc = check_media(s, w)) || (rc = check_terms(s, w)))
        return rc;
    if (!cb || !cb->reclaim)
        return refuse(w, DLS_ERR_NO_RECLAIM, 0, "no reclaim procedure");
    return 0;
}

/* ---- construction --------------------------------------------------------------- */

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

static int copy_assembly(dls_judge *j, const dls_judge_settings *s)
{
    j->grantor = s->grantor;
    j->grantor_name = dup_str(dls_secret_name(s->grantor));
    j->basis = dup_str(s->ticks[0].basis);
    j->ticks = calloc(s->nticks, sizeof *j->ticks);
    j->media = calloc(s->nmedia ? s->nmedia : 1, sizeof *j->media);
    j->scratch = malloc(DLS_RECORD_MAX);
    if (!j->grantor_name || !j->basis || !j->ticks || !j->media || !j->scratch)
        return DLS_ERR_NOMEM;
    j->grantor_len = strlen(j->grantor_name);
    j->journal = s->journal;
    memcpy(j->journal_id, dls_medium_id(s->journal), DLS_MEDIUM_ID_LEN);
    j->nticks = s->nticks;
    for (size_t i = 0; i < s->nticks; i++) {
        jm_tick *t = &j->ticks[i];
        t->m = s->ticks[i].medium;
        t->r = s->ticks[i].resolver;
        t->adapter = dup_str(s->ticks[i].adapter);
        if (!t->adapter)
            return DLS_ERR_NOMEM;
        t->adapter_len = strlen(t->adapter);
        if (dls_cursor_new(&t->c, t->m, s->ticks[i].from))
            return DLS_ERR_NOMEM;
    }
    j->nmedia = s->nmedia;
    for (size_t i = 0; i < s->nmedia; i++) {
        j->media[i].m = s->media[i].medium;
        j->media[i].r = s->media[i].resolver;
        memcpy(j->media[i].id, dls_medium_id(s->media[i].medium), DLS_MEDIUM_ID_LEN);
    }
    j->tolerance = s->tolerance_ns;
    j->cadence = s->cadence_ns;
    j->default_duration = s->default_duration;
    j->min_duration = s->min_duration;
    j->max_duration = s->max_duration;
    j->tenure_max = s->tenure_max;
    j->lock_delay = s->lock_delay_ns;
    j->drain_budget = s->drain_budget;
    if (s->hash_key)
        memcpy(j->hkey, s->hash_key, sizeof j->hkey);
    else
        randombytes_buf(j->hkey, sizeof j->hkey);
    return 0;
}

static int take_lock(dls_judge *j, const dls_judge_settings *s, dls_where *w)
{
    /* stream-format.md rev 4: a Redis journal is fenced by <key>:writer */
    if (dls_redis_is_medium(s->journal)) {
        int rc = dls_redis_fence(s->journal, w);
        if (rc || !s->journal_lock_path)
            return rc;
    }
    if (s->journal_lock_path)
        return jj_lock(j, s->journal_lock_path, w);
    const char *name = dls_medium_name(s->journal);
    size_t n = strlen(name);
    char *path = malloc(n + 6);
    if (!path)
        return DLS_ERR_NOMEM;
    memcpy(path, name, n);
    memcpy(path + n, ".lock", 6);
    int rc = jj_lock(j, path, w);
    free(path);
    return rc;
}

static int open_cursors(dls_judge *j, const uint64_t *starts)
{
    for (size_t i = 0; i < j->nmedia; i++)
        if (dls_cursor_new(&j->media[i].c, j->media[i].m, starts[i]))
            return DLS_ERR_NOMEM;
    return 0;
}

int dls_judge_new(dls_judge **out, const dls_judge_settings *s, const dls_judge_callbacks *cb,
                  void *user_data, dls_where *w)
{
    if (!out || !s)
        return DLS_ERR_INVAL;
    *out = NULL;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    int rc = check_assembly(s, cb, w);
    if (rc)
        return rc;
    dls_judge *j = calloc(1, sizeof *j);
    if (!j)
        return DLS_ERR_NOMEM;
    j->lock_fd = -1;
    j->cb = *cb;
    j->user = user_data;
    jl_ledger_init(j);
    uint64_t *starts = calloc(s->nmedia ? s->nmedia : 1, sizeof *starts);
    rc = starts ? copy_assembly(j, s) : DLS_ERR_NOMEM;
    if (!rc)
        rc = take_lock(j, s, w);
    if (!rc)
        rc = jr_replay(j, starts, w);
    if (!rc)
        rc = open_cursors(j, starts);
    free(starts);
    if (rc) {
        dls_judge_del(j);
        return rc;
    }
    *out = j;
    return 0;
}

static void free_props(dls_judge *j)
{
    for (size_t i = 0; i < j->props.n; i++)
        jl_prop_free(&JVEC_AT(j->props, jl_prop, i));
    jvec_free(&j->props);
    for (size_t i = 0; i < j->requests.n; i++)
        free(JVEC_AT(j->requests, jl_request, i).subject);
    jvec_free(&j->requests);
}

void dls_judge_del(dls_judge *j)
{
    if (!j)
        return;
    for (size_t i = 0; j->ticks && i < j->nticks; i++) {
        dls_cursor_del(j->ticks[i].c);
        free(j->ticks[i].adapter);
    }
    for (size_t i = 0; j->media && i < j->nmedia; i++) {
        dls_cursor_del(j->media[i].c);
        jvec_free(&j->media[i].parked);
    }
    free(j->ticks);
    free(j->media);
    free_props(j);
    jl_ledger_free(j);
    jtab_free(&j->prop_index);
    jvec *vs[] = {&j->pending, &j->due, &j->done, &j->freed, &j->refused_subjects, &j->gaps,
                  &j->mk_drained, &j->mk_errors, &j->mk_due, &j->jbuf, &j->jlens, &j->told};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
        jvec_free(vs[i]);
    jj_unlock(j);
    free(j->scratch);
    free(j->grantor_name);
    free(j->basis);
    free(j);
}

/* ---- step 1: ticks -------------------------------------------------------------------- */

static void tick_record(dls_judge *j, jm_tick *t, const dls_record *rec, bool *have,
                        uint64_t *newest)
{
    dls_judge_pass_result *r = j->res;
    dls_attribution a;
    dls_resolver_attribute(t->r, rec->p, rec->n, &a);
    if (!a.attributed) {
        r->forged++;
        return;
    }
    if (a.author.n != t->adapter_len || memcmp(a.author.p, t->adapter, a.author.n) != 0) {
        r->ignored_wrong_author++; /* a tick from anyone but the adapter */
        return;
    }
    dls_fact f;
    dls_where w = {0};
    if (dls_fact_decode(a.fact.p, a.fact.n, &f, &w)) {
        r->defective[w.rule >= 1 && w.rule <= 7 ? w.rule : 1]++;
        return;
    }
    if (f.kind != DLS_FACT_TICK) {
        if (f.kind == DLS_FACT_NONE)
            r->not_lease++;
        else
            r->ignored_misplaced++;
        return;
    }
    if (dls_rule7_observe(&t->r7, &f)) {
        r->defective[7]++;
        return;
    }
    if (!*have || f.reading.ns > *newest)
        *newest = f.reading.ns;
    *have = true;
}

static void drain_ticks(dls_judge *j)
{
    bool have = false;
    uint64_t newest = 0;
    size_t live = 0;
    for (size_t i = 0; i < j->nticks; i++) {
        jm_tick *t = &j->ticks[i];
        for (bool more = !t->retired; more;) {
            dls_record rec;
            switch (dls_cursor_next(t->c, &rec, NULL)) {
            case DLS_NEXT_OK:
                j->res->ticks++;
                tick_record(j, t, &rec, &have, &newest);
                break;
            case DLS_NEXT_GAP:
                break; /* only the newest reading matters */
            case DLS_NEXT_END:
                t->retired = true;
                more = false;
                break;
            default: /* blocked, transport-error */
                more = false;
                break;
            }
        }
        live += !t->retired;
    }
    if (live == 0)
        j->ticks_ended = true;
    if (have && (!j->now_valid || newest > j->now)) {
        j->now = newest;
        j->now_valid = true;
    }
}

/* ---- step 2: facts -------------------------------------------------------------------- */

static int push_gap(dls_judge *j, const jm_medium *m, uint64_t from, uint64_t to)
{
    dls_mark_gap g;
    memcpy(g.medium, m->id, DLS_MEDIUM_ID_LEN);
    g.from = from;
    g.to = to;
    return jvec_push(&j->gaps, sizeof g, &g);
}

static int drain_medium(dls_judge *j, uint16_t mi)
{
    jm_medium *m = &j->media[mi];
    dls_judge_pass_result *r = j->res;
    m->failed = m->cut = false;
    for (size_t n = 0; !m->retired;) {
        if (j->drain_budget && n >= j->drain_budget) {
            m->failed = m->cut = true; /* counts as not drained */
            m->err_pos = dls_cursor_position(m->c);
            r->budget_cuts++;
            return 0;
        }
        dls_record rec;
        int rc;
        switch (dls_cursor_next(m->c, &rec, NULL)) {
        case DLS_NEXT_OK:
            n++;
            r->drained++;
            j->moved = true;
            if ((rc = ja_apply(j, mi, rec.p, rec.n, j->now, false)) != 0)
                return rc;
            break;
        case DLS_NEXT_GAP:
            r->gaps++;
            j->moved = true;
            if ((rc = push_gap(j, m, rec.gap_from, rec.position)) != 0)
                return rc;
            ja_gap(j, mi, j->now);
            break;
        case DLS_NEXT_END:
            m->retired = true;
            return 0;
        case DLS_NEXT_ERROR:
            m->failed = true;
            m->err_pos = rec.position;
            return 0;
        default:
            return 0;
        }
    }
    return 0;
}

/* A medium that drained cleanly ends its failing run: the leases parked on
 * it are judged again from this pass on. */
static void unpark(dls_judge *j, jm_medium *m)
{
    for (size_t i = 0; i < m->parked.n; i++) {
        jl_parked p = JVEC_AT(m->parked, jl_parked, i);
        if (p.idx >= j->leases.next)
            continue;
        jl_lease *l = jl_lease_at(j, p.idx);
        if (!(l->flags & JL_USED) || l->id != p.id)
            continue;
        l->flags &= ~(uint32_t)JL_PARKED;
        if (l->heap_pos != JNIL)
            jheap_update(&j->deadlines, l->heap_pos, jl_deadline(j, l));
    }
    m->parked.n = 0;
}

static int drain_facts(dls_judge *j)
{
    for (size_t i = 0; i < j->nmedia; i++) {
        int rc = drain_medium(j, (uint16_t)i);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < j->nmedia; i++) {
        jm_medium *m = &j->media[i];
        if (m->failed) {
            j->any_error = true;
            j->res->transport_errors++;
            if (!m->in_run) {
                m->in_run = true;
                m->fail_since = j->now;
            }
        } else {
            m->in_run = false;
            unpark(j, m);
        }
    }
    return 0;
}

/* ---- step 3: classify ----------------------------------------------------------------- */

/* The next key of a lease that is not due at now; a lease whose silence
 * judgement its failing medium suspends is parked there until the medium
 * drains again. */
static int rekey(dls_judge *j, uint32_t idx, jl_lease *l, uint64_t now)
{
    bool suspended = false;
    uint64_t key = jl_next_key(j, l, now, &suspended);
    if (suspended && !(l->flags & JL_PARKED)) {
        jl_parked p = {l->id, idx};
        int rc = jvec_push(&j->media[l->medium].parked, sizeof p, &p);
        if (rc)
            return rc;
        l->flags |= JL_PARKED;
    }
    if (key <= now)
        key = dls_add_sat(now, 1); /* never spin: judged again next pass */
    jheap_update(&j->deadlines, l->heap_pos, key);
    return 0;
}

static int cmp_lease_id(const void *a, const void *b, void *ctx)
{
    const dls_judge *j = ctx;
    uint64_t x = jl_lease_at(j, *(const uint32_t *)a)->id;
    uint64_t y = jl_lease_at(j, *(const uint32_t *)b)->id;
    return x < y ? -1 : x > y;
}

void jl_sort_by_id(dls_judge *j, jvec *v)
{
    if (v->n > 1)
        qsort_r(v->p, v->n, sizeof(uint32_t), cmp_lease_id, j);
}

static int classify(dls_judge *j)
{
    uint64_t now = j->now;
    j->due.n = 0;
    while (j->deadlines.n && jheap_top_key(&j->deadlines) <= now) {
        uint32_t idx = jheap_top_ref(&j->deadlines);
        jl_lease *l = jl_lease_at(j, idx);
        dls_cause c = jl_classify(j, l, now);
        int rc;
        if (c == DLS_CAUSE_NONE) {
            if ((rc = rekey(j, idx, l, now)) != 0)
                return rc;
            continue;
        }
        jheap_remove(&j->deadlines, 0);
        l->heap_pos = JNIL;
        l->cause = (uint8_t)c;
        if ((rc = jvec_push(&j->due, sizeof idx, &idx)) != 0)
            return rc;
    }
    jl_sort_by_id(j, &j->due);
    j->res->newly_due = j->due.n;
    return 0;
}

/* ---- steps 4–6: mark, reclaim, record ------------------------------------------------------ */

static int mark_if_owed(dls_judge *j)
{
    if (!(j->moved || j->any_error || j->due.n || j->late || j->restarted))
        return 0; /* owed later only if the pass appends */
    int rc = jj_mark(j);
    if (!rc)
        rc = jj_flush(j); /* durable before any act */
    return rc;
}

static int call_reclaim(dls_judge *j, jl_lease *l)
{
    jl_subject *s = jl_subject_at(j, l->subject);
    dls_bytes subject = {s->bytes, s->len};
    bool commit = l->cause == DLS_CAUSE_RELEASE && (l->flags & JL_COMMIT);
    j->in_callback = true;
    int ans = j->cb.reclaim(j->user, subject, l->id, (dls_cause)l->cause, commit);
    j->in_callback = false;
    return ans;
}

static int reclaim(dls_judge *j)
{
    for (size_t i = 0; i < j->due.n; i++) {
        uint32_t idx = JVEC_AT(j->due, uint32_t, i);
        jl_lease_at(j, idx)->flags |= JL_PENDING;
        int rc = jvec_push(&j->pending, sizeof idx, &idx);
        if (rc)
            return rc;
    }
    jl_sort_by_id(j, &j->pending);
    j->done.n = 0;
    size_t keep = 0;
    for (size_t i = 0; i < j->pending.n; i++) {
        uint32_t idx = JVEC_AT(j->pending, uint32_t, i);
        if (call_reclaim(j, jl_lease_at(j, idx)) == DLS_RECLAIM_DONE) {
            int rc = jvec_push(&j->done, sizeof idx, &idx);
            if (rc)
                return rc;
        } else {
            j->res->reclaim_failed++;
            JVEC_AT(j->pending, uint32_t, keep++) = idx;
        }
    }
    j->pending.n = keep;
    return 0;
}

/* The subject lost a lease: it frees when no live lease is left, after a
 * lock-delay when a reclaim by silence or cap is recent. */
static int subject_left(dls_judge *j, uint32_t s, uint64_t lease, dls_cause cause)
{
    jl_subject *sub = jl_subject_at(j, s);
    if (j->lock_delay && (cause == DLS_CAUSE_SILENCE || cause == DLS_CAUSE_CAP)) {
        sub->delay_start = j->now;
        sub->delay_lease = lease;
    }
    if (sub->first_lease != JNIL)
        return 0;
    if (sub->delay_lease && !dls_passed(sub->delay_start, j->now, j->lock_delay)) {
        sub->flags |= JS_DELAYED;
        uint64_t end = dls_add_sat(dls_add_sat(sub->delay_start, j->lock_delay), 1);
        if (sub->delay_pos != JNIL)
            jheap_update(&j->delays, sub->delay_pos, end);
        else if (jheap_push(&j->delays, end, s))
            return DLS_ERR_NOMEM;
        return 0;
    }
    sub->delay_lease = 0;
    if (sub->nwaiters && !(sub->flags & JS_FREED)) {
        jl_freed f = {lease, 0, s};
        if (jvec_push(&j->freed, sizeof f, &f))
            return DLS_ERR_NOMEM;
        sub->flags |= JS_FREED;
        return 0;
    }
    jl_subject_release(j, s);
    return 0;
}

static int record_lapsed(dls_judge *j)
{
    int rc;
    for (size_t i = 0; i < j->done.n; i++) {
        const jl_lease *l = jl_lease_at(j, JVEC_AT(j->done, uint32_t, i));
        dls_fact f;
        dls_fact_reclaim(&f, l->id, (dls_cause)l->cause);
        if ((rc = jj_fact(j, &f)) != 0)
            return rc;
    }
    if ((rc = jj_flush(j)) != 0)
        return rc;
    for (size_t i = 0; i < j->done.n; i++) {
        uint32_t idx = JVEC_AT(j->done, uint32_t, i);
        jl_lease *l = jl_lease_at(j, idx);
        uint32_t s = l->subject;
        uint64_t id = l->id;
        dls_cause c = (dls_cause)l->cause;
        j->res->lapsed[c]++;
        jl_lease_remove(j, idx);
        if ((rc = subject_left(j, s, id, c)) != 0)
            return rc;
    }
    return 0;
}

/* ---- the first pass after a start ---------------------------------------------------------- */

/* Recovered leases become unknown with the first pass's now as resumed
 * reading (rebased on a basis change) and enter the deadline heap or the
 * pending list. Once per start, in pool order (nothing written depends on
 * it: due lists are sorted by lease id). */
static int restart_leases(dls_judge *j)
{
    for (uint32_t i = 0; i < j->leases.next; i++) {
        jl_lease *l = jl_lease_at(j, i);
        if (!(l->flags & JL_RECOVERED))
            continue;
        l->flags &= ~(uint32_t)JL_RECOVERED;
        l->flags |= JL_UNKNOWN;
        l->resumed = j->now;
        if (l->medium != JL_NO_MEDIUM)
            l->epoch = j->media[l->medium].gap_epoch;
        if (j->basis_changed) {
            l->tenure_start = j->now;
            l->last_obs = j->now;
        }
        int rc = (l->flags & JL_PENDING) ? jvec_push(&j->pending, sizeof i, &i)
                                         : jl_schedule(j, i, jl_deadline(j, l));
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- the pass ---------------------------------------------------------------------------- */

static uint64_t next_due(const dls_judge *j)
{
    uint64_t nd = DLS_JUDGE_NEVER;
    if (j->deadlines.n && jheap_top_key(&j->deadlines) < nd)
        nd = jheap_top_key(&j->deadlines);
    if (j->waitheap.n && jheap_top_key(&j->waitheap) < nd)
        nd = jheap_top_key(&j->waitheap);
    if (j->delays.n && jheap_top_key(&j->delays) < nd)
        nd = jheap_top_key(&j->delays);
    if ((j->pending.n || j->requests.n) && j->now < nd)
        nd = j->now;
    return nd;
}

static void begin_pass(dls_judge *j)
{
    j->last_pass++;
    j->gaps.n = j->due.n = j->done.n = j->freed.n = j->refused_subjects.n = 0;
    j->moved = j->any_error = j->mark_done = false;
    j->restarted = !j->started;
    j->late = j->prev_valid && dls_passed(j->prev_now, j->now, j->cadence);
    j->res->has_now = true;
    j->res->now = j->now;
    j->res->pass = j->last_pass;
    j->res->restarted = j->restarted;
    j->res->cadence_overrun = j->late;
}

static int run_steps(dls_judge *j)
{
    int rc;
    if (j->restarted && (rc = restart_leases(j)) != 0)
        return rc;
    if ((rc = drain_facts(j)) != 0 || (rc = classify(j)) != 0 || (rc = mark_if_owed(j)) != 0 ||
        (rc = reclaim(j)) != 0 || (rc = record_lapsed(j)) != 0 ||
        (rc = jp_answer_and_grant(j, j->now)) != 0 || (rc = jj_flush(j)) != 0)
        return rc;
    jp_tell_owner(j);
    return 0;
}

static void finish(dls_judge *j)
{
    dls_judge_pass_result *r = j->res;
    r->pending = j->pending.n;
    r->live = j->live;
    r->waiting = j->nwaiting;
    r->next_due = j->now_valid ? next_due(j) : 0;
}

int dls_judge_pass(dls_judge *j, dls_judge_pass_result *r)
{
    if (!j)
        return DLS_ERR_INVAL;
    if (j->fatal)
        return DLS_ERR_FATAL;
    if (j->in_callback)
        return DLS_ERR_REENTRANT;
    dls_judge_pass_result local;
    if (!r)
        r = &local;
    memset(r, 0, sizeof *r);
    j->res = r;
    if (j->ticks_ended) {
        finish(j);
        j->res = NULL;
        return DLS_ERR_TICKS_ENDED;
    }
    drain_ticks(j);
    if (!j->now_valid) { /* before the first tick: nothing at all */
        finish(j);
        j->res = NULL;
        return 0;
    }
    begin_pass(j);
    int rc = run_steps(j);
    if (rc) {
        j->fatal = true; /* the ledger can no longer be trusted */
        j->res = NULL;
        return rc;
    }
    j->started = true;
    j->prev_now = j->now;
    j->prev_valid = true;
    finish(j);
    j->res = NULL;
    return 0;
}

/* ---- owner acts and introspection ---------------------------------------------------------- */

static int usable(const dls_judge *j)
{
    if (!j)
        return DLS_ERR_INVAL;
    if (j->fatal)
        return DLS_ERR_FATAL;
    if (j->in_callback)
        return DLS_ERR_REENTRANT;
    return 0;
}

int dls_judge_end(dls_judge *j, uint64_t lease)
{
    int rc = usable(j);
    if (rc)
        return rc;
    uint32_t idx = jl_lease_find(j, lease);
    if (idx == JNIL)
        return DLS_ERR_UNKNOWN_LEASE;
    jl_lease *l = jl_lease_at(j, idx);
    l->flags |= JL_ENDED;
    if (l->heap_pos != JNIL)
        jheap_update(&j->deadlines, l->heap_pos, 0);
    return 0;
}

int dls_judge_lease(dls_judge *j, uint64_t lease, dls_judge_lease_info *info)
{
    if (!j || !info)
        return DLS_ERR_INVAL;
    uint32_t idx = jl_lease_find(j, lease);
    if (idx == JNIL)
        return DLS_ERR_UNKNOWN_LEASE;
    jl_lease *l = jl_lease_at(j, idx);
    jl_normalize(j, l);
    const jl_subject *s = jl_subject_at(j, l->subject);
    const jl_party *h = jl_party_at(j, l->holder);
    memset(info, 0, sizeof *info);
    info->lease = l->id;
    info->subject = (dls_bytes){s->bytes, s->len};
    info->holder = (dls_bytes){h->name, h->len};
    info->mode = (l->flags & JL_SHARED) ? DLS_MODE_SHARED : DLS_MODE_EXCLUSIVE;
    info->duration_ns = l->duration_ns;
    info->max_ns = l->max_ns;
    info->medium = l->medium == JL_NO_MEDIUM ? DLS_JUDGE_NO_MEDIUM : l->medium;
    info->tenure_start = l->tenure_start;
    info->last_observation = l->last_obs;
    info->last_seq = l->last_seq;
    info->released = (l->flags & JL_RELEASED) != 0;
    info->commit = (l->flags & JL_COMMIT) != 0;
    info->ended = (l->flags & JL_ENDED) != 0;
    info->evidence = (l->flags & (JL_UNKNOWN | JL_RECOVERED)) ? DLS_EVIDENCE_UNKNOWN
                                                              : DLS_EVIDENCE_KNOWN;
    info->resumed = l->resumed;
    info->pending = (l->flags & JL_PENDING) != 0;
    info->cause = info->pending ? (dls_cause)l->cause : DLS_CAUSE_NONE;
    return 0;
}

size_t dls_judge_live(const dls_judge *j) { return j ? j->live : 0; }
uint64_t dls_judge_highest_lease(const dls_judge *j) { return j ? j->highest : 0; }
uint64_t dls_judge_last_pass(const dls_judge *j) { return j ? j->last_pass : 0; }

size_t dls_judge_memory(const dls_judge *j)
{
    return j ? jl_memory(j) : 0;
}
