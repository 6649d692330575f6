/* One pass mark, replayed (judge.md "Audit replay"; Restart; The pass,
 * step 2): the mark's checks of the journal's structure, its reading basis,
 * restarts, transport-error runs, gaps, and the media spans it drained,
 * each record stamped with the mark's now, before classification. */
#include "audit/internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "audit/amark.h"
#include "daolease/attrib.h"

/* ---- the media: one pass's drained span ------------------------------------ */

typedef struct span_gaps {
    const dls_amark_gap *g;
    size_t n;
} span_gaps;

static bool in_judge_gap(const dls_amark *mk, const uint8_t *id, uint64_t pos)
{
    for (size_t i = 0; i < mk->n_gaps; i++)
        if (!memcmp(mk->gaps[i].medium, id, DLS_MEDIUM_ID_LEN) && pos >= mk->gaps[i].from &&
            pos < mk->gaps[i].to)
            return true;
    return false;
}

/* True when every position of [from, to) is inside a gap the judge itself
 * recorded in this mark (the judge never read them either). */
static bool covered_by_judge_gap(const dls_amark *mk, const uint8_t *id, uint64_t from,
                                 uint64_t to)
{
    while (from < to) {
        bool hit = false;
        for (size_t i = 0; i < mk->n_gaps; i++) {
            const dls_amark_gap *g = &mk->gaps[i];
            if (!memcmp(g->medium, id, DLS_MEDIUM_ID_LEN) && from >= g->from && from < g->to) {
                from = g->to;
                hit = true;
                break;
            }
        }
        if (!hit)
            return false;
    }
    return true;
}

static void missing_span(dls_audit *a, size_t mix, const dls_amark *mk, uint64_t from,
                         uint64_t to, const char *why)
{
    if (from >= to || covered_by_judge_gap(mk, a->media[mix].id, from, to))
        return;
    char hx[33];
    dls_hex16(a->media[mix].id, hx);
    au_warn(a, "medium %s: records %" PRIu64 "..%" PRIu64 " drained at pass %" PRIu64
            " cannot be read (%s): the leases registered on it are unverifiable from there",
         hx, from, to - 1, a->last_pass, why);
    au_span_unverifiable(a, mix);
}

/* Applies the records of medium `mix` in [m->drained, to): the span the
 * judge drained in this pass, skipping the gaps it recorded. */
static void read_span(dls_audit *a, size_t mix, const dls_amark *mk, uint64_t to)
{
    audit_medium *m = &a->media[mix];
    uint64_t from = m->drained;
    if (!m->m)
        return; /* missing: its leases are unverifiable already */
    if (m->read_stopped) {
        missing_span(a, mix, mk, from, to, "the medium could not be read");
        return;
    }
    /* records come verified ahead, in order (audit/ahead.h); the window
     * never reads past `to`, so it is empty again when the span ends */
    uint64_t c = au_ahead_position(a->mwin, m->cur);
    if (c > from) /* an earlier gap of the audit's own cursor jumped past */
        missing_span(a, mix, mk, from, c < to ? c : to, "evicted since the judge drained them");
    while ((c = au_ahead_position(a->mwin, m->cur)) < to) {
        const au_read *rd = au_ahead_next(a->mwin, m->cur, m->res, to);
        if (!rd) {
            a->nomem = true;
            return;
        }
        dls_record rec = rd->rec;
        dls_where w = rd->w;
        dls_next r = rd->r;
        if (r == DLS_NEXT_OK) {
            if (!in_judge_gap(mk, m->id, rec.position))
                au_apply_record(a, mix, &rd->att, rd->it);
            continue;
        }
        if (r == DLS_NEXT_GAP) {
            uint64_t q = rec.position;
            missing_span(a, mix, mk, rec.gap_from > from ? rec.gap_from : from, q < to ? q : to,
                         "evicted since the judge drained them");
            continue;
        }
        char hx[33];
        dls_hex16(m->id, hx);
        if (r == DLS_NEXT_ERROR) {
            m->read_stopped = true;
            au_warn(a, "medium %s: transport-error at position %" PRIu64 " (%s)", hx, c,
                 w.reason ? w.reason : "unreadable");
            missing_span(a, mix, mk, c, to, "transport-error");
        } else {
            if (!m->warned_short)
                au_warn(a, "medium %s: the copy given ends at position %" PRIu64
                        " but the journal drained it to %" PRIu64
                        " (a truncated or older copy?)", hx, c, to);
            m->warned_short = true;
            missing_span(a, mix, mk, c, to, r == DLS_NEXT_END ? "sealed before" : "not in the copy");
        }
        return;
    }
}

/* ---- a pass mark ------------------------------------------------------------ */

static uint32_t basis_intern(dls_audit *a, const uint8_t *p, size_t n, bool *fresh)
{
    *fresh = false;
    for (size_t i = 0; i < a->sum.n_bases; i++)
        if (a->bases[i].name.n == n && (n == 0 || !memcmp(a->bases[i].name.p, p, n)))
            return (uint32_t)i;
    uint8_t *copy = malloc(n + 1);
    if (!copy || au_grow((void **)&a->bases, a->sum.n_bases, &a->cap_bases, sizeof *a->bases)) {
        free(copy);
        a->nomem = true;
        return a->cur_basis;
    }
    if (n)
        memcpy(copy, p, n);
    copy[n] = 0;
    dls_audit_basis b = {{copy, n}, UINT64_MAX, 0, 0, 0};
    a->bases[a->sum.n_bases] = b;
    *fresh = true;
    return (uint32_t)a->sum.n_bases++;
}

/* judge.md Restart: which recovered leases become unknown at a restarted
 * mark. Revision 4 (the mark carries kept): only where the journal cannot
 * vouch for the evidence — the lease's registered medium is missing from
 * the restarted judge's assembly (not in this mark's drained list) or
 * answered transport-error at resume (in its errors); a gap at resume marks
 * the medium's leases unknown when the drained spans are read, as at any
 * pass; a basis change was handled before. Revision 3 (restarted without
 * kept): every recovered lease is re-armed. */
static void restart_leases(dls_audit *a, const dls_amark *mk)
{
    for (size_t i = 0; i < a->n_live; i++) {
        audit_lease *l = a->leases[a->live[i]];
        if (!mk->kept) {
            au_mark_unknown(a, l);
            continue;
        }
        const uint8_t *id = a->media[l->medium_ix].id;
        bool listed = false, failing = false;
        for (size_t k = 0; k < mk->n_drained && !listed; k++)
            listed = !memcmp(mk->drained[k].medium, id, DLS_MEDIUM_ID_LEN);
        for (size_t k = 0; k < mk->n_errors && !failing; k++)
            failing = !memcmp(mk->errors[k].medium, id, DLS_MEDIUM_ID_LEN);
        if (!listed || failing)
            au_mark_unknown(a, l);
    }
}

/* judge.md Restart, lost ledger: a new journal's first mark records the
 * lease-id floor (the first new id is floor + 1) and each medium's starting
 * position, from which the audit reads it. Only the journal's first mark
 * may carry them. */
static void new_journal(dls_audit *a, const dls_amark *mk, bool first)
{
    if (!first) {
        au_journal_malformed(a);
        au_detail(a, "journal: pass %" PRIu64 " carries floor or from, which only a new "
                     "journal's first mark may", mk->pass);
        return;
    }
    if (mk->has_floor) {
        a->have_floor = true;
        if (mk->floor > a->max_lease)
            a->max_lease = mk->floor;
    }
    for (size_t i = 0; i < mk->n_from; i++) {
        size_t mix;
        audit_medium *m = au_medium_get(a, mk->from[i].medium, &mix);
        if (!m)
            continue;
        m->drained = mk->from[i].position;
        if (!m->m)
            continue;
        dls_cursor *c = NULL;
        int rc = dls_cursor_new(&c, m->m, m->drained);
        if (rc == DLS_ERR_NOMEM) {
            a->nomem = true;
            continue;
        }
        if (rc) {
            char hx[33];
            dls_hex16(m->id, hx);
            au_warn(a, "medium %s cannot be read from position %" PRIu64 " (%s)", hx,
                    m->drained, dls_strerror(rc));
            m->read_stopped = true;
            continue;
        }
        dls_cursor_del(m->cur);
        m->cur = c;
    }
}

void au_process_mark(dls_audit *a, const dls_amark *mk)
{
    uint64_t pass = mk->pass, now = mk->now_ns;
    bool fresh;
    uint32_t b = basis_intern(a, mk->basis, mk->basis_len, &fresh);
    if (b >= a->sum.n_bases)
        return; /* out of memory before any basis was kept (a->nomem is set) */
    bool first = !a->have_mark;
    bool basis_changed = !first && b != a->cur_basis;

    a->sum.passes++;
    if (!first && pass <= a->last_pass) {
        au_journal_malformed(a);
        au_detail(a, "journal: pass %" PRIu64 " follows pass %" PRIu64
                  " (pass numbers must increase)", pass, a->last_pass);
    }
    if (basis_changed && !mk->restarted) {
        au_journal_malformed(a);
        au_detail(a, "journal: pass %" PRIu64 " changes the reading basis without restarted", pass);
    }
    if (!first && !basis_changed && now < a->last_now) {
        au_journal_malformed(a);
        au_detail(a, "journal: pass %" PRIu64 " has now %" PRIu64 " ns, before pass %" PRIu64
                  "'s %" PRIu64 " ns on the same basis", pass, now, a->last_pass, a->last_now);
    } else if (basis_changed && !fresh && now < a->bases[b].max_reading) {
        /* back on a basis met before: its readings still only go forward */
        au_journal_malformed(a);
        au_detail(a, "journal: pass %" PRIu64 " has now %" PRIu64 " ns on a basis it left at %" PRIu64
                  " ns (now going backwards within one basis)", pass, now,
               a->bases[b].max_reading);
    }
    if (mk->late) {
        a->sum.cadence_overruns++;
    } else if (!first && !basis_changed && pass == a->last_pass + 1 &&
               dls_passed(a->last_now, now, mk->cadence_ns)) {
        APUSH(a, a->unflagged, a->sum.n_cadence_overruns_unflagged, a->cap_unflagged, pass);
    }

    if (first && !mk->restarted)
        au_warn(a, "journal: the first mark (pass %" PRIu64 ") does not carry restarted: the "
                "journal may have lost its beginning", pass);
    a->have_mark = true;
    a->last_pass = pass;
    a->last_now = now;
    a->cur_basis = b;
    dls_audit_basis *bs = &a->bases[b];
    if (bs->min_reading > now)
        bs->min_reading = now;
    if (bs->max_reading < now)
        bs->max_reading = now;
    if (!bs->first_pass)
        bs->first_pass = pass;
    bs->last_pass = pass;

    /* a basis change rebases every recovered lease (judge.md, Restart) */
    if (basis_changed) {
        APUSH(a, a->basis_changes, a->sum.n_basis_changes, a->cap_basis_changes, pass);
        for (size_t i = 0; i < a->n_live; i++) {
            audit_lease *l = a->leases[a->live[i]];
            l->tenure = l->last_obs = now;
            l->pub.findings |= DLS_AUDIT_F_REBASED;
            au_mark_unknown(a, l);
        }
        au_heap_rebuild(a, a->cur_tol); /* keys on the old basis mean nothing here */
    }
    if (mk->restarted) {
        APUSH(a, a->restarts, a->sum.n_restarts, a->cap_restarts, pass);
        /* judge.md rev 5: a takeover is a restart for every rule, counted */
        if (mk->takeover)
            APUSH(a, a->takeovers, a->sum.n_takeovers, a->cap_takeovers, pass);
        restart_leases(a, mk);
    }
    if (mk->has_floor || mk->n_from)
        new_journal(a, mk, first);

    /* transport-errors: the run of consecutive failing passes per medium */
    for (size_t i = 0; i < mk->n_errors; i++) {
        size_t mix;
        audit_medium *m = au_medium_get(a, mk->errors[i].medium, &mix);
        if (!m)
            continue;
        dls_audit_span sp;
        sp.pass = pass;
        memcpy(sp.medium, m->id, DLS_MEDIUM_ID_LEN);
        sp.from = sp.to = mk->errors[i].position;
        APUSH(a, a->terrs, a->sum.n_transport_errors, a->cap_terrs, sp);
        if (m->failing_pass == pass)
            continue;
        /* Revision 4 (a mark with kept): the run continues across a
         * restart, rebuilt from the marks' errors (judge.md, Restart).
         * Revision 3 (restarted without kept): a restarted mark starts a new
         * run — a restarted judge numbers its first pass after the last
         * recorded one, so the journal cannot show that no unrecorded pass
         * drained the medium cleanly before the restart. */
        if (!(m->fail_run && m->fail_last_pass + 1 == pass && m->fail_basis == b &&
              (!mk->restarted || mk->kept))) {
            m->fail_run = true;
            m->fail_first_now = now;
            m->fail_basis = b;
        }
        m->fail_last_pass = pass;
        m->failing_pass = pass;
    }
    for (size_t i = 0; i < a->n_media; i++)
        if (a->media[i].failing_pass != pass)
            a->media[i].fail_run = false;

    /* drained, in the mark's (assembly) order */
    for (size_t i = 0; i < mk->n_drained; i++) {
        size_t mix;
        audit_medium *m = au_medium_get(a, mk->drained[i].medium, &mix);
        if (!m)
            continue;
        uint64_t to = mk->drained[i].position;
        if (to < m->drained) {
            char hx[33];
            dls_hex16(m->id, hx);
            au_journal_malformed(a);
            au_detail(a, "journal: pass %" PRIu64 " drained medium %s to %" PRIu64
                      ", behind %" PRIu64 " (positions must not go backwards)",
                   pass, hx, to, m->drained);
            continue;
        }
        /* a gap first marks every lease registered on the medium unknown */
        for (size_t g = 0; g < mk->n_gaps; g++) {
            if (memcmp(mk->gaps[g].medium, m->id, DLS_MEDIUM_ID_LEN))
                continue;
            dls_audit_span sp;
            sp.pass = pass;
            memcpy(sp.medium, m->id, DLS_MEDIUM_ID_LEN);
            sp.from = mk->gaps[g].from;
            sp.to = mk->gaps[g].to;
            APUSH(a, a->gaps, a->sum.n_gaps, a->cap_gaps, sp);
            /* every lease registered on the medium: an epoch, applied to
             * each lease when it is next read (au_sync) */
            a->media[mix].gap_epoch++;
            a->media[mix].gap_now = a->last_now;
        }
        read_span(a, mix, mk, to);
        a->media[mix].drained = to;
    }
    au_classify_all(a, mk);
}
