/* Audit replay (judge.md "Audit replay"): re-executes the judge's
 * classification from the journal and the media alone.
 *
 * The replay is written from the specification, independently of the
 * judge's ledger: it shares only the codec (facts, marks, envelopes,
 * media). Its files mirror the judge's: ledger.c (its own ledger),
 * apply.c (step 2, record by record, checks in the judge's order),
 * classify.c (step 3 and the due comparison), replay.c (one pass mark),
 * journal.c (reading the journal), report.c (the summary), svg.c (the
 * picture). This file is the public surface: assembly of a run, accessors
 * and freeing. */
#include "audit/internal.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "audit/amark.h"
#include "daolease/attrib.h"

/* ---- public helpers ------------------------------------------------------- */

const char *dls_audit_verdict_name(dls_audit_verdict v)
{
    switch (v) {
    case DLS_AUDIT_OK: return "ok";
    case DLS_AUDIT_LIVE: return "live";
    case DLS_AUDIT_UNVERIFIABLE: return "unverifiable";
    case DLS_AUDIT_DUE_MISMATCH: return "due_mismatch";
    case DLS_AUDIT_UNJUSTIFIED_LAPSE: return "unjustified_lapse";
    case DLS_AUDIT_DOUBLE_GRANT: return "double_grant";
    }
    return NULL;
}

void dls_audit_settings_default(dls_audit_settings *s)
{
    if (!s)
        return;
    memset(s, 0, sizeof *s); /* every member not named below: zero, NULL (checkpoints) */
    s->max_media = 1024;
    s->keep_renewal_points = true;
    s->threads = 1;
}

size_t dls_audit_lease_count(const dls_audit *a)
{
    return a ? a->n_leases : 0;
}

const dls_audit_lease *dls_audit_lease_at(const dls_audit *a, size_t i)
{
    if (!a || i >= a->n_leases)
        return NULL;
    return &a->leases[i]->pub;
}

const dls_audit_summary *dls_audit_summary_of(const dls_audit *a)
{
    return a ? &a->sum : NULL;
}

int dls_audit_exit_status(const dls_audit *a)
{
    if (!a)
        return 3;
    if (a->sum.incomplete)
        return 3;
    const dls_audit_summary *s = &a->sum;
    return (s->unjustified_lapse || s->due_mismatch || s->double_grant || s->journal) ? 1 : 0;
}

void dls_audit_del(dls_audit *a)
{
    if (!a)
        return;
    for (size_t i = 0; i < a->n_leases; i++) {
        free(a->leases[i]->buf);
        free(a->leases[i]->points);
        free(a->leases[i]);
    }
    free(a->leases);
    dls_htab_free(&a->lease_ix);
    free(a->live);
    free(a->heap);
    free(a->cands);
    for (size_t i = 0; i < a->n_subjects; i++)
        free(a->subjects[i].bytes);
    free(a->subjects);
    dls_htab_free(&a->subject_ix);
    for (size_t i = 0; i < a->n_media; i++) {
        dls_cursor_del(a->media[i].cur);
        dls_resolver_del(a->media[i].res);
    }
    free(a->media);
    dls_htab_free(&a->medium_ix);
    dls_htab_free(&a->proposal_seq);
    dls_htab_free(&a->holder_ix);
    free(a->late_reclaims);
    for (size_t i = 0; i < a->sum.n_late_renewals; i++)
        free((void *)a->late_renewals[i].holder.p);
    free(a->late_renewals);
    free(a->unflagged);
    free(a->mismatches);
    free(a->unver_passes);
    free(a->unver_leases);
    free(a->gaps);
    free(a->terrs);
    free(a->restarts);
    free(a->takeovers);
    free(a->basis_changes);
    for (size_t i = 0; i < a->sum.n_bases; i++)
        free((void *)a->bases[i].name.p);
    free(a->bases);
    free(a->missing);
    free(a->unused);
    for (size_t i = 0; i < a->sum.n_warnings; i++)
        free(a->warnings[i]);
    free(a->warnings);
    for (size_t i = 0; i < a->sum.n_failure_details; i++)
        free(a->details[i]);
    free(a->details);
    for (size_t i = 0; i < a->sum.n_forged_authors; i++)
        free((void *)a->forged_authors[i].p);
    free(a->forged_authors);
    free(a->incomplete);
    free(a);
}

static void count_undrained(dls_audit *a)
{
    for (size_t i = 0; i < a->n_media; i++) {
        audit_medium *m = &a->media[i];
        if (!m->m || m->read_stopped || !m->named)
            continue;
        /* positions before the last drained one were read by read_span (replay.c) */
        for (;;) {
            dls_record rec;
            dls_next r = dls_cursor_next(m->cur, &rec, NULL);
            if (r == DLS_NEXT_OK)
                a->sum.undrained_records++;
            else if (r != DLS_NEXT_GAP)
                break;
        }
    }
}

/* ---- assembly ----------------------------------------------------------- */

static int valid_name(const char *s)
{
    size_t n = strlen(s);
    if (n < 1 || n > DLS_ID_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 0x21 && c <= 0x7e) || c >= 0x80))
            return 0;
    }
    return 1;
}

static int where(dls_where *w, int rc, uint64_t offset, const char *reason)
{
    if (w) {
        memset(w, 0, sizeof *w);
        w->offset = offset;
        w->reason = reason;
    }
    return rc;
}

static int setup_media(dls_audit *a, const uint8_t *journal_id, dls_keyring *kr,
                       const dls_audit_medium *media, size_t n, dls_where *w)
{
    for (size_t i = 0; i < n; i++) {
        if (!media[i].medium)
            return where(w, DLS_ERR_INVAL, i, "a medium is NULL");
        if (media[i].party && !valid_name(media[i].party))
            return where(w, DLS_ERR_INVAL, i, "a party name is not a valid name");
        const uint8_t *id = dls_medium_id(media[i].medium);
        if (!memcmp(id, journal_id, DLS_MEDIUM_ID_LEN))
            return where(w, DLS_ERR_DUPLICATE, i, "the journal is also given as a medium");
        if (au_ix_get(&a->medium_ix, id, DLS_MEDIUM_ID_LEN, NULL))
            return where(w, DLS_ERR_DUPLICATE, i, "two media given share a medium id");
        int rc = au_grow((void **)&a->media, a->n_media, &a->cap_media, sizeof *a->media);
        if (rc)
            return rc;
        audit_medium *m = &a->media[a->n_media];
        memset(m, 0, sizeof *m);
        memcpy(m->id, id, DLS_MEDIUM_ID_LEN);
        m->m = media[i].medium;
        m->given_ix = i;
        a->n_media++;
        if (media[i].party)
            rc = dls_resolver_new_medium(&m->res, id, media[i].party, kr);
        else
            rc = dls_resolver_new_signed(&m->res, id, kr);
        if (rc)
            return where(w, rc, i, "the medium's resolver could not be made");
        if ((rc = dls_cursor_new(&m->cur, m->m, 0)))
            return where(w, rc, i, "a cursor on the medium could not be made");
        if ((rc = au_ix_set(&a->medium_ix, id, DLS_MEDIUM_ID_LEN, i)))
            return rc;
    }
    return 0;
}

int dls_audit_run(dls_audit **out, const dls_audit_settings *s, dls_medium *journal,
                  const char *grantor, dls_keyring *kr, const dls_audit_medium *media,
                  size_t n_media, dls_where *w)
{
    return au_run(out, s, NULL, journal, grantor, kr, media, n_media, w);
}

int au_run(dls_audit **out, const dls_audit_settings *s, const au_hooks *hooks,
           dls_medium *journal, const char *grantor, dls_keyring *kr,
           const dls_audit_medium *media, size_t n_media, dls_where *w)
{
    if (out)
        *out = NULL;
    if (!out || !journal || !grantor || !kr || (n_media && !media))
        return where(w, DLS_ERR_INVAL, 0, "a required argument is NULL");
    if (!valid_name(grantor))
        return where(w, DLS_ERR_INVAL, 0, "the grantor's name is not a valid name");
    dls_audit_settings set;
    dls_audit_settings_default(&set);
    if (s)
        set = *s;
    if (n_media > set.max_media)
        return where(w, DLS_ERR_TOO_MANY_MEDIA, n_media, "more media than max_media");
    if (!dls_keyring_count(kr))
        return where(w, DLS_ERR_EMPTY_KEYRING, 0, "the keyring is empty");
    dls_key_kind kind;
    const uint8_t *key;
    if (dls_keyring_lookup(kr, (const uint8_t *)grantor, strlen(grantor), &kind, &key))
        return where(w, DLS_ERR_NOTFOUND, 0, "the grantor is not in the keyring");
    if (kind != DLS_KEY_ED25519)
        return where(w, DLS_ERR_KEYKIND, 0, "the grantor's key is not Ed25519");
    if (sodium_init() < 0)
        return where(w, DLS_ERR_SODIUM, 0, "libsodium could not be initialised");

    dls_audit *a = calloc(1, sizeof *a);
    if (!a)
        return DLS_ERR_NOMEM;
    a->set = set;
    a->hooks = hooks;
    dls_htab_init(&a->lease_ix);
    dls_htab_init(&a->subject_ix);
    dls_htab_init(&a->medium_ix);
    dls_htab_init(&a->proposal_seq);
    dls_htab_init(&a->holder_ix);
    memcpy(a->sum.journal_id, dls_medium_id(journal), DLS_MEDIUM_ID_LEN);

    journal_state js;
    memset(&js, 0, sizeof js);
    js.grantor = grantor;
    js.grantor_len = strlen(grantor);
    dls_cursor *jcur = NULL;
    int rc = setup_media(a, a->sum.journal_id, kr, media, n_media, w);
    if (!rc)
        rc = dls_resolver_new_signed(&js.res, a->sum.journal_id, kr);
    if (!rc)
        rc = dls_rule6_new(&js.rule6);
    if (!rc)
        rc = dls_cursor_new(&jcur, journal, 0);
    if (!rc)
        rc = au_pool_new(&a->pool, set.threads);
    if (!rc)
        rc = au_ahead_new(&a->mwin, a->pool, true);
    if (!rc)
        rc = au_ahead_new(&js.win, a->pool, false);
    if (!rc) {
        /* a journal whose first records are gone starts at a checkpoint */
        if (au_start(a, &js, journal, &jcur) && !a->nomem)
            au_read_journal(a, &js, jcur);
        if (!a->nomem)
            au_flush_mark(a, &js);
        if (!a->nomem) {
            count_undrained(a);
            au_finish(a);
        }
        if (a->nomem)
            rc = DLS_ERR_NOMEM;
    }
    dls_amark_free(&js.open);
    /* the windows first (no record may stay with a worker), then the workers */
    au_ahead_del(js.win);
    au_ahead_del(a->mwin);
    a->mwin = NULL;
    au_pool_del(a->pool);
    a->pool = NULL;
    dls_cursor_del(jcur);
    dls_rule6_del(js.rule6);
    dls_resolver_del(js.res);
    /* cursors on the caller's media are released now: the media are borrowed
     * for the call only */
    for (size_t i = 0; i < a->n_media; i++) {
        dls_cursor_del(a->media[i].cur);
        a->media[i].cur = NULL;
        dls_resolver_del(a->media[i].res);
        a->media[i].res = NULL;
        a->media[i].m = NULL; /* borrowed for the call only */
    }
    if (rc) {
        dls_audit_del(a);
        return rc;
    }
    *out = a;
    return 0;
}
