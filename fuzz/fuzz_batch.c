/* Fuzz target: batch envelopes (attribution.md revision 4). Each input is
 * used twice.
 *
 * 1. As one record: through dls_resolver_attribute_facts under a signed
 *    resolver, a medium resolver and none, the one-fact call, the
 *    unverified iterator and the dump rows. Invariants: every slice lies
 *    inside the input; the iterator yields exactly `count` facts with
 *    indexes 0, 1, … when attributed and none otherwise; the one-fact call
 *    never attributes a batch; the dump gives one row per fact of a
 *    well-formed batch, each with its index, verified as the resolver says.
 *
 * 2. As facts: the input is cut into 1 … 64 facts (the first byte's low six
 *    bits pick the count, the rest is split evenly), sealed as a MAC batch
 *    (and, when the first byte's top two bits are set, an Ed25519 batch)
 *    for the medium; each must attribute back to its author with the
 *    same facts in the same order, and not from another medium.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daolease/attrib.h"
#include "resolver/dump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The medium of stream/batch.dls, whose records are in the corpus (under
 * this target's own keys they fail to verify: the failure paths). */
static const uint8_t medium[16] = {0x61, 0x14, 0xe8, 0x6e, 0x35, 0x21, 0x32, 0xd3,
                                   0x9b, 0x14, 0xa3, 0xc2, 0x77, 0xf6, 0x85, 0xd2};
static const uint8_t other[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static dls_keyring *kr;
static dls_resolver *r_signed, *r_medium, *r_none_other;
static dls_dump_attrib *dump;
static dls_secret *mac_key, *ed_key;

static void init(void)
{
    if (kr)
        return;
    uint8_t seed[32];
    for (int i = 0; i < 32; i++)
        seed[i] = (uint8_t)(0x42 + i);
    if (dls_secret_from_seed(&mac_key, "probe-5", DLS_KEY_MAC, seed))
        abort();
    seed[0] ^= 1;
    if (dls_secret_from_seed(&ed_key, "worker-east", DLS_KEY_ED25519, seed) ||
        dls_keyring_new(&kr))
        abort();
    const dls_secret *s[2] = {mac_key, ed_key};
    for (int i = 0; i < 2; i++)
        if (dls_keyring_add(kr, (const uint8_t *)dls_secret_name(s[i]),
                            strlen(dls_secret_name(s[i])), dls_secret_kind(s[i]),
                            dls_secret_public(s[i])))
            abort();
    if (dls_resolver_new_signed(&r_signed, medium, kr) ||
        dls_resolver_new_medium(&r_medium, medium, "tick-adapter", kr) ||
        dls_resolver_new_signed(&r_none_other, other, kr) ||
        dls_dump_attrib_new(&dump, medium, kr))
        abort();
}

static void inside(dls_bytes b, const uint8_t *data, size_t size)
{
    if (b.n && (b.p < data || b.p + b.n > data + size))
        abort();
}

/* Drains an iterator: checks indexes and slices; returns how many. */
static uint32_t drain(dls_facts *it, const uint8_t *data, size_t size)
{
    dls_bytes f;
    uint32_t ix, n = 0;
    while (dls_facts_next(it, &f, &ix)) {
        if (ix != n)
            abort();
        inside(f, data, size);
        n++;
    }
    if (dls_facts_next(it, &f, &ix)) /* stays exhausted */
        abort();
    return n;
}

static void as_record(const uint8_t *data, size_t size)
{
    dls_attribution c, a, m;
    dls_facts it;
    dls_record_facts(data, size, &c, &it);
    inside(c.author, data, size);
    inside(c.fact, data, size);
    uint32_t carried = drain(&it, data, size);
    if (carried != c.count)
        abort();
    if (c.kind == DLS_REC_BATCH && (c.count < 1 || c.count > DLS_BATCH_COUNT_MAX ||
                                    size > DLS_BATCH_RECORD_MAX || c.fact.n))
        abort();

    dls_resolver_attribute_facts(r_signed, data, size, &a, &it);
    if (a.kind != c.kind || a.count != c.count)
        abort();
    if (a.attributed != (a.why == DLS_WHY_NONE && a.kind != DLS_REC_SEAL))
        abort();
    if (drain(&it, data, size) != (a.attributed ? a.count : 0))
        abort();
    if (a.attributed && a.kind == DLS_REC_FACT)
        abort(); /* a bare fact on a signed medium is nobody's */
    if (a.attributed && dls_keyring_lookup(kr, a.author.p, a.author.n, NULL, NULL) != 0)
        abort();

    /* the medium resolver agrees on envelopes and batches */
    dls_resolver_attribute_facts(r_medium, data, size, &m, &it);
    if ((m.kind == DLS_REC_ENVELOPE || m.kind == DLS_REC_BATCH) && m.attributed != a.attributed)
        abort();
    drain(&it, data, size);
    /* no keyring: nothing signed verifies */
    dls_resolver_attribute_facts(NULL, data, size, &m, &it);
    if ((m.kind == DLS_REC_ENVELOPE || m.kind == DLS_REC_BATCH) && m.attributed)
        abort();
    if (drain(&it, data, size) != (m.attributed ? m.count : 0))
        abort();
    /* another medium: nothing signed verifies (the medium id is in M) */
    dls_resolver_attribute_facts(r_none_other, data, size, &m, NULL);
    if (m.kind == DLS_REC_BATCH && m.attributed)
        abort();
    /* the one-fact call (the journal's rule) never attributes a batch */
    dls_resolver_attribute(r_signed, data, size, &m);
    if (m.kind != c.kind || (m.kind == DLS_REC_BATCH && (m.attributed ||
                                                         m.why != DLS_WHY_MALFORMED)))
        abort();

    /* dump rows: one per fact of a batch */
    dls_dump_rows rows;
    dls_dump_row row;
    dls_dump_attrib_rows(dump, data, size, &rows);
    uint32_t n = 0;
    while (dls_dump_rows_next(&rows, &row)) {
        if (row.verified != a.attributed || !row.kind)
            abort();
        if (row.has_index != (c.kind == DLS_REC_BATCH) || (row.has_index && row.index != n))
            abort();
        inside(row.author, data, size);
        inside(row.fact, data, size);
        n++;
    }
    if (n != (c.kind == DLS_REC_BATCH ? c.count : 1))
        abort();
}

static void as_facts(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    size_t count = 1 + data[0] % 64, body = size - 1;
    /* the longest fact is body / count, plus one when it does not divide
     * evenly (the first body % count facts get the extra byte) */
    if (body / count + (body % count ? 1 : 0) > DLS_BATCH_FACT_MAX)
        return;
    dls_bytes facts[64];
    for (size_t i = 0, off = 1; i < count; i++) {
        size_t len = body / count + (i < body % count ? 1 : 0);
        facts[i] = (dls_bytes){data + off, len};
        off += len;
    }
    static uint8_t env[DLS_BATCH_RECORD_MAX];
    const dls_secret *keys[2] = {mac_key, ed_key};
    /* Ed25519 signing is slow: only when the first byte's top bits are set
     * (a quarter of inputs); the MAC batch every time. */
    int nkeys = (data[0] & 0xc0) == 0xc0 ? 2 : 1;
    for (int k = 0; k < nkeys; k++) {
        size_t n, need = dls_batch_size(strlen(dls_secret_name(keys[k])), facts, count,
                                        dls_secret_kind(keys[k]));
        int rc = dls_batch_seal(keys[k], medium, facts, count, env, sizeof env, &n);
        if (need > DLS_BATCH_RECORD_MAX) {
            if (rc != DLS_ERR_TOOBIG)
                abort();
            continue;
        }
        if (rc || n != need)
            abort();
        dls_attribution a;
        dls_facts it;
        dls_resolver_attribute_facts(r_signed, env, n, &a, &it);
        if (!a.attributed || a.kind != DLS_REC_BATCH || a.count != count ||
            a.author.n != strlen(dls_secret_name(keys[k])) ||
            memcmp(a.author.p, dls_secret_name(keys[k]), a.author.n))
            abort();
        dls_bytes f;
        uint32_t ix;
        for (size_t i = 0; i < count; i++)
            if (!dls_facts_next(&it, &f, &ix) || ix != i || f.n != facts[i].n ||
                (f.n && memcmp(f.p, facts[i].p, f.n)))
                abort();
        if (dls_facts_next(&it, &f, &ix))
            abort();
        dls_resolver_attribute_facts(r_none_other, env, n, &a, NULL);
        if (a.attributed || a.why != DLS_WHY_SIGNATURE)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    as_record(data, size);
    as_facts(data, size);
    return 0;
}
