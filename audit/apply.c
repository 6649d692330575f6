/* Step 2 of the pass, record by record, as the audit replays it (judge.md,
 * The pass; attribution.md, gates 1 and 2; vocabulary.md, seq and rule 6).
 * Mirrors judge/apply.c: each record drained from a lease-fact medium is
 * attributed by its medium's resolver, decoded, stamped with its pass's now
 * and applied, and a record that counts for nothing is counted under one
 * reason. */
#include "audit/internal.h"

#include <stdlib.h>
#include <string.h>

#include "audit/amark.h"
#include "daolease/attrib.h"

/* ---- the media: one record ------------------------------------------------- */

static void late_renewal_of(dls_audit *a, dls_bytes holder)
{
    uint64_t ix;
    if (au_ix_get(&a->holder_ix, holder.p, holder.n, &ix)) {
        a->late_renewals[ix].n++;
        return;
    }
    uint8_t *copy = malloc(holder.n + 1);
    if (!copy) {
        a->nomem = true;
        return;
    }
    memcpy(copy, holder.p, holder.n);
    dls_audit_holder_count hc = {{copy, holder.n}, 1};
    size_t n = a->sum.n_late_renewals;
    if (au_grow((void **)&a->late_renewals, n, &a->cap_late_renewals, sizeof *a->late_renewals) ||
        au_ix_set(&a->holder_ix, holder.p, holder.n, n)) {
        free(copy);
        a->nomem = true;
        return;
    }
    a->late_renewals[a->sum.n_late_renewals++] = hc;
}

/* The lease a renewal or release names, when it may count for it. One
 * check, in the judge's order (judge/apply.c, evidence_for), so that a fact
 * failing several conditions lands under the same counter in both: unknown
 * lease, then gate 2 (only the registered medium), then gate 1 (only the
 * lease's holder). */
static audit_lease *evidence_for(dls_audit *a, size_t mix, dls_bytes author, uint64_t id)
{
    audit_lease *l = au_lease_find(a, id);
    if (!l || !l->live) {
        a->ignored[IGNORED_UNKNOWN_LEASE]++;
        return NULL;
    }
    if (l->medium_ix != mix) { /* gate 2 */
        a->ignored[IGNORED_MISPLACED]++;
        return NULL;
    }
    if (!dls_bytes_eq(author, l->pub.holder)) { /* gate 1 */
        a->ignored[IGNORED_WRONG_AUTHOR]++;
        return NULL;
    }
    return l;
}

static void apply_renewal(dls_audit *a, size_t mix, const dls_attribution *at, const dls_fact *f)
{
    audit_lease *l = evidence_for(a, mix, at->author, f->lease);
    if (!l)
        return;
    if (f->seq <= l->last_seq) {
        a->ignored[IGNORED_REPLAYED]++;
        return;
    }
    /* counted: judge.md step 2; late: more than half the duration after the
     * previous observation (integer ns: d > floor(duration / 2)). */
    uint64_t now = a->last_now;
    bool late = dls_passed(l->last_obs, now, l->pub.duration_ns / 2);
    au_sync(a, l); /* a gap drained before this record: unknown, then known */
    l->last_seq = f->seq;
    l->last_obs = now;
    l->unknown = false;
    l->pub.renewals++;
    if (a->set.keep_renewal_points) {
        if (au_grow((void **)&l->points, (size_t)l->pub.renewals - 1, &l->cap_points,
                 sizeof *l->points))
            a->nomem = true;
        else
            l->points[l->pub.renewals - 1] = au_point_now(a);
        l->pub.renewal_points = l->points;
    }
    if (late) {
        l->pub.late_renewals++;
        late_renewal_of(a, l->pub.holder);
    }
}

static void apply_release(dls_audit *a, size_t mix, const dls_attribution *at, const dls_fact *f)
{
    audit_lease *l = evidence_for(a, mix, at->author, f->lease);
    if (!l)
        return;
    if (l->pub.released) { /* rule 6: the first release observed stands */
        a->defective[DEFECTIVE_RULE6]++;
        return;
    }
    l->pub.released = true;
    au_candidate(a, l); /* due by release at this mark */
    l->pub.commit = (f->keys & DLS_K_COMMIT) && f->commit;
}

static void apply_proposal(dls_audit *a, size_t mix, const dls_attribution *at, const dls_fact *f)
{
    /* key: medium index (8 bytes) then the author's name */
    uint8_t key[8 + DLS_ID_MAX];
    size_t an = at->author.n > DLS_ID_MAX ? DLS_ID_MAX : at->author.n;
    for (int i = 0; i < 8; i++)
        key[i] = (uint8_t)((uint64_t)mix >> (8 * i));
    memcpy(key + 8, at->author.p, an);
    uint64_t last = 0;
    if (au_ix_get(&a->proposal_seq, key, 8 + an, &last) && f->seq <= last) {
        a->ignored[IGNORED_REPLAYED]++;
        return;
    }
    if (au_ix_set(&a->proposal_seq, key, 8 + an, f->seq))
        a->nomem = true;
}

/* One fact of an attributed record (a single envelope, a bare fact under a
 * medium resolver, or one fact of a verified batch), as if it stood alone. */
static void apply_fact(dls_audit *a, size_t mix, const dls_attribution *at, dls_bytes fact)
{
    dls_fact f;
    dls_where w = {0};
    int rc = dls_fact_decode(fact.p, fact.n, &f, &w);
    if (rc) {
        /* the rule the decoder names, as the judge counts it (rule 1 when
         * it names none) */
        int rule = w.rule >= 1 && w.rule <= DEFECTIVE_N ? w.rule : 1;
        a->defective[rule - 1]++;
        return;
    }
    switch (f.kind) {
    case DLS_FACT_NONE:
        a->ignored[IGNORED_NOT_LEASE_FACT]++;
        break;
    case DLS_FACT_RENEWAL:
        apply_renewal(a, mix, at, &f);
        break;
    case DLS_FACT_RELEASE:
        apply_release(a, mix, at, &f);
        break;
    case DLS_FACT_PROPOSAL:
        apply_proposal(a, mix, at, &f);
        break;
    default: /* grants, refusals, lapsed and ticks are not read from lease-fact media */
        a->ignored[IGNORED_MISPLACED]++;
        break;
    }
}

/* One record of a lease-fact medium. A batch envelope (attribution.md
 * revision 4) is verified once for all its facts; each fact then counts as
 * if it stood alone at (position, index), in array order — a defective one
 * does not stop the others. A record attributed to nobody is one forged
 * record, batch or not, as the judge counts it. Every record is verified
 * exactly once: the audit reads each medium once, in order (verified ahead
 * on the audit's threads, applied here in that order: audit/ahead.h). */
void au_apply_record(dls_audit *a, size_t mix, const dls_attribution *at, dls_facts it)
{
    a->sum.media_records++;
    if (at->kind == DLS_REC_SEAL)
        return;
    if (!at->attributed) {
        switch (at->why) {
        case DLS_WHY_BARE_FACT: a->forged[FORGED_BARE_FACT]++; break;
        case DLS_WHY_SIGNATURE: a->forged[FORGED_SIGNATURE]++; break;
        case DLS_WHY_UNKNOWN_AUTHOR: a->forged[FORGED_UNKNOWN_AUTHOR]++; break;
        case DLS_WHY_WRONG_KEY_KIND: a->forged[FORGED_WRONG_KEY_KIND]++; break;
        default: a->forged[FORGED_MALFORMED]++; break;
        }
        return;
    }
    dls_bytes fact;
    while (dls_facts_next(&it, &fact, NULL))
        apply_fact(a, mix, at, fact);
}
