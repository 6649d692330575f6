/* Fuzz target for the vocabulary decoder (vocabulary.md) and the pass-mark
 * decoder (judge.md, Journal). Properties:
 *  - decoding never crashes, reads out of bounds or allocates; an error is
 *    one of rules 1–5 with an offset inside the input;
 *  - a valid lease fact re-encodes, and the re-encoding decodes equal and
 *    re-encodes to the same bytes;
 *  - a valid mark record re-encodes through dls_mark_encode_next and decodes
 *    to the same lists. */
#include <stdlib.h>
#include <string.h>

#include "daolease/fact.h"
#include "daolease/mark.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static bool same(const dls_fact *a, const dls_fact *b)
{
    uint32_t k = a->keys;
    return a->kind == b->kind && a->keys == b->keys &&
           (!(k & DLS_K_LEASE) || a->lease == b->lease) &&
           (!(k & DLS_K_SEQ) || a->seq == b->seq) &&
           (!(k & DLS_K_PROPOSAL) || dls_bytes_eq(a->proposal, b->proposal)) &&
           (!(k & DLS_K_SUBJECT) || dls_bytes_eq(a->subject, b->subject)) &&
           (!(k & DLS_K_HOLDER) || dls_bytes_eq(a->holder, b->holder)) &&
           (!(k & DLS_K_MEDIUM) || !memcmp(a->medium, b->medium, DLS_MEDIUM_ID_LEN)) &&
           (!(k & DLS_K_DURATION) || a->duration.ns == b->duration.ns) &&
           (!(k & DLS_K_MAX) || a->max.ns == b->max.ns) &&
           (!(k & DLS_K_READING) || a->reading.ns == b->reading.ns) &&
           (!(k & DLS_K_CAUSE) || a->cause == b->cause) &&
           (!(k & DLS_K_MODE) || a->mode == b->mode) &&
           (!(k & DLS_K_COMMIT) || a->commit == b->commit) &&
           (!(k & DLS_K_REASON) || dls_bytes_eq(a->reason, b->reason));
}

static void fact(const uint8_t *data, size_t size)
{
    dls_fact f, g;
    dls_where w;
    int rc = dls_fact_decode(data, size, &f, &w);
    if (rc) {
        CHECK(rc <= DLS_ERR_RULE1 && rc >= DLS_ERR_RULE5);
        CHECK(w.rule >= 1 && w.rule <= 5 && w.reason && w.offset <= size);
        return;
    }
    if (f.kind == DLS_FACT_NONE)
        return;
    static uint8_t out[DLS_FACT_MAX], again[DLS_FACT_MAX];
    size_t len, len2;
    CHECK(dls_fact_encode(&f, out, sizeof out, &len) == 0);
    CHECK(dls_fact_decode(out, len, &g, NULL) == 0 && same(&f, &g));
    CHECK(dls_fact_encode(&g, again, sizeof again, &len2) == 0);
    CHECK(len == len2 && !memcmp(out, again, len));
    if (f.kind == DLS_FACT_TICK) {
        dls_rule7 r7 = {0};
        CHECK(dls_rule7_observe(&r7, &f) == 0 && dls_rule7_observe(&r7, &g) == 0);
    }
}

#define MAXE 1024
static dls_mark_pos drained[MAXE], errors[MAXE];
static dls_mark_gap gaps[MAXE];
static dls_mark_due due[MAXE];

static void mark(const uint8_t *data, size_t size)
{
    if (dls_mark_classify(data, size) != DLS_MARK_REC_MARK)
        return;
    dls_mark_view v;
    dls_where w;
    if (dls_mark_decode(data, size, &v, &w)) {
        CHECK(w.reason && w.offset <= size);
        return;
    }
    if (v.continued || v.pass > DLS_NS_MAX || v.drained.left > MAXE || v.gaps.left > MAXE ||
        v.due.left > MAXE || v.errors.left > MAXE)
        return;
    dls_mark m = {.pass = v.pass, .now_ns = v.now.ns, .basis = v.basis,
                  .tolerance_ns = v.tolerance.ns, .cadence_ns = v.cadence.ns,
                  .drained = drained, .gaps = gaps, .due = due, .errors = errors,
                  .late = v.late, .restarted = v.restarted};
    dls_mark_list l = v.drained;
    while (dls_mark_next_pos(&l, &drained[m.n_drained]))
        m.n_drained++;
    l = v.gaps;
    while (dls_mark_next_gap(&l, &gaps[m.n_gaps]))
        m.n_gaps++;
    l = v.due;
    while (dls_mark_next_due(&l, &due[m.n_due]))
        m.n_due++;
    l = v.errors;
    while (dls_mark_next_pos(&l, &errors[m.n_errors]))
        m.n_errors++;
    CHECK(m.n_drained == v.drained.left && m.n_gaps == v.gaps.left && m.n_due == v.due.left &&
          m.n_errors == v.errors.left);
    static uint8_t out[DLS_JOURNAL_RECORD_MAX];
    dls_mark_writer wr = {0};
    size_t len, entries = 0;
    int rc;
    while ((rc = dls_mark_encode_next(&m, &wr, out, 300, &len)) == 1) {
        dls_mark_view r;
        CHECK(len <= 300 && dls_mark_decode(out, len, &r, NULL) == 0 && r.pass == m.pass);
        entries += r.drained.left + r.gaps.left + r.due.left + r.errors.left;
    }
    CHECK(rc == 0 || rc == DLS_ERR_TOOBIG);
    if (rc == 0)
        CHECK(entries == m.n_drained + m.n_gaps + m.n_due + m.n_errors);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fact(data, size);
    mark(data, size);
    return 0;
}
