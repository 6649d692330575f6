/* Envelopes (attribution.md, "Records on a medium"): decoding with the
 * bounds-checking walker, the signed message M, and sealing with msgpack-c's
 * packer into the caller's buffer. */
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>
#include <sodium.h>

#include "resolver/internal.h"
#include "vocab/mp.h"

/* {"dao.stream/sealed": true} in shortest form (stream-format.md). */
static const uint8_t seal_record[20] = {0x81, 0xb1, 'd', 'a', 'o', '.', 's', 't', 'r', 'e',
                                        'a',  'm',  '/', 's', 'e', 'a', 'l', 'e', 'd', 0xc3};

#define ENV_PREFIX "dao.env/"
#define ENV_PREFIX_LEN 8

int dls_mp_skip_any(const uint8_t *p, size_t n, size_t off, size_t *end)
{
    /* Every element takes at least one byte and dls_mp_read checks each
     * announced count against the bytes left, so `todo` stays below n^2
     * and the loop runs at most n times. */
    uint64_t todo = 1;
    while (todo) {
        dls_mp_item it;
        int rc = dls_mp_read(p, n, off, &it);
        if (rc)
            return rc;
        off = it.end;
        todo--;
        if (it.type == DLS_MP_ARRAY)
            todo += it.len;
        else if (it.type == DLS_MP_MAP)
            todo += (uint64_t)it.len * 2;
    }
    *end = off;
    return 0;
}

const char *dls_record_kind_name(dls_record_kind k)
{
    switch (k) {
    case DLS_REC_FACT: return "fact";
    case DLS_REC_ENVELOPE: return "envelope";
    case DLS_REC_SEAL: return "seal";
    case DLS_REC_MALFORMED: return "malformed";
    case DLS_REC_BATCH: return "batch";
    }
    return "malformed";
}

const char *dls_why_name(dls_why w)
{
    switch (w) {
    case DLS_WHY_NONE: return NULL;
    case DLS_WHY_BARE_FACT: return "bare-fact";
    case DLS_WHY_SIGNATURE: return "signature";
    case DLS_WHY_UNKNOWN_AUTHOR: return "unknown-author";
    case DLS_WHY_WRONG_KEY_KIND: return "wrong-key-kind";
    case DLS_WHY_MALFORMED: return "malformed";
    }
    return "malformed";
}

/* A key's identity for the "no key repeated" rule: str and bin by type and
 * payload, integers by value, anything else by its encoding. */
typedef struct key_id {
    uint8_t cls; /* 0 str, 1 bin, 2 integer, 3 other */
    uint64_t v;
    const uint8_t *p;
    size_t n;
} key_id;

static void key_id_of(const uint8_t *rec, const dls_mp_item *k, size_t kend, key_id *id)
{
    id->v = 0;
    switch (k->type) {
    case DLS_MP_STR:
        id->cls = 0, id->p = k->data, id->n = k->len;
        break;
    case DLS_MP_BIN:
        id->cls = 1, id->p = k->data, id->n = k->len;
        break;
    case DLS_MP_UINT:
        id->cls = 2, id->v = k->v.u, id->p = NULL, id->n = 0;
        break;
    case DLS_MP_INT:
        /* negative: distinct from every uint by the flag bit in n */
        id->cls = 2, id->v = (uint64_t)k->v.i, id->p = NULL, id->n = 1;
        break;
    default:
        id->cls = 3, id->p = rec + k->off, id->n = kend - k->off;
        break;
    }
}

static bool key_id_eq(const key_id *a, const key_id *b)
{
    if (a->cls != b->cls || a->n != b->n || a->v != b->v)
        return false;
    return a->cls == 2 || a->n == 0 || memcmp(a->p, b->p, a->n) == 0;
}

static bool str_is(const dls_mp_item *k, const char *s, size_t n)
{
    return k->len == n && memcmp(k->data, s, n) == 0;
}

/* Checks a "dao.env/facts" value v (ending at vend): an array of
 * 1 … DLS_BATCH_COUNT_MAX elements, each a bin of at most
 * DLS_BATCH_FACT_MAX bytes. Sets the elements' span, count and payload sum. */
static bool batch_elems(const uint8_t *rec, const dls_mp_item *v, size_t vend,
                        dls_bytes *elems, uint32_t *count, size_t *fact_bytes)
{
    if (v->type != DLS_MP_ARRAY || v->len < 1 || v->len > DLS_BATCH_COUNT_MAX)
        return false;
    size_t off = v->end, sum = 0;
    for (uint32_t i = 0; i < v->len; i++) {
        dls_mp_item el;
        /* the value was walked whole already: every header lies within vend */
        if (dls_mp_read(rec, vend, off, &el) || el.type != DLS_MP_BIN ||
            el.len > DLS_BATCH_FACT_MAX)
            return false;
        sum += el.len;
        off = el.end;
    }
    *elems = (dls_bytes){rec + v->end, vend - v->end};
    *count = v->len;
    *fact_bytes = sum;
    return true;
}

void dls_env_parse(const uint8_t *rec, size_t n, dls_env *e)
{
    memset(e, 0, sizeof *e);
    e->kind = DLS_REC_MALFORMED;
    if (!rec || n == 0)
        return;
    if (n == sizeof seal_record && memcmp(rec, seal_record, n) == 0) {
        e->kind = DLS_REC_SEAL;
        return;
    }
    dls_mp_item m;
    if (dls_mp_read(rec, n, 0, &m) != 0 || m.type != DLS_MP_MAP)
        return;

    key_id ids[DLS_ENVELOPE_PAIRS_MAX];
    unsigned n_author = 0, n_fact = 0, n_facts = 0, n_sig = 0, n_mac = 0;
    bool envelope = false, wrong_type = false;
    dls_bytes author = {0}, fact = {0}, sig = {0}, mac = {0}, elems = {0};
    uint32_t count = 0;
    size_t fact_bytes = 0;
    size_t off = m.end;
    for (uint32_t i = 0; i < m.len; i++) {
        dls_mp_item k, v;
        size_t kend, vend;
        if (dls_mp_read(rec, n, off, &k) || dls_mp_skip_any(rec, n, off, &kend) ||
            dls_mp_read(rec, n, kend, &v) || dls_mp_skip_any(rec, n, kend, &vend))
            return; /* not one well-formed map: malformed */
        if (i < DLS_ENVELOPE_PAIRS_MAX)
            key_id_of(rec, &k, kend, &ids[i]);
        off = vend;
        if (k.type != DLS_MP_STR || k.len < ENV_PREFIX_LEN ||
            memcmp(k.data, ENV_PREFIX, ENV_PREFIX_LEN) != 0)
            continue;
        envelope = true;
        if (str_is(&k, "dao.env/author", 14)) {
            n_author++;
            if (v.type == DLS_MP_STR && v.len >= 1 && v.len <= DLS_NAME_MAX)
                author = (dls_bytes){v.data, v.len};
            else
                wrong_type = true;
        } else if (str_is(&k, "dao.env/fact", 12)) {
            n_fact++;
            if (v.type == DLS_MP_BIN && v.len <= DLS_ENVELOPE_FACT_MAX)
                fact = (dls_bytes){v.data, v.len};
            else
                wrong_type = true;
        } else if (str_is(&k, "dao.env/facts", 13)) {
            /* revision 4: an array of 1 … 4096 bin, each ≤ 4096 bytes */
            n_facts++;
            if (!batch_elems(rec, &v, vend, &elems, &count, &fact_bytes))
                wrong_type = true;
        } else if (str_is(&k, "dao.env/sig", 11)) {
            n_sig++;
            if (v.type == DLS_MP_BIN && v.len == DLS_SIG_LEN)
                sig = (dls_bytes){v.data, v.len};
            else
                wrong_type = true;
        } else if (str_is(&k, "dao.env/mac", 11)) {
            n_mac++;
            if (v.type == DLS_MP_BIN && v.len == DLS_MAC_LEN)
                mac = (dls_bytes){v.data, v.len};
            else
                wrong_type = true;
        }
        /* other "dao.env/" keys: ignored, but they make the map an envelope */
    }
    if (off != n)
        return; /* trailing bytes: not exactly one map */
    if (!envelope) {
        e->kind = DLS_REC_FACT;
        e->fact = (dls_bytes){rec, n};
        return;
    }
    e->kind = DLS_REC_ENVELOPE;
    /* author and fact as claimed: set when present once and well-typed (a
     * map carrying "dao.env/facts" shows no single fact: cli.md rev 4) */
    if (n_author == 1)
        e->author = author;
    if (n_fact == 1 && n_facts == 0)
        e->fact = fact;
    bool dup = false;
    if (m.len <= DLS_ENVELOPE_PAIRS_MAX)
        for (uint32_t i = 1; i < m.len && !dup; i++)
            for (uint32_t j = 0; j < i && !dup; j++)
                dup = key_id_eq(&ids[i], &ids[j]);
    /* A single envelope carries dao.env/fact, a batch dao.env/facts, never
     * both; the record limit governs a whole batch (attribution.md rev 4). */
    bool single = n_fact == 1 && n_facts == 0;
    bool batch = n_facts == 1 && n_fact == 0 && n <= DLS_BATCH_RECORD_MAX;
    e->ok = !wrong_type && !dup && m.len <= DLS_ENVELOPE_PAIRS_MAX && n_author == 1 &&
            (single || batch) && n_sig + n_mac == 1;
    if (e->ok) {
        e->mac = n_mac == 1;
        e->tag = e->mac ? mac : sig;
        if (batch) {
            e->kind = DLS_REC_BATCH;
            e->elems = elems;
            e->count = count;
            e->fact_bytes = fact_bytes;
        }
    }
}

uint32_t dls_env_count(const dls_env *e)
{
    switch (e->kind) {
    case DLS_REC_FACT: return 1;
    case DLS_REC_ENVELOPE: return e->ok ? 1 : 0;
    case DLS_REC_BATCH: return e->count;
    default: return 0;
    }
}

void dls_env_facts(const dls_env *e, dls_facts *it)
{
    memset(it, 0, sizeof *it);
    it->count = dls_env_count(e);
    if (e->kind == DLS_REC_BATCH) {
        it->batch = true;
        it->p = e->elems.p;
        it->end = e->elems.p + e->elems.n;
    } else if (it->count) {
        it->p = e->fact.p;
        it->end = e->fact.p + e->fact.n;
    }
}

bool dls_facts_next(dls_facts *it, dls_bytes *fact, uint32_t *index)
{
    if (!it || it->index >= it->count)
        return false;
    dls_bytes f;
    if (it->batch) {
        /* the elements were checked when the envelope was parsed */
        dls_mp_item el;
        if (dls_mp_read(it->p, (size_t)(it->end - it->p), 0, &el) || el.type != DLS_MP_BIN) {
            it->count = it->index; /* unreachable for a parsed batch */
            return false;
        }
        f = (dls_bytes){el.data, el.len};
        it->p += el.end;
    } else {
        f = (dls_bytes){it->p, (size_t)(it->end - it->p)};
    }
    if (fact)
        *fact = f;
    if (index)
        *index = it->index;
    it->index++;
    return true;
}

static void classify(const dls_env *e, dls_attribution *a)
{
    memset(a, 0, sizeof *a);
    a->kind = e->kind;
    a->attributed = false;
    a->author = e->author;
    a->fact = e->fact;
    a->count = dls_env_count(e);
    a->why = (e->kind == DLS_REC_MALFORMED || (e->kind == DLS_REC_ENVELOPE && !e->ok))
                 ? DLS_WHY_MALFORMED
                 : DLS_WHY_NONE;
}

void dls_record_classify(const uint8_t *rec, size_t n, dls_attribution *a)
{
    if (!a)
        return;
    dls_env e;
    dls_env_parse(rec, n, &e);
    classify(&e, a);
}

void dls_record_facts(const uint8_t *rec, size_t n, dls_attribution *a, dls_facts *it)
{
    dls_env e;
    dls_env_parse(rec, n, &e);
    if (a)
        classify(&e, a);
    if (it)
        dls_env_facts(&e, it);
}

/* ---- M and sealing ------------------------------------------------------ */

int dls_envelope_message(const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                         const uint8_t *author, size_t author_len,
                         const uint8_t *fact, size_t fact_len,
                         uint8_t *out, size_t cap, size_t *len)
{
    if (!medium_id || !author || author_len < 1 || author_len > DLS_NAME_MAX ||
        (!fact && fact_len) || !out || !len)
        return DLS_ERR_INVAL;
    if (fact_len > DLS_ENVELOPE_FACT_MAX)
        return DLS_ERR_TOOBIG;
    size_t need = DLS_SIGN_PREFIX_LEN + DLS_MEDIUM_ID_LEN + 1 + author_len + fact_len;
    if (need > cap)
        return DLS_ERR_TOOBIG;
    uint8_t *p = out;
    memcpy(p, DLS_SIGN_PREFIX, DLS_SIGN_PREFIX_LEN);
    p += DLS_SIGN_PREFIX_LEN;
    memcpy(p, medium_id, DLS_MEDIUM_ID_LEN);
    p += DLS_MEDIUM_ID_LEN;
    *p++ = (uint8_t)author_len;
    memcpy(p, author, author_len);
    p += author_len;
    if (fact_len)
        memcpy(p, fact, fact_len);
    *len = need;
    return 0;
}

static size_t str_hdr(size_t n)
{
    return n < 32 ? 1 : n < 256 ? 2 : n < 65536 ? 3 : 5;
}

static size_t bin_hdr(size_t n)
{
    return n < 256 ? 2 : n < 65536 ? 3 : 5;
}

size_t dls_envelope_size(size_t author_len, size_t fact_len, dls_key_kind kind)
{
    if (author_len < 1 || author_len > DLS_NAME_MAX || fact_len > DLS_ENVELOPE_FACT_MAX)
        return 0;
    size_t tag = kind == DLS_KEY_MAC ? DLS_MAC_LEN : DLS_SIG_LEN;
    return 1 + (1 + 14) + str_hdr(author_len) + author_len + (1 + 12) + bin_hdr(fact_len) +
           fact_len + (1 + 11) + bin_hdr(tag) + tag;
}

typedef struct sink {
    uint8_t *p;
    size_t cap, len;
} sink;

static int sink_write(void *data, const char *buf, size_t n)
{
    sink *s = data;
    if (n == 0)
        return 0;
    if (n > s->cap - s->len)
        return -1;
    memcpy(s->p + s->len, buf, n);
    s->len += n;
    return 0;
}

int dls_envelope_seal(const dls_secret *s, const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                      const uint8_t *fact, size_t fact_len, uint8_t *out, size_t cap,
                      size_t *len)
{
    if (!s || !medium_id || (!fact && fact_len) || !out || !len)
        return DLS_ERR_INVAL;
    if (fact_len > DLS_ENVELOPE_FACT_MAX)
        return DLS_ERR_TOOBIG;
    const uint8_t *name = (const uint8_t *)dls_secret_name(s);
    size_t name_len = dls_secret_name_len(s);
    dls_key_kind kind = dls_secret_kind(s);
    size_t need = dls_envelope_size(name_len, fact_len, kind);
    if (need == 0)
        return DLS_ERR_INVAL;
    if (need > cap)
        return DLS_ERR_TOOBIG;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;

    /* M fits in `out`: the envelope is always longer than M. */
    size_t mlen;
    int rc = dls_envelope_message(medium_id, name, name_len, fact, fact_len, out, cap, &mlen);
    if (rc)
        return rc;
    uint8_t tag[DLS_SIG_LEN];
    size_t tag_len;
    if (kind == DLS_KEY_ED25519) {
        tag_len = DLS_SIG_LEN;
        if (crypto_sign_detached(tag, NULL, out, mlen, dls_secret_key(s)) != 0)
            return DLS_ERR_SODIUM;
    } else {
        tag_len = DLS_MAC_LEN;
        crypto_auth(tag, out, mlen, dls_secret_key(s));
    }

    sink k = {out, cap, 0};
    msgpack_packer pk;
    msgpack_packer_init(&pk, &k, sink_write);
    rc = msgpack_pack_map(&pk, 3);
    rc |= msgpack_pack_str_with_body(&pk, "dao.env/author", 14);
    rc |= msgpack_pack_str_with_body(&pk, name, name_len);
    rc |= msgpack_pack_str_with_body(&pk, "dao.env/fact", 12);
    rc |= msgpack_pack_bin_with_body(&pk, fact, fact_len);
    rc |= msgpack_pack_str_with_body(&pk, kind == DLS_KEY_ED25519 ? "dao.env/sig" : "dao.env/mac",
                                     11);
    rc |= msgpack_pack_bin_with_body(&pk, tag, tag_len);
    if (rc || k.len != need)
        return DLS_ERR_TOOBIG; /* unreachable: the size was computed exactly */
    *len = k.len;
    return 0;
}

/* ---- batch envelopes (attribution.md revision 4) ------------------------ */

/* Checks the facts of a batch; sets the sum of their lengths. */
static int batch_check(const dls_bytes *facts, size_t count, size_t *sum)
{
    if (!facts || count < 1 || count > DLS_BATCH_COUNT_MAX)
        return DLS_ERR_INVAL;
    size_t s = 0;
    for (size_t i = 0; i < count; i++) {
        if (!facts[i].p && facts[i].n)
            return DLS_ERR_INVAL;
        if (facts[i].n > DLS_BATCH_FACT_MAX)
            return DLS_ERR_TOOBIG;
        s += facts[i].n;
    }
    *sum = s;
    return 0;
}

int dls_batch_message(const uint8_t medium_id[DLS_MEDIUM_ID_LEN], const uint8_t *author,
                      size_t author_len, const dls_bytes *facts, size_t count, uint8_t *out,
                      size_t cap, size_t *len)
{
    if (!medium_id || !author || author_len < 1 || author_len > DLS_NAME_MAX || !out || !len)
        return DLS_ERR_INVAL;
    size_t sum;
    int rc = batch_check(facts, count, &sum);
    if (rc)
        return rc;
    size_t need = DLS_BATCH_PREFIX_LEN + DLS_MEDIUM_ID_LEN + 1 + author_len + 4 + 4 * count + sum;
    if (need > cap)
        return DLS_ERR_TOOBIG;
    uint8_t *p = out;
    memcpy(p, DLS_BATCH_PREFIX, DLS_BATCH_PREFIX_LEN);
    p += DLS_BATCH_PREFIX_LEN;
    memcpy(p, medium_id, DLS_MEDIUM_ID_LEN);
    p += DLS_MEDIUM_ID_LEN;
    *p++ = (uint8_t)author_len;
    memcpy(p, author, author_len);
    p += author_len;
    dls_put_le32(p, (uint32_t)count);
    p += 4;
    for (size_t i = 0; i < count; i++) {
        dls_put_le32(p, (uint32_t)facts[i].n);
        p += 4;
        if (facts[i].n)
            memcpy(p, facts[i].p, facts[i].n);
        p += facts[i].n;
    }
    *len = need;
    return 0;
}

static size_t array_hdr(size_t n)
{
    return n < 16 ? 1 : n < 65536 ? 3 : 5;
}

size_t dls_batch_size(size_t author_len, const dls_bytes *facts, size_t count, dls_key_kind kind)
{
    size_t sum;
    if (author_len < 1 || author_len > DLS_NAME_MAX || batch_check(facts, count, &sum))
        return 0;
    size_t tag = kind == DLS_KEY_MAC ? DLS_MAC_LEN : DLS_SIG_LEN;
    size_t n = 1 + (1 + 14) + str_hdr(author_len) + author_len + (1 + 13) + array_hdr(count) +
               (1 + 11) + bin_hdr(tag) + tag;
    for (size_t i = 0; i < count; i++)
        n += bin_hdr(facts[i].n) + facts[i].n;
    return n;
}

size_t dls_batch_fact_cost(size_t count_before, size_t fact_len)
{
    return bin_hdr(fact_len) + fact_len + (array_hdr(count_before + 1) - array_hdr(count_before));
}

int dls_batch_seal(const dls_secret *s, const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                   const dls_bytes *facts, size_t count, uint8_t *out, size_t cap, size_t *len)
{
    if (!s || !medium_id || !out || !len)
        return DLS_ERR_INVAL;
    size_t sum;
    int rc = batch_check(facts, count, &sum);
    if (rc)
        return rc;
    const uint8_t *name = (const uint8_t *)dls_secret_name(s);
    size_t name_len = dls_secret_name_len(s);
    dls_key_kind kind = dls_secret_kind(s);
    size_t need = dls_batch_size(name_len, facts, count, kind);
    if (need == 0)
        return DLS_ERR_INVAL;
    if (need > DLS_BATCH_RECORD_MAX || need > cap)
        return DLS_ERR_TOOBIG;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;

    /* M_batch can be longer than the envelope (4-byte lengths against 2- or
     * 3-byte bin headers): it gets its own buffer. */
    size_t mcap = DLS_BATCH_PREFIX_LEN + DLS_MEDIUM_ID_LEN + 1 + name_len + 4 + 4 * count + sum;
    uint8_t *m = malloc(mcap);
    if (!m)
        return DLS_ERR_NOMEM;
    size_t mlen;
    rc = dls_batch_message(medium_id, name, name_len, facts, count, m, mcap, &mlen);
    uint8_t tag[DLS_SIG_LEN];
    size_t tag_len = kind == DLS_KEY_ED25519 ? DLS_SIG_LEN : DLS_MAC_LEN;
    if (!rc) {
        if (kind == DLS_KEY_ED25519) {
            if (crypto_sign_detached(tag, NULL, m, mlen, dls_secret_key(s)) != 0)
                rc = DLS_ERR_SODIUM;
        } else {
            crypto_auth(tag, m, mlen, dls_secret_key(s));
        }
    }
    free(m);
    if (rc)
        return rc;

    sink k = {out, cap, 0};
    msgpack_packer pk;
    msgpack_packer_init(&pk, &k, sink_write);
    rc = msgpack_pack_map(&pk, 3);
    rc |= msgpack_pack_str_with_body(&pk, "dao.env/author", 14);
    rc |= msgpack_pack_str_with_body(&pk, name, name_len);
    rc |= msgpack_pack_str_with_body(&pk, "dao.env/facts", 13);
    rc |= msgpack_pack_array(&pk, count);
    for (size_t i = 0; i < count; i++)
        rc |= msgpack_pack_bin_with_body(&pk, facts[i].p, facts[i].n);
    rc |= msgpack_pack_str_with_body(&pk, kind == DLS_KEY_ED25519 ? "dao.env/sig" : "dao.env/mac",
                                     11);
    rc |= msgpack_pack_bin_with_body(&pk, tag, tag_len);
    if (rc || k.len != need)
        return DLS_ERR_TOOBIG; /* unreachable: the size was computed exactly */
    *len = k.len;
    return 0;
}
