/* Step 3 of the pass, as the audit replays it (judge.md, The pass):
 * every live lease is classified at every mark, the first cause that holds
 * in the judge's order, and the audit's newly due leases are compared with
 * the mark's `due` list (due mismatches). */
#include "audit/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/amark.h"
#include "daolease/attrib.h"

static void add_mismatch(dls_audit *a, dls_audit_mismatch mm)
{
    a->sum.due_mismatch++;
    APUSH(a, a->mismatches, a->sum.n_due_mismatches, a->cap_mismatches, mm);
    audit_lease *l = au_lease_find(a, mm.lease);
    if (l) {
        l->pub.due_mismatches++;
        l->pub.findings |= DLS_AUDIT_F_DUE_MISMATCH;
    }
    const char *j = mm.judge ? dls_cause_name(mm.judge) : "not due";
    const char *u = mm.audit ? dls_cause_name(mm.audit) : "not due";
    au_detail(a, "due mismatch: pass %" PRIu64 ", lease %" PRIu64 ": the judge's due list says "
              "%s, the audit finds %s", mm.pass, mm.lease, j, u);
}

/* Classification of one live lease at the current mark (judge.md step 3):
 * the first cause that holds, among release, cap, policy, silence. */
static dls_cause classify(dls_audit *a, audit_lease *l, const dls_amark *mk, dls_cause judge)
{
    uint64_t now = a->last_now, tol = mk->tolerance_ns;
    if (l->pub.released)
        return DLS_CAUSE_RELEASE;
    if (l->pub.max_ns && dls_passed(l->tenure, now, dls_add_sat(l->pub.max_ns, tol)))
        return DLS_CAUSE_CAP;
    if (judge == DLS_CAUSE_POLICY) /* the owner ended it: only the judge can say so */
        return DLS_CAUSE_POLICY;
    uint64_t dt = dls_add_sat(l->pub.duration_ns, tol);
    audit_medium *m = &a->media[l->medium_ix];
    /* a medium that answered transport-error in this pass: its leases are not
     * judged for silence, until the unbroken failure outlasts duration +
     * tolerance since its first pass */
    if (m->failing_pass == a->last_pass && !dls_passed(m->fail_first_now, now, dt))
        return DLS_CAUSE_NONE;
    if (!dls_passed(l->last_obs, now, dt))
        return DLS_CAUSE_NONE;
    if (l->unknown && !dls_passed(l->resumed, now, l->pub.duration_ns))
        return DLS_CAUSE_NONE;
    return DLS_CAUSE_SILENCE;
}

static int cmp_mismatch(const void *x, const void *y)
{
    const dls_audit_mismatch *p = x, *q = y;
    if (p->pass != q->pass)
        return p->pass < q->pass ? -1 : 1;
    return p->lease < q->lease ? -1 : p->lease > q->lease;
}

/* Classifies one candidate and compares with the judge's due list. */
static void classify_one(dls_audit *a, const dls_amark *mk, audit_lease *l)
{
    uint64_t pass = a->last_pass;
    dls_cause jd = l->jd_pass == pass ? l->jd_cause : DLS_CAUSE_NONE;
    au_sync(a, l);
    if (l->unverifiable) { /* adopt the judge's conclusion */
        if (jd && !l->pending) {
            l->pending = true;
            l->pending_cause = jd;
            l->pub.due = au_point_now(a);
            l->pub.due_cause = jd;
        }
        return;
    }
    dls_cause ad = l->pending ? DLS_CAUSE_NONE : classify(a, l, mk, jd);
    if (ad != jd) {
        dls_audit_mismatch mm = {pass, l->pub.lease, jd, ad};
        add_mismatch(a, mm);
    }
    if (ad) {
        l->pending = true;
        l->pending_cause = ad;
        l->pub.due = au_point_now(a);
        l->pub.due_cause = ad;
    }
}

/* Step 3 at a mark. Only candidates are classified — the leases the
 * deadline heap yields (cap or silence can hold: now > key), those released
 * in this pass, and those the due list names; for every other live lease
 * no cause holds and the due list is silent, so it can be neither newly
 * due nor a mismatch. O(due + released + popped), never O(live). */
void au_classify_all(dls_audit *a, const dls_amark *mk)
{
    uint64_t pass = a->last_pass, now = a->last_now;
    size_t first_mm = a->sum.n_due_mismatches;
    if (mk->tolerance_ns < a->heap_tol) /* keys made with a larger tolerance */
        au_heap_rebuild(a, mk->tolerance_ns);
    a->cur_tol = mk->tolerance_ns;
    /* the judge's due list */
    for (size_t i = 0; i < mk->n_due; i++) {
        const dls_amark_due *d = &mk->due[i];
        const uint64_t *ixp = dls_htab_find_u64(&a->lease_ix, d->lease);
        audit_lease *l = ixp ? a->leases[*ixp] : NULL;
        if (!l || !l->live) {
            dls_audit_mismatch mm = {pass, d->lease, d->cause, DLS_CAUSE_NONE};
            add_mismatch(a, mm);
            continue;
        }
        if (l->jd_pass == pass) {
            au_journal_malformed(a);
            au_detail(a, "journal: pass %" PRIu64 " lists lease %" PRIu64 " twice in due", pass,
                   d->lease);
            continue;
        }
        l->jd_pass = pass;
        l->jd_cause = d->cause;
        if (!l->pub.judge_due_pass) {
            l->pub.judge_due_pass = pass;
            l->pub.judge_due_cause = d->cause;
        }
        au_candidate(a, l);
    }
    /* leases whose deadline's lower bound has passed */
    while (a->n_heap && a->heap[0].key < now) {
        audit_deadline e = au_heap_pop(a);
        audit_lease *l = a->leases[e.ix];
        if (!l->live || l->pending || l->unverifiable)
            continue; /* gone, or never newly due by the audit's rules again */
        au_candidate(a, l);
    }
    /* the audit's own classification of the candidates */
    for (size_t i = 0; i < a->n_cands; i++) {
        size_t ix = a->cands[i];
        audit_lease *l = a->leases[ix];
        classify_one(a, mk, l);
        if (l->live && !l->pending && !l->unverifiable && !l->in_heap) {
            /* not due yet: back with its true deadline, or at the next mark
             * when it is overdue but suspended (a failing medium) */
            uint64_t key = au_deadline(l, a->cur_tol);
            au_heap_push(a, ix, key >= now ? key : now - 1);
        }
    }
#ifdef DLS_AUDIT_CHECK
    for (size_t i = 0; i < a->n_live; i++) {
        audit_lease *l = a->leases[a->live[i]];
        if (l->cand_pass == pass || l->pending || l->unverifiable)
            continue;
        au_sync(a, l);
        if (classify(a, l, mk, DLS_CAUSE_NONE) != DLS_CAUSE_NONE) {
            fprintf(stderr, "DLS_AUDIT_CHECK: lease %llu due at pass %llu missed\n",
                    (unsigned long long)l->pub.lease, (unsigned long long)pass);
            abort();
        }
    }
#endif
    a->n_cands = 0;
    /* this pass's mismatches in ascending lease id */
    if (a->sum.n_due_mismatches > first_mm)
        qsort(a->mismatches + first_mm, a->sum.n_due_mismatches - first_mm,
              sizeof *a->mismatches, cmp_mismatch);
}
