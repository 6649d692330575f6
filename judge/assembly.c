/* The judge's assembly (judge.md, Assembly): default settings, the checks
 * that refuse a bad assembly, construction (the journal lock, restart by
 * replay, the cursors) and teardown. The pass lives in judge.c.
 */
#include <stdlib.h>
#include <string.h>

#include "daolease/jetstream.h"
#include "daolease/redis.h"
#include "judge/internal.h"

#include "vocab/where.h"

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
    s->drain_budget = 20000;
    s->takeover_after_ns = DLS_JUDGE_UNSET; /* 3 × heartbeat + tolerance */
    s->takeover_sync = DLS_SYNC_DATA;
}

/* ---- assembly checks ---------------------------------------------------------- */

static int refuse(dls_where *w, int code, uint64_t index, const char *reason)
{
    return dls_where_fill(w, code, (dls_where){.offset = index, .reason = reason});
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
    /* judge.md rev 5, Standby judges: a standby may follow a journal it
     * opened for read; it opens it for append itself when it takes over */
    bool follow_only = s->standby && dls_medium_mode(s->journal) == DLS_OPEN_READ;
    if (dls_medium_mode(s->journal) != DLS_OPEN_APPEND && !follow_only)
        return refuse(w, DLS_ERR_STATE, 0, "the journal is not opened for append");
    /* judge.md, Assembly and Checkpoints (Retention): a journal that drops
     * records on its own is refused; a segmented journal without a bound
     * loses only what its judge trims after a checkpoint covers it
     * (dls_judge_trim_journal; docs/checkpoints.md, Retention). */
    if (dls_medium_evicts(s->journal))
        return refuse(w, DLS_ERR_RETENTION, 0,
                      "the journal must retain everything (an evict-oldest journal is refused; "
                      "a segmented journal must be created without retain_segments and "
                      "retain_bytes: only its judge trims it, after checkpoints)");
    if ((follow_only ? s->takeover_sync : dls_medium_sync(s->journal)) == DLS_SYNC_NONE)
        return refuse(w, DLS_ERR_JOURNAL_SYNC, 0,
                      "the journal must be opened with sync data or group, not none");
    if (s->journal_lock_path || dls_medium_kind_of(s->journal) == DLS_MEDIUM_FILE ||
        dls_medium_kind_of(s->journal) == DLS_MEDIUM_SEGMENTED || /* flock on its directory */
        dls_redis_is_medium(s->journal))
        return 0;
    /* docs/jetstream.md: a JetStream journal is fenced by the medium itself
     * when opened exclusive (expected-last-sequence on every append) */
    if (dls_jetstream_is_exclusive(s->journal))
        return 0;
    if (dls_medium_kind_of(s->journal) == DLS_MEDIUM_JETSTREAM)
        return refuse(w, DLS_ERR_CONFIG, 0,
                      "a JetStream journal must be opened exclusive (its writer fence) or "
                      "given journal_lock_path (one judge at a time)");
    return refuse(w, DLS_ERR_CONFIG, 0,
                  "a journal that is not a file needs journal_lock_path (one judge at a time)");
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
        /* The judge would drain its own grants as lease
         * facts (and hold the writer lock of a medium it reads) */
        if (s->journal && memcmp(dls_medium_id(s->journal), dls_medium_id(m->medium),
                                 DLS_MEDIUM_ID_LEN) == 0)
            return refuse(w, DLS_ERR_CONFIG, i,
                          "the journal is listed as a lease-fact medium");
    }
    return 0;
}

static int check_terms(const dls_judge_settings *s, dls_where *w)
{
    if (s->tolerance_ns == DLS_JUDGE_UNSET || s->tolerance_ns > DLS_NS_MAX)
        return refuse(w, DLS_ERR_CONFIG, 0, "no tolerance (it may be zero, but must be given)");
    if (s->cadence_ns == DLS_JUDGE_UNSET || s->cadence_ns == 0 || s->cadence_ns > DLS_NS_MAX)
        return refuse(w, DLS_ERR_CONFIG, 0, "no declared cadence");
    if (s->drain_per_s > 1000000000u)
        return refuse(w, DLS_ERR_CONFIG, 0, "drain_per_s exceeds 10^9 facts a second");
    if (s->default_duration.ns == 0 || s->default_duration.ns > DLS_NS_MAX)
        return refuse(w, DLS_ERR_CONFIG, 0, "the default duration must be at least 1 ns");
    if (s->min_duration.ns && s->max_duration.ns && s->min_duration.ns > s->max_duration.ns)
        return refuse(w, DLS_ERR_CONFIG, 0, "min_duration exceeds max_duration");
    if (s->max_duration.ns > DLS_NS_MAX || s->tenure_max.ns > DLS_NS_MAX ||
        s->lock_delay_ns > DLS_NS_MAX)
        return refuse(w, DLS_ERR_CONFIG, 0, "a duration above 2^63-1 ns");
    if (s->lost_ledger && s->lease_floor > DLS_NS_MAX)
        return refuse(w, DLS_ERR_CONFIG, 0, "a lease-id floor above 2^63-1");
    if (s->heartbeat_ns > DLS_NS_MAX ||
        (s->takeover_after_ns != DLS_JUDGE_UNSET && s->takeover_after_ns > DLS_NS_MAX))
        return refuse(w, DLS_ERR_CONFIG, 0, "heartbeat or takeover_after above 2^63-1 ns");
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
    j->drain_per_s = s->drain_per_s;
    j->heartbeat = s->heartbeat_ns;
    j->takeover_after = s->takeover_after_ns != DLS_JUDGE_UNSET
                            ? s->takeover_after_ns
                            : dls_add_sat(dls_add_sat(dls_add_sat(s->heartbeat_ns, s->heartbeat_ns),
                                                      s->heartbeat_ns),
                                          s->tolerance_ns);
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
    /* an exclusive JetStream journal is its own fence (check_journal) */
    if (dls_jetstream_is_exclusive(s->journal))
        return 0;
    return jj_lock_journal(j, dls_medium_name(s->journal), w);
}

/* ---- a new journal after a lost one; the holders' evidence ------------------ */

/* The position after the last record m holds now (its end). */
static int medium_end(dls_medium *m, uint64_t *end)
{
    dls_cursor *c;
    if (dls_cursor_new(&c, m, 0))
        return DLS_ERR_NOMEM;
    for (;;) {
        dls_record rec;
        dls_next r = dls_cursor_next(c, &rec, NULL);
        if (r != DLS_NEXT_OK && r != DLS_NEXT_GAP)
            break;
    }
    *end = dls_cursor_position(c);
    dls_cursor_del(c);
    return 0;
}

/* judge.md, Restart, Lost ledger (revision 4): a new, empty journal that
 * follows a lost one mints ids above the floor and reads each medium from
 * its starting position (default: its end now); the first mark records
 * both. */
static int start_after_lost(dls_judge *j, const dls_judge_settings *s, uint64_t *starts)
{
    j->lost_mode = true;
    j->floor = s->lease_floor;
    j->highest = s->lease_floor;
    j->from_marks = calloc(j->nmedia ? j->nmedia : 1, sizeof *j->from_marks);
    if (!j->from_marks)
        return DLS_ERR_NOMEM;
    for (size_t i = 0; i < j->nmedia; i++) {
        int rc = s->from ? (starts[i] = s->from[i], 0) : medium_end(j->media[i].m, &starts[i]);
        if (rc)
            return rc;
        memcpy(j->from_marks[i].medium, j->media[i].id, DLS_MEDIUM_ID_LEN);
        j->from_marks[i].position = starts[i];
    }
    return 0;
}

/* The largest verified renewal or release id at or after the cursors'
 * starting positions that names a lease above every id the journal minted
 * (judge.md, Restart): a journal shorter than the holders'
 * evidence is refused, never re-granted from a lower id. */
static int scan_evidence(dls_judge *j, const uint64_t *starts)
{
    for (size_t i = 0; i < j->nmedia; i++) {
        dls_cursor *c;
        if (dls_cursor_new(&c, j->media[i].m, starts[i]))
            return DLS_ERR_NOMEM;
        for (bool more = true; more;) {
            dls_record rec;
            switch (dls_cursor_next(c, &rec, NULL)) {
            case DLS_NEXT_OK: {
                dls_attribution a;
                dls_facts it;
                dls_bytes fb;
                dls_resolver_attribute_facts(j->media[i].r, rec.p, rec.n, &a, &it);
                while (a.attributed && dls_facts_next(&it, &fb, NULL)) {
                    dls_fact f;
                    if (dls_fact_decode(fb.p, fb.n, &f, NULL) ||
                        (f.kind != DLS_FACT_RENEWAL && f.kind != DLS_FACT_RELEASE))
                        continue;
                    if (f.lease > j->highest && f.lease > j->evidence_lease) {
                        j->evidence_lease = f.lease;
                        j->evidence_medium = (uint16_t)i;
                    }
                }
                break;
            }
            case DLS_NEXT_GAP:
                break;
            default:
                more = false;
            }
        }
        dls_cursor_del(c);
    }
    return 0;
}

int jx_check_evidence(dls_judge *j, const uint64_t *starts, dls_where *w)
{
    int rc = scan_evidence(j, starts);
    if (rc)
        return rc;
    if (j->evidence_lease > j->highest)
        return refuse(w, DLS_ERR_JOURNAL_SHORT, j->evidence_medium,
                      "a lease-fact medium carries a verified renewal or release for a lease "
                      "id above every id this journal granted: the journal is shorter than "
                      "the holders' evidence (lost or cut back); start a new journal with the "
                      "lost-ledger procedure (docs/judge.md, Lost ledger)");
    return 0;
}

int jx_open_cursors(dls_judge *j, const uint64_t *starts)
{
    for (size_t i = 0; i < j->nmedia; i++)
        if (dls_cursor_resume(&j->media[i].c, j->media[i].m, starts[i]))
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
    if (s->standby) { /* standby.c: no lock held, the replay kept alive */
        rc = copy_assembly(j, s);
        if (!rc)
            rc = js_assemble(j, s, w);
        if (rc) {
            dls_judge_del(j);
            return rc;
        }
        *out = j;
        return 0;
    }
    uint64_t *starts = calloc(s->nmedia ? s->nmedia : 1, sizeof *starts);
    rc = starts ? copy_assembly(j, s) : DLS_ERR_NOMEM;
    if (!rc)
        rc = take_lock(j, s, w);
    if (!rc && s->checkpoint_dir)
        rc = jc_restart(j, s, starts, w);
    if (!rc)
        rc = jr_replay(j, starts, w);
    if (!rc && !j->replayed && s->lost_ledger)
        rc = start_after_lost(j, s, starts);
    if (!rc)
        rc = jx_check_evidence(j, starts, w);
    if (!rc)
        rc = jx_open_cursors(j, starts);
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
    jvec_free(&j->ck_notes);
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
        jvec_free(&j->media[i].held);
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
    free(j->scratch);
    free(j->from_marks);
    free(j->ck_basis);
    free(j->ck_runs);
    dls_cursor_del(j->ck_cursor);
    jr_drop(j);
    /* the journal's writer lock before the lifetime lock: a standby that
     * obtains the lifetime lock finds the writer lock free too */
    dls_medium_del(j->own_journal);
    jj_unlock(j);
    free(j->rp_starts);
    free(j->lock_path);
    free(j->grantor_name);
    free(j->basis);
    free(j);
}
