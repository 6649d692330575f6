/* The audit's check of checkpoints (judge.md rev 4, Checkpoints, Audit;
 * docs/checkpoints.md).
 *
 * A commit record {"dao.judge/checkpoint": n, "dao.judge/digest": …,
 * "dao.judge/records": …} is met on the journal right after pass n's
 * records, when the audit's own replay stands after pass n. With a
 * checkpoint folder, the file <n as 20 digits>.dls there is read: its
 * digest and record count must be the commit's, its header must name this
 * journal, pass n and the audit's highest lease id, and its lease records
 * must be exactly the audit's live leases with the same subject, holder,
 * mode, duration, max, tenure start and last counted seq. Any difference
 * of such a file is a `journal` failure (checkpoint mismatch). A file that
 * cannot be read, or whose digest or count is not the commit's, is not
 * that checkpoint (judge.md: it does not exist; a judge skips it): it is
 * reported as damaged, never a failure. A file not in the folder
 * (pruned) is counted, never a failure. The audit's state comes from its
 * own replay (audit/), never from the judge's ledger code. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "audit/internal.h"
#include "daolease/checkpoint.h"

void au_checkpoint_mismatch(dls_audit *a, uint64_t pass, uint64_t position, const char *what,
                            uint64_t lease)
{
    a->sum.checkpoints_mismatch++;
    au_journal_malformed(a);
    if (lease)
        au_detail(a, "journal: position %" PRIu64 ": checkpoint %" PRIu64
                  " differs from the replay: %s (lease %" PRIu64 ")", position, pass, what, lease);
    else
        au_detail(a, "journal: position %" PRIu64 ": checkpoint %" PRIu64
                  " differs from the replay: %s", position, pass, what);
}

void au_checkpoint_damaged(dls_audit *a, uint64_t pass, uint64_t position, const char *what)
{
    a->sum.checkpoints_damaged++;
    au_warn(a, "journal: position %" PRIu64 ": checkpoint %" PRIu64 " is damaged: %s; it is "
            "not the committed checkpoint (judge.md, Checkpoints: it does not exist, a judge "
            "skips it): reported, not a failure", position, pass, what);
}

static bool same_bytes(dls_bytes x, dls_bytes y)
{
    return x.n == y.n && (x.n == 0 || memcmp(x.p, y.p, x.n) == 0);
}

/* The first difference between lease record r and the audit's lease. */
static const char *lease_diff(dls_audit *a, const dls_ckpt_rec *r)
{
    audit_lease *l = au_lease_find(a, r->id);
    if (!l || !l->live)
        return "a lease the replay does not hold live";
    const dls_audit_lease *p = &l->pub;
    if (!same_bytes(p->subject, r->subject))
        return "subject";
    if (!same_bytes(p->holder, r->holder))
        return "holder";
    if (p->mode != r->mode)
        return "mode";
    if (p->duration_ns != r->duration.ns)
        return "duration";
    if (p->max_ns != (r->has_max ? r->max.ns : 0))
        return "max";
    if (l->tenure != r->start)
        return "tenure start";
    if (l->last_seq != r->seq)
        return "last counted seq";
    return NULL;
}

/* The comparison, record by record (a dls_checkpoint_read callback). */
typedef struct cmp_state {
    dls_audit *a;
    uint64_t pass;
    uint64_t leases;
    const char *diff;
    uint64_t diff_lease;
} cmp_state;

static int compare_record(void *user, const dls_ckpt_rec *r)
{
    cmp_state *st = user;
    dls_audit *a = st->a;
    if (st->diff)
        return 0;
    if (r->kind == DLS_CKPT_HEADER) {
        if (r->pass != st->pass)
            st->diff = "the header's pass";
        else if (memcmp(r->journal, a->sum.journal_id, DLS_MEDIUM_ID_LEN) != 0)
            st->diff = "the header's journal";
        else if (r->highest != a->max_lease)
            st->diff = "the highest lease id";
        else if (a->have_mark && r->now_ns != a->last_now)
            st->diff = "the header's now";
    } else if (r->kind == DLS_CKPT_LEASE) {
        st->leases++;
        if ((st->diff = lease_diff(a, r)) != NULL)
            st->diff_lease = r->id;
    }
    return 0;
}

bool au_checkpoint_commit(dls_audit *a, const uint8_t *fact, size_t n, uint64_t position)
{
    uint64_t pass = 0, records = 0;
    uint8_t want[DLS_CKPT_DIGEST_LEN];
    if (!dls_ckpt_commit_decode(fact, n, &pass, want, &records))
        return false;
    if (!a->set.checkpoints)
        return false; /* counted as ignored, as before */
    if (a->have_start_commit && position == a->start_commit_pos)
        return true; /* the checkpoint the audit started from (start.c): verified there */
    cmp_state st = {a, pass, 0, NULL, 0};
    uint8_t got[DLS_CKPT_DIGEST_LEN];
    uint64_t count = 0;
    dls_where w = {0};
    int rc = dls_checkpoint_read(a->set.checkpoints, pass, compare_record, &st, got, &count, &w);
    if (rc == DLS_ERR_NOTFOUND) {
        a->sum.checkpoints_missing++; /* pruned: never a failure */
        return true;
    }
    if (rc == DLS_ERR_NOMEM) {
        a->nomem = true;
        return true;
    }
    if (rc && rc != DLS_ERR_RECORD && count == 0) {
        /* there, but it cannot be opened or read at all */
        au_checkpoint_damaged(a, pass, position, "its file cannot be read");
        return true;
    }
    if (count != records || sodium_memcmp(got, want, sizeof got) != 0) {
        au_checkpoint_damaged(a, pass, position,
                              "its digest or record count is not the commit record's");
        return true;
    }
    /* readable and digest-matching: the committed checkpoint itself, so
     * any difference from the replay is the judge's (a failure) */
    a->sum.checkpoints_checked++;
    if (rc)
        au_checkpoint_mismatch(a, pass, position, "a malformed record", 0);
    else if (st.diff)
        au_checkpoint_mismatch(a, pass, position, st.diff, st.diff_lease);
    else if (st.leases != a->n_live)
        au_checkpoint_mismatch(a, pass, position, "the number of live leases", 0);
    return true;
}
