/* What the audit reports beside the per-lease verdicts: forged authors and
 * the summary assembled at the end of the run (the warnings and failure
 * details themselves are kept by audit/message.c). */
#include "audit/internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "audit/amark.h"
#include "daolease/attrib.h"

void au_forged_author(dls_audit *a, dls_bytes who)
{
    if (!who.n || a->sum.n_forged_authors >= 16)
        return;
    for (size_t i = 0; i < a->sum.n_forged_authors; i++)
        if (dls_bytes_eq(a->forged_authors[i], who))
            return;
    uint8_t *copy = malloc(who.n + 1);
    if (!copy || au_grow((void **)&a->forged_authors, a->sum.n_forged_authors,
                      &a->cap_forged_authors, sizeof *a->forged_authors)) {
        free(copy);
        a->nomem = true;
        return;
    }
    memcpy(copy, who.p, who.n);
    copy[who.n] = 0;
    dls_bytes b = {copy, who.n};
    a->forged_authors[a->sum.n_forged_authors++] = b;
}

/* ---- finishing ------------------------------------------------------------ */

static int cmp_lease(const void *x, const void *y)
{
    const audit_lease *const *p = x, *const *q = y;
    return (*p)->pub.lease < (*q)->pub.lease ? -1 : (*p)->pub.lease > (*q)->pub.lease;
}

static int cmp_holder(const void *x, const void *y)
{
    const dls_audit_holder_count *p = x, *q = y;
    size_t n = p->holder.n < q->holder.n ? p->holder.n : q->holder.n;
    int c = n ? memcmp(p->holder.p, q->holder.p, n) : 0;
    if (c)
        return c;
    return p->holder.n < q->holder.n ? -1 : p->holder.n > q->holder.n;
}

void au_finish(dls_audit *a)
{
    static const char *forged_names[FORGED_N] = {"signature", "unknown-author",
                                                 "wrong-key-kind", "bare-fact", "malformed"};
    static const char *defective_names[DEFECTIVE_N] = {"rule1", "rule2", "rule3", "rule4",
                                                       "rule5", "rule6", "rule7"};
    static const char *ignored_names[IGNORED_N] = {"not-a-lease-fact", "unknown-lease",
                                                   "wrong-author", "misplaced", "replayed"};
    size_t k = 0;
    a->sum.forged = a->counts + k;
    for (int i = 0; i < FORGED_N; i++)
        if (a->forged[i])
            a->counts[k++] = (dls_audit_count){forged_names[i], a->forged[i]};
    a->sum.n_forged = (size_t)(a->counts + k - a->sum.forged);
    a->sum.defective = a->counts + k;
    for (int i = 0; i < DEFECTIVE_N; i++)
        if (a->defective[i])
            a->counts[k++] = (dls_audit_count){defective_names[i], a->defective[i]};
    a->sum.n_defective = (size_t)(a->counts + k - a->sum.defective);
    a->sum.ignored = a->counts + k;
    for (int i = 0; i < IGNORED_N; i++)
        if (a->ignored[i])
            a->counts[k++] = (dls_audit_count){ignored_names[i], a->ignored[i]};
    a->sum.n_ignored = (size_t)(a->counts + k - a->sum.ignored);

    a->sum.journal = a->sum.journal_forged + a->sum.journal_malformed;
    a->sum.last_pass = a->last_pass;
    a->sum.last_mark = au_point_now(a);

    /* media given but never named by the journal */
    for (size_t i = 0; i < a->n_media && !(a->sum.journal_first && !a->sum.start_checkpoint); i++)
        if (a->media[i].m && !a->media[i].named)
            APUSH(a, a->unused, a->sum.n_unused_media, a->cap_unused, a->media[i].given_ix);

    if (a->n_leases) /* qsort's base may not be NULL, even for 0 elements */
        qsort(a->leases, a->n_leases, sizeof *a->leases, cmp_lease);
    for (size_t i = 0; i < a->n_leases; i++) {
        audit_lease *l = a->leases[i];
        dls_audit_lease *p = &l->pub;
        if (l->live)
            au_sync(a, l); /* a gap after its last reading */
        uint32_t f = p->findings;
        if (f & DLS_AUDIT_F_DOUBLE_GRANT)
            p->verdict = DLS_AUDIT_DOUBLE_GRANT;
        else if (f & DLS_AUDIT_F_UNJUSTIFIED_LAPSE)
            p->verdict = DLS_AUDIT_UNJUSTIFIED_LAPSE;
        else if (f & DLS_AUDIT_F_DUE_MISMATCH)
            p->verdict = DLS_AUDIT_DUE_MISMATCH;
        else if (f & DLS_AUDIT_F_UNVERIFIABLE)
            p->verdict = DLS_AUDIT_UNVERIFIABLE;
        else if (l->live)
            p->verdict = DLS_AUDIT_LIVE;
        else
            p->verdict = DLS_AUDIT_OK;
        p->cause = p->lapsed.pass ? p->lapsed_cause : p->due.pass ? p->due_cause : DLS_CAUSE_NONE;
        if (f & DLS_AUDIT_F_UNVERIFIABLE)
            APUSH(a, a->unver_leases, a->sum.n_unverifiable_leases, a->cap_unver_leases, p->lease);
        if (a->set.keep_renewal_points)
            p->renewal_points = l->points;
    }
    if (a->sum.n_late_renewals)
        qsort(a->late_renewals, a->sum.n_late_renewals, sizeof *a->late_renewals, cmp_holder);

    /* the journal's front is gone and no checkpoint covers it: nothing was
     * replayed, and the failure detail says why (start.c) */
    bool unreplayed = (a->sum.journal_first || a->set.from_checkpoint) && !a->sum.start_checkpoint;
    if (unreplayed)
        ;
    else if (!a->sum.journal_records)
        au_warn(a, "the journal holds no records: there is nothing to audit");
    else if (!a->sum.passes && !a->sum.start_checkpoint)
        au_warn(a, "the journal holds no pass mark from the grantor: no pass could be replayed");
    if (a->sum.journal_forged && a->sum.journal_forged == a->sum.journal_records) {
        char who[160] = "";
        if (a->sum.n_forged_authors)
            au_printable(a->forged_authors[0].p, a->forged_authors[0].n, who, sizeof who);
        au_warn(a, "no journal record verifies under the grantor's key%s%s%s", who[0] ? " (records claim author '" : "", who, who[0] ? "': another grantor's journal, or the wrong keyring?)" : "");
    }
    if (a->warnings_dropped)
        au_warn(a, "(%" PRIu64 " more warnings not shown)", a->warnings_dropped);
    if (a->details_dropped)
        au_detail(a, "(%" PRIu64 " more failures not shown)", a->details_dropped);

    /* publish the arrays */
    dls_audit_summary *s = &a->sum;
    s->late_reclaims = a->late_reclaims;
    s->late_renewals = a->late_renewals;
    s->cadence_overruns_unflagged = a->unflagged;
    s->due_mismatches = a->mismatches;
    s->unverifiable_passes = a->unver_passes;
    s->unverifiable_leases = a->unver_leases;
    s->gaps = a->gaps;
    s->transport_errors = a->terrs;
    s->restarts = a->restarts;
    s->takeovers = a->takeovers;
    s->basis_changes = a->basis_changes;
    s->bases = a->bases;
    s->missing_media = (const uint8_t(*)[DLS_MEDIUM_ID_LEN])a->missing;
    s->unused_media = a->unused;
    s->warnings = (const char *const *)a->warnings;
    s->failure_details = (const char *const *)a->details;
    s->forged_authors = a->forged_authors;
}

void au_journal_malformed(dls_audit *a)
{
    a->sum.journal_malformed++;
}
