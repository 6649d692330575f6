/* Checkpoints (judge.md rev 4, Checkpoints): restarting from the
 * newest committed one (checkpoint.c writes them).
 *
 * Restart: checkpoints newest first; the first whose commit record is on
 * the journal after its journal_next and whose digest and record count
 * match is loaded; replay (replay.c) then continues from journal_next and
 * each medium from its drained position. None usable: full replay, which
 * refuses a journal no longer retained from position 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daolease/checkpoint.h"
#include "judge/internal.h"
#include "vocab/internal.h"

/* ---- restart ------------------------------------------------------------------ */

/* The checkpoints in dir, newest first (dls_checkpoint_list, the one
 * listing shared with the audit and `daolease status`). */
int jc_list_dir(const char *dir, jvec *v)
{
    uint64_t *passes = NULL;
    size_t n = 0;
    int rc = dls_checkpoint_list(dir, &passes, &n);
    for (size_t i = n; !rc && i-- > 0;)
        rc = jvec_push(v, sizeof passes[i], &passes[i]);
    free(passes);
    return rc;
}

/* Reads the checkpoint file's header record. 0 when it is one. */
static int read_header(dls_medium *m, dls_ckpt_rec *hdr, uint8_t *jid)
{
    dls_cursor *c;
    if (dls_cursor_new(&c, m, 0))
        return DLS_ERR_NOMEM;
    dls_record rec;
    int rc = DLS_ERR_RECORD;
    if (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK &&
        dls_ckpt_decode(rec.p, rec.n, hdr, NULL) == 0 && hdr->kind == DLS_CKPT_HEADER) {
        memcpy(jid, hdr->journal, DLS_MEDIUM_ID_LEN);
        hdr->basis.p = NULL; /* borrowed: only the numbers are used */
        hdr->media = NULL;
        hdr->journal = NULL;
        rc = 0;
    }
    dls_cursor_del(c);
    return rc;
}

/* *handoff: the cursor just after the commit when nothing but other
 * commit records lies between `from` and it (replay may go on from there
 * instead of walking to `from` again), else NULL. */
static int find_commit(dls_judge *j, dls_resolver *verify, uint64_t from, uint64_t n,
                       uint8_t *digest, uint64_t *records, dls_cursor **handoff)
{
    dls_cursor *c;
    *handoff = NULL;
    if (dls_cursor_new(&c, j->journal, from))
        return DLS_ERR_NOMEM;
    int found = 0;
    bool only_commits = true;
    for (;;) {
        dls_record rec;
        if (dls_cursor_next(c, &rec, NULL) != DLS_NEXT_OK)
            break;
        dls_attribution a;
        dls_resolver_attribute(verify, rec.p, rec.n, &a);
        if (!a.attributed || a.author.n != j->grantor_len ||
            memcmp(a.author.p, j->grantor_name, j->grantor_len) != 0)
            continue;
        uint64_t pn;
        if (dls_ckpt_commit_decode(a.fact.p, a.fact.n, &pn, digest, records)) {
            if (pn == n) {
                found = 1;
                break;
            }
            continue;
        }
        only_commits = false;
    }
    if (found && only_commits)
        *handoff = c;
    else
        dls_cursor_del(c);
    return found;
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

static uint16_t medium_of(const dls_judge *j, const uint8_t *id)
{
    if (!id)
        return JL_NO_MEDIUM;
    for (size_t i = 0; i < j->nmedia; i++)
        if (memcmp(j->media[i].id, id, DLS_MEDIUM_ID_LEN) == 0)
            return (uint16_t)i;
    return JL_NO_MEDIUM;
}

static int load_header(dls_judge *j, const dls_ckpt_rec *r, uint64_t *starts)
{
    j->ck_basis = malloc(r->basis.n + 1);
    if (!j->ck_basis)
        return DLS_ERR_NOMEM;
    memcpy(j->ck_basis, r->basis.p, r->basis.n);
    j->ck_basis[r->basis.n] = 0;
    j->ck_pass = r->pass;
    j->ck_now = r->now_ns;
    j->ck_next = r->journal_next;
    j->highest = r->highest;
    j->last_pass = r->pass;
    j->ck_runs = malloc((j->nmedia ? j->nmedia : 1) * sizeof *j->ck_runs);
    if (!j->ck_runs)
        return DLS_ERR_NOMEM;
    for (size_t i = 0; i < j->nmedia; i++)
        j->ck_runs[i] = UINT64_MAX;
    size_t off = 0;
    dls_ckpt_medium m;
    while (dls_ckpt_next_medium(r, &off, &m)) {
        uint16_t mi = medium_of(j, m.id);
        if (mi == JL_NO_MEDIUM)
            continue;
        starts[mi] = m.drained;
        if (m.has_run)
            j->ck_runs[mi] = m.run_start;
    }
    return 0;
}

static int load_lease(dls_judge *j, const dls_ckpt_rec *r, uint32_t subject_hash)
{
    jl_terms t;
    memset(&t, 0, sizeof t);
    int rc = jl_subject_get_h(j, r->subject.p, r->subject.n, subject_hash, &t.subject);
    if (!rc)
        rc = jl_party_get(j, r->holder.p, r->holder.n, &t.holder);
    if (rc)
        return rc;
    if (r->id <= j->ck_last_id) /* ascending ids: no duplicate */
        return DLS_ERR_RECORD;
    j->ck_last_id = r->id;
    t.id = r->id;
    t.mode = r->mode;
    t.duration_ns = r->duration.ns;
    t.max_ns = r->has_max ? r->max.ns : 0;
    t.medium = medium_of(j, r->medium);
    t.now = r->start;
    uint32_t idx;
    if ((rc = jl_lease_add(j, &t, &idx)) != 0)
        return rc;
    jl_lease *l = jl_lease_at(j, idx);
    l->last_obs = r->last;
    l->last_seq = r->seq;
    l->flags |= JL_RECOVERED;
    if (r->has_resumed) {
        l->flags |= JL_UNKNOWN;
        l->resumed = r->resumed;
    }
    if (r->released)
        l->flags |= JL_RELEASED;
    if (r->commit)
        l->flags |= JL_COMMIT;
    if (r->pending != DLS_CAUSE_NONE) {
        l->flags |= JL_PENDING;
        l->cause = (uint8_t)r->pending;
    }
    return 0;
}

/* A waiter comes back as a proposal drained and not answered, as full
 * replay leaves it (judge.md, Restart: answered again as newly arrived). */
static int load_waiter(dls_judge *j, const dls_ckpt_rec *r)
{
    uint16_t mi = medium_of(j, r->medium);
    if (mi == JL_NO_MEDIUM || r->proposal.n == 0)
        return 0;
    uint32_t party;
    int rc = jl_party_get(j, r->holder.p, r->holder.n, &party);
    if (rc)
        return rc;
    jl_prop p;
    memset(&p, 0, sizeof p);
    p.subject = malloc(r->subject.n);
    if (!p.subject)
        return DLS_ERR_NOMEM;
    if ((rc = jvec_reserve(&j->props, sizeof p, 1)) != 0) {
        free(p.subject);
        return rc;
    }
    memcpy(p.subject, r->subject.p, r->subject.n);
    p.slen = (uint16_t)r->subject.n;
    p.arrival = r->arrival[3];
    p.holder = party;
    p.medium = mi;
    p.plen = (uint8_t)r->proposal.n;
    memcpy(p.proposal, r->proposal.p, r->proposal.n);
    /* judge.md's waiter record always carries a mode: "exclusive" comes
     * back as no mode asked (the default), so the grant is written as for
     * the usual proposal that named none (docs/checkpoints.md). */
    p.has_mode = r->mode == DLS_MODE_SHARED;
    p.mode = r->mode;
    p.has_ask = r->has_duration;
    p.ask = r->duration;
    JVEC_AT(j->props, jl_prop, j->props.n++) = p;
    return 0;
}

static int by_arrival(const void *a, const void *b)
{
    const jl_prop *x = a, *y = b;
    return (x->arrival > y->arrival) - (x->arrival < y->arrival);
}

static int index_props(dls_judge *j)
{
    if (j->props.n > 1)
        qsort(j->props.p, j->props.n, sizeof(jl_prop), by_arrival);
    for (size_t i = 0; i < j->props.n; i++) {
        jl_prop *p = &JVEC_AT(j->props, jl_prop, i);
        p->arrival = ++j->arrival;
        uint32_t h = prop_hash(j, jl_party_at(j, p->holder), p->proposal, p->plen);
        int rc = jtab_insert(&j->prop_index, h, (uint32_t)i);
        if (rc)
            return rc;
    }
    return 0;
}

static int load_delay(dls_judge *j, const dls_ckpt_rec *r)
{
    if (!j->lock_delay)
        return 0;
    uint32_t s;
    int rc = jl_subject_get(j, r->subject.p, r->subject.n, &s);
    if (rc)
        return rc;
    jl_subx *x = jl_subx_get(j, s);
    if (!x)
        return DLS_ERR_NOMEM;
    jl_subject *sub = jl_subject_at(j, s);
    x->delay_start = r->until >= j->lock_delay ? r->until - j->lock_delay : 0;
    x->delay_lease = j->highest ? j->highest : 1;
    if (sub->first_lease != JNIL)
        return 0; /* the subject is held: the delay starts when it frees */
    sub->flags |= JS_DELAYED;
    if (x->delay_pos == JNIL && dls_heap_push(&j->delays, dls_add_sat(r->until, 1), s))
        return DLS_ERR_NOMEM;
    return 0;
}

static int load_author(dls_judge *j, const dls_ckpt_rec *r)
{
    uint16_t mi = medium_of(j, r->medium);
    if (mi == JL_NO_MEDIUM)
        return 0;
    uint32_t party;
    int rc = jl_party_get(j, r->holder.p, r->holder.n, &party);
    return rc ? rc : jl_pseq_set(j, party, mi, r->seq);
}

/* Lease records wait in a ring of LOAD_AHEAD, copied out of the reader's
 * buffer, while the subject index slot each will probe is prefetched: at
 * 10^6 leases each probe is otherwise a cache miss the loader waits on. */
#define LOAD_AHEAD 16

typedef struct load_pending {
    dls_ckpt_rec r;                 /* subject, holder, medium point below */
    uint32_t h;                     /* the subject's hash */
    uint8_t subject[DLS_SUBJECT_MAX], holder[DLS_ID_MAX], medium[DLS_MEDIUM_ID_LEN];
} load_pending;

/* One record into the ledger (a dls_checkpoint_read callback). */
typedef struct load_ctx {
    dls_judge *j;
    uint64_t *starts;
    uint64_t left; /* records the commit record counts, not yet loaded */
    load_pending *ring; /* LOAD_AHEAD */
    size_t head, n;
} load_ctx;

#define LOAD_TOO_MANY 1 /* the file holds more records than its commit counts */

/* Loads the oldest pending lease. */
static int load_oldest(load_ctx *x)
{
    load_pending *p = &x->ring[x->head];
    x->head = (x->head + 1) % LOAD_AHEAD;
    x->n--;
    return load_lease(x->j, &p->r, p->h);
}

static int load_all_pending(load_ctx *x)
{
    int rc = 0;
    while (!rc && x->n)
        rc = load_oldest(x);
    return rc;
}

/* Queues a lease record (loading the oldest when the ring is full). */
static int queue_lease(load_ctx *x, const dls_ckpt_rec *r)
{
    int rc = x->n == LOAD_AHEAD ? load_oldest(x) : 0;
    if (rc)
        return rc;
    if (r->subject.n == 0 || r->subject.n > DLS_SUBJECT_MAX || r->holder.n > DLS_ID_MAX)
        return DLS_ERR_RECORD;
    load_pending *p = &x->ring[(x->head + x->n++) % LOAD_AHEAD];
    p->r = *r;
    memcpy(p->subject, r->subject.p, r->subject.n);
    p->r.subject.p = p->subject;
    memcpy(p->holder, r->holder.p, r->holder.n);
    p->r.holder.p = p->holder;
    if (r->medium) {
        memcpy(p->medium, r->medium, DLS_MEDIUM_ID_LEN);
        p->r.medium = p->medium;
    }
    p->r.proposal.p = NULL; /* not read by load_lease */
    p->r.proposal.n = 0;
    p->h = jl_subject_hash(x->j, p->subject, r->subject.n);
    jl_subject_prefetch(x->j, p->h);
    return 0;
}

static int load_record(void *user, const dls_ckpt_rec *r)
{
    load_ctx *x = user;
    /* A file longer than its commit record says is not that checkpoint:
     * stop before loading more than the committed count, so a planted or
     * grown file costs no more memory than the real one would. */
    if (x->left == 0)
        return LOAD_TOO_MANY;
    x->left--;
    if (r->kind == DLS_CKPT_LEASE)
        return queue_lease(x, r);
    int rc = load_all_pending(x); /* the leases first, in their order */
    if (rc)
        return rc;
    switch (r->kind) {
    case DLS_CKPT_HEADER:
        return load_header(x->j, r, x->starts);
    case DLS_CKPT_LEASE:
        break;
    case DLS_CKPT_WAITER:
        return load_waiter(x->j, r);
    case DLS_CKPT_DELAY:
        return load_delay(x->j, r);
    case DLS_CKPT_AUTHOR:
        return load_author(x->j, r);
    }
    return 0;
}

/* Loads checkpoint n of dir in one read, hashing as it goes, through the
 * one checkpoint reader (checkpoint_read.c, shared with the audit and
 * `daolease status`), at most `committed` records (the commit record's
 * count); the caller compares the digest and count with the commit
 * record's and resets the ledger when they differ. */
static int load_file(dls_judge *j, const char *dir, uint64_t n, uint64_t committed,
                     uint64_t *starts, uint8_t *digest, uint64_t *records)
{
    load_ctx x = {j, starts, committed, calloc(LOAD_AHEAD, sizeof(load_pending)), 0, 0};
    if (!x.ring)
        return DLS_ERR_NOMEM;
    /* at most `committed` leases and subjects: size the indexes once (a
     * failure only leaves them to grow as they go) */
    (void)jl_ledger_reserve(j, committed > UINT32_MAX ? UINT32_MAX : (uint32_t)committed);
    /* the lease-id index is built once at the end, front to back
     * (jl_ledger_bulk): nothing looks a lease up by id while loading */
    (void)jvec_reserve(&j->by_id_bulk, sizeof(uint64_t),
                       committed > UINT32_MAX ? UINT32_MAX : (size_t)committed);
    jl_ledger_bulk(j, true);
    int rc = dls_checkpoint_read(dir, n, load_record, &x, digest, records, NULL);
    if (!rc)
        rc = load_all_pending(&x);
    free(x.ring);
    int brc = jl_ledger_bulk(j, false);
    if (!rc)
        rc = brc;
    if (!rc)
        rc = index_props(j);
    return rc;
}

/* Undoes a load whose digest did not match (or that failed part way). */
static void reset(dls_judge *j, uint64_t *starts)
{
    jl_ledger_free(j);
    j->live = j->nwaiting = j->subject_bytes = 0;
    j->highest = j->last_pass = j->arrival = 0;
    jl_ledger_init(j);
    for (size_t i = 0; i < j->props.n; i++)
        jl_prop_free(&JVEC_AT(j->props, jl_prop, i));
    j->props.n = 0;
    jtab_free(&j->prop_index);
    free(j->ck_basis);
    free(j->ck_runs);
    j->ck_basis = NULL;
    j->ck_runs = NULL;
    j->ck_last_id = j->ck_pass = j->ck_now = j->ck_next = 0;
    for (size_t i = 0; i < j->nmedia; i++)
        starts[i] = 0;
}

/* One note of the restart (dls_judge_checkpoint_notes). */
static int note(dls_judge *j, uint64_t pass, const char *why)
{
    dls_judge_ckpt_note x = {pass, why == NULL, why};
    return jvec_push(&j->ck_notes, sizeof x, &x);
}

int jc_restart(dls_judge *j, const dls_judge_settings *s, uint64_t *starts, dls_where *w)
{
    (void)w;
    jvec list = {0};
    dls_resolver *verify = NULL;
    int rc = jc_list_dir(s->checkpoint_dir, &list);
    if (!rc && list.n)
        rc = jr_grantor_verifier(j, &verify);
    size_t dl = strlen(s->checkpoint_dir);
    char *path = malloc(dl + 32);
    if (!path)
        rc = DLS_ERR_NOMEM;
    for (size_t i = 0; i < list.n && !rc && !j->ck_loaded; i++) {
        uint64_t n = JVEC_AT(list, uint64_t, i);
        sprintf(path, "%s/%020llu.dls", s->checkpoint_dir, (unsigned long long)n);
        dls_medium *m;
        if (dls_medium_open(&m, path, DLS_OPEN_READ, NULL, NULL) != 0) {
            rc = note(j, n, "the file cannot be opened");
            continue;
        }
        uint8_t got[DLS_CKPT_DIGEST_LEN], want[DLS_CKPT_DIGEST_LEN];
        uint64_t nrec = 0, wrec = 0;
        dls_ckpt_rec hdr;
        memset(&hdr, 0, sizeof hdr);
        uint8_t jid[DLS_MEDIUM_ID_LEN];
        /* the header first: where its commit record must be */
        int fr = read_header(m, &hdr, jid);
        if (fr == DLS_ERR_NOMEM)
            rc = fr;
        dls_cursor *handoff = NULL;
        int found = 0;
        if (!fr && hdr.pass == n && memcmp(jid, j->journal_id, DLS_MEDIUM_ID_LEN) == 0)
            found = find_commit(j, verify, hdr.journal_next, n, want, &wrec, &handoff);
        if (found < 0)
            rc = found;
        const char *why = fr ? "its header record is unreadable (damaged or not a checkpoint)"
                        : hdr.pass != n ? "its header names another pass than its file name"
                        : memcmp(jid, j->journal_id, DLS_MEDIUM_ID_LEN)
                            ? "its header names another journal"
                        : "no commit record for it on the journal after its journal_next "
                          "(never committed)";
        if (found > 0) {
            int lr = load_file(j, s->checkpoint_dir, n, wrec, starts, got, &nrec);
            if (lr == DLS_ERR_NOMEM)
                rc = lr;
            if (!lr && nrec == wrec && sodium_memcmp(got, want, sizeof got) == 0) {
                j->ck_loaded = true;
                j->replayed = true;
                j->ck_cursor = handoff;
                handoff = NULL;
                why = NULL;
            } else {
                reset(j, starts); /* a torn or different file: not this one */
                why = lr == LOAD_TOO_MANY
                          ? "it holds more records than its commit record counts (grown or "
                            "replaced)"
                      : lr ? "its records cannot be read whole (damaged)"
                           : "its records differ from the digest or count of its commit "
                             "record (damaged or replaced)";
            }
        }
        if (!rc)
            rc = note(j, n, why);
        dls_cursor_del(handoff);
        dls_medium_del(m);
    }
    free(path);
    jvec_free(&list);
    dls_resolver_del(verify);
    return rc;
}
