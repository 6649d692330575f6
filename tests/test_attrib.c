/* Tests for attribution (attribution.md): keyrings, secret key files,
 * envelopes and batch envelopes, resolvers, the replay checker, the dump
 * row helper, the conformance vectors (envelopes.jsonl,
 * envelopes-batch.jsonl, stream/three.dls, stream/batch.dls) and interop with
 * an independent implementation in Python (PyNaCl).
 *
 * Randomized parts take a seed (printed; DLS_SEED overrides) and replay. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>
#include <zlib.h>

#include "support.h"
#include "vocab/htab.h"
#include "daolease/attrib.h"
#include "resolver/dump.h"
#include "resolver/internal.h"
#include "resolver/replay.h"
#include "vocab/mp.h"

/* ---- helpers ------------------------------------------------------------- */

static uint64_t g_seed;
static uint64_t g_rng;

static uint64_t rnd(void)
{
    /* splitmix64: replayable from the printed seed */
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void rnd_bytes(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rnd();
}

static const char *vectors_dir(void)
{
    const char *d = getenv("DLS_VECTORS");
    return d ? d : DLS_TEST_SRCDIR "/vectors";
}

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rbe");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)sz + 1);
    *n = fread(b, 1, (size_t)sz, f);
    b[*n] = 0;
    fclose(f);
    return b;
}

static void tohex(const uint8_t *p, size_t n, char *out)
{
    sodium_bin2hex(out, 2 * n + 1, p, n);
}

static const uint8_t M1[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const uint8_t M2[16] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};

/* A renewal fact in shortest form: {"dao.lease/event": "renewal",
 * "dao.lease/lease": lease, "dao.lease/seq": seq} with small numbers. */
static size_t renewal_fact(uint8_t *out, uint8_t lease, uint8_t seq)
{
    size_t n = 0;
    out[n++] = 0x83;
    out[n++] = 0xaf;
    memcpy(out + n, "dao.lease/event", 15), n += 15;
    out[n++] = 0xa7;
    memcpy(out + n, "renewal", 7), n += 7;
    out[n++] = 0xaf;
    memcpy(out + n, "dao.lease/lease", 15), n += 15;
    out[n++] = lease & 0x7f;
    out[n++] = 0xad;
    memcpy(out + n, "dao.lease/seq", 13), n += 13;
    out[n++] = seq & 0x7f;
    return n;
}

static dls_secret *secret_seeded(const char *name, dls_key_kind kind)
{
    uint8_t seed[32];
    rnd_bytes(seed, sizeof seed);
    dls_secret *s;
    assert_int_equal(dls_secret_from_seed(&s, name, kind, seed), 0);
    return s;
}

static void keyring_add_secret(dls_keyring *kr, const dls_secret *s)
{
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)dls_secret_name(s),
                                     strlen(dls_secret_name(s)), dls_secret_kind(s),
                                     dls_secret_public(s)),
                     0);
}

static bool bytes_eq(dls_bytes b, const void *p, size_t n)
{
    return b.n == n && (n == 0 || memcmp(b.p, p, n) == 0);
}

static bool bytes_str(dls_bytes b, const char *s)
{
    return bytes_eq(b, s, strlen(s));
}

/* Minimal msgpack writer for hand-built records. */
typedef struct buf {
    uint8_t p[70000];
    size_t n;
} buf;

static void put(buf *b, const void *p, size_t n)
{
    memcpy(b->p + b->n, p, n);
    b->n += n;
}
static void put1(buf *b, uint8_t c)
{
    b->p[b->n++] = c;
}
static void put_str(buf *b, const char *s)
{
    size_t n = strlen(s);
    if (n < 32)
        put1(b, (uint8_t)(0xa0 | n));
    else
        put1(b, 0xd9), put1(b, (uint8_t)n);
    put(b, s, n);
}
static void put_str8(buf *b, const char *s) /* non-shortest */
{
    put1(b, 0xd9), put1(b, (uint8_t)strlen(s));
    put(b, s, strlen(s));
}
static void put_bin(buf *b, const uint8_t *p, size_t n)
{
    if (n < 256)
        put1(b, 0xc4), put1(b, (uint8_t)n);
    else if (n < 65536)
        put1(b, 0xc5), put1(b, (uint8_t)(n >> 8)), put1(b, (uint8_t)n);
    else
        put1(b, 0xc6), put1(b, (uint8_t)(n >> 24)), put1(b, (uint8_t)(n >> 16)),
            put1(b, (uint8_t)(n >> 8)), put1(b, (uint8_t)n);
    put(b, p, n);
}
static void put_bin16(buf *b, const uint8_t *p, size_t n) /* non-shortest */
{
    put1(b, 0xc5), put1(b, (uint8_t)(n >> 8)), put1(b, (uint8_t)n);
    put(b, p, n);
}

/* The parts of a signed envelope, to rebuild variants from. */
typedef struct parts {
    char author[65];
    uint8_t fact[4096];
    size_t fact_n;
    uint8_t tag[64];
    size_t tag_n;
    bool mac;
} parts;

static void parts_of(const uint8_t *env, size_t n, parts *pt)
{
    dls_env e;
    dls_env_parse(env, n, &e);
    assert_true(e.ok);
    memcpy(pt->author, e.author.p, e.author.n);
    pt->author[e.author.n] = 0;
    memcpy(pt->fact, e.fact.p, e.fact.n);
    pt->fact_n = e.fact.n;
    memcpy(pt->tag, e.tag.p, e.tag.n);
    pt->tag_n = e.tag.n;
    pt->mac = e.mac;
}

static void attribute_with(const uint8_t medium[16], dls_keyring *kr, const uint8_t *rec,
                           size_t n, dls_attribution *a)
{
    dls_resolver *r;
    assert_int_equal(dls_resolver_new_signed(&r, medium, kr), 0);
    dls_resolver_attribute(r, rec, n, a);
    dls_resolver_del(r);
}

/* ---- envelopes.jsonl ----------------------------------------------------- */

/* envelopes.jsonl (vectors/README.md): rebuild M and compare message_hex;
 * sign/MAC with the key and compare the tag and the envelope bytes; decode
 * envelope_hex, verify as read from medium_id_hex, compare verifies/why. */
static void test_vectors_envelopes(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/envelopes.jsonl", vectors_dir());
    size_t n;
    char *text = (char *)read_file(path, &n);
    assert_non_null(text);
    unsigned lines = 0, positives = 0;
    static uint8_t fact[70000], msg[70000], env[70000], mine[70000], exp_env[70000];
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t jerr;
        json_t *j = json_loads(line, 0, &jerr);
        assert_non_null(j);
        lines++;
        const char *author = json_string_value(json_object_get(j, "author"));
        bool is_mac = json_object_get(j, "mac_key_hex") != NULL;
        uint8_t key[32], medium[16], signed_for[16], tag[64];
        test_unhex(json_string_value(json_object_get(j, is_mac ? "mac_key_hex" : "seed_hex")), key, 32);
        test_unhex(json_string_value(json_object_get(j, "medium_id_hex")), medium, 16);
        json_t *sf = json_object_get(j, "signed_for_medium_hex");
        test_unhex(json_string_value(sf ? sf : json_object_get(j, "medium_id_hex")), signed_for, 16);
        size_t fact_n = test_unhex(json_string_value(json_object_get(j, "fact_hex")), fact, sizeof fact);
        size_t msg_n = test_unhex(json_string_value(json_object_get(j, "message_hex")), msg, sizeof msg);
        size_t tag_n = test_unhex(json_string_value(json_object_get(j, is_mac ? "mac_hex" : "sig_hex")),
                             tag, sizeof tag);
        size_t env_n = test_unhex(json_string_value(json_object_get(j, "envelope_hex")), exp_env,
                             sizeof exp_env);
        bool verifies = json_is_true(json_object_get(j, "verifies"));
        json_t *why = json_object_get(j, "why");
        positives += verifies;

        /* M as read from medium_id_hex */
        size_t mlen;
        assert_int_equal(dls_envelope_message(medium, (const uint8_t *)author, strlen(author),
                                              fact, fact_n, env, sizeof env, &mlen),
                         0);
        assert_int_equal(mlen, msg_n);
        assert_memory_equal(env, msg, msg_n);

        dls_secret *s;
        assert_int_equal(dls_secret_from_seed(&s, author, is_mac ? DLS_KEY_MAC : DLS_KEY_ED25519,
                                              key),
                         0);
        if (!is_mac) {
            uint8_t pk[32];
            test_unhex(json_string_value(json_object_get(j, "public_key_hex")), pk, 32);
            assert_memory_equal(dls_secret_public(s), pk, 32);
        }
        /* Sealing for the medium it was signed for reproduces the envelope
         * byte for byte, except the vector with one signature bit flipped. */
        size_t mine_n;
        assert_int_equal(dls_envelope_seal(s, signed_for, fact, fact_n, mine, sizeof mine,
                                           &mine_n),
                         0);
        assert_int_equal(mine_n, env_n);
        assert_int_equal(mine_n, dls_envelope_size(strlen(author), fact_n,
                                                   is_mac ? DLS_KEY_MAC : DLS_KEY_ED25519));
        unsigned diff_bits = 0;
        for (size_t i = 0; i < env_n; i++)
            diff_bits += (unsigned)__builtin_popcount(mine[i] ^ exp_env[i]);
        bool flipped_vector = !verifies && !sf;
        assert_int_equal(diff_bits, flipped_vector ? 1 : 0);
        /* the tag over message_hex, when M is the signed one */
        if (!sf) {
            uint8_t t[64];
            if (is_mac)
                crypto_auth(t, msg, msg_n, key);
            else
                crypto_sign_detached(t, NULL, msg, msg_n, dls_secret_key(s));
            unsigned tb = 0;
            for (size_t i = 0; i < tag_n; i++)
                tb += (unsigned)__builtin_popcount(t[i] ^ tag[i]);
            assert_int_equal(tb, flipped_vector ? 1 : 0);
        }

        /* decode and verify as read from medium_id_hex */
        dls_attribution a;
        dls_record_classify(exp_env, env_n, &a);
        assert_int_equal(a.kind, DLS_REC_ENVELOPE);
        assert_int_equal(a.why, DLS_WHY_NONE);
        assert_true(bytes_str(a.author, author));
        assert_true(bytes_eq(a.fact, fact, fact_n));
        dls_keyring *kr;
        assert_int_equal(dls_keyring_new(&kr), 0);
        keyring_add_secret(kr, s);
        attribute_with(medium, kr, exp_env, env_n, &a);
        assert_int_equal(a.attributed, verifies);
        if (json_is_null(why))
            assert_null(dls_why_name(a.why));
        else
            assert_string_equal(dls_why_name(a.why), json_string_value(why));
        dls_keyring_del(kr);
        dls_secret_del(s);
        json_decref(j);
    }
    assert_int_equal(lines, 8);
    assert_int_equal(positives, 6);
    free(text);
}

/* ---- stream/three.dls ---------------------------------------------------- */

static json_t *mp_to_json(const uint8_t *p, size_t n, size_t *off)
{
    dls_mp_item it;
    assert_int_equal(dls_mp_read(p, n, *off, &it), 0);
    *off = it.end;
    switch (it.type) {
    case DLS_MP_NIL: return json_null();
    case DLS_MP_BOOL: return json_boolean(it.v.b);
    case DLS_MP_UINT: return json_integer((json_int_t)it.v.u);
    case DLS_MP_INT: return json_integer(it.v.i);
    case DLS_MP_STR: return json_stringn((const char *)it.data, it.len);
    case DLS_MP_BIN: {
        char *h = malloc(2 * it.len + 1);
        tohex(it.data, it.len, h);
        json_t *o = json_pack("{s:s}", "$bin", h);
        free(h);
        return o;
    }
    case DLS_MP_ARRAY: {
        json_t *a = json_array();
        for (uint32_t i = 0; i < it.len; i++)
            json_array_append_new(a, mp_to_json(p, n, off));
        return a;
    }
    case DLS_MP_MAP: {
        json_t *o = json_object();
        for (uint32_t i = 0; i < it.len; i++) {
            json_t *k = mp_to_json(p, n, off);
            assert_true(json_is_string(k));
            json_object_set_new(o, json_string_value(k), mp_to_json(p, n, off));
            json_decref(k);
        }
        return o;
    }
    default: fail_msg("unexpected msgpack type in a vector fact");
    }
    return NULL;
}

/* Compares as parsed values, key order included (vectors/README.md). */
static void assert_json_same(json_t *a, json_t *b)
{
    char *sa = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY);
    char *sb = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_string_equal(sa, sb);
    free(sa);
    free(sb);
}

typedef struct stream_rec {
    const uint8_t *p;
    size_t n;
} stream_rec;

/* Reads a stream file by hand (stream-format.md): the 48-byte header, then
 * L (LE u32), CRC-32 of the payload, payload. */
static size_t read_stream(const uint8_t *f, size_t n, uint8_t medium[16], stream_rec *out,
                          size_t max)
{
    assert_true(n >= 48);
    assert_memory_equal(f, "DAOLSTRM", 8);
    memcpy(medium, f + 16, 16);
    size_t off = 48, k = 0;
    while (off + 8 <= n && k < max) {
        uint32_t l = (uint32_t)f[off] | (uint32_t)f[off + 1] << 8 | (uint32_t)f[off + 2] << 16 |
                     (uint32_t)f[off + 3] << 24;
        uint32_t crc = (uint32_t)f[off + 4] | (uint32_t)f[off + 5] << 8 |
                       (uint32_t)f[off + 6] << 16 | (uint32_t)f[off + 7] << 24;
        assert_true(off + 8 + l <= n);
        assert_int_equal(crc, (uint32_t)crc32(0, f + off + 8, l));
        out[k].p = f + off + 8;
        out[k].n = l;
        k++;
        off += 8 + l;
    }
    assert_int_equal(off, n);
    return k;
}

/* three.dls attributes as three.expect.jsonl says (cli.md, JSON output
 * shapes), through the dump row helper and a signed resolver. */
static void test_vectors_stream_three(void **state)
{
    (void)state;
    char path[4096];
    size_t fn, en;
    snprintf(path, sizeof path, "%s/stream/three.dls", vectors_dir());
    uint8_t *file = read_file(path, &fn);
    assert_non_null(file);
    snprintf(path, sizeof path, "%s/stream/three.expect.jsonl", vectors_dir());
    char *expect = (char *)read_file(path, &en);
    assert_non_null(expect);
    snprintf(path, sizeof path, "%s/stream/keyring", vectors_dir());
    dls_keyring *kr;
    dls_where w;
    assert_int_equal(dls_keyring_load(&kr, path, &w), 0);
    assert_int_equal(dls_keyring_count(kr), 3);

    uint8_t medium[16];
    stream_rec recs[8];
    size_t k = read_stream(file, fn, medium, recs, 8);
    assert_int_equal(k, 3);

    dls_dump_attrib *d, *nokr;
    assert_int_equal(dls_dump_attrib_new(&d, medium, kr), 0);
    assert_int_equal(dls_dump_attrib_new(&nokr, medium, NULL), 0);
    size_t i = 0;
    for (char *line = strtok(expect, "\n"); line; line = strtok(NULL, "\n"), i++) {
        json_error_t jerr;
        json_t *ex = json_loads(line, 0, &jerr);
        assert_non_null(ex);
        assert_true(i < k);
        assert_int_equal(json_integer_value(json_object_get(ex, "position")), (json_int_t)i);
        dls_dump_row row;
        dls_dump_attrib_record(d, recs[i].p, recs[i].n, &row);
        assert_string_equal(row.kind, json_string_value(json_object_get(ex, "kind")));
        json_t *au = json_object_get(ex, "author");
        if (json_is_null(au))
            assert_false(row.has_author);
        else
            assert_true(row.has_author && bytes_str(row.author, json_string_value(au)));
        assert_int_equal(row.verified, json_is_true(json_object_get(ex, "verified")));
        json_t *why = json_object_get(ex, "why");
        if (json_is_null(why))
            assert_null(row.why);
        else
            assert_string_equal(row.why, json_string_value(why));
        json_t *fact = json_object_get(ex, "fact");
        if (json_is_null(fact)) {
            assert_false(row.has_fact);
        } else {
            assert_true(row.has_fact);
            size_t off = 0;
            json_t *mine = mp_to_json(row.fact.p, row.fact.n, &off);
            assert_int_equal(off, row.fact.n);
            assert_json_same(mine, fact);
            json_decref(mine);
        }
        /* the same through a signed resolver */
        dls_attribution a;
        attribute_with(medium, kr, recs[i].p, recs[i].n, &a);
        assert_int_equal(a.attributed, row.verified);
        /* without a keyring, the envelope is "unknown-author" (cli.md) */
        dls_dump_attrib_record(nokr, recs[i].p, recs[i].n, &row);
        if (a.kind == DLS_REC_ENVELOPE) {
            assert_false(row.verified);
            assert_string_equal(row.why, "unknown-author");
            assert_true(bytes_str(row.author, "worker-east"));
            assert_true(row.has_fact);
        }
        json_decref(ex);
    }
    assert_int_equal(i, 3);
    dls_dump_attrib_del(d);
    dls_dump_attrib_del(nokr);
    dls_keyring_del(kr);
    free(file);
    free(expect);
}

/* run/keyring parses: three Ed25519 parties. */
static void test_vectors_run_keyring(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/run/keyring", vectors_dir());
    dls_keyring *kr;
    dls_where w;
    assert_int_equal(dls_keyring_load(&kr, path, &w), 0);
    assert_int_equal(dls_keyring_count(kr), 3);
    const char *names[] = {"arbiter", "worker-east", "worker-west"};
    for (int i = 0; i < 3; i++) {
        dls_key_kind kind;
        const uint8_t *key;
        assert_int_equal(dls_keyring_lookup(kr, (const uint8_t *)names[i], strlen(names[i]),
                                            &kind, &key),
                         0);
        assert_int_equal(kind, DLS_KEY_ED25519);
    }
    dls_keyring_del(kr);
}

/* ---- gate 1: attribution ------------------------------------------------- */

/* Gate 1: each envelope is attributed to its own author, fact bytes intact. */
static void test_gate1_attribution_per_author(void **state)
{
    (void)state;
    dls_secret *a = secret_seeded("agent-1", DLS_KEY_ED25519);
    dls_secret *b = secret_seeded("agent-2", DLS_KEY_ED25519);
    dls_secret *c = secret_seeded("sensor-9", DLS_KEY_MAC);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, a);
    keyring_add_secret(kr, b);
    keyring_add_secret(kr, c);
    dls_resolver *r;
    assert_int_equal(dls_resolver_new_signed(&r, M1, kr), 0);
    dls_secret *all[] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        uint8_t fact[64], env[512];
        size_t fn = renewal_fact(fact, (uint8_t)(i + 1), 5), en;
        assert_int_equal(dls_envelope_seal(all[i], M1, fact, fn, env, sizeof env, &en), 0);
        dls_attribution at;
        dls_resolver_attribute(r, env, en, &at);
        assert_int_equal(at.kind, DLS_REC_ENVELOPE);
        assert_true(at.attributed);
        assert_int_equal(at.why, DLS_WHY_NONE);
        assert_true(bytes_str(at.author, dls_secret_name(all[i])));
        assert_true(bytes_eq(at.fact, fact, fn));
    }
    dls_resolver_del(r);
    dls_keyring_del(kr);
    dls_secret_del(a);
    dls_secret_del(b);
    dls_secret_del(c);
}

/* Gate 1: a forged renewal in the holder's name (signed by a key that is
 * not the holder's) counts for nothing. */
static void test_gate1_forged_signature(void **state)
{
    (void)state;
    dls_secret *holder = secret_seeded("holder", DLS_KEY_ED25519);
    dls_secret *forger = secret_seeded("holder", DLS_KEY_ED25519); /* same name, own key */
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, holder);
    uint8_t fact[64], env[512];
    size_t fn = renewal_fact(fact, 7, 3), en;
    assert_int_equal(dls_envelope_seal(forger, M1, fact, fn, env, sizeof env, &en), 0);
    dls_attribution a;
    attribute_with(M1, kr, env, en, &a);
    assert_false(a.attributed);
    assert_int_equal(a.why, DLS_WHY_SIGNATURE);
    assert_true(bytes_str(a.author, "holder")); /* the name claimed */
    /* a MAC forged under another key */
    dls_secret *mh = secret_seeded("probe", DLS_KEY_MAC);
    dls_secret *mf = secret_seeded("probe", DLS_KEY_MAC);
    dls_keyring *kr2;
    assert_int_equal(dls_keyring_new(&kr2), 0);
    keyring_add_secret(kr2, mh);
    assert_int_equal(dls_envelope_seal(mf, M1, fact, fn, env, sizeof env, &en), 0);
    attribute_with(M1, kr2, env, en, &a);
    assert_false(a.attributed);
    assert_int_equal(a.why, DLS_WHY_SIGNATURE);
    dls_keyring_del(kr);
    dls_keyring_del(kr2);
    dls_secret_del(holder);
    dls_secret_del(forger);
    dls_secret_del(mh);
    dls_secret_del(mf);
}

static size_t build_envelope(buf *b, const char *author, const uint8_t *fact, size_t fn,
                             const uint8_t *tag, size_t tn, bool mac)
{
    b->n = 0;
    put1(b, 0x83);
    put_str(b, "dao.env/author");
    put_str(b, author);
    put_str(b, "dao.env/fact");
    put_bin(b, fact, fn);
    put_str(b, mac ? "dao.env/mac" : "dao.env/sig");
    put_bin(b, tag, tn);
    return b->n;
}

/* Binding the author: an envelope re-labelled with another party's name
 * fails, even when the two names share one key (attribution.md, M). */
static void test_gate1_author_swapped(void **state)
{
    (void)state;
    dls_secret *x = secret_seeded("x-party", DLS_KEY_ED25519);
    dls_secret *other = secret_seeded("y-party", DLS_KEY_ED25519);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, x);
    keyring_add_secret(kr, other);
    /* z-party shares x-party's public key */
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"z-party", 7, DLS_KEY_ED25519,
                                     dls_secret_public(x)),
                     0);
    uint8_t fact[64], env[512];
    size_t fn = renewal_fact(fact, 4, 9), en;
    assert_int_equal(dls_envelope_seal(x, M1, fact, fn, env, sizeof env, &en), 0);
    parts pt;
    parts_of(env, en, &pt);
    static buf b;
    const char *swaps[] = {"y-party", "z-party"};
    for (int i = 0; i < 2; i++) {
        size_t n = build_envelope(&b, swaps[i], pt.fact, pt.fact_n, pt.tag, pt.tag_n, false);
        dls_attribution a;
        attribute_with(M1, kr, b.p, n, &a);
        assert_int_equal(a.kind, DLS_REC_ENVELOPE);
        assert_false(a.attributed);
        assert_int_equal(a.why, DLS_WHY_SIGNATURE);
    }
    /* the original still verifies */
    dls_attribution a;
    attribute_with(M1, kr, env, en, &a);
    assert_true(a.attributed);
    dls_keyring_del(kr);
    dls_secret_del(x);
    dls_secret_del(other);
}

/* A bare fact on a signed medium is nobody's: why "bare-fact". */
static void test_gate1_bare_fact_on_signed_medium(void **state)
{
    (void)state;
    dls_secret *s = secret_seeded("agent", DLS_KEY_ED25519);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, s);
    uint8_t fact[64];
    size_t fn = renewal_fact(fact, 1, 1);
    dls_attribution a;
    attribute_with(M1, kr, fact, fn, &a);
    assert_int_equal(a.kind, DLS_REC_FACT);
    assert_false(a.attributed);
    assert_int_equal(a.why, DLS_WHY_BARE_FACT);
    assert_string_equal(dls_why_name(a.why), "bare-fact");
    assert_int_equal(a.author.n, 0);
    assert_true(bytes_eq(a.fact, fact, fn));
    dls_keyring_del(kr);
    dls_secret_del(s);
}

/* A medium resolver attributes bare facts to its party; envelopes verify
 * only with a keyring (else nobody, "unknown-author"). */
static void test_gate1_medium_resolver(void **state)
{
    (void)state;
    dls_secret *s = secret_seeded("agent", DLS_KEY_ED25519);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, s);
    uint8_t fact[64], env[512];
    size_t fn = renewal_fact(fact, 1, 1), en;
    assert_int_equal(dls_envelope_seal(s, M1, fact, fn, env, sizeof env, &en), 0);

    dls_resolver *bare, *withkr;
    assert_int_equal(dls_resolver_new_medium(&bare, M1, "tick-adapter", NULL), 0);
    assert_int_equal(dls_resolver_new_medium(&withkr, M1, "tick-adapter", kr), 0);
    dls_attribution a;
    dls_resolver_attribute(bare, fact, fn, &a);
    assert_true(a.attributed);
    assert_int_equal(a.kind, DLS_REC_FACT);
    assert_true(bytes_str(a.author, "tick-adapter"));
    assert_true(bytes_eq(a.fact, fact, fn));
    dls_resolver_attribute(bare, env, en, &a);
    assert_false(a.attributed);
    assert_int_equal(a.why, DLS_WHY_UNKNOWN_AUTHOR);
    dls_resolver_attribute(withkr, env, en, &a);
    assert_true(a.attributed);
    assert_true(bytes_str(a.author, "agent"));
    dls_resolver_attribute(withkr, fact, fn, &a);
    assert_true(a.attributed);
    assert_true(bytes_str(a.author, "tick-adapter"));
    /* a forged envelope is still nobody's under a medium resolver */
    env[en - 1] ^= 1;
    dls_resolver_attribute(withkr, env, en, &a);
    assert_false(a.attributed);
    assert_int_equal(a.why, DLS_WHY_SIGNATURE);
    /* the seal is nobody's */
    static const uint8_t seal[] = {0x81, 0xb1, 'd', 'a', 'o', '.', 's', 't', 'r', 'e',
                                   'a',  'm',  '/', 's', 'e', 'a', 'l', 'e', 'd', 0xc3};
    dls_resolver_attribute(bare, seal, sizeof seal, &a);
    assert_int_equal(a.kind, DLS_REC_SEAL);
    assert_false(a.attributed);
    assert_int_equal(a.why, DLS_WHY_NONE);
    dls_resolver_del(bare);
    dls_resolver_del(withkr);
    dls_keyring_del(kr);
    dls_secret_del(s);
}

/* Binding the medium id: an envelope copied to another medium fails. */
static void test_copied_to_other_medium(void **state)
{
    (void)state;
    dls_secret *s = secret_seeded("agent", DLS_KEY_ED25519);
    dls_secret *m = secret_seeded("probe", DLS_KEY_MAC);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, s);
    keyring_add_secret(kr, m);
    dls_secret *both[] = {s, m};
    for (int i = 0; i < 2; i++) {
        uint8_t fact[64], env[512];
        size_t fn = renewal_fact(fact, 2, 2), en;
        assert_int_equal(dls_envelope_seal(both[i], M1, fact, fn, env, sizeof env, &en), 0);
        dls_attribution a;
        attribute_with(M1, kr, env, en, &a);
        assert_true(a.attributed);
        attribute_with(M2, kr, env, en, &a);
        assert_false(a.attributed);
        assert_int_equal(a.why, DLS_WHY_SIGNATURE);
    }
    dls_keyring_del(kr);
    dls_secret_del(s);
    dls_secret_del(m);
}

/* wrong-key-kind: a sig under a MAC-keyed name, a mac under an Ed25519 one;
 * unknown-author: a name not in the keyring. */
static void test_wrong_key_kind_and_unknown(void **state)
{
    (void)state;
    dls_secret *ed = secret_seeded("alpha", DLS_KEY_ED25519);
    dls_secret *mac = secret_seeded("beta", DLS_KEY_MAC);
    dls_secret *ed_as_beta = secret_seeded("beta", DLS_KEY_ED25519);
    dls_secret *mac_as_alpha = secret_seeded("alpha", DLS_KEY_MAC);
    dls_secret *stranger = secret_seeded("gamma", DLS_KEY_ED25519);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, ed);
    keyring_add_secret(kr, mac);
    uint8_t fact[64], env[512];
    size_t fn = renewal_fact(fact, 3, 3), en;
    dls_attribution a;
    assert_int_equal(dls_envelope_seal(ed_as_beta, M1, fact, fn, env, sizeof env, &en), 0);
    attribute_with(M1, kr, env, en, &a);
    assert_false(a.attributed);
    assert_string_equal(dls_why_name(a.why), "wrong-key-kind");
    assert_int_equal(dls_envelope_seal(mac_as_alpha, M1, fact, fn, env, sizeof env, &en), 0);
    attribute_with(M1, kr, env, en, &a);
    assert_false(a.attributed);
    assert_int_equal(a.why, DLS_WHY_WRONG_KEY_KIND);
    assert_int_equal(dls_envelope_seal(stranger, M1, fact, fn, env, sizeof env, &en), 0);
    attribute_with(M1, kr, env, en, &a);
    assert_false(a.attributed);
    assert_string_equal(dls_why_name(a.why), "unknown-author");
    assert_true(bytes_str(a.author, "gamma"));
    dls_keyring_del(kr);
    dls_secret_del(ed);
    dls_secret_del(mac);
    dls_secret_del(ed_as_beta);
    dls_secret_del(mac_as_alpha);
    dls_secret_del(stranger);
}

/* Every single-bit flip of one signed record fails.
 *
 * The exact assertion: after flipping any one bit of the envelope's bytes,
 * dls_resolver_attribute answers attributed == false. Why this holds: a flip
 * in the map header, a key, or a length header either breaks the map
 * (malformed: missing/renamed required key, truncation, trailing bytes) or
 * changes which bytes are read as author, fact or tag; a flip inside the
 * author, the fact or the tag changes M or the tag. The only ways left to
 * verify would be a second valid tag for a changed M (a forgery) or a
 * second encoding of the same tag — libsodium rejects non-canonical
 * Ed25519 signatures, and HMAC tags are compared whole. No flip can leave
 * author, fact, tag and M all unchanged while the bytes changed: in the
 * shortest-form envelope every byte belongs to one of them or to the
 * structure. We also count the outcomes by why, and check that a flip in the
 * tag or fact region is reported as "signature". */
static void bitflip_all(dls_key_kind kind)
{
    dls_secret *s = secret_seeded("worker-east", kind);
    dls_secret *other = secret_seeded("worker-easu", kind); /* one bit from the name */
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, s);
    keyring_add_secret(kr, other);
    dls_resolver *r;
    assert_int_equal(dls_resolver_new_signed(&r, M1, kr), 0);
    uint8_t fact[64], env[512], x[512];
    size_t fn = renewal_fact(fact, 17, 4), en;
    assert_int_equal(dls_envelope_seal(s, M1, fact, fn, env, sizeof env, &en), 0);
    dls_attribution a;
    dls_resolver_attribute(r, env, en, &a);
    assert_true(a.attributed);
    unsigned counts[6] = {0}, kinds[4] = {0};
    size_t tag_len = kind == DLS_KEY_MAC ? 32 : 64;
    for (size_t bit = 0; bit < en * 8; bit++) {
        memcpy(x, env, en);
        x[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        dls_resolver_attribute(r, x, en, &a);
        if (a.attributed)
            fail_msg("bit %zu of %zu: a flipped record was attributed", bit, en * 8);
        counts[a.why]++;
        kinds[a.kind]++;
        if (bit / 8 >= en - tag_len)
            assert_int_equal(a.why, DLS_WHY_SIGNATURE);
    }
    assert_int_equal(counts[DLS_WHY_NONE], 0);
    /* the tag bits alone all give "signature" */
    assert_true(counts[DLS_WHY_SIGNATURE] >= tag_len * 8);
    /* the one-bit rename worker-east -> worker-easu (a keyring name) fails
     * as a signature */
    print_message("%s: %zu flips: signature %u, unknown-author %u, wrong-key-kind %u, "
                  "malformed %u, bare-fact %u (kinds: fact %u, envelope %u, malformed %u)\n",
                  kind == DLS_KEY_MAC ? "mac" : "ed25519", en * 8, counts[DLS_WHY_SIGNATURE],
                  counts[DLS_WHY_UNKNOWN_AUTHOR], counts[DLS_WHY_WRONG_KEY_KIND],
                  counts[DLS_WHY_MALFORMED], counts[DLS_WHY_BARE_FACT], kinds[DLS_REC_FACT],
                  kinds[DLS_REC_ENVELOPE], kinds[DLS_REC_MALFORMED]);
    dls_resolver_del(r);
    dls_keyring_del(kr);
    dls_secret_del(s);
    dls_secret_del(other);
}

static void test_bitflip_every_bit_ed25519(void **state)
{
    (void)state;
    bitflip_all(DLS_KEY_ED25519);
}

static void test_bitflip_every_bit_mac(void **state)
{
    (void)state;
    bitflip_all(DLS_KEY_MAC);
}

/* ---- envelope well-formedness -------------------------------------------- */

typedef struct env_fixture {
    dls_secret *s;
    dls_keyring *kr;
    uint8_t fact[64];
    size_t fn;
    parts pt;
} env_fixture;

static void fixture_make(env_fixture *f)
{
    f->s = secret_seeded("agent", DLS_KEY_ED25519);
    assert_int_equal(dls_keyring_new(&f->kr), 0);
    keyring_add_secret(f->kr, f->s);
    f->fn = renewal_fact(f->fact, 9, 9);
    uint8_t env[512];
    size_t en;
    assert_int_equal(dls_envelope_seal(f->s, M1, f->fact, f->fn, env, sizeof env, &en), 0);
    parts_of(env, en, &f->pt);
}

static void fixture_free(env_fixture *f)
{
    dls_keyring_del(f->kr);
    dls_secret_del(f->s);
}

static void expect(env_fixture *f, const buf *b, dls_record_kind kind, bool attributed,
                   dls_why why, const char *what)
{
    dls_attribution a;
    attribute_with(M1, f->kr, b->p, b->n, &a);
    if (a.kind != kind || a.attributed != attributed || a.why != why)
        fail_msg("%s: kind %d attributed %d why %d; expected %d %d %d", what, a.kind,
                 a.attributed, a.why, kind, attributed, why);
    dls_attribution c;
    dls_record_classify(b->p, b->n, &c);
    assert_int_equal(c.kind, kind);
    assert_false(c.attributed);
}

/* attribution.md: an envelope must hold author (str 1–64), fact (bin),
 * exactly one of sig (bin 64) / mac (bin 32), no key repeated, no trailing
 * bytes; other keys are ignored; readers accept any order and form. */
static void test_envelope_wellformed_rules(void **state)
{
    (void)state;
    env_fixture f;
    fixture_make(&f);
    parts *p = &f.pt;
    static buf b;
    static uint8_t zeros[70000];

    /* baseline, then other key orders, non-shortest forms, extra keys */
    build_envelope(&b, p->author, p->fact, p->fact_n, p->tag, p->tag_n, false);
    expect(&f, &b, DLS_REC_ENVELOPE, true, DLS_WHY_NONE, "baseline");
    b.n = 0;
    put1(&b, 0x84);
    put_str(&b, "dao.env/sig");
    put_bin(&b, p->tag, 64);
    put_str(&b, "note");
    put1(&b, 0x93), put1(&b, 1), put1(&b, 2), put1(&b, 3);
    put_str(&b, "dao.env/fact");
    put_bin16(&b, p->fact, p->fact_n);
    put_str8(&b, "dao.env/author");
    put_str8(&b, p->author);
    expect(&f, &b, DLS_REC_ENVELOPE, true, DLS_WHY_NONE, "any order, non-shortest, extra key");
    /* an unknown dao.env/ key is ignored too */
    b.n = 0;
    put1(&b, 0x84);
    put_str(&b, "dao.env/author");
    put_str(&b, p->author);
    put_str(&b, "dao.env/fact");
    put_bin(&b, p->fact, p->fact_n);
    put_str(&b, "dao.env/kid");
    put1(&b, 0x07);
    put_str(&b, "dao.env/sig");
    put_bin(&b, p->tag, 64);
    expect(&f, &b, DLS_REC_ENVELOPE, true, DLS_WHY_NONE, "unknown dao.env/ key");
    /* an ignored value nested far deeper than any fact may be */
    b.n = 0;
    put1(&b, 0x84);
    put_str(&b, "deep");
    for (int i = 0; i < 200; i++)
        put1(&b, 0x91);
    put1(&b, 0x90);
    put_str(&b, "dao.env/author");
    put_str(&b, p->author);
    put_str(&b, "dao.env/fact");
    put_bin(&b, p->fact, p->fact_n);
    put_str(&b, "dao.env/sig");
    put_bin(&b, p->tag, 64);
    expect(&f, &b, DLS_REC_ENVELOPE, true, DLS_WHY_NONE, "deep ignored value");

    /* malformed envelopes */
    struct {
        const char *what;
        int variant;
    } cases[] = {
        {"missing author", 1},        {"empty author", 2},        {"65-byte author", 3},
        {"author as bin", 4},         {"fact as str", 5},         {"fact over 65536", 6},
        {"sig of 63 bytes", 7},       {"sig and mac", 8},         {"neither sig nor mac", 9},
        {"author twice", 10},         {"fact twice (fixstr/str8)", 11},
        {"unknown key twice", 12},    {"int key twice, two encodings", 13},
        {"trailing byte", 14},        {"65 pairs", 15},           {"only dao.env/x", 16},
        {"mac of 31 bytes", 17},      {"sig as str", 18},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        b.n = 0;
        int v = cases[i].variant;
        dls_record_kind kind = DLS_REC_ENVELOPE;
        switch (v) {
        case 1:
            put1(&b, 0x82);
            put_str(&b, "dao.env/fact"), put_bin(&b, p->fact, p->fact_n);
            put_str(&b, "dao.env/sig"), put_bin(&b, p->tag, 64);
            break;
        case 2: case 3: case 4: case 5: case 6: case 7: case 18:
            put1(&b, 0x83);
            put_str(&b, "dao.env/author");
            if (v == 2)
                put_str(&b, "");
            else if (v == 3)
                put_str(&b, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
            else if (v == 4)
                put_bin(&b, (const uint8_t *)p->author, strlen(p->author));
            else
                put_str(&b, p->author);
            put_str(&b, "dao.env/fact");
            if (v == 5)
                put_str(&b, "not-bin");
            else if (v == 6)
                put_bin(&b, zeros, 65537);
            else
                put_bin(&b, p->fact, p->fact_n);
            put_str(&b, "dao.env/sig");
            if (v == 18)
                put1(&b, 0xd9), put1(&b, 64), put(&b, p->tag, 64);
            else
                put_bin(&b, p->tag, v == 7 ? 63 : 64);
            break;
        case 8:
            put1(&b, 0x84);
            put_str(&b, "dao.env/author"), put_str(&b, p->author);
            put_str(&b, "dao.env/fact"), put_bin(&b, p->fact, p->fact_n);
            put_str(&b, "dao.env/sig"), put_bin(&b, p->tag, 64);
            put_str(&b, "dao.env/mac"), put_bin(&b, p->tag, 32);
            break;
        case 9:
            put1(&b, 0x82);
            put_str(&b, "dao.env/author"), put_str(&b, p->author);
            put_str(&b, "dao.env/fact"), put_bin(&b, p->fact, p->fact_n);
            break;
        case 10:
            put1(&b, 0x84);
            put_str(&b, "dao.env/author"), put_str(&b, p->author);
            put_str(&b, "dao.env/fact"), put_bin(&b, p->fact, p->fact_n);
            put_str(&b, "dao.env/sig"), put_bin(&b, p->tag, 64);
            put_str(&b, "dao.env/author"), put_str(&b, p->author);
            break;
        case 11:
            /* A repeated fact would let two decoders verify one fact and
             * apply another: refused even when the key is encoded twice
             * differently. */
            put1(&b, 0x84);
            put_str(&b, "dao.env/author"), put_str(&b, p->author);
            put_str(&b, "dao.env/fact"), put_bin(&b, p->fact, p->fact_n);
            put_str(&b, "dao.env/sig"), put_bin(&b, p->tag, 64);
            put_str8(&b, "dao.env/fact"), put_bin(&b, p->fact, 3);
            break;
        case 12: case 13:
            put1(&b, 0x85);
            put_str(&b, "dao.env/author"), put_str(&b, p->author);
            put_str(&b, "dao.env/fact"), put_bin(&b, p->fact, p->fact_n);
            put_str(&b, "dao.env/sig"), put_bin(&b, p->tag, 64);
            if (v == 12) {
                put_str(&b, "x"), put1(&b, 1);
                put_str8(&b, "x"), put1(&b, 2);
            } else {
                put1(&b, 0x01), put1(&b, 1);
                put1(&b, 0xcc), put1(&b, 0x01), put1(&b, 2);
            }
            break;
        case 14:
            build_envelope(&b, p->author, p->fact, p->fact_n, p->tag, 64, false);
            put1(&b, 0xc0);
            kind = DLS_REC_MALFORMED; /* not exactly one map */
            break;
        case 15:
            put1(&b, 0xde), put1(&b, 0), put1(&b, 65);
            put_str(&b, "dao.env/author"), put_str(&b, p->author);
            put_str(&b, "dao.env/fact"), put_bin(&b, p->fact, p->fact_n);
            put_str(&b, "dao.env/sig"), put_bin(&b, p->tag, 64);
            for (int k = 0; k < 62; k++)
                put1(&b, (uint8_t)k), put1(&b, 0xc0);
            break;
        case 16:
            put1(&b, 0x82);
            put_str(&b, "dao.env/x"), put1(&b, 1);
            put_str(&b, "dao.lease/event"), put_str(&b, "tick");
            break;
        case 17:
            put1(&b, 0x83);
            put_str(&b, "dao.env/author"), put_str(&b, p->author);
            put_str(&b, "dao.env/fact"), put_bin(&b, p->fact, p->fact_n);
            put_str(&b, "dao.env/mac"), put_bin(&b, p->tag, 31);
            break;
        }
        expect(&f, &b, kind, false, DLS_WHY_MALFORMED, cases[i].what);
    }
    /* 64 pairs is the most an envelope may have */
    b.n = 0;
    put1(&b, 0xde), put1(&b, 0), put1(&b, 64);
    put_str(&b, "dao.env/author"), put_str(&b, p->author);
    put_str(&b, "dao.env/fact"), put_bin(&b, p->fact, p->fact_n);
    put_str(&b, "dao.env/sig"), put_bin(&b, p->tag, 64);
    for (int k = 0; k < 61; k++)
        put1(&b, (uint8_t)k), put1(&b, 0xc0);
    expect(&f, &b, DLS_REC_ENVELOPE, true, DLS_WHY_NONE, "64 pairs");

    /* a malformed envelope still shows the author claimed and the fact */
    b.n = 0;
    put1(&b, 0x82);
    put_str(&b, "dao.env/author"), put_str(&b, "claimer");
    put_str(&b, "dao.env/fact"), put_bin(&b, p->fact, p->fact_n);
    dls_attribution a;
    dls_record_classify(b.p, b.n, &a);
    assert_int_equal(a.why, DLS_WHY_MALFORMED);
    assert_true(bytes_str(a.author, "claimer"));
    assert_true(bytes_eq(a.fact, p->fact, p->fact_n));
    dls_dump_row row;
    assert_int_equal(dls_dump_fields(b.p, b.n, f.kr, M1, &row), 0);
    assert_string_equal(row.kind, "envelope");
    assert_string_equal(row.why, "malformed");
    assert_true(row.has_author && row.has_fact && !row.verified);
    fixture_free(&f);
}

/* Records that are not envelopes: the seal, bare facts, non-maps. */
static void test_record_kinds(void **state)
{
    (void)state;
    env_fixture f;
    fixture_make(&f);
    static buf b;
    static const uint8_t seal[] = {0x81, 0xb1, 'd', 'a', 'o', '.', 's', 't', 'r', 'e',
                                   'a',  'm',  '/', 's', 'e', 'a', 'l', 'e', 'd', 0xc3};
    b.n = 0;
    put(&b, seal, sizeof seal);
    expect(&f, &b, DLS_REC_SEAL, false, DLS_WHY_NONE, "seal");
    put1(&b, 0xc0);
    expect(&f, &b, DLS_REC_MALFORMED, false, DLS_WHY_MALFORMED, "seal + trailing");
    b.n = 0;
    put(&b, seal, sizeof seal - 1);
    put1(&b, 0xc2); /* {"dao.stream/sealed": false}: a map, not the seal */
    expect(&f, &b, DLS_REC_FACT, false, DLS_WHY_BARE_FACT, "sealed false");
    b.n = 0;
    put1(&b, 0x81), put_str8(&b, "dao.stream/sealed"), put1(&b, 0xc3);
    expect(&f, &b, DLS_REC_FACT, false, DLS_WHY_BARE_FACT, "seal in non-shortest form");
    /* a bin key spelling dao.env/author is not a dao.env/ key */
    b.n = 0;
    put1(&b, 0x81);
    put_bin(&b, (const uint8_t *)"dao.env/author", 14), put_str(&b, "x");
    expect(&f, &b, DLS_REC_FACT, false, DLS_WHY_BARE_FACT, "bin key");
    b.n = 0;
    put1(&b, 0x80);
    expect(&f, &b, DLS_REC_FACT, false, DLS_WHY_BARE_FACT, "empty map");
    const uint8_t *nonmaps[] = {(const uint8_t *)"\x93\x01\x02\x03", (const uint8_t *)"\x07",
                                (const uint8_t *)"\x82\xa1x", (const uint8_t *)"\xc1",
                                (const uint8_t *)"\xa3" "abc"};
    size_t nonmap_n[] = {4, 1, 3, 1, 4};
    for (size_t i = 0; i < 5; i++) {
        b.n = 0;
        put(&b, nonmaps[i], nonmap_n[i]);
        expect(&f, &b, DLS_REC_MALFORMED, false, DLS_WHY_MALFORMED, "not a map");
    }
    dls_attribution a;
    dls_record_classify(NULL, 0, &a);
    assert_int_equal(a.kind, DLS_REC_MALFORMED);
    dls_record_classify((const uint8_t *)"", 0, &a);
    assert_int_equal(a.kind, DLS_REC_MALFORMED);
    assert_string_equal(dls_record_kind_name(DLS_REC_FACT), "fact");
    assert_string_equal(dls_record_kind_name(DLS_REC_ENVELOPE), "envelope");
    assert_string_equal(dls_record_kind_name(DLS_REC_SEAL), "seal");
    assert_string_equal(dls_record_kind_name(DLS_REC_MALFORMED), "malformed");
    /* dump rows for the seal and a non-map (cli.md) */
    dls_dump_row row;
    assert_int_equal(dls_dump_fields(seal, sizeof seal, f.kr, M1, &row), 0);
    assert_string_equal(row.kind, "seal");
    assert_true(!row.has_author && !row.has_fact && !row.verified && !row.why);
    assert_int_equal(dls_dump_fields(nonmaps[0], nonmap_n[0], NULL, M1, &row), 0);
    assert_string_equal(row.kind, "malformed");
    assert_string_equal(row.why, "malformed");
    assert_true(!row.has_author && !row.has_fact && !row.verified);
    fixture_free(&f);
}

/* dls_envelope_seal: exact sizes, refusals. */
static void test_seal_sizes_and_errors(void **state)
{
    (void)state;
    dls_secret *s = secret_seeded("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                                  DLS_KEY_ED25519);
    static uint8_t fact[DLS_ENVELOPE_FACT_MAX + 1], out[DLS_ENVELOPE_FACT_MAX + 400];
    size_t len;
    assert_int_equal(dls_envelope_seal(s, M1, fact, DLS_ENVELOPE_FACT_MAX, out, sizeof out, &len),
                     0);
    assert_int_equal(len - DLS_ENVELOPE_FACT_MAX, DLS_ENVELOPE_OVERHEAD_MAX);
    assert_int_equal(len, dls_envelope_size(64, DLS_ENVELOPE_FACT_MAX, DLS_KEY_ED25519));
    assert_int_equal(dls_envelope_seal(s, M1, fact, DLS_ENVELOPE_FACT_MAX + 1, out, sizeof out,
                                       &len),
                     DLS_ERR_TOOBIG);
    /* the largest envelope verifies */
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, s);
    assert_int_equal(dls_envelope_seal(s, M1, fact, DLS_ENVELOPE_FACT_MAX, out, sizeof out, &len),
                     0);
    dls_attribution a;
    attribute_with(M1, kr, out, len, &a);
    assert_true(a.attributed);
    /* every capacity below the need is refused, never overrun */
    size_t need = dls_envelope_size(64, 10, DLS_KEY_ED25519);
    for (size_t cap = 0; cap < need; cap++)
        assert_int_equal(dls_envelope_seal(s, M1, fact, 10, out, cap, &len), DLS_ERR_TOOBIG);
    assert_int_equal(dls_envelope_seal(s, M1, fact, 10, out, need, &len), 0);
    assert_int_equal(len, need);
    assert_int_equal(dls_envelope_seal(NULL, M1, fact, 10, out, need, &len), DLS_ERR_INVAL);
    assert_int_equal(dls_envelope_size(0, 1, DLS_KEY_MAC), 0);
    assert_int_equal(dls_envelope_size(65, 1, DLS_KEY_MAC), 0);
    size_t ml;
    assert_int_equal(dls_envelope_message(M1, (const uint8_t *)"a", 0, fact, 1, out, sizeof out,
                                          &ml),
                     DLS_ERR_INVAL);
    assert_int_equal(dls_envelope_message(M1, (const uint8_t *)"a", 1, fact, 1, out, 34, &ml),
                     DLS_ERR_TOOBIG);
    assert_int_equal(dls_envelope_message(M1, (const uint8_t *)"a", 1, fact, 1, out, 35, &ml), 0);
    assert_int_equal(ml, 35);
    dls_keyring_del(kr);
    dls_secret_del(s);
}

/* ---- keyrings ------------------------------------------------------------ */

#define K64 "971f5e42dc441bb7d96e88eee2414b733bcd1e7768c449ddf1c3c1107b6cf581"
#define K64U "971F5E42DC441BB7D96E88EEE2414B733BCD1E7768C449DDF1C3C1107B6CF581"

/* Keyring grammar (attribution.md): CRLF, comments, tabs, either hex case,
 * a last line without LF, names of 0x21–0x7E and 0x80–0xFF. */
static void test_keyring_parse_accepts(void **state)
{
    (void)state;
    const char text[] = "# a comment line\r\n"
                        "\r\n"
                        "   \t \n"
                        "alpha ed25519 " K64 "\r\n"
                        "\tbeta\t\tmac\t" K64U "   # trailing comment\n"
                        "ga#mma ed25519 " K64 "#not-a-comment-start? no: part of key\n";
    dls_keyring *kr;
    dls_where w = {0};
    /* the last line's key field is K64 followed by '#': a bad hex digit */
    assert_int_equal(dls_keyring_parse(&kr, text, strlen(text), &w), DLS_ERR_KEYRING);
    assert_int_equal(w.line, 6);
    assert_int_equal(w.offset, 16 + 64);

    const char ok[] = "# a comment line\r\n"
                      "\r\n"
                      "   \t \n"
                      "alpha ed25519 " K64 "\r\n"
                      "\tbeta\t\tmac\t" K64U "   # trailing comment\n"
                      "ga#mma ed25519 " K64 " #comment\n"
                      "\xc3\xa9t\xc3\xa9 ed25519 " K64 "\n"
                      "~!last mac " K64; /* no final newline */
    assert_int_equal(dls_keyring_parse(&kr, ok, strlen(ok), &w), 0);
    assert_int_equal(dls_keyring_count(kr), 5);
    const char *names[] = {"alpha", "beta", "ga#mma", "\xc3\xa9t\xc3\xa9", "~!last"};
    dls_key_kind kinds[] = {DLS_KEY_ED25519, DLS_KEY_MAC, DLS_KEY_ED25519, DLS_KEY_ED25519,
                            DLS_KEY_MAC};
    uint8_t expect_key[32];
    test_unhex(K64, expect_key, 32);
    for (int i = 0; i < 5; i++) {
        dls_key_kind kind;
        const uint8_t *key;
        assert_int_equal(dls_keyring_lookup(kr, (const uint8_t *)names[i], strlen(names[i]),
                                            &kind, &key),
                         0);
        assert_int_equal(kind, kinds[i]);
        assert_memory_equal(key, expect_key, 32);
    }
    assert_int_equal(dls_keyring_lookup(kr, (const uint8_t *)"Alpha", 5, NULL, NULL),
                     DLS_ERR_NOTFOUND);
    dls_keyring_del(kr);

    /* a line of exactly 1024 bytes is accepted (padding before a comment) */
    char line[1100];
    int k = snprintf(line, sizeof line, "pad ed25519 %s ", K64);
    memset(line + k, ' ', 1024 - (size_t)k);
    line[1023] = '#';
    line[1024] = '\n';
    assert_int_equal(dls_keyring_parse(&kr, line, 1025, &w), 0);
    assert_int_equal(dls_keyring_count(kr), 1);
    dls_keyring_del(kr);
    /* ... also with CRLF (the terminator is not counted) */
    line[1024] = '\r';
    line[1025] = '\n';
    assert_int_equal(dls_keyring_parse(&kr, line, 1026, &w), 0);
    dls_keyring_del(kr);
    /* empty text and comments only: an empty keyring */
    assert_int_equal(dls_keyring_parse(&kr, "", 0, &w), 0);
    assert_int_equal(dls_keyring_count(kr), 0);
    dls_keyring_del(kr);
    assert_int_equal(dls_keyring_parse(&kr, "#x\n#y", 5, &w), 0);
    assert_int_equal(dls_keyring_count(kr), 0);
    dls_keyring_del(kr);
}

/* Keyring errors name line, column and reason. */
static void test_keyring_parse_errors(void **state)
{
    (void)state;
    static char longline[1200];
    int k = snprintf(longline, sizeof longline, "ok ed25519 %s\n", K64);
    memset(longline + k, ' ', 1025);
    memcpy(longline + k, "x", 1);
    longline[k + 1025] = '\n';
    longline[k + 1026] = 0;
    struct {
        const char *text;
        size_t n; /* 0: strlen */
        int code;
        uint64_t line, col;
        const char *reason_has;
    } cases[] = {
        {longline, 0, DLS_ERR_KEYRING, 2, 1025, "1024"},
        {"a ed25519 " K64 "\nb mac " K64 "\na mac " K64 "\n", 0, DLS_ERR_DUPLICATE, 3, 1, "twice"},
        {"a ed25519 " K64 "\n  a mac " K64 "\n", 0, DLS_ERR_DUPLICATE, 2, 3, "twice"},
        {"a ed25519 971f5e42dc441bb7d96e88eee2414b733bcd1e7768c449ddf1c3c1107b6cf58g\n", 0,
         DLS_ERR_KEYRING, 1, 11 + 63, "hex"},
        {"a ed25519 971f5e42dc441bb7d96e88eee2414b733bcd1e7768c449ddf1c3c1107b6cf5\n", 0,
         DLS_ERR_KEYRING, 1, 11, "64 hex"},
        {"a ed25519 " K64 "00\n", 0, DLS_ERR_KEYRING, 1, 11, "64 hex"},
        {"\n\nn\x7f" "me ed25519 " K64 "\n", 0, DLS_ERR_KEYRING, 3, 2, "invalid byte"},
        {"na\x01me ed25519 " K64 "\n", 0, DLS_ERR_KEYRING, 1, 3, "invalid byte"},
        {"na\rme ed25519 " K64 "\n", 0, DLS_ERR_KEYRING, 1, 3, "invalid byte"},
        {"nam\0 ed25519 " K64 "\n", 5 + 8 + 64 + 1, DLS_ERR_KEYRING, 1, 4, "invalid byte"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ed25519 " K64, 0,
         DLS_ERR_KEYRING, 1, 65, "64 bytes"},
        {"a rsa " K64 "\n", 0, DLS_ERR_KEYRING, 1, 3, "kind"},
        {"a ED25519 " K64 "\n", 0, DLS_ERR_KEYRING, 1, 3, "kind"},
        {"a ed25519-secret " K64 "\n", 0, DLS_ERR_KEYRING, 1, 3, "kind"},
        {"a ed25519\n", 0, DLS_ERR_KEYRING, 1, 10, "missing key"},
        {"a ed25519 # no key\n", 0, DLS_ERR_KEYRING, 1, 19, "missing key"},
        {"lonely\n", 0, DLS_ERR_KEYRING, 1, 7, "missing key kind"},
        {"a ed25519 " K64 " extra\n", 0, DLS_ERR_KEYRING, 1, 76, "unexpected"},
        {"a mac " K64 "\r\r\n", 0, DLS_ERR_KEYRING, 1, 7 + 64, "hex"},
        /* issue 14 item 6: hex through sodium_hex2bin keeps the column of
         * the first bad digit at even and odd places, and of a lone digit */
        {"a mac g" K64 "\n", 0, DLS_ERR_KEYRING, 1, 7, "hex"},
        {"a mac 0g" K64 "\n", 0, DLS_ERR_KEYRING, 1, 8, "hex"},
        {"a mac 00:0\n", 0, DLS_ERR_KEYRING, 1, 9, "hex"},
        {"a mac 0\n", 0, DLS_ERR_KEYRING, 1, 7, "64 hex"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dls_keyring *kr = (dls_keyring *)1;
        dls_where w = {0};
        size_t n = cases[i].n ? cases[i].n : strlen(cases[i].text);
        int rc = dls_keyring_parse(&kr, cases[i].text, n, &w);
        if (rc != cases[i].code || w.line != cases[i].line || w.offset != cases[i].col ||
            !w.reason || !strstr(w.reason, cases[i].reason_has))
            fail_msg("case %zu: rc %d line %llu col %llu reason %s; expected %d %llu %llu *%s*", i,
                     rc, (unsigned long long)w.line, (unsigned long long)w.offset,
                     w.reason ? w.reason : "(null)", cases[i].code,
                     (unsigned long long)cases[i].line, (unsigned long long)cases[i].col,
                     cases[i].reason_has);
        assert_null(kr);
    }
}

/* Every strict prefix of a valid keyring line fails cleanly or parses as a
 * shorter valid keyring (truncated lines). */
static void test_keyring_truncated_lines(void **state)
{
    (void)state;
    const char full[] = "alpha ed25519 " K64 "\n";
    for (size_t n = 0; n < sizeof full - 1; n++) {
        dls_keyring *kr;
        dls_where w = {0};
        int rc = dls_keyring_parse(&kr, full, n, &w);
        if (n == 0 || n == sizeof full - 2) {
            assert_int_equal(rc, 0); /* empty, or complete without LF */
            assert_int_equal(dls_keyring_count(kr), n ? 1 : 0);
            dls_keyring_del(kr);
        } else {
            assert_int_equal(rc, DLS_ERR_KEYRING);
            assert_int_equal(w.line, 1);
            assert_true(w.offset >= 1 && w.offset <= n + 1);
        }
    }
}

/* Keyrings from dls_keyring_add; reference counting; frozen once shared;
 * O(1) lookup over many attacker-chosen names (the hash table grows). */
static void test_keyring_add_ref_lookup(void **state)
{
    (void)state;
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    uint8_t key[32] = {1};
    char name[65];
    for (int i = 0; i < 2000; i++) {
        int n = snprintf(name, sizeof name, "party-%d", i);
        key[1] = (uint8_t)i;
        assert_int_equal(dls_keyring_add(kr, (const uint8_t *)name, (size_t)n,
                                         i % 2 ? DLS_KEY_MAC : DLS_KEY_ED25519, key),
                         0);
    }
    assert_int_equal(dls_keyring_count(kr), 2000);
    for (int i = 0; i < 2000; i++) {
        int n = snprintf(name, sizeof name, "party-%d", i);
        dls_key_kind kind;
        const uint8_t *k;
        assert_int_equal(dls_keyring_lookup(kr, (const uint8_t *)name, (size_t)n, &kind, &k), 0);
        assert_int_equal(kind, i % 2 ? DLS_KEY_MAC : DLS_KEY_ED25519);
        assert_int_equal(k[1], (uint8_t)i);
    }
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"party-7", 7, DLS_KEY_MAC, key),
                     DLS_ERR_DUPLICATE);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"a b", 3, DLS_KEY_MAC, key),
                     DLS_ERR_INVAL);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"", 0, DLS_KEY_MAC, key), DLS_ERR_INVAL);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"k", 1, (dls_key_kind)7, key),
                     DLS_ERR_INVAL);
    assert_false(dls_name_valid((const uint8_t *)"\x20", 1));
    assert_true(dls_name_valid((const uint8_t *)"\x21\x7e\x80\xff", 4));
    assert_false(dls_name_valid((const uint8_t *)"\x7f", 1));
    /* shared: frozen, and alive until the last reference goes */
    dls_keyring *again = dls_keyring_ref(kr);
    assert_ptr_equal(again, kr);
    assert_int_equal(dls_keyring_add(kr, (const uint8_t *)"late", 4, DLS_KEY_MAC, key),
                     DLS_ERR_STATE);
    dls_resolver *r;
    assert_int_equal(dls_resolver_new_signed(&r, M1, kr), 0);
    dls_keyring_del(kr);
    dls_keyring_del(again);
    /* the resolver's reference keeps it alive */
    dls_attribution a;
    uint8_t fact[64];
    size_t fn = renewal_fact(fact, 1, 1);
    dls_resolver_attribute(r, fact, fn, &a);
    assert_int_equal(a.why, DLS_WHY_BARE_FACT);
    dls_resolver_del(r);
    dls_keyring_del(NULL);
    assert_int_equal(dls_keyring_count(NULL), 0);
}

static char g_tmp[256];

static void make_tmpdir(void)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/dls-attrib-XXXXXX");
    assert_non_null(mkdtemp(g_tmp));
}

static void rm_tmpdir(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    assert_int_equal(system(cmd), 0);
}

static void write_text(const char *path, const char *text, size_t n, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    assert_int_equal(fchmod(fd, mode), 0);
    close(fd);
}

/* Secret key files: written 0600, never overwritten; refused when mode &
 * 077 (0644, 0640, ...) with "chmod 600"; accepted 0600 and 0400. */
static void test_secret_files_and_modes(void **state)
{
    (void)state;
    make_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/agent.secret", g_tmp);
    dls_secret *s, *l;
    dls_where w = {0};
    assert_int_equal(dls_secret_generate(&s, "agent", DLS_KEY_ED25519), 0);
    assert_int_equal(dls_secret_save(s, path, &w), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(dls_secret_save(s, path, &w), DLS_ERR_EXISTS);
    assert_int_equal(dls_secret_load(&l, path, &w), 0);
    assert_string_equal(dls_secret_name(l), "agent");
    assert_int_equal(dls_secret_kind(l), DLS_KEY_ED25519);
    assert_memory_equal(dls_secret_public(l), dls_secret_public(s), 32);
    /* a loaded key signs what the generated key's keyring verifies */
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, s);
    uint8_t fact[64], env[512];
    size_t fn = renewal_fact(fact, 1, 2), en;
    assert_int_equal(dls_envelope_seal(l, M1, fact, fn, env, sizeof env, &en), 0);
    dls_attribution a;
    attribute_with(M1, kr, env, en, &a);
    assert_true(a.attributed);
    dls_keyring_del(kr);
    dls_secret_del(l);

    mode_t refused[] = {0644, 0640, 0604, 0660, 0601, 0610, 0700 | 0070, 0666};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        assert_int_equal(chmod(path, refused[i]), 0);
        l = (dls_secret *)1;
        w.reason = NULL;
        assert_int_equal(dls_secret_load(&l, path, &w), DLS_ERR_PERM);
        assert_null(l);
        assert_non_null(w.reason);
        assert_non_null(strstr(w.reason, "chmod 600"));
    }
    mode_t accepted[] = {0600, 0400};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(chmod(path, accepted[i]), 0);
        assert_int_equal(dls_secret_load(&l, path, &w), 0);
        dls_secret_del(l);
    }
    /* the keyring line of the public half */
    char line[200];
    assert_int_equal(dls_secret_keyring_line(s, line, sizeof line), 0);
    dls_keyring *one;
    assert_int_equal(dls_keyring_parse(&one, line, strlen(line), &w), 0);
    const uint8_t *pk;
    assert_int_equal(dls_keyring_lookup(one, (const uint8_t *)"agent", 5, NULL, &pk), 0);
    assert_memory_equal(pk, dls_secret_public(s), 32);
    dls_keyring_del(one);
    assert_int_equal(dls_secret_keyring_line(s, line, 20), DLS_ERR_TOOBIG);
    dls_secret_del(s);

    /* MAC secrets */
    snprintf(path, sizeof path, "%s/probe.secret", g_tmp);
    assert_int_equal(dls_secret_generate(&s, "probe", DLS_KEY_MAC), 0);
    assert_int_equal(dls_secret_save(s, path, &w), 0);
    assert_int_equal(dls_secret_load(&l, path, &w), 0);
    assert_int_equal(dls_secret_kind(l), DLS_KEY_MAC);
    assert_memory_equal(dls_secret_public(l), dls_secret_public(s), 32);
    assert_int_equal(dls_secret_keyring_line(l, line, sizeof line), 0);
    assert_non_null(strstr(line, "probe mac "));
    dls_secret_del(l);
    dls_secret_del(s);

    /* malformed secret files */
    uint8_t seed[32] = {9};
    assert_int_equal(dls_secret_from_seed(&s, "x", DLS_KEY_ED25519, seed), 0);
    char good[300], hex[129];
    tohex(dls_secret_key(s), 64, hex);
    snprintf(good, sizeof good, "x ed25519-secret %s\n", hex);
    char bad_pub[300];
    strcpy(bad_pub, good);
    bad_pub[17 + 64] = bad_pub[17 + 64] == '0' ? '1' : '0'; /* a digit of the public half */
    struct {
        const char *text;
        int code;
        const char *reason_has;
    } cases[] = {
        {good, 0, NULL},
        {bad_pub, DLS_ERR_KEYRING, "public half"},
        {"", DLS_ERR_KEYRING, "empty"},
        {"\n", DLS_ERR_KEYRING, "no key line"},
        {"# comment\n", DLS_ERR_KEYRING, "no key line"},
        {"# comment\nx mac-secret " K64 "\n", DLS_ERR_KEYRING, "exactly one line"},
        {"x ed25519 " K64 "\n", DLS_ERR_KEYRING, "kind"},
        {"x mac-secret " K64 "\n", 0, NULL},
        {"x mac-secret " K64, 0, NULL},
        {"x mac-secret " K64 "\r\n", 0, NULL},
        {"x mac-secret " K64 "\n\n", DLS_ERR_KEYRING, "exactly one line"},
        {"x mac-secret " K64 "\ny mac-secret " K64 "\n", DLS_ERR_KEYRING, "exactly one line"},
        {"x ed25519-secret " K64 "\n", DLS_ERR_KEYRING, "128 hex"},
    };
    snprintf(path, sizeof path, "%s/case.secret", g_tmp);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unlink(path);
        write_text(path, cases[i].text, strlen(cases[i].text), 0600);
        w.reason = NULL;
        int rc = dls_secret_load(&l, path, &w);
        if (rc != cases[i].code)
            fail_msg("secret case %zu: rc %d, expected %d (%s)", i, rc, cases[i].code,
                     w.reason ? w.reason : "");
        if (rc == 0) {
            dls_secret_del(l);
        } else {
            assert_non_null(strstr(w.reason, cases[i].reason_has));
        }
    }
    dls_secret_del(s);
    /* a file too long to be one line */
    static char big[3000];
    memset(big, 'a', sizeof big);
    unlink(path);
    write_text(path, big, sizeof big, 0600);
    assert_int_equal(dls_secret_load(&l, path, &w), DLS_ERR_KEYRING);
    /* missing file, directory */
    snprintf(path, sizeof path, "%s/none.secret", g_tmp);
    assert_int_equal(dls_secret_load(&l, path, &w), DLS_ERR_IO);
    assert_int_equal(w.sys_errno, ENOENT);
    assert_int_equal(dls_secret_load(&l, g_tmp, &w), DLS_ERR_IO);
    assert_int_equal(dls_keyring_load(&kr, path, &w), DLS_ERR_IO);
    /* an invalid name is refused */
    assert_int_equal(dls_secret_generate(&s, "two words", DLS_KEY_MAC), DLS_ERR_INVAL);
    assert_int_equal(dls_secret_generate(&s, "", DLS_KEY_MAC), DLS_ERR_INVAL);
    dls_secret_del(NULL);
    rm_tmpdir();
}

/* Assembly refusals (attribution.md, Resolvers): no resolver, a resolver
 * bound to another medium, a signed resolver with an empty keyring. */
static void test_assembly_refusals(void **state)
{
    (void)state;
    assert_int_equal(dls_resolver_check(NULL, M1), DLS_ERR_NORESOLVER);
    dls_keyring *empty, *kr;
    assert_int_equal(dls_keyring_new(&empty), 0);
    dls_resolver *r = (dls_resolver *)1;
    assert_int_equal(dls_resolver_new_signed(&r, M1, empty), DLS_ERR_EMPTY_KEYRING);
    assert_null(r);
    assert_int_equal(dls_keyring_parse(&kr, "# nobody\n", 9, NULL), 0);
    assert_int_equal(dls_resolver_new_signed(&r, M1, kr), DLS_ERR_EMPTY_KEYRING);
    dls_keyring_del(kr);
    assert_int_equal(dls_resolver_new_signed(&r, M1, NULL), DLS_ERR_INVAL);
    uint8_t key[32] = {0};
    assert_int_equal(dls_keyring_add(empty, (const uint8_t *)"a", 1, DLS_KEY_ED25519, key), 0);
    assert_int_equal(dls_resolver_new_signed(&r, M1, empty), 0);
    assert_int_equal(dls_resolver_check(r, M1), 0);
    assert_int_equal(dls_resolver_check(r, M2), DLS_ERR_RESOLVER_MEDIUM);
    assert_memory_equal(dls_resolver_medium_id(r), M1, 16);
    dls_resolver_del(r);
    assert_int_equal(dls_resolver_new_medium(&r, M2, "party", NULL), 0);
    assert_int_equal(dls_resolver_check(r, M2), 0);
    assert_int_equal(dls_resolver_check(r, M1), DLS_ERR_RESOLVER_MEDIUM);
    dls_resolver_del(r);
    const char *bad[] = {"", "a b", "tab\there",
                         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (int i = 0; i < 4; i++)
        assert_int_equal(dls_resolver_new_medium(&r, M1, bad[i], NULL), DLS_ERR_INVAL);
    dls_resolver_del(NULL);
    dls_keyring_del(empty);
    /* dls_strerror has words for the refusals */
    assert_string_not_equal(dls_strerror(DLS_ERR_EMPTY_KEYRING), "unknown error");
    assert_string_not_equal(dls_strerror(DLS_ERR_RESOLVER_MEDIUM), "unknown error");
    assert_string_not_equal(dls_strerror(DLS_ERR_NORESOLVER), "unknown error");
}

/* ---- replay -------------------------------------------------------------- */

/* Finds "dao.lease/seq" in a flat fact map (test helper). */
static uint64_t fact_seq(dls_bytes f)
{
    dls_mp_item m, k, v;
    assert_int_equal(dls_mp_read(f.p, f.n, 0, &m), 0);
    size_t off = m.end;
    for (uint32_t i = 0; i < m.len; i++) {
        assert_int_equal(dls_mp_read(f.p, f.n, off, &k), 0);
        assert_int_equal(dls_mp_read(f.p, f.n, k.end, &v), 0);
        off = v.end;
        if (k.type == DLS_MP_STR && k.len == 13 && !memcmp(k.data, "dao.lease/seq", 13))
            return v.v.u;
    }
    return 0;
}

/* attribution.md, Replay: a renewal counts only when its seq exceeds the
 * last counted of its lease; a proposal only when its seq exceeds the last
 * counted of its author on that medium. A renewal copied back onto the same
 * medium (same seq) is recognised as a replay. */
static void test_replay_checker(void **state)
{
    (void)state;
    dls_replay *rp;
    assert_int_equal(dls_replay_new(&rp), 0);
    assert_int_equal(dls_replay_renewal_check(rp, 17, 1), DLS_REPLAY_COUNTED);
    assert_int_equal(dls_replay_renewal_check(rp, 17, 1), DLS_REPLAY_COUNTED); /* check records nothing */
    assert_int_equal(dls_replay_renewal_count(rp, 17, 1), DLS_REPLAY_COUNTED);
    assert_int_equal(dls_replay_renewal_count(rp, 17, 1), DLS_REPLAY_REPLAY);
    assert_int_equal(dls_replay_renewal_count(rp, 17, 0), DLS_REPLAY_REPLAY);
    assert_int_equal(dls_replay_renewal_count(rp, 17, 5), DLS_REPLAY_COUNTED);
    assert_int_equal(dls_replay_renewal_count(rp, 17, 3), DLS_REPLAY_REPLAY); /* older */
    assert_int_equal(dls_replay_renewal_last(rp, 17), 5);
    assert_int_equal(dls_replay_renewal_count(rp, 18, 1), DLS_REPLAY_COUNTED); /* per lease */
    assert_int_equal(dls_replay_leases(rp), 2);
    dls_replay_lease_forget(rp, 17);
    assert_int_equal(dls_replay_renewal_last(rp, 17), 0);
    assert_int_equal(dls_replay_leases(rp), 1);
    assert_int_equal(dls_replay_renewal_count(rp, 0x7fffffffffffffffull, 0x7fffffffffffffffull),
                     DLS_REPLAY_COUNTED);

    const uint8_t *east = (const uint8_t *)"worker-east", *west = (const uint8_t *)"worker-west";
    assert_int_equal(dls_replay_proposal_count(rp, east, 11, M1, 1), DLS_REPLAY_COUNTED);
    assert_int_equal(dls_replay_proposal_count(rp, east, 11, M1, 1), DLS_REPLAY_REPLAY);
    assert_int_equal(dls_replay_proposal_count(rp, east, 11, M2, 1), DLS_REPLAY_COUNTED); /* per medium */
    assert_int_equal(dls_replay_proposal_count(rp, west, 11, M1, 1), DLS_REPLAY_COUNTED); /* per author */
    assert_int_equal(dls_replay_proposal_check(rp, east, 11, M1, 2), DLS_REPLAY_COUNTED);
    assert_int_equal(dls_replay_proposal_last(rp, east, 11, M1), 1);
    assert_int_equal(dls_replay_authors(rp), 3);
    assert_int_equal(dls_replay_proposal_count(rp, east, 0, M1, 1), DLS_ERR_INVAL);
    assert_int_equal(dls_replay_proposal_count(rp, east, 65, M1, 1), DLS_ERR_INVAL);

    /* end to end: a signed renewal, then the same record appended again */
    dls_secret *s = secret_seeded("worker-east", DLS_KEY_ED25519);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, s);
    dls_resolver *r;
    assert_int_equal(dls_resolver_new_signed(&r, M1, kr), 0);
    uint8_t fact[64], env[512];
    size_t fn = renewal_fact(fact, 40, 4), en;
    assert_int_equal(dls_envelope_seal(s, M1, fact, fn, env, sizeof env, &en), 0);
    int verdicts[2];
    for (int i = 0; i < 2; i++) {
        dls_attribution a;
        dls_resolver_attribute(r, env, en, &a);
        assert_true(a.attributed); /* a copy verifies: only seq defeats it */
        verdicts[i] = dls_replay_renewal_count(rp, 40, fact_seq(a.fact));
    }
    assert_int_equal(verdicts[0], DLS_REPLAY_COUNTED);
    assert_int_equal(verdicts[1], DLS_REPLAY_REPLAY);
    dls_resolver_del(r);
    dls_keyring_del(kr);
    dls_secret_del(s);
    dls_replay_del(rp);
    dls_replay_del(NULL);
}

/* The replay checker against a plain model under random inserts, counts
 * and forgets (exercises the hash table's growth and backward-shift
 * deletion). Seeded. */
static void test_replay_random_model(void **state)
{
    (void)state;
    enum { LEASES = 600 };
    static uint64_t model[LEASES];
    memset(model, 0, sizeof model);
    dls_replay *rp;
    assert_int_equal(dls_replay_new(&rp), 0);
    for (int step = 0; step < 60000; step++) {
        uint64_t lease = rnd() % LEASES;
        uint64_t op = rnd() % 10;
        if (op == 0) {
            dls_replay_lease_forget(rp, lease * 0x9e3779b97f4a7c15ull);
            model[lease] = 0;
        } else {
            uint64_t seq = rnd() % 50;
            int want = seq > model[lease] ? DLS_REPLAY_COUNTED : DLS_REPLAY_REPLAY;
            int got = dls_replay_renewal_count(rp, lease * 0x9e3779b97f4a7c15ull, seq);
            if (got != want)
                fail_msg("step %d lease %llu seq %llu: got %d want %d (seed %llu)", step,
                         (unsigned long long)lease, (unsigned long long)seq, got, want,
                         (unsigned long long)g_seed);
            if (want == DLS_REPLAY_COUNTED)
                model[lease] = seq;
        }
    }
    size_t live = 0;
    for (int i = 0; i < LEASES; i++) {
        live += model[i] != 0;
        assert_int_equal(dls_replay_renewal_last(rp, (uint64_t)i * 0x9e3779b97f4a7c15ull),
                         model[i]);
    }
    assert_int_equal(dls_replay_leases(rp), live);
    dls_replay_del(rp);
}

/* ---- interop with PyNaCl -------------------------------------------------- */

static const char *python(void)
{
    const char *p = getenv("DLS_PYTHON");
    return p ? p : "/usr/bin/python3";
}

/* Runs tests/python/nacl_interop.py over a file of requests; returns the
 * answers (one JSON object a line), or NULL when Python cannot run. */
static json_t **run_python(const char *requests_path, size_t count)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' '%s/python/nacl_interop.py' < '%s'", python(),
             DLS_TEST_SRCDIR, requests_path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    json_t **out = calloc(count, sizeof *out);
    char *line = NULL;
    size_t cap = 0, i = 0;
    while (getline(&line, &cap, p) > 0 && i < count) {
        json_error_t e;
        out[i++] = json_loads(line, 0, &e);
    }
    free(line);
    int st = pclose(p);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || i != count) {
        for (size_t k = 0; k < i; k++)
            json_decref(out[k]);
        free(out);
        return NULL;
    }
    return out;
}

static bool python_usable(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "'%s' -c 'import nacl.signing, msgpack' 2>/dev/null", python());
    return system(cmd) == 0;
}

/* Envelopes written by C verify in Python and vice versa (an independent
 * implementation of attribution.md; PyNaCl + hmac + msgpack). */
static void test_python_interop(void **state)
{
    (void)state;
    if (!python_usable()) {
        print_message("python with nacl and msgpack not available: skipped\n");
        skip();
    }
    make_tmpdir();
    enum { N = 24 };
    char path[512];
    snprintf(path, sizeof path, "%s/req.jsonl", g_tmp);
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    static uint8_t env[N][1200], fact[N][900], seeds[N][32], medium[N][16];
    size_t env_n[N], fact_n[N];
    char names[N][65];
    static char hex[4000];
    /* C -> Python: N envelopes, the odd ones tampered (one tag bit) */
    for (int i = 0; i < N; i++) {
        dls_key_kind kind = i % 3 == 2 ? DLS_KEY_MAC : DLS_KEY_ED25519;
        size_t nl = 1 + rnd() % 64;
        for (size_t k = 0; k < nl; k++)
            names[i][k] = (char)('!' + rnd() % 94);
        names[i][nl] = 0;
        rnd_bytes(seeds[i], 32);
        rnd_bytes(medium[i], 16);
        fact_n[i] = rnd() % 800;
        rnd_bytes(fact[i], fact_n[i]);
        dls_secret *s;
        assert_int_equal(dls_secret_from_seed(&s, names[i], kind, seeds[i]), 0);
        assert_int_equal(dls_envelope_seal(s, medium[i], fact[i], fact_n[i], env[i],
                                           sizeof env[i], &env_n[i]),
                         0);
        if (i % 2)
            env[i][env_n[i] - 1 - rnd() % 32] ^= (uint8_t)(1u << (rnd() % 8));
        json_t *req = json_object();
        json_object_set_new(req, "op", json_string("verify"));
        json_object_set_new(req, "kind", json_string(kind == DLS_KEY_MAC ? "mac" : "ed25519"));
        tohex(dls_secret_public(s), 32, hex);
        json_object_set_new(req, "key_hex", json_string(hex));
        json_object_set_new(req, "author", json_string(names[i]));
        tohex(medium[i], 16, hex);
        json_object_set_new(req, "medium_hex", json_string(hex));
        tohex(env[i], env_n[i], hex);
        json_object_set_new(req, "envelope_hex", json_string(hex));
        char *line = json_dumps(req, JSON_COMPACT);
        fprintf(f, "%s\n", line);
        free(line);
        json_decref(req);
        dls_secret_del(s);
    }
    /* Python -> C: the same parties sign the same facts */
    for (int i = 0; i < N; i++) {
        json_t *req = json_object();
        bool mac = i % 3 == 2;
        json_object_set_new(req, "op", json_string("sign"));
        json_object_set_new(req, "kind", json_string(mac ? "mac" : "ed25519"));
        tohex(seeds[i], 32, hex);
        json_object_set_new(req, mac ? "key_hex" : "seed_hex", json_string(hex));
        json_object_set_new(req, "author", json_string(names[i]));
        tohex(medium[i], 16, hex);
        json_object_set_new(req, "medium_hex", json_string(hex));
        tohex(fact[i], fact_n[i], hex);
        json_object_set_new(req, "fact_hex", json_string(hex));
        char *line = json_dumps(req, JSON_COMPACT);
        fprintf(f, "%s\n", line);
        free(line);
        json_decref(req);
    }
    fclose(f);
    json_t **ans = run_python(path, 2 * N);
    assert_non_null(ans);
    for (int i = 0; i < N; i++) {
        bool v = json_is_true(json_object_get(ans[i], "verifies"));
        if (v != !(i % 2))
            fail_msg("python verified C envelope %d: %d (tampered %d)", i, v, i % 2);
        if (i % 2)
            assert_string_equal(json_string_value(json_object_get(ans[i], "why")), "signature");
    }
    static uint8_t pyenv[1200], msg[1200];
    for (int i = 0; i < N; i++) {
        json_t *a = ans[N + i];
        size_t n = test_unhex(json_string_value(json_object_get(a, "envelope_hex")), pyenv,
                         sizeof pyenv);
        size_t mn = test_unhex(json_string_value(json_object_get(a, "message_hex")), msg, sizeof msg);
        size_t mymn;
        static uint8_t mym[1200];
        assert_int_equal(dls_envelope_message(medium[i], (const uint8_t *)names[i],
                                              strlen(names[i]), fact[i], fact_n[i], mym,
                                              sizeof mym, &mymn),
                         0);
        assert_int_equal(mn, mymn);
        assert_memory_equal(msg, mym, mn);
        dls_keyring *kr;
        assert_int_equal(dls_keyring_new(&kr), 0);
        uint8_t key[32];
        test_unhex(json_string_value(json_object_get(a, "key_hex")), key, 32);
        assert_int_equal(dls_keyring_add(kr, (const uint8_t *)names[i], strlen(names[i]),
                                         i % 3 == 2 ? DLS_KEY_MAC : DLS_KEY_ED25519, key),
                         0);
        dls_attribution at;
        attribute_with(medium[i], kr, pyenv, n, &at);
        assert_true(at.attributed);
        assert_true(bytes_str(at.author, names[i]));
        assert_true(bytes_eq(at.fact, fact[i], fact_n[i]));
        /* and Python's bytes are exactly ours for the untampered ones */
        if (!(i % 2)) {
            assert_int_equal(n, env_n[i]);
            assert_memory_equal(pyenv, env[i], n);
        }
        /* read from another medium it fails */
        attribute_with(M2, kr, pyenv, n, &at);
        assert_false(at.attributed);
        dls_keyring_del(kr);
    }
    for (int i = 0; i < 2 * N; i++)
        json_decref(ans[i]);
    free(ans);
    rm_tmpdir();
}

/* attribution.md rev 4: batch envelopes written by C verify in Python and
 * vice versa (the independent implementation in tests/python/nacl_interop.py:
 * PyNaCl + hmac + msgpack), byte for byte the same envelope; tampered ones
 * fail in Python; read from another medium they fail in C. */
static void test_python_interop_batch(void **state)
{
    (void)state;
    if (!python_usable()) {
        print_message("python with nacl and msgpack not available: skipped\n");
        skip();
    }
    make_tmpdir();
    enum { N = 12, MAXF = 40 };
    char path[512];
    snprintf(path, sizeof path, "%s/req.jsonl", g_tmp);
    FILE *f = fopen(path, "we");
    assert_non_null(f);
    static uint8_t env[N][8192], fb[N][MAXF][100], seeds[N][32], medium[N][16];
    static dls_bytes facts[N][MAXF];
    size_t env_n[N], count[N];
    char names[N][65];
    static char hex[20000];
    for (int i = 0; i < N; i++) {
        dls_key_kind kind = i % 4 >= 2 ? DLS_KEY_MAC : DLS_KEY_ED25519;
        size_t nl = 1 + rnd() % 64;
        for (size_t k = 0; k < nl; k++)
            names[i][k] = (char)('!' + rnd() % 94);
        names[i][nl] = 0;
        rnd_bytes(seeds[i], 32);
        rnd_bytes(medium[i], 16);
        count[i] = 1 + rnd() % MAXF;
        for (size_t k = 0; k < count[i]; k++) {
            size_t n = rnd() % 100;
            rnd_bytes(fb[i][k], n);
            facts[i][k] = (dls_bytes){fb[i][k], n};
        }
        dls_secret *s;
        assert_int_equal(dls_secret_from_seed(&s, names[i], kind, seeds[i]), 0);
        assert_int_equal(dls_batch_seal(s, medium[i], facts[i], count[i], env[i], sizeof env[i],
                                        &env_n[i]),
                         0);
        json_t *req = json_object();
        json_object_set_new(req, "op", json_string("verify_batch"));
        json_object_set_new(req, "kind", json_string(kind == DLS_KEY_MAC ? "mac" : "ed25519"));
        tohex(dls_secret_public(s), 32, hex);
        json_object_set_new(req, "key_hex", json_string(hex));
        json_object_set_new(req, "author", json_string(names[i]));
        tohex(medium[i], 16, hex);
        json_object_set_new(req, "medium_hex", json_string(hex));
        static uint8_t x[8192];
        memcpy(x, env[i], env_n[i]);
        if (i % 2) /* one tag bit */
            x[env_n[i] - 1 - rnd() % 32] ^= (uint8_t)(1u << (rnd() % 8));
        tohex(x, env_n[i], hex);
        json_object_set_new(req, "envelope_hex", json_string(hex));
        char *line = json_dumps(req, JSON_COMPACT);
        fprintf(f, "%s\n", line);
        free(line);
        json_decref(req);
        dls_secret_del(s);
    }
    for (int i = 0; i < N; i++) { /* Python signs the same facts */
        json_t *req = json_object();
        bool mac = i % 4 >= 2;
        json_object_set_new(req, "op", json_string("sign_batch"));
        json_object_set_new(req, "kind", json_string(mac ? "mac" : "ed25519"));
        tohex(seeds[i], 32, hex);
        json_object_set_new(req, mac ? "key_hex" : "seed_hex", json_string(hex));
        json_object_set_new(req, "author", json_string(names[i]));
        tohex(medium[i], 16, hex);
        json_object_set_new(req, "medium_hex", json_string(hex));
        json_t *fa = json_array();
        for (size_t k = 0; k < count[i]; k++) {
            tohex(facts[i][k].p, facts[i][k].n, hex);
            json_array_append_new(fa, json_string(hex));
        }
        json_object_set_new(req, "facts_hex", fa);
        char *line = json_dumps(req, JSON_COMPACT);
        fprintf(f, "%s\n", line);
        free(line);
        json_decref(req);
    }
    fclose(f);
    json_t **ans = run_python(path, 2 * N);
    assert_non_null(ans);
    for (int i = 0; i < N; i++) {
        bool v = json_is_true(json_object_get(ans[i], "verifies"));
        if (v != !(i % 2))
            fail_msg("python verified C batch %d: %d (tampered %d)", i, v, i % 2);
        assert_int_equal(json_array_size(json_object_get(ans[i], "facts_hex")), count[i]);
    }
    static uint8_t pyenv[8192], msg[8192], mym[8192];
    for (int i = 0; i < N; i++) {
        json_t *a = ans[N + i];
        size_t n = test_unhex(json_string_value(json_object_get(a, "envelope_hex")), pyenv,
                         sizeof pyenv);
        size_t mn = test_unhex(json_string_value(json_object_get(a, "message_hex")), msg, sizeof msg);
        size_t mymn;
        assert_int_equal(dls_batch_message(medium[i], (const uint8_t *)names[i], strlen(names[i]),
                                           facts[i], count[i], mym, sizeof mym, &mymn),
                         0);
        assert_int_equal(mn, mymn);
        assert_memory_equal(msg, mym, mn);
        assert_int_equal(n, env_n[i]); /* byte for byte what C seals */
        assert_memory_equal(pyenv, env[i], n);
        dls_keyring *kr;
        assert_int_equal(dls_keyring_new(&kr), 0);
        uint8_t key[32];
        test_unhex(json_string_value(json_object_get(a, "key_hex")), key, 32);
        assert_int_equal(dls_keyring_add(kr, (const uint8_t *)names[i], strlen(names[i]),
                                         i % 4 >= 2 ? DLS_KEY_MAC : DLS_KEY_ED25519, key),
                         0);
        dls_resolver *r;
        assert_int_equal(dls_resolver_new_signed(&r, medium[i], kr), 0);
        dls_attribution at;
        dls_facts it;
        dls_resolver_attribute_facts(r, pyenv, n, &at, &it);
        assert_true(at.attributed);
        assert_true(bytes_str(at.author, names[i]));
        dls_bytes fct;
        uint32_t ix;
        for (size_t k = 0; k < count[i]; k++) {
            assert_true(dls_facts_next(&it, &fct, &ix));
            assert_int_equal(ix, k);
            assert_true(bytes_eq(fct, facts[i][k].p, facts[i][k].n));
        }
        assert_false(dls_facts_next(&it, &fct, &ix));
        dls_resolver_del(r);
        assert_int_equal(dls_resolver_new_signed(&r, M2, kr), 0);
        dls_resolver_attribute_facts(r, pyenv, n, &at, NULL);
        assert_false(at.attributed);
        dls_resolver_del(r);
        dls_keyring_del(kr);
    }
    for (int i = 0; i < 2 * N; i++)
        json_decref(ans[i]);
    free(ans);
    rm_tmpdir();
}

/* ---- daolease keygen ------------------------------------------------------ */

static int run_cmd(const char *cmd, char *out, size_t cap)
{
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* cli.md: `keygen NAME [--mac] [--dir D]` writes NAME.secret (0600) and
 * prints the keyring line; refuses to overwrite; --help. */
static void test_keygen_command(void **state)
{
    (void)state;
    const char *bin = getenv("DAOLEASE_BIN");
    if (!bin || access(bin, X_OK) != 0) {
        print_message("DAOLEASE_BIN not set: skipped\n");
        skip();
    }
    make_tmpdir();
    char cmd[1024], out[4096], path[512];
    snprintf(cmd, sizeof cmd, "'%s' keygen agent-3 --dir '%s' 2>&1", bin, g_tmp);
    assert_int_equal(run_cmd(cmd, out, sizeof out), 0);
    snprintf(path, sizeof path, "%s/agent-3.secret", g_tmp);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    dls_secret *s;
    dls_where w;
    assert_int_equal(dls_secret_load(&s, path, &w), 0);
    assert_non_null(strstr(out, "agent-3 ed25519 "));
    dls_keyring *kr;
    assert_int_equal(dls_keyring_parse(&kr, out, strlen(out), &w), 0);
    const uint8_t *pk;
    assert_int_equal(dls_keyring_lookup(kr, (const uint8_t *)"agent-3", 7, NULL, &pk), 0);
    assert_memory_equal(pk, dls_secret_public(s), 32);
    dls_keyring_del(kr);
    dls_secret_del(s);
    /* never overwrites */
    assert_int_equal(run_cmd(cmd, out, sizeof out), 1);
    assert_non_null(strstr(out, "agent-3.secret"));
    /* MAC */
    snprintf(cmd, sizeof cmd, "'%s' keygen probe-5 --mac --dir '%s' 2>&1", bin, g_tmp);
    assert_int_equal(run_cmd(cmd, out, sizeof out), 0);
    assert_non_null(strstr(out, "probe-5 mac "));
    /* usage errors */
    snprintf(cmd, sizeof cmd, "'%s' keygen 2>&1", bin);
    assert_int_equal(run_cmd(cmd, out, sizeof out), 2);
    snprintf(cmd, sizeof cmd, "'%s' keygen a/b --dir '%s' 2>&1", bin, g_tmp);
    assert_int_equal(run_cmd(cmd, out, sizeof out), 2);
    snprintf(cmd, sizeof cmd, "'%s' keygen x --bogus 2>&1", bin);
    assert_int_equal(run_cmd(cmd, out, sizeof out), 2);
    snprintf(cmd, sizeof cmd, "'%s' keygen --help", bin);
    assert_int_equal(run_cmd(cmd, out, sizeof out), 0);
    assert_non_null(strstr(out, "usage: daolease keygen"));
    rm_tmpdir();
}

/* ---- robustness ----------------------------------------------------------- */

/* Random bytes and random mutations of a valid envelope never crash and are
 * never attributed. Seeded. */
static void test_random_records_never_attributed(void **state)
{
    (void)state;
    env_fixture f;
    fixture_make(&f);
    dls_resolver *r;
    assert_int_equal(dls_resolver_new_signed(&r, M1, f.kr), 0);
    static buf b;
    size_t base = build_envelope(&b, f.pt.author, f.pt.fact, f.pt.fact_n, f.pt.tag, 64, false);
    uint8_t orig[512];
    memcpy(orig, b.p, base);
    for (int i = 0; i < 20000; i++) {
        uint8_t x[600];
        size_t n;
        if (i % 2) {
            n = rnd() % sizeof x;
            rnd_bytes(x, n);
        } else {
            n = base;
            memcpy(x, orig, n);
            int edits = 1 + (int)(rnd() % 4);
            for (int e = 0; e < edits; e++)
                x[rnd() % n] = (uint8_t)rnd();
            if (rnd() % 4 == 0)
                n = rnd() % n;
        }
        dls_attribution a;
        dls_resolver_attribute(r, x, n, &a);
        if (a.attributed && !(n == base && memcmp(x, orig, n) == 0))
            fail_msg("iteration %d: a mutated record was attributed (seed %llu)", i,
                     (unsigned long long)g_seed);
        if (a.author.n)
            assert_true(a.author.p >= x && a.author.p + a.author.n <= x + n);
        if (a.fact.n)
            assert_true(a.fact.p >= x && a.fact.p + a.fact.n <= x + n);
    }
    dls_resolver_del(r);
    fixture_free(&f);
}

/* ---- the shared keyed hash table (vocab/htab.h) ------------------------ */

/* A reference model: a plain list of (key, value) pairs. */
typedef struct model_ent {
    uint8_t k[100];
    size_t n;
    uint64_t v;
    bool live;
} model_ent;

static model_ent *model_find(model_ent *m, size_t nm, const uint8_t *k, size_t n)
{
    for (size_t i = 0; i < nm; i++)
        if (m[i].live && m[i].n == n && (n == 0 || !memcmp(m[i].k, k, n)))
            return &m[i];
    return NULL;
}

/* The keyring index, the replay checker, rule 6 and the audit all rely on
 * this table: random puts, finds and backward-shift deletions over a small
 * key space (so keys recur, probe runs wrap and deletions shift), with keys
 * both inside the slot (<= DLS_HTAB_INLINE bytes) and on the heap, must agree
 * with a plain list at every step. Seeded (DLS_SEED replays). */
static void test_htab_matches_model(void **state)
{
    (void)state;
    enum { SPACE = 300, OPS = 20000 };
    static model_ent m[SPACE];
    memset(m, 0, sizeof m);
    size_t nm = 0, live = 0;
    /* the key space: lengths 0..99, bytes from a 2-letter alphabet so that
     * many keys share prefixes and lengths */
    static uint8_t keys[SPACE][100];
    static size_t lens[SPACE];
    for (size_t i = 0; i < SPACE; i++) {
        lens[i] = i == 0 ? 0 : (size_t)(rnd() % 100);
        for (size_t j = 0; j < lens[i]; j++)
            keys[i][j] = (uint8_t)('a' + rnd() % 2);
    }
    dls_htab t;
    dls_htab_init(&t);
    for (int op = 0; op < OPS; op++) {
        size_t ki = (size_t)(rnd() % SPACE);
        const uint8_t *k = keys[ki];
        size_t n = lens[ki];
        model_ent *e = model_find(m, nm, k, n);
        switch (rnd() % 3) {
        case 0: { /* put: value = op */
            uint64_t *v;
            bool existed;
            assert_int_equal(dls_htab_put(&t, k, n, &v, &existed), 0);
            assert_int_equal(existed, e != NULL);
            if (!e) {
                assert_int_equal(*v, 0); /* a new key holds 0 */
                e = &m[nm++];
                memcpy(e->k, k, n);
                e->n = n;
                e->live = true;
                live++;
            } else {
                assert_int_equal(*v, e->v);
            }
            *v = e->v = (uint64_t)op + 1;
            break;
        }
        case 1: { /* find */
            const uint64_t *v = dls_htab_find(&t, k, n);
            if (e) {
                assert_non_null(v);
                assert_int_equal(*v, e->v);
            } else {
                assert_null(v);
            }
            break;
        }
        default: /* del */
            assert_int_equal(dls_htab_del(&t, k, n), e ? 0 : DLS_ERR_NOTFOUND);
            if (e) {
                e->live = false;
                live--;
            }
            break;
        }
        assert_int_equal(t.count, live);
        if (nm == SPACE) { /* compact the model's dead entries */
            size_t w = 0;
            for (size_t i = 0; i < nm; i++)
                if (m[i].live)
                    m[w++] = m[i];
            nm = w;
        }
    }
    /* every surviving key still maps to its last value */
    for (size_t i = 0; i < nm; i++) {
        if (!m[i].live)
            continue;
        const uint64_t *v = dls_htab_find(&t, m[i].k, m[i].n);
        assert_non_null(v);
        assert_int_equal(*v, m[i].v);
    }
    dls_htab_free(&t);
    dls_htab_free(&t); /* idempotent */
    dls_htab_free(NULL);
}

/* Edges of the table: key length limits, NULL keys, an empty table, and the
 * uint64 convenience (8 bytes little-endian: the same key as those bytes). */
static void test_htab_edges(void **state)
{
    (void)state;
    dls_htab t;
    dls_htab_init(&t);
    static uint8_t big[DLS_HTAB_KEY_MAX + 1];
    memset(big, 'x', sizeof big);
    uint64_t *v;
    bool existed = true;
    assert_null(dls_htab_find(&t, big, 3)); /* empty table */
    assert_int_equal(dls_htab_del(&t, big, 3), DLS_ERR_NOTFOUND);
    assert_int_equal(dls_htab_put(&t, big, DLS_HTAB_KEY_MAX + 1, &v, NULL), DLS_ERR_INVAL);
    assert_int_equal(dls_htab_put(&t, NULL, 1, &v, NULL), DLS_ERR_INVAL);
    assert_int_equal(dls_htab_put(NULL, big, 1, &v, NULL), DLS_ERR_INVAL);
    assert_int_equal(dls_htab_put(&t, big, DLS_HTAB_KEY_MAX, &v, &existed), 0);
    assert_false(existed);
    *v = 11;
    assert_int_equal(dls_htab_put(&t, big, DLS_HTAB_INLINE, &v, NULL), 0);
    *v = 12;
    assert_int_equal(dls_htab_put(&t, big, DLS_HTAB_INLINE + 1, &v, NULL), 0);
    *v = 13;
    assert_int_equal(dls_htab_put(&t, NULL, 0, &v, NULL), 0); /* the empty key */
    *v = 14;
    assert_int_equal(*dls_htab_find(&t, big, DLS_HTAB_KEY_MAX), 11);
    assert_int_equal(*dls_htab_find(&t, big, DLS_HTAB_INLINE), 12);
    assert_int_equal(*dls_htab_find(&t, big, DLS_HTAB_INLINE + 1), 13);
    assert_int_equal(*dls_htab_find(&t, NULL, 0), 14);
    assert_null(dls_htab_find(&t, big, DLS_HTAB_KEY_MAX + 1));
    assert_null(dls_htab_find(&t, NULL, 2));

    const uint64_t id = 0x0102030405060708ull;
    const uint8_t le[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    assert_int_equal(dls_htab_put_u64(&t, id, &v, &existed), 0);
    assert_false(existed);
    *v = 99;
    assert_int_equal(*dls_htab_find(&t, le, sizeof le), 99);
    assert_int_equal(*dls_htab_find_u64(&t, id), 99);
    assert_null(dls_htab_find_u64(&t, id + 1));
    assert_int_equal(dls_htab_del_u64(&t, id + 1), DLS_ERR_NOTFOUND);
    assert_int_equal(dls_htab_del_u64(&t, id), 0);
    assert_null(dls_htab_find(&t, le, sizeof le));
    assert_int_equal(t.count, 4);
    dls_htab_free(&t);

    /* two tables draw different hash keys (keyed, not a fixed hash) */
    dls_htab a, b;
    dls_htab_init(&a);
    dls_htab_init(&b);
    assert_memory_not_equal(a.hkey, b.hkey, sizeof a.hkey);
    dls_htab_free(&a);
    dls_htab_free(&b);
}

/* ---- batch envelopes (attribution.md revision 4; issue 13 item 1) --------- */

/* M_batch built here independently of the library (vectors README). */
static size_t mbatch_ref(const uint8_t medium[16], const char *author, const dls_bytes *facts,
                         size_t count, uint8_t *out)
{
    size_t n = 0, al = strlen(author);
    memcpy(out, "daolease.batch.v1", 17), n += 17;
    memcpy(out + n, medium, 16), n += 16;
    out[n++] = (uint8_t)al;
    memcpy(out + n, author, al), n += al;
    for (int k = 0; k < 4; k++)
        out[n++] = (uint8_t)(count >> (8 * k));
    for (size_t i = 0; i < count; i++) {
        for (int k = 0; k < 4; k++)
            out[n++] = (uint8_t)(facts[i].n >> (8 * k));
        memcpy(out + n, facts[i].p, facts[i].n), n += facts[i].n;
    }
    return n;
}

/* envelopes-batch.jsonl (vectors README): rebuild M_batch and compare
 * message_hex; the tag over it where tag_matches_message; dls_batch_seal
 * reproduces every verifying envelope byte for byte; decode envelope_hex,
 * attribute it as read from medium_id_hex with the author's key, compare
 * verifies and why; a verified batch yields its facts in array order with
 * indexes 0…n-1, a batch that fails or is malformed yields none. */
static void test_vectors_envelopes_batch(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/envelopes-batch.jsonl", vectors_dir());
    size_t n;
    char *text = (char *)read_file(path, &n);
    assert_non_null(text);
    static uint8_t fbytes[70000], msg[90000], mine[90000], exp_env[70000], tag[64];
    static dls_bytes facts[4097];
    unsigned lines = 0, verified = 0, failed = 0, malformed = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t jerr;
        json_t *j = json_loads(line, 0, &jerr);
        assert_non_null(j);
        lines++;
        const char *note = json_string_value(json_object_get(j, "note"));
        const char *author = json_string_value(json_object_get(j, "author"));
        bool has_seed = json_object_get(j, "seed_hex") != NULL;
        bool has_sig = json_object_get(j, "sig_hex") != NULL;
        uint8_t key[32], medium[16], signed_for[16];
        test_unhex(json_string_value(json_object_get(j, has_sig ? "seed_hex" : "mac_key_hex")), key,
              32);
        (void)has_seed;
        test_unhex(json_string_value(json_object_get(j, "medium_id_hex")), medium, 16);
        json_t *sf = json_object_get(j, "signed_for_medium_hex");
        test_unhex(json_string_value(sf ? sf : json_object_get(j, "medium_id_hex")), signed_for, 16);
        size_t count = (size_t)json_integer_value(json_object_get(j, "count"));
        json_t *fh = json_object_get(j, "facts_hex");
        size_t used = 0;
        if (json_is_array(fh)) {
            assert_int_equal(json_array_size(fh), count);
            for (size_t i = 0; i < count; i++) {
                size_t k = test_unhex(json_string_value(json_array_get(fh, i)), fbytes + used,
                                 sizeof fbytes - used);
                facts[i] = (dls_bytes){fbytes + used, k};
                used += k;
            }
        } else { /* 4097 facts, each each_fact_hex */
            size_t k = test_unhex(json_string_value(json_object_get(j, "each_fact_hex")), fbytes, 8);
            for (size_t i = 0; i < count; i++)
                facts[i] = (dls_bytes){fbytes, k};
        }
        size_t tag_n = test_unhex(json_string_value(json_object_get(j, has_sig ? "sig_hex" : "mac_hex")),
                             tag, sizeof tag);
        size_t env_n = test_unhex(json_string_value(json_object_get(j, "envelope_hex")), exp_env,
                             sizeof exp_env);
        bool verifies = json_is_true(json_object_get(j, "verifies"));
        const char *why = json_string_value(json_object_get(j, "why")); /* NULL for null */
        bool is_malformed = why && !strcmp(why, "malformed");
        verified += verifies;
        failed += !verifies && !is_malformed;
        malformed += is_malformed;

        /* M_batch as read from medium_id_hex: message_hex, or its SHA-256 */
        size_t mlen = mbatch_ref(medium, author, facts, count, msg);
        json_t *mh = json_object_get(j, "message_hex");
        if (json_is_string(mh)) {
            static uint8_t want[90000];
            size_t wn = test_unhex(json_string_value(mh), want, sizeof want);
            assert_int_equal(mlen, wn);
            assert_memory_equal(msg, want, wn);
        } else {
            uint8_t d[32], want[32];
            crypto_hash_sha256(d, msg, mlen);
            test_unhex(json_string_value(json_object_get(j, "message_sha256_hex")), want, 32);
            assert_memory_equal(d, want, 32);
        }
        /* the library's M_batch agrees wherever the facts are within limits */
        size_t ml;
        int mrc = dls_batch_message(medium, (const uint8_t *)author, strlen(author), facts, count,
                                    mine, sizeof mine, &ml);
        if (count >= 1 && count <= DLS_BATCH_COUNT_MAX && used <= 4096 * count &&
            !strstr(note, "4097 bytes")) {
            assert_int_equal(mrc, 0);
            assert_int_equal(ml, mlen);
            assert_memory_equal(mine, msg, mlen);
        } else {
            assert_int_not_equal(mrc, 0);
        }

        dls_secret *s;
        assert_int_equal(dls_secret_from_seed(&s, author, has_sig ? DLS_KEY_ED25519 : DLS_KEY_MAC,
                                              key),
                         0);
        if (json_is_true(json_object_get(j, "tag_matches_message"))) {
            uint8_t t[64];
            if (has_sig)
                crypto_sign_detached(t, NULL, msg, mlen, dls_secret_key(s));
            else
                crypto_auth(t, msg, mlen, key);
            assert_memory_equal(t, tag, tag_n);
        }
        if (verifies) {
            /* a writer reproduces the envelope byte for byte */
            size_t mine_n;
            assert_int_equal(dls_batch_seal(s, medium, facts, count, mine, sizeof mine, &mine_n),
                             0);
            assert_int_equal(mine_n, env_n);
            assert_memory_equal(mine, exp_env, env_n);
            assert_int_equal(dls_batch_size(strlen(author), facts, count,
                                             has_sig ? DLS_KEY_ED25519 : DLS_KEY_MAC),
                             env_n);
        }

        /* decode and attribute as read from medium_id_hex */
        dls_keyring *kr;
        assert_int_equal(dls_keyring_new(&kr), 0);
        keyring_add_secret(kr, s);
        dls_resolver *r;
        assert_int_equal(dls_resolver_new_signed(&r, medium, kr), 0);
        dls_attribution a;
        dls_facts it;
        dls_resolver_attribute_facts(r, exp_env, env_n, &a, &it);
        if (a.attributed != verifies)
            fail_msg("line %u (%s): attributed %d, expected %d", lines, note, a.attributed,
                     verifies);
        if (why)
            assert_string_equal(dls_why_name(a.why), why);
        else
            assert_null(dls_why_name(a.why));
        assert_int_equal(a.kind, is_malformed ? DLS_REC_ENVELOPE : DLS_REC_BATCH);
        assert_int_equal(a.count, is_malformed ? 0 : count);
        dls_bytes f;
        uint32_t ix, seen = 0;
        while (dls_facts_next(&it, &f, &ix)) {
            assert_int_equal(ix, seen);
            assert_true(bytes_eq(f, facts[seen].p, facts[seen].n));
            seen++;
        }
        assert_int_equal(seen, verifies ? count : 0);
        if (is_malformed)
            assert_int_equal(a.fact.n, 0); /* a malformed batch shows no fact (cli.md rev 4) */
        /* the one-fact call (the journal's rule) never attributes a batch */
        dls_resolver_attribute(r, exp_env, env_n, &a);
        assert_false(a.attributed);
        assert_int_equal(a.why, DLS_WHY_MALFORMED);
        dls_resolver_del(r);
        dls_keyring_del(kr);
        dls_secret_del(s);
        json_decref(j);
    }
    assert_int_equal(lines, 16);
    assert_int_equal(verified, 5);
    assert_int_equal(failed, 4);
    assert_int_equal(malformed, 7);
    free(text);
}

/* stream/batch.dls attributes as batch.expect.jsonl says (cli.md rev 4:
 * one row per fact of a batch, kind "batch", "index"; a malformed batch is
 * one row of kind "envelope", fact null), through the dump rows. */
static void test_vectors_stream_batch(void **state)
{
    (void)state;
    char path[4096];
    size_t fn, en;
    snprintf(path, sizeof path, "%s/stream/batch.dls", vectors_dir());
    uint8_t *file = read_file(path, &fn);
    assert_non_null(file);
    snprintf(path, sizeof path, "%s/stream/batch.expect.jsonl", vectors_dir());
    char *expect = (char *)read_file(path, &en);
    assert_non_null(expect);
    snprintf(path, sizeof path, "%s/stream/keyring", vectors_dir());
    dls_keyring *kr;
    dls_where w;
    assert_int_equal(dls_keyring_load(&kr, path, &w), 0);

    uint8_t medium[16];
    stream_rec recs[16];
    size_t k = read_stream(file, fn, medium, recs, 16);
    assert_int_equal(k, 8);
    dls_dump_attrib *d;
    assert_int_equal(dls_dump_attrib_new(&d, medium, kr), 0);

    /* the rows of every record except the seal (the CLI prints that one
     * from the cursor's end), in order */
    json_t *rows = json_array();
    for (size_t i = 0; i < k; i++) {
        dls_dump_rows rs;
        dls_dump_row row;
        dls_dump_attrib_rows(d, recs[i].p, recs[i].n, &rs);
        while (dls_dump_rows_next(&rs, &row)) {
            json_t *o = json_object();
            json_object_set_new(o, "position", json_integer((json_int_t)i));
            if (row.has_index)
                json_object_set_new(o, "index", json_integer(row.index));
            json_object_set_new(o, "kind", json_string(row.kind));
            json_object_set_new(o, "author", row.has_author
                                                 ? json_stringn((const char *)row.author.p,
                                                                row.author.n)
                                                 : json_null());
            json_object_set_new(o, "verified", json_boolean(row.verified));
            json_object_set_new(o, "why", row.why ? json_string(row.why) : json_null());
            size_t off = 0;
            json_object_set_new(o, "fact", row.has_fact
                                               ? mp_to_json(row.fact.p, row.fact.n, &off)
                                               : json_null());
            json_array_append_new(rows, o);
        }
    }
    size_t i = 0;
    for (char *line = strtok(expect, "\n"); line; line = strtok(NULL, "\n"), i++) {
        json_error_t jerr;
        json_t *ex = json_loads(line, 0, &jerr);
        assert_non_null(ex);
        assert_true(i < json_array_size(rows));
        assert_json_same(json_array_get(rows, i), ex);
        json_decref(ex);
    }
    assert_int_equal(i, 13);
    assert_int_equal(json_array_size(rows), 13);
    json_decref(rows);
    dls_dump_attrib_del(d);
    dls_keyring_del(kr);
    free(file);
    free(expect);
}

/* attribution.md rev 4: a sealed batch verifies once and yields its facts
 * in order (Ed25519 and MAC); the sizes are exact; one more fact costs
 * dls_batch_fact_cost; the limits refuse (count 0 or > 4096, a fact over
 * 4096 bytes, the envelope over the 65,536-byte record limit, a small cap). */
static void test_batch_seal_roundtrip_and_limits(void **state)
{
    (void)state;
    static uint8_t fb[4097 * 20], out[70000];
    static dls_bytes facts[4097];
    for (size_t i = 0; i < 4097; i++) {
        size_t fn = renewal_fact(fb + 40 * (i % 1600), (uint8_t)(i % 100), (uint8_t)(i % 120));
        facts[i] = (dls_bytes){fb + 40 * (i % 1600), fn};
    }
    for (int kind = 0; kind < 2; kind++) {
        dls_secret *s = secret_seeded("holder-1", kind ? DLS_KEY_MAC : DLS_KEY_ED25519);
        dls_keyring *kr;
        assert_int_equal(dls_keyring_new(&kr), 0);
        keyring_add_secret(kr, s);
        dls_resolver *r;
        assert_int_equal(dls_resolver_new_signed(&r, M1, kr), 0);
        size_t counts[] = {1, 2, 15, 16, 17, 100};
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
            size_t len;
            assert_int_equal(dls_batch_seal(s, M1, facts, counts[c], out, sizeof out, &len), 0);
            assert_int_equal(len, dls_batch_size(8, facts, counts[c], dls_secret_kind(s)));
            assert_int_equal(dls_batch_size(8, facts, counts[c] + 1, dls_secret_kind(s)),
                             len + dls_batch_fact_cost(counts[c], facts[counts[c]].n));
            dls_attribution a;
            dls_facts it;
            dls_resolver_attribute_facts(r, out, len, &a, &it);
            assert_true(a.attributed);
            assert_int_equal(a.kind, DLS_REC_BATCH);
            assert_int_equal(a.count, counts[c]);
            assert_true(bytes_str(a.author, "holder-1"));
            dls_bytes f;
            uint32_t ix, seen = 0;
            while (dls_facts_next(&it, &f, &ix)) {
                assert_int_equal(ix, seen);
                assert_true(bytes_eq(f, facts[seen].p, facts[seen].n));
                seen++;
            }
            assert_int_equal(seen, counts[c]);
            assert_false(dls_facts_next(&it, &f, &ix)); /* stays exhausted */
            /* read from another medium it verifies nothing */
            dls_resolver *r2;
            assert_int_equal(dls_resolver_new_signed(&r2, M2, kr), 0);
            dls_resolver_attribute_facts(r2, out, len, &a, &it);
            assert_false(a.attributed);
            assert_int_equal(a.why, DLS_WHY_SIGNATURE);
            assert_false(dls_facts_next(&it, &f, &ix));
            dls_resolver_del(r2);
            /* interleaved with single envelopes: the scratch buffer's M
             * prefix survives a batch (the single envelope still verifies) */
            uint8_t env[256];
            size_t en;
            assert_int_equal(dls_envelope_seal(s, M1, facts[0].p, facts[0].n, env, sizeof env, &en),
                             0);
            dls_resolver_attribute_facts(r, env, en, &a, &it);
            assert_true(a.attributed);
            assert_int_equal(a.kind, DLS_REC_ENVELOPE);
            assert_int_equal(a.count, 1);
            assert_true(dls_facts_next(&it, &f, &ix));
            assert_int_equal(ix, 0);
            assert_true(bytes_eq(f, facts[0].p, facts[0].n));
            assert_false(dls_facts_next(&it, &f, &ix));
        }
        /* the record limit: renewals of 38 bytes fit about 1,600 in 65,536 */
        size_t len, max = 0;
        while (dls_batch_size(8, facts, max + 1, dls_secret_kind(s)) <= DLS_BATCH_RECORD_MAX)
            max++;
        assert_int_equal(dls_batch_seal(s, M1, facts, max, out, sizeof out, &len), 0);
        assert_true(len <= DLS_BATCH_RECORD_MAX);
        dls_attribution a;
        dls_resolver_attribute_facts(r, out, len, &a, NULL);
        assert_true(a.attributed);
        assert_int_equal(a.count, max);
        assert_int_equal(dls_batch_seal(s, M1, facts, max + 1, out, sizeof out, &len),
                         DLS_ERR_TOOBIG);
        /* count limits, a fact over 4096 bytes, a small cap, NULLs */
        assert_int_equal(dls_batch_seal(s, M1, facts, 0, out, sizeof out, &len), DLS_ERR_INVAL);
        assert_int_equal(dls_batch_seal(s, M1, facts, 4097, out, sizeof out, &len), DLS_ERR_INVAL);
        static uint8_t big[4097];
        dls_bytes bf[2] = {{big, 4096}, {big, 4097}};
        assert_int_equal(dls_batch_seal(s, M1, bf, 1, out, sizeof out, &len), 0);
        assert_int_equal(dls_batch_seal(s, M1, bf, 2, out, sizeof out, &len), DLS_ERR_TOOBIG);
        size_t need = dls_batch_size(8, facts, 3, dls_secret_kind(s));
        assert_int_equal(dls_batch_seal(s, M1, facts, 3, out, need - 1, &len), DLS_ERR_TOOBIG);
        assert_int_equal(dls_batch_seal(s, M1, facts, 3, out, need, &len), 0);
        assert_int_equal(dls_batch_seal(NULL, M1, facts, 3, out, need, &len), DLS_ERR_INVAL);
        assert_int_equal(dls_batch_size(0, facts, 3, DLS_KEY_MAC), 0);
        assert_int_equal(dls_batch_size(65, facts, 3, DLS_KEY_MAC), 0);
        assert_int_equal(dls_batch_size(8, facts, 0, DLS_KEY_MAC), 0);
        uint8_t m[256];
        size_t ml;
        assert_int_equal(dls_batch_message(M1, (const uint8_t *)"a", 1, facts, 1, m, 10, &ml),
                         DLS_ERR_TOOBIG);
        dls_resolver_del(r);
        dls_keyring_del(kr);
        dls_secret_del(s);
    }
}

/* Hand-built batch envelopes from a genuine one's parts. */
typedef struct batch_parts {
    const char *author;
    dls_bytes facts[3];
    size_t count;
    uint8_t tag[64];
    size_t tag_n;
} batch_parts;

static void put_facts(buf *b, const dls_bytes *facts, size_t count)
{
    if (count < 16)
        put1(b, (uint8_t)(0x90 | count));
    else
        put1(b, 0xdc), put1(b, (uint8_t)(count >> 8)), put1(b, (uint8_t)count);
    for (size_t i = 0; i < count; i++)
        put_bin(b, facts[i].p, facts[i].n);
}

/* attribution.md rev 4: malformed batches are nobody's — both fact and
 * facts, an empty array, a non-bin element, an element over 4096 bytes,
 * more than 4096 elements, facts not an array, both sig and mac, facts
 * twice, an envelope over 65,536 bytes; any key order and non-shortest
 * forms are accepted. */
static void test_batch_wellformed_rules(void **state)
{
    (void)state;
    dls_secret *s = secret_seeded("agent", DLS_KEY_ED25519);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, s);
    uint8_t f0[64], f1[64], f2[64];
    dls_bytes facts[3] = {{f0, renewal_fact(f0, 1, 1)}, {f1, renewal_fact(f1, 2, 1)},
                          {f2, renewal_fact(f2, 3, 1)}};
    static uint8_t env[2048];
    size_t en;
    assert_int_equal(dls_batch_seal(s, M1, facts, 3, env, sizeof env, &en), 0);
    dls_env e;
    dls_env_parse(env, en, &e);
    assert_true(e.ok);
    assert_int_equal(e.kind, DLS_REC_BATCH);
    uint8_t sig[64];
    memcpy(sig, e.tag.p, 64);

    static buf b;
    dls_attribution a;
    dls_facts it;
#define CHECK_BATCH(kind_, attributed_, why_, what)                                          \
    do {                                                                                     \
        dls_resolver *r_;                                                                    \
        assert_int_equal(dls_resolver_new_signed(&r_, M1, kr), 0);                           \
        dls_resolver_attribute_facts(r_, b.p, b.n, &a, &it);                                 \
        dls_resolver_del(r_);                                                                \
        if (a.kind != (kind_) || a.attributed != (attributed_) || a.why != (why_))           \
            fail_msg("%s: kind %d attributed %d why %d", what, a.kind, a.attributed, a.why); \
        if (!(attributed_)) {                                                                \
            dls_bytes f_;                                                                    \
            assert_false(dls_facts_next(&it, &f_, NULL));                                    \
        }                                                                                    \
    } while (0)

    /* keys in another order, non-shortest forms: still the same batch */
    b.n = 0;
    put1(&b, 0x83);
    put_str8(&b, "dao.env/sig"), put_bin16(&b, sig, 64);
    put_str(&b, "dao.env/facts");
    put1(&b, 0xdc), put1(&b, 0), put1(&b, 3); /* array 16 of 3 */
    for (int i = 0; i < 3; i++)
        put_bin16(&b, facts[i].p, facts[i].n);
    put_str(&b, "dao.env/author"), put_str(&b, "agent");
    CHECK_BATCH(DLS_REC_BATCH, true, DLS_WHY_NONE, "reordered, non-shortest");
    assert_int_equal(a.count, 3);

    /* an unknown dao.env/ key is ignored */
    b.n = 0;
    put1(&b, 0x84);
    put_str(&b, "dao.env/author"), put_str(&b, "agent");
    put_str(&b, "dao.env/facts"), put_facts(&b, facts, 3);
    put_str(&b, "dao.env/x"), put1(&b, 0xc0);
    put_str(&b, "dao.env/sig"), put_bin(&b, sig, 64);
    CHECK_BATCH(DLS_REC_BATCH, true, DLS_WHY_NONE, "extra key");

    /* both fact and facts */
    b.n = 0;
    put1(&b, 0x84);
    put_str(&b, "dao.env/author"), put_str(&b, "agent");
    put_str(&b, "dao.env/fact"), put_bin(&b, f0, facts[0].n);
    put_str(&b, "dao.env/facts"), put_facts(&b, facts, 3);
    put_str(&b, "dao.env/sig"), put_bin(&b, sig, 64);
    CHECK_BATCH(DLS_REC_ENVELOPE, false, DLS_WHY_MALFORMED, "fact and facts");
    assert_int_equal(a.count, 0);
    assert_int_equal(a.fact.n, 0);

    /* facts twice */
    b.n = 0;
    put1(&b, 0x84);
    put_str(&b, "dao.env/author"), put_str(&b, "agent");
    put_str(&b, "dao.env/facts"), put_facts(&b, facts, 3);
    put_str8(&b, "dao.env/facts"), put_facts(&b, facts, 3);
    put_str(&b, "dao.env/sig"), put_bin(&b, sig, 64);
    CHECK_BATCH(DLS_REC_ENVELOPE, false, DLS_WHY_MALFORMED, "facts twice");

    /* an empty array */
    b.n = 0;
    put1(&b, 0x83);
    put_str(&b, "dao.env/author"), put_str(&b, "agent");
    put_str(&b, "dao.env/facts"), put1(&b, 0x90);
    put_str(&b, "dao.env/sig"), put_bin(&b, sig, 64);
    CHECK_BATCH(DLS_REC_ENVELOPE, false, DLS_WHY_MALFORMED, "empty");

    /* a str element */
    b.n = 0;
    put1(&b, 0x83);
    put_str(&b, "dao.env/author"), put_str(&b, "agent");
    put_str(&b, "dao.env/facts"), put1(&b, 0x92), put_bin(&b, f0, facts[0].n),
        put1(&b, 0xa1), put1(&b, 'x');
    put_str(&b, "dao.env/sig"), put_bin(&b, sig, 64);
    CHECK_BATCH(DLS_REC_ENVELOPE, false, DLS_WHY_MALFORMED, "str element");

    /* a map element (a fact not wrapped in bin) */
    b.n = 0;
    put1(&b, 0x83);
    put_str(&b, "dao.env/author"), put_str(&b, "agent");
    put_str(&b, "dao.env/facts"), put1(&b, 0x91), put(&b, f0, facts[0].n);
    put_str(&b, "dao.env/sig"), put_bin(&b, sig, 64);
    CHECK_BATCH(DLS_REC_ENVELOPE, false, DLS_WHY_MALFORMED, "map element");

    /* facts a bin, not an array */
    b.n = 0;
    put1(&b, 0x83);
    put_str(&b, "dao.env/author"), put_str(&b, "agent");
    put_str(&b, "dao.env/facts"), put_bin(&b, f0, facts[0].n);
    put_str(&b, "dao.env/sig"), put_bin(&b, sig, 64);
    CHECK_BATCH(DLS_REC_ENVELOPE, false, DLS_WHY_MALFORMED, "bin facts");

    /* an element of 4097 bytes (4096 is fine: the signature then fails) */
    static uint8_t big[4097];
    for (size_t len = 4096; len <= 4097; len++) {
        b.n = 0;
        put1(&b, 0x83);
        put_str(&b, "dao.env/author"), put_str(&b, "agent");
        put_str(&b, "dao.env/facts"), put1(&b, 0x91), put_bin(&b, big, len);
        put_str(&b, "dao.env/sig"), put_bin(&b, sig, 64);
        if (len == 4096)
            CHECK_BATCH(DLS_REC_BATCH, false, DLS_WHY_SIGNATURE, "4096-byte element");
        else
            CHECK_BATCH(DLS_REC_ENVELOPE, false, DLS_WHY_MALFORMED, "4097-byte element");
    }

    /* 4096 elements are a batch, 4097 are malformed */
    for (size_t count = 4096; count <= 4097; count++) {
        b.n = 0;
        put1(&b, 0x83);
        put_str(&b, "dao.env/author"), put_str(&b, "agent");
        put_str(&b, "dao.env/facts");
        put1(&b, 0xdc), put1(&b, (uint8_t)(count >> 8)), put1(&b, (uint8_t)count);
        for (size_t i = 0; i < count; i++)
            put1(&b, 0xc4), put1(&b, 1), put1(&b, 0x80);
        put_str(&b, "dao.env/sig"), put_bin(&b, sig, 64);
        if (count == 4096)
            CHECK_BATCH(DLS_REC_BATCH, false, DLS_WHY_SIGNATURE, "4096 elements");
        else
            CHECK_BATCH(DLS_REC_ENVELOPE, false, DLS_WHY_MALFORMED, "4097 elements");
    }

    /* both sig and mac; neither */
    b.n = 0;
    put1(&b, 0x84);
    put_str(&b, "dao.env/author"), put_str(&b, "agent");
    put_str(&b, "dao.env/facts"), put_facts(&b, facts, 3);
    put_str(&b, "dao.env/sig"), put_bin(&b, sig, 64);
    put_str(&b, "dao.env/mac"), put_bin(&b, sig, 32);
    CHECK_BATCH(DLS_REC_ENVELOPE, false, DLS_WHY_MALFORMED, "sig and mac");
    b.n = 0;
    put1(&b, 0x82);
    put_str(&b, "dao.env/author"), put_str(&b, "agent");
    put_str(&b, "dao.env/facts"), put_facts(&b, facts, 3);
    CHECK_BATCH(DLS_REC_ENVELOPE, false, DLS_WHY_MALFORMED, "no tag");

    /* over the record limit: 16 elements of 4096 bytes (a caller handing
     * the resolver more than a record can hold) */
    b.n = 0;
    put1(&b, 0x83);
    put_str(&b, "dao.env/author"), put_str(&b, "agent");
    put_str(&b, "dao.env/facts");
    put1(&b, 0xdc), put1(&b, 0), put1(&b, 16);
    for (int i = 0; i < 16; i++)
        put_bin(&b, big, 4096);
    put_str(&b, "dao.env/sig"), put_bin(&b, sig, 64);
    assert_true(b.n > DLS_BATCH_RECORD_MAX);
    CHECK_BATCH(DLS_REC_ENVELOPE, false, DLS_WHY_MALFORMED, "over the record limit");

    /* trailing bytes after a genuine batch */
    memcpy(b.p, env, en);
    b.n = en;
    put1(&b, 0xc0);
    CHECK_BATCH(DLS_REC_MALFORMED, false, DLS_WHY_MALFORMED, "trailing byte");
#undef CHECK_BATCH
    dls_keyring_del(kr);
    dls_secret_del(s);
}

/* attribution.md rev 4: the order and every byte are signed — flipping any
 * bit of a small MAC batch or Ed25519 batch never yields an attributed
 * record with other facts; without a keyring, unknown-author. */
static void test_batch_bitflips(void **state)
{
    (void)state;
    for (int kind = 0; kind < 2; kind++) {
        dls_secret *s = secret_seeded("p", kind ? DLS_KEY_MAC : DLS_KEY_ED25519);
        dls_keyring *kr;
        assert_int_equal(dls_keyring_new(&kr), 0);
        keyring_add_secret(kr, s);
        dls_resolver *r;
        assert_int_equal(dls_resolver_new_signed(&r, M1, kr), 0);
        uint8_t f0[64], f1[64];
        dls_bytes facts[2] = {{f0, renewal_fact(f0, 5, 1)}, {f1, renewal_fact(f1, 6, 2)}};
        uint8_t env[512], x[512];
        size_t en;
        assert_int_equal(dls_batch_seal(s, M1, facts, 2, env, sizeof env, &en), 0);
        unsigned attributed = 0;
        for (size_t bit = 0; bit < en * 8; bit++) {
            memcpy(x, env, en);
            x[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            dls_attribution a;
            dls_resolver_attribute_facts(r, x, en, &a, NULL);
            attributed += a.attributed;
        }
        /* Only a flip inside an ignored region could keep a verifying
         * record; a batch envelope written canonically has none. */
        assert_int_equal(attributed, 0);
        dls_attribution a;
        dls_resolver_attribute_facts(NULL, env, en, &a, NULL);
        assert_false(a.attributed);
        assert_int_equal(a.why, DLS_WHY_UNKNOWN_AUTHOR);
        dls_resolver_del(r);
        dls_keyring_del(kr);
        dls_secret_del(s);
    }
}

/* attribution.md rev 4: a defective fact inside a verified batch does not
 * stop the others — the iterator yields every fact (the caller counts the
 * defective one on its own); cli.md rev 4: dump prints it with fact null,
 * still verified, between its neighbours. */
static void test_batch_defective_fact_inside(void **state)
{
    (void)state;
    dls_secret *s = secret_seeded("agent", DLS_KEY_MAC);
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    keyring_add_secret(kr, s);
    uint8_t f0[64], f2[64];
    static const uint8_t junk[3] = {0x92, 0x01, 0xc1}; /* not one msgpack value */
    dls_bytes facts[3] = {{f0, renewal_fact(f0, 1, 1)}, {junk, sizeof junk},
                          {f2, renewal_fact(f2, 3, 1)}};
    uint8_t env[512];
    size_t en;
    assert_int_equal(dls_batch_seal(s, M1, facts, 3, env, sizeof env, &en), 0);
    dls_resolver *r;
    assert_int_equal(dls_resolver_new_signed(&r, M1, kr), 0);
    dls_attribution a;
    dls_facts it;
    dls_resolver_attribute_facts(r, env, en, &a, &it);
    assert_true(a.attributed);
    dls_bytes f;
    uint32_t ix;
    for (uint32_t i = 0; i < 3; i++) {
        assert_true(dls_facts_next(&it, &f, &ix));
        assert_int_equal(ix, i);
        assert_true(bytes_eq(f, facts[i].p, facts[i].n));
    }
    assert_false(dls_facts_next(&it, &f, &ix));
    dls_dump_attrib *d;
    assert_int_equal(dls_dump_attrib_new(&d, M1, kr), 0);
    dls_dump_rows rows;
    dls_dump_row row;
    dls_dump_attrib_rows(d, env, en, &rows);
    for (uint32_t i = 0; i < 3; i++) {
        assert_true(dls_dump_rows_next(&rows, &row));
        assert_string_equal(row.kind, "batch");
        assert_true(row.has_index);
        assert_int_equal(row.index, i);
        assert_true(row.verified);
        assert_null(row.why);
        assert_int_equal(row.has_fact, i != 1);
    }
    assert_false(dls_dump_rows_next(&rows, &row));
    dls_dump_attrib_del(d);
    dls_resolver_del(r);
    dls_keyring_del(kr);
    dls_secret_del(s);
}

/* Issue 13 item 4: the keyring keeps each MAC key's HMAC state; a verify
 * from that state answers exactly what crypto_auth_verify answers, for
 * many keys (the state arena grows and moves) and random messages, and
 * an Ed25519 key has no state. */
static void test_mac_state_cache(void **state)
{
    (void)state;
    dls_keyring *kr;
    assert_int_equal(dls_keyring_new(&kr), 0);
    enum { N = 40 };
    dls_secret *s[N];
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%d", i);
        s[i] = secret_seeded(name, i % 3 == 2 ? DLS_KEY_ED25519 : DLS_KEY_MAC);
        keyring_add_secret(kr, s[i]);
    }
    dls_resolver *r;
    assert_int_equal(dls_resolver_new_signed(&r, M1, kr), 0);
    for (int round = 0; round < 400; round++) {
        int i = (int)(rnd() % N);
        uint8_t fact[300], env[600];
        size_t fn = (size_t)(rnd() % sizeof fact), en;
        rnd_bytes(fact, fn);
        assert_int_equal(dls_envelope_seal(s[i], M1, fact, fn, env, sizeof env, &en), 0);
        dls_env e;
        dls_env_parse(env, en, &e);
        assert_true(e.ok);
        if (rnd() % 2) { /* tamper with one fact or tag byte */
            const uint8_t *at = fn && rnd() % 2 ? e.fact.p + rnd() % fn : e.tag.p + rnd() % e.tag.n;
            env[at - env] ^= (uint8_t)(1 + rnd() % 255);
        }
        /* reference: crypto_auth_verify / crypto_sign_verify_detached over M */
        uint8_t m[600];
        size_t ml;
        assert_int_equal(dls_envelope_message(M1, e.author.p, e.author.n, e.fact.p, e.fact.n, m,
                                              sizeof m, &ml),
                         0);
        bool want = e.mac ? crypto_auth_verify(e.tag.p, m, ml, dls_secret_key(s[i])) == 0
                          : crypto_sign_verify_detached(e.tag.p, m, ml,
                                                        dls_secret_public(s[i])) == 0;
        dls_attribution a;
        dls_resolver_attribute(r, env, en, &a);
        if (a.attributed != want)
            fail_msg("round %d key %d: attributed %d, libsodium says %d (seed %llu)", round, i,
                     a.attributed, want, (unsigned long long)g_seed);
        dls_key_ref ref;
        assert_int_equal(dls_keyring_find(kr, e.author.p, e.author.n, &ref), 0);
        assert_int_equal(ref.kind, dls_secret_kind(s[i]));
        assert_int_equal(ref.mac_state == NULL, ref.kind == DLS_KEY_ED25519);
    }
    dls_resolver_del(r);
    dls_keyring_del(kr);
    for (int i = 0; i < N; i++)
        dls_secret_del(s[i]);
}

/* Issue 12 item 11: a FIFO (or any non-regular file) given as a keyring or
 * a secret key file is refused at once — never blocks waiting for a writer
 * — with DLS_ERR_IO and a reason naming the problem. Run in a child under
 * alarm(5): a blocking open would be killed by SIGALRM. */
static void test_fifo_keyring_and_key_refused(void **state)
{
    (void)state;
    make_tmpdir();
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/kr.fifo", g_tmp);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(5);
        dls_keyring *kr;
        dls_secret *s;
        dls_where w = {0};
        int bad = 0;
        if (dls_keyring_load(&kr, fifo, &w) != DLS_ERR_IO || !w.reason ||
            !strstr(w.reason, "not a regular file"))
            bad |= 1;
        memset(&w, 0, sizeof w);
        if (dls_secret_load(&s, fifo, &w) != DLS_ERR_IO || !w.reason ||
            !strstr(w.reason, "not a regular file"))
            bad |= 2;
        /* a directory and a character device too */
        if (dls_keyring_load(&kr, g_tmp, &w) != DLS_ERR_IO || dls_secret_load(&s, "/dev/null", &w) !=
                                                                  DLS_ERR_IO)
            bad |= 4;
        _exit(bad);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st))
        fail_msg("loading a FIFO blocked (killed by signal %d)", WTERMSIG(st));
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st))
        fail_msg("FIFO/non-regular refusal failed: mask %d", WEXITSTATUS(st));
    rm_tmpdir();
}

int main(void)
{
    const char *e = getenv("DLS_SEED");
    if (sodium_init() < 0)
        return 1;
    g_seed = e ? strtoull(e, NULL, 0) : ((uint64_t)randombytes_random() << 32 | randombytes_random());
    g_rng = g_seed;
    printf("# test_attrib seed %llu (DLS_SEED=%llu replays)\n", (unsigned long long)g_seed,
           (unsigned long long)g_seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_htab_matches_model),
        cmocka_unit_test(test_htab_edges),
        cmocka_unit_test(test_vectors_envelopes),
        cmocka_unit_test(test_vectors_stream_three),
        cmocka_unit_test(test_vectors_run_keyring),
        cmocka_unit_test(test_gate1_attribution_per_author),
        cmocka_unit_test(test_gate1_forged_signature),
        cmocka_unit_test(test_gate1_author_swapped),
        cmocka_unit_test(test_gate1_bare_fact_on_signed_medium),
        cmocka_unit_test(test_gate1_medium_resolver),
        cmocka_unit_test(test_copied_to_other_medium),
        cmocka_unit_test(test_wrong_key_kind_and_unknown),
        cmocka_unit_test(test_bitflip_every_bit_ed25519),
        cmocka_unit_test(test_bitflip_every_bit_mac),
        cmocka_unit_test(test_envelope_wellformed_rules),
        cmocka_unit_test(test_record_kinds),
        cmocka_unit_test(test_seal_sizes_and_errors),
        cmocka_unit_test(test_keyring_parse_accepts),
        cmocka_unit_test(test_keyring_parse_errors),
        cmocka_unit_test(test_keyring_truncated_lines),
        cmocka_unit_test(test_keyring_add_ref_lookup),
        cmocka_unit_test(test_secret_files_and_modes),
        cmocka_unit_test(test_assembly_refusals),
        cmocka_unit_test(test_replay_checker),
        cmocka_unit_test(test_replay_random_model),
        cmocka_unit_test(test_python_interop),
        cmocka_unit_test(test_python_interop_batch),
        cmocka_unit_test(test_keygen_command),
        cmocka_unit_test(test_random_records_never_attributed),
        cmocka_unit_test(test_vectors_envelopes_batch),
        cmocka_unit_test(test_vectors_stream_batch),
        cmocka_unit_test(test_batch_seal_roundtrip_and_limits),
        cmocka_unit_test(test_batch_wellformed_rules),
        cmocka_unit_test(test_batch_bitflips),
        cmocka_unit_test(test_batch_defective_fact_inside),
        cmocka_unit_test(test_mac_state_cache),
        cmocka_unit_test(test_fifo_keyring_and_key_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
