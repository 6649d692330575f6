/* Starting the audit at a checkpoint when the journal's first records are
 * gone (judge.md rev 4, Checkpoints, Audit and Retention;
 * docs/audit.md "A journal that starts at a checkpoint").
 *
 * A journal retained from position 0 is replayed from there, as always.
 * One whose older segments were deleted answers a gap at position 0; its
 * first retained position is P. The audit then takes the oldest checkpoint
 * n in settings.checkpoints that
 *   - names this journal and pass n in its header, with journal_next >= P;
 *   - has a grantor-signed commit record {"dao.judge/checkpoint": n, …} on
 *     the journal after journal_next (before the next pass mark: the judge
 *     commits between passes);
 *   - has that commit's digest and record count (read once with the shared
 *     reader, dls_checkpoint_read, records decoded by dls_ckpt_decode);
 * loads its state into the audit's own ledger (audit/, never the judge's
 * ledger code), and replays the journal from journal_next and each medium
 * from the checkpoint's drained position. Everything before — journal
 * positions [0, journal_next), passes up to n — is reported as not audited,
 * never as a failure; records a medium evicted before the drained
 * positions are never read. A candidate whose commit is found but whose
 * file differs from its commit (digest, count) is reported as damaged
 * (not a failure: judge.md, it does not exist) and the next newer one is
 * tried; one whose digest matches but whose lease ids are out of order is
 * a checkpoint mismatch (a `journal` failure). When every listed candidate vanished (ENOENT) before
 * it was read — a judge beside the audit pruned them — the folder is
 * listed again and the front probed again, at most AU_CKPT_LISTINGS times
 * (docs/audit.md, "Auditing beside a running judge"). No usable
 * checkpoint: the gap [0, P) is a `journal` failure, and nothing is
 * replayed (a replay from P without the state before it would invent
 * failures). */
#include "audit/internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/checkpoint.h"

/* ---- loading a checkpoint into the audit's ledger ------------------------------ */

typedef struct load_state {
    dls_audit *a;
    uint32_t basis;
    uint64_t pass;
} load_state;

static int load_header(load_state *ls, const dls_ckpt_rec *r)
{
    dls_audit *a = ls->a;
    /* the basis, interned as a mark's would be */
    uint32_t b = (uint32_t)a->sum.n_bases;
    for (size_t i = 0; i < a->sum.n_bases; i++)
        if (a->bases[i].name.n == r->basis.n &&
            (r->basis.n == 0 || !memcmp(a->bases[i].name.p, r->basis.p, r->basis.n)))
            b = (uint32_t)i;
    if (b == a->sum.n_bases) {
        uint8_t *copy = malloc(r->basis.n + 1);
        if (!copy ||
            au_grow((void **)&a->bases, a->sum.n_bases, &a->cap_bases, sizeof *a->bases)) {
            free(copy);
            return DLS_ERR_NOMEM;
        }
        if (r->basis.n)
            memcpy(copy, r->basis.p, r->basis.n);
        copy[r->basis.n] = 0;
        a->bases[a->sum.n_bases++] =
            (dls_audit_basis){{copy, r->basis.n}, r->now_ns, r->now_ns, r->pass, r->pass};
    }
    ls->basis = b;
    ls->pass = r->pass;
    /* the replay stands after pass n: the next mark continues from it (pass
     * numbers, now, drained positions), and is not a journal's first mark */
    a->have_mark = true;
    a->last_pass = r->pass;
    a->last_now = r->now_ns;
    a->cur_basis = b;
    a->max_lease = r->highest;
    a->have_floor = true; /* ids at or below `highest` were minted before */
    size_t off = 0;
    dls_ckpt_medium cm;
    while (dls_ckpt_next_medium(r, &off, &cm)) {
        size_t mix;
        audit_medium *m = au_medium_get(a, cm.id, &mix);
        if (!m)
            return DLS_ERR_NOMEM;
        m->drained = cm.drained;
        if (cm.has_run) { /* a failing run continues (judge.md, Restart) */
            m->fail_run = true;
            m->fail_first_now = cm.run_start;
            m->fail_last_pass = r->pass;
            m->fail_basis = b;
            m->failing_pass = r->pass;
        }
        if (!m->m)
            continue;
        /* records before the drained position are never read: a medium
         * that evicted them is not a failure (judge.md rev 4, Retention) */
        dls_cursor *c = NULL;
        int rc = dls_cursor_new(&c, m->m, m->drained);
        if (rc == DLS_ERR_NOMEM)
            return rc;
        if (rc) {
            char hx[33];
            dls_hex16(m->id, hx);
            au_warn(a, "medium %s cannot be read from position %" PRIu64 " (%s)", hx, m->drained,
                    dls_strerror(rc));
            m->read_stopped = true;
            continue;
        }
        dls_cursor_del(m->cur);
        m->cur = c;
    }
    return 0;
}

static int load_lease(load_state *ls, const dls_ckpt_rec *r)
{
    dls_audit *a = ls->a;
    if (au_lease_find(a, r->id) || r->id > a->max_lease)
        return DLS_ERR_RECORD; /* a repeated id, or one above the header's highest */
    audit_lease *l = calloc(1, sizeof *l);
    uint8_t *buf = malloc(r->subject.n + r->holder.n + 1);
    if (!l || !buf ||
        au_grow((void **)&a->leases, a->n_leases, &a->cap_leases, sizeof *a->leases) ||
        au_lease_ix_set(a, r->id, a->n_leases)) {
        free(l);
        free(buf);
        return DLS_ERR_NOMEM;
    }
    size_t ix = a->n_leases++;
    a->leases[ix] = l;
    l->ix = ix;
    memcpy(buf, r->subject.p, r->subject.n);
    memcpy(buf + r->subject.n, r->holder.p, r->holder.n);
    l->buf = buf;
    dls_audit_lease *p = &l->pub;
    p->lease = r->id;
    p->subject = (dls_bytes){buf, r->subject.n};
    p->holder = (dls_bytes){buf + r->subject.n, r->holder.n};
    if (r->medium)
        memcpy(p->medium, r->medium, DLS_MEDIUM_ID_LEN);
    p->mode = r->mode;
    p->duration_ns = r->duration.ns;
    p->max_ns = r->has_max ? r->max.ns : 0;
    /* granted in the history not audited: no pass, the tenure start */
    p->granted = (dls_audit_point){0, r->start, ls->basis};
    p->findings |= DLS_AUDIT_F_FROM_CHECKPOINT;
    p->released = r->released;
    p->commit = r->commit;
    l->tenure = r->start;
    l->last_obs = r->last;
    l->last_seq = r->seq;
    if (r->has_resumed) {
        l->unknown = true;
        l->resumed = r->resumed;
        p->findings |= DLS_AUDIT_F_UNKNOWN;
    }
    if (r->pending != DLS_CAUSE_NONE) {
        /* due at pass n or before (the judge's conclusion, not audited) */
        l->pending = true;
        l->pending_cause = r->pending;
        p->due = au_point_now(a);
        p->due_cause = r->pending;
        p->judge_due_pass = ls->pass;
        p->judge_due_cause = r->pending;
        l->jd_pass = ls->pass;
        l->jd_cause = r->pending;
    }
    dls_audit_basis *bs = &a->bases[ls->basis];
    if (r->start < bs->min_reading)
        bs->min_reading = r->start;

    size_t mix = 0;
    audit_medium *m = NULL;
    if (r->medium)
        m = au_medium_get(a, r->medium, &mix);
    if (r->medium && !m)
        return DLS_ERR_NOMEM;
    l->medium_ix = mix;
    if (m)
        l->epoch = m->gap_epoch;
    if (!m || !m->m) {
        p->findings |= DLS_AUDIT_F_MISSING_MEDIUM;
        au_make_unverifiable(l);
    }
    size_t six = 0;
    audit_subject *sub = au_subject_get(a, (dls_bytes){r->subject.p, r->subject.n}, &six);
    if (!sub)
        return DLS_ERR_NOMEM;
    l->subject_ix = six;
    if (p->mode == DLS_MODE_EXCLUSIVE)
        sub->live_excl++;
    else
        sub->live_shared++;
    l->live = true;
    au_live_add(a, ix);
    if (!l->pending && !l->unverifiable)
        au_heap_push(a, ix, au_deadline(l, a->cur_tol));
    return a->nomem ? DLS_ERR_NOMEM : 0;
}

/* (medium, author) -> last counted proposal seq, keyed as apply.c keys it */
static int load_author(load_state *ls, const dls_ckpt_rec *r)
{
    dls_audit *a = ls->a;
    if (!r->medium)
        return 0;
    size_t mix;
    if (!au_medium_get(a, r->medium, &mix))
        return DLS_ERR_NOMEM;
    uint8_t key[8 + DLS_ID_MAX];
    size_t an = r->holder.n > DLS_ID_MAX ? DLS_ID_MAX : r->holder.n;
    for (int i = 0; i < 8; i++)
        key[i] = (uint8_t)((uint64_t)mix >> (8 * i));
    memcpy(key + 8, r->holder.p, an);
    return au_ix_set(&a->proposal_seq, key, 8 + an, r->seq);
}

static int load_record(void *user, const dls_ckpt_rec *r)
{
    load_state *ls = user;
    switch (r->kind) {
    case DLS_CKPT_HEADER:
        return load_header(ls, r);
    case DLS_CKPT_LEASE:
        return load_lease(ls, r);
    case DLS_CKPT_AUTHOR:
        return load_author(ls, r);
    case DLS_CKPT_WAITER: /* the audit answers no proposals: waiters and */
    case DLS_CKPT_DELAY:  /* lock-delays are the judge's to keep */
        return 0;
    }
    return 0;
}

/* ---- choosing the checkpoint ---------------------------------------------------- */

typedef struct header_only {
    bool seen;
    uint64_t pass, journal_next;
    uint8_t journal[DLS_MEDIUM_ID_LEN];
} header_only;

static int read_header(void *user, const dls_ckpt_rec *r)
{
    header_only *h = user;
    h->seen = true;
    h->pass = r->pass;
    h->journal_next = r->journal_next;
    memcpy(h->journal, r->journal, DLS_MEDIUM_ID_LEN);
    return 1; /* stop after the header: only it is needed here */
}

/* The commit record of pass n on the journal from `from`, before the next
 * pass mark: 1 with its digest, count and position, 0 when there is none. */
static int find_commit(dls_audit *a, journal_state *js, dls_medium *journal, uint64_t from,
                       uint64_t n, uint8_t *digest, uint64_t *records, uint64_t *pos)
{
    dls_cursor *c = NULL;
    if (dls_cursor_new(&c, journal, from)) {
        a->nomem = true;
        return 0;
    }
    int found = 0;
    for (;;) {
        dls_record rec;
        if (dls_cursor_next(c, &rec, NULL) != DLS_NEXT_OK)
            break;
        dls_attribution at;
        dls_resolver_attribute(js->res, rec.p, rec.n, &at);
        if (!at.attributed || at.author.n != js->grantor_len ||
            memcmp(at.author.p, js->grantor, js->grantor_len) != 0)
            continue;
        if (dls_amark_kind(at.fact.p, at.fact.n) == DLS_AMARK_MARK)
            break; /* the judge commits a checkpoint before its next pass */
        uint64_t pn = 0;
        if (dls_ckpt_commit_decode(at.fact.p, at.fact.n, &pn, digest, records) && pn == n) {
            *pos = rec.position;
            found = 1;
            break;
        }
    }
    dls_cursor_del(c);
    return found;
}

/* The first read's checks beyond the digest: lease ids ascending and not
 * above the header's highest (what the audit's ledger needs to hold them). */
typedef struct shape {
    uint64_t highest, last;
    bool bad;
} shape;

static int check_shape(void *user, const dls_ckpt_rec *r)
{
    shape *sh = user;
    if (r->kind == DLS_CKPT_HEADER)
        sh->highest = r->highest;
    else if (r->kind == DLS_CKPT_LEASE) {
        if (r->id <= sh->last || r->id > sh->highest)
            sh->bad = true;
        sh->last = r->id;
    }
    return 0;
}

/* What trying one listed checkpoint gave. */
enum {
    TC_STOP = -1,    /* the audit cannot go on (incomplete) */
    TC_NO = 0,       /* no start: another journal's, unreadable, before the front, never
                        committed */
    TC_LOADED = 1,   /* loaded: the start */
    TC_VANISHED = 2, /* the file was no longer there (ENOENT) when it was opened: deleted
                        since the listing (a judge's prune); nothing was loaded */
    TC_BAD = 3       /* committed but its file differs: reported (damaged or mismatch) */
};

/* Checkpoint n is there but cannot be opened now (EMFILE, EACCES, EIO, …):
 * it may be the start — an audit that could not be done, never the
 * uncovered gap nor a mismatch (docs/audit.md). */
static int unreadable(dls_audit *a, uint64_t n, int rc, const dls_where *w)
{
    au_set_incomplete(a, 0, "checkpoint %" PRIu64 " cannot be read (%s)", n,
                      w->sys_errno ? strerror(w->sys_errno) : dls_strerror(rc));
    return TC_STOP;
}

/* Tries checkpoint n (TC_*). */
static int try_checkpoint(dls_audit *a, journal_state *js, dls_medium *journal, uint64_t n,
                          uint64_t first)
{
    const char *dir = a->set.checkpoints;
    header_only h = {0};
    dls_where hw = {0};
    int hr = dls_checkpoint_read(dir, n, read_header, &h, NULL, NULL, &hw);
    if (hr == DLS_ERR_NOTFOUND)
        return TC_VANISHED;
    if (!h.seen && (hr == DLS_ERR_IO || hr == DLS_ERR_PERM))
        return unreadable(a, n, hr, &hw);
    if (!h.seen || h.pass != n || memcmp(h.journal, a->sum.journal_id, DLS_MEDIUM_ID_LEN) ||
        h.journal_next < first)
        return 0; /* another journal's, unreadable, or before the retained journal */
    uint8_t want[DLS_CKPT_DIGEST_LEN], got[DLS_CKPT_DIGEST_LEN];
    uint64_t wrec = 0, nrec = 0, cpos = 0;
    if (!find_commit(a, js, journal, h.journal_next, n, want, &wrec, &cpos))
        return 0; /* never committed: it does not exist (judge.md) */
    /* the digest first, then the load: a file that differs never touches
     * the audit's ledger */
    shape sh = {0, 0, false};
    dls_where cw = {0};
    int rc = dls_checkpoint_read(dir, n, check_shape, &sh, got, &nrec, &cw);
    if (rc == DLS_ERR_NOMEM) {
        a->nomem = true;
        return TC_NO;
    }
    if (rc == DLS_ERR_NOTFOUND)
        return TC_VANISHED; /* pruned since its header was read: no mismatch */
    if (rc == DLS_ERR_IO || rc == DLS_ERR_PERM) /* the open failed: not a mismatch */
        return unreadable(a, n, rc, &cw);
    if (rc || nrec != wrec || sodium_memcmp(got, want, sizeof got) != 0) {
        au_checkpoint_damaged(a, n, cpos,
                              "its digest or record count is not the commit record's (the "
                              "audit cannot start from it)");
        return TC_BAD;
    }
    if (sh.bad) {
        au_checkpoint_mismatch(a, n, cpos,
                               "its lease ids are not ascending or exceed its highest (the "
                               "audit cannot start from it)", 0);
        return TC_BAD;
    }
    load_state ls = {a, 0, n};
    memset(&cw, 0, sizeof cw);
    rc = dls_checkpoint_read(dir, n, load_record, &ls, got, &nrec, &cw);
    if (rc == DLS_ERR_NOMEM || a->nomem) {
        a->nomem = true;
        return TC_NO;
    }
    if (rc == DLS_ERR_NOTFOUND)
        return TC_VANISHED; /* the open failed: nothing was loaded */
    if ((rc == DLS_ERR_IO || rc == DLS_ERR_PERM) && nrec == 0)
        return unreadable(a, n, rc, &cw); /* the open failed: nothing was loaded */
    if (rc || nrec != wrec || sodium_memcmp(got, want, sizeof got) != 0) {
        /* the file changed between the two reads: the ledger is half loaded */
        au_set_incomplete(a, cpos, "checkpoint %" PRIu64 " changed while it was read", n);
        return TC_STOP;
    }
    a->sum.start_checkpoint = n;
    a->sum.not_audited_to = h.journal_next;
    a->sum.checkpoints_checked++;
    a->have_start_commit = true;
    a->start_commit_pos = cpos;
    return TC_LOADED;
}

/* The journal's first retained position: true with *first when its
 * front is gone (a gap at position 0). */
static bool front_gone(dls_audit *a, dls_medium *journal, uint64_t *first)
{
    dls_cursor *probe = NULL;
    if (dls_cursor_new(&probe, journal, 0)) {
        a->nomem = true;
        return false;
    }
    dls_record rec;
    dls_next r = dls_cursor_next(probe, &rec, NULL);
    dls_cursor_del(probe);
    if (r != DLS_NEXT_GAP || rec.gap_from != 0)
        return false;
    *first = rec.position;
    return true;
}

/* Lists the folder and tries its checkpoints, oldest first (TC_LOADED,
 * TC_STOP, or TC_NO when none is the start); *vanished: every listed file
 * that could have been the start had vanished (at least one did, and none
 * was a reported mismatch). */
static int try_listing(dls_audit *a, journal_state *js, dls_medium *journal, uint64_t first,
                       unsigned attempt, bool *vanished)
{
    *vanished = false;
    uint64_t *passes = NULL;
    size_t n = 0;
    if (a->set.checkpoints && dls_checkpoint_list(a->set.checkpoints, &passes, &n)) {
        a->nomem = true;
        return TC_NO;
    }
    if (a->hooks && a->hooks->listed)
        a->hooks->listed(a->hooks->user, attempt, passes, n);
    size_t gone = 0, bad = 0;
    int got = TC_NO;
    for (size_t i = 0; i < n && got == TC_NO && !a->nomem; i++) {
        int t = try_checkpoint(a, js, journal, passes[i], first);
        if (t == TC_VANISHED)
            gone++;
        else if (t == TC_BAD)
            bad++;
        else
            got = t;
    }
    free(passes);
    *vanished = got == TC_NO && gone > 0 && bad == 0;
    return got;
}

/* *cur replaced by a cursor at the start checkpoint's journal_next. */
static bool restart_cursor(dls_audit *a, dls_medium *journal, dls_cursor **cur)
{
    dls_cursor *c = NULL;
    if (dls_cursor_new(&c, journal, a->sum.not_audited_to)) {
        a->nomem = true;
        return false;
    }
    dls_cursor_del(*cur);
    *cur = c;
    return true;
}

/* An incremental audit (settings.from_checkpoint; docs/audit.md,
 * "Auditing only what is new"): checkpoint N, or the newest usable one,
 * tried newest first; TC_LOADED, else the audit is incomplete (TC_STOP). */
static int start_asked(dls_audit *a, journal_state *js, dls_medium *journal, uint64_t first)
{
    uint64_t want = a->set.from_checkpoint;
    uint64_t *passes = NULL;
    size_t n = 0;
    if (!a->set.checkpoints) {
        au_set_incomplete(a, first, "an audit from a checkpoint needs the checkpoint folder");
        return TC_STOP;
    }
    if (dls_checkpoint_list(a->set.checkpoints, &passes, &n)) {
        a->nomem = true;
        return TC_NO;
    }
    int got = TC_NO;
    for (size_t i = n; i-- > 0 && got != TC_LOADED && got != TC_STOP && !a->nomem;) {
        if (want != DLS_AUDIT_NEWEST_CHECKPOINT && passes[i] != want)
            continue;
        got = try_checkpoint(a, js, journal, passes[i], first);
        if (want != DLS_AUDIT_NEWEST_CHECKPOINT)
            break;
    }
    free(passes);
    if (got == TC_LOADED || got == TC_STOP || a->nomem)
        return got;
    if (want == DLS_AUDIT_NEWEST_CHECKPOINT)
        au_set_incomplete(a, first, "no committed checkpoint of this journal in %s can be "
                          "the start", a->set.checkpoints);
    else
        au_set_incomplete(a, first, "checkpoint %" PRIu64 " in %s cannot be the start (%s)",
                          want, a->set.checkpoints,
                          got == TC_BAD ? "it differs from its commit record"
                          : got == TC_VANISHED ? "it is not in the folder"
                          : "not committed on this journal, or before its first record");
    return TC_STOP;
}

bool au_start(dls_audit *a, journal_state *js, dls_medium *journal, dls_cursor **cur)
{
    uint64_t first = 0;
    bool gone = front_gone(a, journal, &first);
    if (a->nomem)
        return false;
    if (a->set.from_checkpoint) {
        a->sum.journal_first = first;
        int got = start_asked(a, js, journal, first);
        if (got != TC_LOADED)
            return false;
        return restart_cursor(a, journal, cur);
    }
    if (!gone)
        return true; /* retained from position 0 (or unreadable: the replay says so) */
    a->sum.journal_first = first;

    /* docs/audit.md, "Auditing beside a running judge": a judge that
     * checkpoints, prunes and trims between the listing and the reading
     * deletes the listed checkpoints; when every one that could have been
     * the start vanished so, the folder is listed again (the journal's
     * front probed again: it has usually moved too), at most
     * AU_CKPT_LISTINGS times. */
    int loaded = TC_NO;
    for (unsigned attempt = 0; attempt < AU_CKPT_LISTINGS; attempt++) {
        bool vanished = false;
        if (attempt) {
            uint64_t now_first = first;
            if (!front_gone(a, journal, &now_first))
                break; /* out of memory (a front only moves forward) */
            first = now_first;
            a->sum.journal_first = first;
        }
        loaded = try_listing(a, js, journal, first, attempt, &vanished);
        if (a->nomem || loaded != TC_NO || !vanished)
            break;
    }
    if (a->nomem || loaded == TC_STOP)
        return false;
    if (loaded != TC_LOADED) {
        a->sum.journal_missing_from = 0;
        a->sum.journal_missing_to = first;
        au_journal_malformed(a);
        au_detail(a, "journal: a gap from 0 to %" PRIu64 " (positions 0..%" PRIu64
                  " are gone) not covered by a checkpoint%s: the journal cannot be audited",
                  first, first - 1,
                  a->set.checkpoints ? "" : " (no checkpoint folder was given)");
        return false;
    }
    return restart_cursor(a, journal, cur);
}
