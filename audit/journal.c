/* Reading the journal (judge.md "Journal", "Audit replay"): every record
 * must verify under the grantor's key; pass marks and their continuations
 * are collected and replayed in turn; grants, refusals and lapsed records
 * enter and leave the audit's ledger and are checked for double grants and
 * unjustified lapses. */
#include "audit/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/amark.h"
#include "daolease/attrib.h"


static void double_grant(dls_audit *a, audit_lease *l, const char *why)
{
    a->sum.double_grant++;
    l->pub.findings |= DLS_AUDIT_F_DOUBLE_GRANT;
    au_detail(a, "double grant: lease %" PRIu64 " at pass %" PRIu64 ": %s", l->pub.lease,
           a->last_pass, why);
}

static void on_grant(dls_audit *a, const dls_fact *f)
{
    a->sum.grants++;
    audit_lease *old = au_lease_find(a, f->lease);
    if (old) { /* a lease id not greater than an earlier one: the same id again */
        double_grant(a, old, "its lease id was granted before");
        return;
    }
    bool id_backwards = (a->n_leases || a->have_floor) && f->lease <= a->max_lease;
    audit_lease *l = calloc(1, sizeof *l);
    uint8_t *buf = malloc(f->subject.n + f->holder.n + 1);
    if (!l || !buf ||
        au_grow((void **)&a->leases, a->n_leases, &a->cap_leases, sizeof *a->leases) ||
        au_lease_ix_set(a, f->lease, a->n_leases)) {
        free(l);
        free(buf);
        a->nomem = true;
        return;
    }
    size_t ix = a->n_leases++;
    a->leases[ix] = l;
    l->ix = ix;
    memcpy(buf, f->subject.p, f->subject.n);
    memcpy(buf + f->subject.n, f->holder.p, f->holder.n);
    l->buf = buf;
    l->pub.lease = f->lease;
    l->pub.subject.p = buf;
    l->pub.subject.n = f->subject.n;
    l->pub.holder.p = buf + f->subject.n;
    l->pub.holder.n = f->holder.n;
    memcpy(l->pub.medium, f->medium, DLS_MEDIUM_ID_LEN);
    l->pub.mode = (f->keys & DLS_K_MODE) ? f->mode : DLS_MODE_EXCLUSIVE;
    l->pub.duration_ns = f->duration.ns;
    l->pub.max_ns = (f->keys & DLS_K_MAX) ? f->max.ns : 0;
    l->pub.granted = au_point_now(a);
    l->tenure = l->last_obs = a->last_now;
    if (f->lease > a->max_lease)
        a->max_lease = f->lease;

    size_t mix = 0;
    audit_medium *m = au_medium_get(a, f->medium, &mix);
    l->medium_ix = mix;
    if (m)
        l->epoch = m->gap_epoch;
    if (m && !m->m) {
        l->pub.findings |= DLS_AUDIT_F_MISSING_MEDIUM;
        au_make_unverifiable(l);
    }
    size_t six = 0;
    audit_subject *sub = au_subject_get(a, f->subject, &six);
    l->subject_ix = six;
    if (id_backwards) {
        char why[96];
        snprintf(why, sizeof why, "its id is not greater than lease %" PRIu64, a->max_lease);
        double_grant(a, l, why);
    }
    if (sub) {
        if (l->pub.mode == DLS_MODE_EXCLUSIVE && sub->live_excl + sub->live_shared > 0)
            double_grant(a, l, "an exclusive grant while another lease on its subject is live");
        else if (l->pub.mode == DLS_MODE_SHARED && sub->live_excl > 0)
            double_grant(a, l, "a shared grant while an exclusive lease on its subject is live");
        if (l->pub.mode == DLS_MODE_EXCLUSIVE)
            sub->live_excl++;
        else
            sub->live_shared++;
    }
    l->live = true;
    au_live_add(a, ix);
    if (!l->unverifiable)
        au_heap_push(a, ix, au_deadline(l, a->cur_tol));
}

static void on_lapsed(dls_audit *a, const dls_fact *f)
{
    a->sum.lapsed++;
    audit_lease *l = au_lease_find(a, f->lease);
    if (!l) { /* judge.md "Audit replay": not due by the rules, for nothing was
                 granted */
        a->sum.unjustified_lapse++;
        au_detail(a, "unjustified lapse: pass %" PRIu64 " records lapsed (%s) for lease %" PRIu64
                  ", which the journal never granted", a->last_pass, dls_cause_name(f->cause),
                  f->lease);
        return;
    }
    if (!l->live) { /* rule 6: lapsed twice — journal-defective, reported */
        a->sum.journal_defective++;
        au_warn(a, "journal: pass %" PRIu64 " records lapsed again for lease %" PRIu64
                " (vocabulary rule 6; the first one stands)", a->last_pass, f->lease);
        return;
    }
    uint64_t pass = a->last_pass;
    au_sync(a, l); /* its findings as of its lapse */
    l->pub.lapsed = au_point_now(a);
    l->pub.lapsed_cause = f->cause;
    /* A reclaim that was retried is judged at the pass whose due entry
     * recorded the conclusion (judge.md "Audit replay"):
     * the audit must have found the lease due by then, so an early due
     * retried until the lease was truly due is still unjustified. */
    uint64_t at = l->pub.judge_due_pass && l->pub.judge_due_pass < pass
                      ? l->pub.judge_due_pass : pass;
    bool due_then = l->pending && l->pub.due.pass && l->pub.due.pass <= at;
    /* An unverifiable lease is still judged on what needs no media: its
     * pending state then comes from the judge's own due entry (adopted in
     * au_classify_all), and a lapse no due entry concluded — or with another
     * cause than the one concluded, `policy` included — is unjustified. */
    if (l->pending && !due_then) {
        a->sum.unjustified_lapse++;
        l->pub.findings |= DLS_AUDIT_F_UNJUSTIFIED_LAPSE;
        au_detail(a, "unjustified lapse: lease %" PRIu64 " lapsed (%s) at pass %" PRIu64
                  " on the due entry of pass %" PRIu64 ", where it was not due by the rules "
                  "(the audit finds it due at pass %" PRIu64 ")",
                  l->pub.lease, dls_cause_name(f->cause), pass, at, l->pub.due.pass);
    } else if (!l->pending) {
        a->sum.unjustified_lapse++;
        l->pub.findings |= DLS_AUDIT_F_UNJUSTIFIED_LAPSE;
        if (l->unverifiable)
            au_detail(a, "unjustified lapse: lease %" PRIu64 " lapsed (%s) at pass %" PRIu64
                      " but no due entry of the journal concluded it was due",
                   l->pub.lease, dls_cause_name(f->cause), pass);
        else
            au_detail(a, "unjustified lapse: lease %" PRIu64 " lapsed (%s) at pass %" PRIu64
                      " but was not due by the rules", l->pub.lease, dls_cause_name(f->cause),
                   pass);
    } else if (l->pending_cause != f->cause) {
        a->sum.unjustified_lapse++;
        l->pub.findings |= DLS_AUDIT_F_UNJUSTIFIED_LAPSE;
        au_detail(a, "unjustified lapse: lease %" PRIu64 " lapsed with cause %s at pass %" PRIu64
                  " but the first cause that held (pass %" PRIu64 ") was %s",
               l->pub.lease, dls_cause_name(f->cause), pass, l->pub.due.pass,
               dls_cause_name(l->pending_cause));
    }
    if (l->pending && l->pub.due.pass && l->pub.due.pass < pass) {
        dls_audit_late_reclaim lr = {l->pub.lease, l->pub.due.pass, pass};
        l->pub.findings |= DLS_AUDIT_F_LATE_RECLAIM;
        APUSH(a, a->late_reclaims, a->sum.n_late_reclaims, a->cap_late_reclaims, lr);
    }
    l->live = false;
    au_live_remove(a, l);
    audit_subject *sub = &a->subjects[l->subject_ix];
    if (l->pub.mode == DLS_MODE_EXCLUSIVE)
        sub->live_excl--;
    else
        sub->live_shared--;
}

/* ---- the journal ---------------------------------------------------------- */


void au_flush_mark(dls_audit *a, journal_state *js)
{
    if (!js->have_open)
        return;
    au_process_mark(a, &js->open);
    dls_amark_free(&js->open);
    js->have_open = false;
}

static void journal_record(dls_audit *a, journal_state *js, const dls_record *rec,
                           const dls_attribution *atp)
{
    dls_attribution at = *atp; /* dls_resolver_attribute's answer (audit/ahead.h) */
    a->sum.journal_records++;
    if (at.kind == DLS_REC_SEAL)
        return;
    bool by_grantor = at.attributed && at.author.n == js->grantor_len &&
                      !memcmp(at.author.p, js->grantor, js->grantor_len);
    if (!by_grantor) {
        char who[160];
        au_printable(at.author.p, at.author.n, who, sizeof who);
        a->sum.journal_forged++;
        au_forged_author(a, at.author);
        if (at.attributed)
            au_detail(a, "journal: position %" PRIu64 " is signed by '%s', not by the grantor",
                   rec->position, who);
        else
            au_detail(a, "journal: position %" PRIu64 " does not verify under the grantor's key "
                      "(%s%s%s%s)", rec->position,
                   at.why ? dls_why_name(at.why) : "not attributed",
                   at.author.n ? ", claims '" : "", who, at.author.n ? "'" : "");
        return;
    }
    js->verified++;
    int kind = dls_amark_kind(at.fact.p, at.fact.n);
    if (kind == DLS_AMARK_MARK) {
        dls_amark mk;
        dls_where w = {0};
        int rc = dls_amark_parse(&mk, at.fact.p, at.fact.n, &w);
        if (rc == DLS_ERR_NOMEM) {
            a->nomem = true;
            return;
        }
        if (rc) {
            au_journal_malformed(a);
            au_detail(a, "journal: position %" PRIu64 ": a malformed pass mark (%s, byte %" PRIu64 ")",
                   rec->position, w.reason ? w.reason : dls_strerror(rc), w.offset);
            return;
        }
        if (mk.continued) {
            if (js->have_open && js->open.pass == mk.pass) {
                if (dls_amark_merge(&js->open, &mk))
                    a->nomem = true;
            } else {
                au_journal_malformed(a);
                au_detail(a, "journal: position %" PRIu64 ": a continuation of pass %" PRIu64
                          " that does not follow its mark", rec->position, mk.pass);
            }
            dls_amark_free(&mk);
            return;
        }
        au_flush_mark(a, js);
        js->open = mk;
        js->have_open = true;
        return;
    }
    au_flush_mark(a, js);
    if (!a->have_mark) { /* a pass owes its mark before any other record */
        au_journal_malformed(a);
        au_detail(a, "journal: position %" PRIu64 ": a record before the first pass mark",
               rec->position);
        return;
    }
    dls_fact f;
    dls_where w = {0};
    int rc = dls_fact_decode(at.fact.p, at.fact.n, &f, &w);
    if (rc) {
        a->sum.journal_defective++;
        au_warn(a, "journal: position %" PRIu64 ": a defective fact (%s)", rec->position,
                w.reason ? w.reason : dls_strerror(rc));
        return;
    }
    if (kind != DLS_AMARK_LEASE || f.kind == DLS_FACT_NONE) {
        if (f.kind != DLS_FACT_NONE) { /* a lease fact that also claims to be a mark */
            au_journal_malformed(a);
            au_detail(a, "journal: position %" PRIu64 ": a record that is neither a mark nor a "
                      "lease fact", rec->position);
        } else if (!au_checkpoint_commit(a, at.fact.p, at.fact.n, rec->position)) {
            a->sum.journal_ignored++;
        }
        return;
    }
    if (f.kind != DLS_FACT_GRANT && f.kind != DLS_FACT_REFUSAL && f.kind != DLS_FACT_RECLAIM) {
        a->sum.journal_ignored++; /* the grantor does not author these on its journal */
        au_warn(a, "journal: position %" PRIu64 ": a %s signed by the grantor is ignored",
             rec->position, dls_fact_kind_name(f.kind));
        return;
    }
    if (f.kind == DLS_FACT_GRANT) {
        if (!au_lease_find(a, f.lease)) {
            rc = dls_rule6_observe(js->rule6, &f);
            if (rc == DLS_ERR_NOMEM) {
                a->nomem = true;
                return;
            }
            if (rc) { /* reported; the grant was made all the same, and
                         is checked like any other (a double grant shows) */
                a->sum.journal_defective++;
                au_warn(a, "journal: position %" PRIu64 ": lease %" PRIu64
                        " answers a proposal already answered (vocabulary rule 6)",
                        rec->position, f.lease);
            }
        }
        on_grant(a, &f);
    } else if (f.kind == DLS_FACT_REFUSAL) {
        a->sum.refusals++;
        rc = dls_rule6_observe(js->rule6, &f);
        if (rc == DLS_ERR_NOMEM)
            a->nomem = true;
        else if (rc) {
            a->sum.journal_defective++;
            au_warn(a, "journal: position %" PRIu64 ": a refusal of a proposal already granted "
                    "(vocabulary rule 6)", rec->position);
        }
    } else {
        on_lapsed(a, &f);
    }
}

void au_read_journal(dls_audit *a, journal_state *js, dls_cursor *cur)
{
    for (;;) {
        const au_read *rd = au_ahead_next(js->win, cur, js->res, UINT64_MAX);
        if (!rd) {
            a->nomem = true;
            return;
        }
        dls_record rec = rd->rec;
        dls_where w = rd->w;
        uint64_t at = rd->at;
        dls_next r = rd->r;
        if (r == DLS_NEXT_OK) {
            journal_record(a, js, &rec, &rd->att);
            if (a->nomem)
                return;
            continue;
        }
        if (r == DLS_NEXT_GAP) {
            au_set_incomplete(a, at, "journal records %" PRIu64 "..%" PRIu64
                                  " were evicted: the journal cannot be replayed past them",
                           rec.gap_from, rec.position ? rec.position - 1 : 0);
        } else if (r == DLS_NEXT_ERROR && rec.gap_from > at) {
            /* a hole: a segment missing between the oldest and the newest
             * (stream-format.md rev 4: corruption, never retention) */
            a->sum.journal_missing_from = at;
            a->sum.journal_missing_to = rec.gap_from;
            au_journal_malformed(a);
            au_detail(a, "journal: positions %" PRIu64 "..%" PRIu64 " are missing (a hole in the "
                      "middle of the journal: corruption); the audit stops there", at,
                      rec.gap_from - 1);
        } else if (r == DLS_NEXT_ERROR) {
            au_set_incomplete(a, at, "journal: transport-error at position %" PRIu64 " (%s)", at,
                           w.reason ? w.reason : "unreadable");
        }
        return; /* blocked: the end of what was written; end: sealed */
    }
}
