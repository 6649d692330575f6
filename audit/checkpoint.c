/* The audit's check of checkpoints (judge.md rev 4, Checkpoints, Audit;
 * issue 17 item 4; docs/checkpoints.md).
 *
 * A commit record {"dao.judge/checkpoint": n, "dao.judge/digest": …,
 * "dao.judge/records": …} is met on the journal right after pass n's
 * records, when the audit's own replay stands after pass n. With a
 * checkpoint folder, the file <n as 20 digits>.dls there is read: its
 * digest and record count must be the commit's, its header must name this
 * journal, pass n and the audit's highest lease id, and its lease records
 * must be exactly the audit's live leases with the same subject, holder,
 * mode, duration, max, tenure start and last counted seq. Any difference
 * is a `journal` failure (checkpoint mismatch). A file not in the folder
 * (pruned) is counted, never a failure. The audit's state comes from its
 * own replay (audit/), never from the judge's ledger code. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "audit/internal.h"
#include "daolease/checkpoint.h"

static void mismatch(dls_audit *a, uint64_t pass, uint64_t position, const char *what,
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

bool au_checkpoint_commit(dls_audit *a, const uint8_t *fact, size_t n, uint64_t position)
{
    uint64_t pass = 0, records = 0;
    uint8_t want[DLS_CKPT_DIGEST_LEN];
    if (!dls_ckpt_commit_decode(fact, n, &pass, want, &records))
        return false;
    if (!a->set.checkpoints)
        return false; /* counted as ignored, as before */
    size_t dl = strlen(a->set.checkpoints);
    char *path = malloc(dl + 32);
    if (!path) {
        a->nomem = true;
        return true;
    }
    snprintf(path, dl + 32, "%s/%020" PRIu64 ".dls", a->set.checkpoints, pass);
    dls_medium *m = NULL;
    dls_cursor *c = NULL;
    if (dls_medium_open(&m, path, DLS_OPEN_READ, NULL, NULL) != 0) {
        a->sum.checkpoints_missing++;
        free(path);
        return true;
    }
    free(path);
    a->sum.checkpoints_checked++;
    if (dls_cursor_new(&c, m, 0)) {
        dls_medium_del(m);
        a->nomem = true;
        return true;
    }
    crypto_generichash_state h;
    crypto_generichash_init(&h, NULL, 0, DLS_CKPT_DIGEST_LEN);
    uint64_t count = 0, leases = 0;
    const char *diff = NULL;
    uint64_t diff_lease = 0;
    dls_record rec;
    while (dls_cursor_next(c, &rec, NULL) == DLS_NEXT_OK) {
        uint8_t le[4] = {(uint8_t)rec.n, (uint8_t)(rec.n >> 8), (uint8_t)(rec.n >> 16),
                         (uint8_t)(rec.n >> 24)};
        crypto_generichash_update(&h, le, 4);
        crypto_generichash_update(&h, rec.p, rec.n);
        count++;
        if (diff)
            continue;
        dls_ckpt_rec r;
        if (dls_ckpt_decode(rec.p, rec.n, &r, NULL)) {
            diff = "a malformed record";
            continue;
        }
        if ((count == 1) != (r.kind == DLS_CKPT_HEADER)) {
            diff = "records out of order";
        } else if (r.kind == DLS_CKPT_HEADER) {
            if (r.pass != pass)
                diff = "the header's pass";
            else if (memcmp(r.journal, a->sum.journal_id, DLS_MEDIUM_ID_LEN) != 0)
                diff = "the header's journal";
            else if (r.highest != a->max_lease)
                diff = "the highest lease id";
            else if (a->have_mark && r.now_ns != a->last_now)
                diff = "the header's now";
        } else if (r.kind == DLS_CKPT_LEASE) {
            leases++;
            if ((diff = lease_diff(a, &r)) != NULL)
                diff_lease = r.id;
        }
    }
    dls_cursor_del(c);
    dls_medium_del(m);
    uint8_t got[DLS_CKPT_DIGEST_LEN];
    crypto_generichash_final(&h, got, sizeof got);
    if (count != records || sodium_memcmp(got, want, sizeof got) != 0)
        mismatch(a, pass, position, "its digest or record count is not the commit record's", 0);
    else if (diff)
        mismatch(a, pass, position, diff, diff_lease);
    else if (leases != a->n_live)
        mismatch(a, pass, position, "the number of live leases", 0);
    return true;
}
