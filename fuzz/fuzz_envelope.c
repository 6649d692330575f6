/* Fuzz target: one record through classification, the signed and medium
 * resolvers and the dump row helper, under a fixed keyring (the public
 * test keys of the conformance vectors). Never crashes; checks invariants:
 * every slice lies inside the input, every resolver agrees with the
 * classification, an attributed envelope's author is in the keyring, and a
 * bare fact sealed (MAC) for the medium attributes back to its author. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daolease/attrib.h"
#include "resolver/dump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The medium of most envelope vectors (envelopes.jsonl). */
static const uint8_t medium[16] = {0x05, 0xdf, 0x2f, 0xef, 0x16, 0x56, 0x12, 0x17,
                                   0x99, 0x04, 0xfd, 0xb1, 0xb9, 0x92, 0xe6, 0x35};

static const char keyring_text[] =
    "arbiter ed25519 1875948dca31a2c2725c50cd759475f4a28e91226d07a634784451f101b4cea2\n"
    "worker-east ed25519 971f5e42dc441bb7d96e88eee2414b733bcd1e7768c449ddf1c3c1107b6cf581\n"
    "probe-5 mac ef5d82ab8d28a6298cc8aaf5ca66faf9696eaf48160c14abe1761c5a45665e2b\n"
    "w ed25519 7d27bdf182615ffbc419392d8ea047e501e5d0a6d8942d8928c3e19743cb4564\n";

static const uint8_t probe_key[32] = {
    0xef, 0x5d, 0x82, 0xab, 0x8d, 0x28, 0xa6, 0x29, 0x8c, 0xc8, 0xaa, 0xf5, 0xca, 0x66, 0xfa, 0xf9,
    0x69, 0x6e, 0xaf, 0x48, 0x16, 0x0c, 0x14, 0xab, 0xe1, 0x76, 0x1c, 0x5a, 0x45, 0x66, 0x5e, 0x2b};

static dls_keyring *kr;
static dls_resolver *r_signed, *r_medium, *r_bare;
static dls_dump_attrib *dump;
static dls_secret *probe;

static void init(void)
{
    if (kr)
        return;
    if (dls_keyring_parse(&kr, keyring_text, sizeof keyring_text - 1, NULL) ||
        dls_resolver_new_signed(&r_signed, medium, kr) ||
        dls_resolver_new_medium(&r_medium, medium, "tick-adapter", kr) ||
        dls_resolver_new_medium(&r_bare, medium, "tick-adapter", NULL) ||
        dls_dump_attrib_new(&dump, medium, kr) ||
        dls_secret_from_seed(&probe, "probe-5", DLS_KEY_MAC, probe_key))
        abort();
}

static void inside(dls_bytes b, const uint8_t *data, size_t size)
{
    if (b.n && (b.p < data || b.p + b.n > data + size))
        abort();
}

static void check(const dls_attribution *c, const dls_attribution *a, const uint8_t *data,
                  size_t size, bool medium_kind)
{
    if (a->kind != c->kind)
        abort();
    inside(a->fact, data, size);
    if (!medium_kind || a->kind != DLS_REC_FACT)
        inside(a->author, data, size);
    if (a->attributed != (a->why == DLS_WHY_NONE && a->kind != DLS_REC_SEAL))
        abort();
    if (c->why == DLS_WHY_MALFORMED && a->why != DLS_WHY_MALFORMED)
        abort();
    if (a->attributed && a->kind == DLS_REC_ENVELOPE &&
        dls_keyring_lookup(kr, a->author.p, a->author.n, NULL, NULL) != 0)
        abort();
    if (a->kind == DLS_REC_SEAL && (a->attributed || a->fact.n || a->author.n))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    dls_attribution c, a;
    dls_record_classify(data, size, &c);
    inside(c.author, data, size);
    inside(c.fact, data, size);

    dls_resolver_attribute(r_signed, data, size, &a);
    check(&c, &a, data, size, false);
    if (a.kind == DLS_REC_FACT && a.attributed)
        abort(); /* a bare fact on a signed medium is nobody's */
    dls_attribution m;
    dls_resolver_attribute(r_medium, data, size, &m);
    check(&c, &m, data, size, true);
    if (m.kind == DLS_REC_ENVELOPE && m.attributed != a.attributed)
        abort();
    if (m.kind == DLS_REC_FACT && !m.attributed)
        abort();
    dls_resolver_attribute(r_bare, data, size, &m);
    check(&c, &m, data, size, true);
    if (m.kind == DLS_REC_ENVELOPE && m.attributed)
        abort(); /* no keyring: no envelope verifies */

    dls_dump_row row;
    dls_dump_attrib_record(dump, data, size, &row);
    if (row.verified != a.attributed || !row.kind)
        abort();
    inside(row.author, data, size);
    inside(row.fact, data, size);

    /* round trip: a bare fact, MACed for the medium, attributes to its author */
    if (c.kind == DLS_REC_FACT && size <= DLS_ENVELOPE_FACT_MAX) {
        static uint8_t env[DLS_ENVELOPE_FACT_MAX + DLS_ENVELOPE_OVERHEAD_MAX];
        size_t n;
        if (dls_envelope_seal(probe, medium, data, size, env, sizeof env, &n))
            abort();
        dls_resolver_attribute(r_signed, env, n, &m);
        if (!m.attributed || m.fact.n != size || memcmp(m.fact.p, data, size) ||
            m.author.n != 7 || memcmp(m.author.p, "probe-5", 7))
            abort();
    }
    return 0;
}
