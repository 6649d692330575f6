/* The lease vocabulary (vocabulary.md): decoding with rules 1–5, encoding
 * in the spec's key order and msgpack's shortest form, and builders. */
#include <string.h>

#include "vocab/internal.h"

/* Top-level keys of vocabulary.md. From K_LEASE on, the order is the Keys
 * table's, and key id k has dls_fact_key bit 1 << (k - K_LEASE). */
enum {
    K_STATUS, K_EVENT, K_LEASE, K_PROPOSAL, K_SUBJECT, K_HOLDER, K_MEDIUM,
    K_DURATION, K_MAX, K_READING, K_CAUSE, K_SEQ, K_MODE, K_COMMIT, K_REASON,
    N_KEYS
};
#define BIT(id) (1u << ((id) - K_LEASE))
#define PREFIX "dao.lease/"
#define PREFIX_LEN 10

#define KEY(suffix) {PREFIX suffix, sizeof(PREFIX suffix) - 1}
static const struct {
    const char *name;
    uint8_t len;
} key_tab[N_KEYS] = {
    KEY("status"), KEY("event"), KEY("lease"), KEY("proposal"), KEY("subject"),
    KEY("holder"), KEY("medium"), KEY("duration"), KEY("max"), KEY("reading"),
    KEY("cause"), KEY("seq"), KEY("mode"), KEY("commit"), KEY("reason"),
};
#define KEY_MAX_LEN 18

static const char *const missing_why[N_KEYS] = {
    [K_LEASE] = "missing required key dao.lease/lease",
    [K_PROPOSAL] = "missing required key dao.lease/proposal",
    [K_SUBJECT] = "missing required key dao.lease/subject",
    [K_HOLDER] = "missing required key dao.lease/holder",
    [K_MEDIUM] = "missing required key dao.lease/medium",
    [K_DURATION] = "missing required key dao.lease/duration",
    [K_READING] = "missing required key dao.lease/reading",
    [K_CAUSE] = "missing required key dao.lease/cause",
    [K_SEQ] = "missing required key dao.lease/seq",
};

/* The dispatch value of each kind (status for the first five). */
static const char *const dispatch_values[] = {
    [DLS_FACT_PROPOSAL] = "proposed", [DLS_FACT_GRANT] = "accepted",
    [DLS_FACT_REFUSAL] = "rejected",  [DLS_FACT_RELEASE] = "released",
    [DLS_FACT_RECLAIM] = "lapsed",    [DLS_FACT_RENEWAL] = "renewal",
    [DLS_FACT_TICK] = "tick",
};

static const char *const kind_names[] = {
    [DLS_FACT_PROPOSAL] = "proposal", [DLS_FACT_GRANT] = "grant",
    [DLS_FACT_REFUSAL] = "refusal",   [DLS_FACT_RELEASE] = "release",
    [DLS_FACT_RECLAIM] = "reclaim",   [DLS_FACT_RENEWAL] = "renewal",
    [DLS_FACT_TICK] = "tick",
};

/* Each kind's row of "The seven facts": required keys, then optional ones,
 * as listed (0-terminated; K_STATUS is never in a row). */
static const uint8_t rows[][9] = {
    [DLS_FACT_PROPOSAL] = {K_PROPOSAL, K_SUBJECT, K_SEQ, K_DURATION, K_MODE},
    [DLS_FACT_GRANT] = {K_LEASE, K_SUBJECT, K_HOLDER, K_DURATION, K_MEDIUM,
                        K_PROPOSAL, K_MAX, K_MODE},
    [DLS_FACT_REFUSAL] = {K_PROPOSAL, K_HOLDER, K_REASON},
    [DLS_FACT_RELEASE] = {K_LEASE, K_COMMIT},
    [DLS_FACT_RECLAIM] = {K_LEASE, K_CAUSE},
    [DLS_FACT_RENEWAL] = {K_LEASE, K_SEQ},
    [DLS_FACT_TICK] = {K_READING},
};

static const uint32_t required[] = {
    [DLS_FACT_PROPOSAL] = BIT(K_PROPOSAL) | BIT(K_SUBJECT) | BIT(K_SEQ),
    [DLS_FACT_GRANT] = BIT(K_LEASE) | BIT(K_SUBJECT) | BIT(K_HOLDER) |
                       BIT(K_DURATION) | BIT(K_MEDIUM),
    [DLS_FACT_REFUSAL] = BIT(K_PROPOSAL) | BIT(K_HOLDER),
    [DLS_FACT_RELEASE] = BIT(K_LEASE),
    [DLS_FACT_RECLAIM] = BIT(K_LEASE) | BIT(K_CAUSE),
    [DLS_FACT_RENEWAL] = BIT(K_LEASE) | BIT(K_SEQ),
    [DLS_FACT_TICK] = BIT(K_READING),
};

static bool kind_ok(dls_fact_kind k)
{
    return k > DLS_FACT_NONE && k <= DLS_FACT_TICK;
}

const char *dls_fact_kind_name(dls_fact_kind k)
{
    return kind_ok(k) ? kind_names[k] : NULL;
}

const char *dls_cause_name(dls_cause c)
{
    static const char *const names[] = {NULL, "release", "cap", "policy", "silence"};
    return (unsigned)c <= DLS_CAUSE_SILENCE ? names[c] : NULL;
}

const char *dls_mode_name(dls_mode m)
{
    return m == DLS_MODE_EXCLUSIVE ? "exclusive" : m == DLS_MODE_SHARED ? "shared" : NULL;
}

dls_cause dls_cause_from(const uint8_t *p, size_t n)
{
    for (int c = DLS_CAUSE_RELEASE; c <= DLS_CAUSE_SILENCE; c++) {
        const char *s = dls_cause_name((dls_cause)c);
        if (strlen(s) == n && memcmp(s, p, n) == 0)
            return (dls_cause)c;
    }
    return DLS_CAUSE_NONE;
}

bool dls_bytes_eq(dls_bytes a, dls_bytes b)
{
    return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* ---- decoding ------------------------------------------------------------ */

static int rule_code(int rule)
{
    static const int codes[] = {0, DLS_ERR_RULE1, DLS_ERR_RULE2, DLS_ERR_RULE3,
                                DLS_ERR_RULE4, DLS_ERR_RULE5};
    return codes[rule];
}

static int fail(dls_where *w, int rule, size_t off, const char *why)
{
    return dls_where_fill(w, rule_code(rule),
                          (dls_where){.offset = off, .reason = why, .rule = rule});
}

/* The lowest-numbered problem met so far (earliest offset within a rule). */
typedef struct problem {
    int rule;
    size_t off;
    const char *why;
} problem;

static void note(problem *pb, int rule, size_t off, const char *why)
{
    if (!pb->rule || rule < pb->rule || (rule == pb->rule && off < pb->off))
        *pb = (problem){rule, off, why};
}

static int key_id(const dls_mp_item *k)
{
    if (k->len <= PREFIX_LEN || k->len > KEY_MAX_LEN || memcmp(k->data, PREFIX, PREFIX_LEN) != 0)
        return -1;
    for (int id = 0; id < N_KEYS; id++)
        if (k->len == key_tab[id].len &&
            memcmp(k->data + PREFIX_LEN, key_tab[id].name + PREFIX_LEN, k->len - PREFIX_LEN) == 0)
            return id;
    return -1;
}

/* A top-level key for the repeated-key check: where it starts, its header
 * size and payload length (all < 4096). */
typedef struct kspan {
    uint16_t off, len;
    uint8_t hdr;
} kspan;

/* Orders keys by payload (length, then bytes), then by position. */
static int kcmp(const uint8_t *p, const kspan *a, const kspan *b)
{
    if (a->len != b->len)
        return a->len < b->len ? -1 : 1;
    int c = memcmp(p + a->off + a->hdr, p + b->off + b->hdr, a->len);
    if (c)
        return c;
    return a->off < b->off ? -1 : a->off > b->off;
}

static void sift(const uint8_t *p, kspan *k, size_t i, size_t n)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && kcmp(p, &k[c], &k[c + 1]) < 0)
            c++;
        if (kcmp(p, &k[i], &k[c]) >= 0)
            return;
        kspan t = k[i];
        k[i] = k[c];
        k[c] = t;
        i = c;
    }
}

/* Heapsort (no allocation, O(k log k) whatever the input), then equal
 * neighbours are repeats: lowers *at to the first key that repeats an
 * earlier one. */
static void first_repeat(const uint8_t *p, kspan *k, size_t n, size_t *at)
{
    for (size_t i = n / 2; i-- > 0;)
        sift(p, k, i, n);
    for (size_t i = n; i-- > 1;) {
        kspan t = k[0];
        k[0] = k[i];
        k[i] = t;
        sift(p, k, 0, i);
    }
    for (size_t i = 0; i + 1 < n; i++)
        if (k[i].len == k[i + 1].len && k[i + 1].off < *at &&
            memcmp(p + k[i].off + k[i].hdr, p + k[i + 1].off + k[i + 1].hdr, k[i].len) == 0)
            *at = k[i + 1].off;
}

/* uint 1 … 2^63−1 (lease, seq); any integer format counts by value. */
static bool id_range(const dls_mp_item *it)
{
    return it->type == DLS_MP_UINT && it->v.u >= 1 && it->v.u <= DLS_NS_MAX;
}

static bool holder_ok(const dls_mp_item *it)
{
    if (it->type != DLS_MP_STR || it->len < 1 || it->len > DLS_ID_MAX)
        return false;
    for (uint32_t i = 0; i < it->len; i++) {
        uint8_t c = it->data[i];
        if (c < 0x21 || c == 0x7f)
            return false;
    }
    return true;
}

static dls_bytes slice(const uint8_t *p, size_t from, size_t to)
{
    return (dls_bytes){p + from, to - from};
}

/* Type- and range-checks the value of key `id` at p[off] into f. */
static void check_key(const uint8_t *p, size_t n, int id, size_t off, dls_fact *f,
                      problem *pb)
{
    dls_mp_item it;
    size_t end, at;
    const char *why;
    dls_mp_read(p, n, off, &it); /* cannot fail: the walk checked it */
    switch (id) {
    case K_LEASE:
    case K_SEQ:
        if (!id_range(&it))
            note(pb, 3, off, id == K_LEASE ? "lease is not an integer in 1..2^63-1"
                                           : "seq is not an integer in 1..2^63-1");
        else if (id == K_LEASE)
            f->lease = it.v.u;
        else
            f->seq = it.v.u;
        break;
    case K_PROPOSAL:
        if ((it.type != DLS_MP_STR && it.type != DLS_MP_BIN) || it.len < 1 ||
            it.len > DLS_ID_MAX)
            note(pb, 3, off, "proposal is not a str or bin of 1..64 bytes");
        else
            f->proposal = slice(p, off, it.end);
        break;
    case K_SUBJECT:
        dls_mp_skip(p, n, off, DLS_FACT_MAX_DEPTH, &end, NULL);
        if (end - off > DLS_SUBJECT_MAX)
            note(pb, 3, off, "subject exceeds 1024 bytes encoded");
        else
            f->subject = slice(p, off, end);
        break;
    case K_HOLDER:
        if (!holder_ok(&it))
            note(pb, 3, off, "holder is not a str of 1..64 bytes in 0x21-0x7e or 0x80-0xff");
        else
            f->holder = (dls_bytes){it.data, it.len};
        break;
    case K_MEDIUM:
        if (it.type != DLS_MP_BIN || it.len != DLS_MEDIUM_ID_LEN)
            note(pb, 3, off, "medium is not a bin of 16 bytes");
        else
            memcpy(f->medium, it.data, DLS_MEDIUM_ID_LEN);
        break;
    case K_DURATION:
    case K_MAX:
    case K_READING: {
        dls_duration *d = id == K_DURATION ? &f->duration : id == K_MAX ? &f->max : &f->reading;
        if (dls_duration_read(p, n, off, id == K_READING ? 0 : 1, d, &at, &why))
            note(pb, 4, at, why);
        break;
    }
    case K_CAUSE:
        f->cause = it.type == DLS_MP_STR ? dls_cause_from(it.data, it.len) : DLS_CAUSE_NONE;
        if (f->cause == DLS_CAUSE_NONE)
            note(pb, 3, off, "cause is not release, cap, policy or silence");
        break;
    case K_MODE:
        if (dls_mp_str_is(&it, "shared"))
            f->mode = DLS_MODE_SHARED;
        else if (!dls_mp_str_is(&it, "exclusive"))
            note(pb, 3, off, "mode is not exclusive or shared");
        break;
    case K_COMMIT:
        if (it.type != DLS_MP_BOOL)
            note(pb, 3, off, "commit is not a bool");
        else
            f->commit = it.v.b;
        break;
    case K_REASON:
        if (it.type != DLS_MP_STR || it.len > DLS_REASON_MAX)
            note(pb, 3, off, "reason is not a str of at most 256 bytes");
        else
            f->reason = (dls_bytes){it.data, it.len};
        break;
    }
}

static dls_fact_kind dispatch(const uint8_t *p, size_t n, size_t off, bool status)
{
    dls_mp_item it;
    dls_mp_read(p, n, off, &it);
    int from = status ? DLS_FACT_PROPOSAL : DLS_FACT_RENEWAL;
    int to = status ? DLS_FACT_RECLAIM : DLS_FACT_TICK;
    for (int k = from; k <= to; k++)
        if (dls_mp_str_is(&it, dispatch_values[k]))
            return (dls_fact_kind)k;
    return DLS_FACT_NONE;
}

int dls_fact_decode(const uint8_t *p, size_t n, dls_fact *f, dls_where *w)
{
    if (!f)
        return DLS_ERR_INVAL;
    memset(f, 0, sizeof *f);
    if (!p)
        n = 0;
    /* Rule 1, before anything else: one bounded walk of the whole input,
     * pair by pair. Repeats of vocabulary keys show in `present`; other
     * keys are sorted and compared afterwards (usually there are none). */
    if (n > DLS_FACT_MAX)
        return fail(w, 1, DLS_FACT_MAX, "a fact exceeds 4096 bytes encoded");
    dls_mp_item it;
    if (dls_mp_read(p, n, 0, &it))
        return fail(w, 1, 0, n ? "malformed msgpack" : "empty input");
    if (it.type != DLS_MP_MAP)
        return fail(w, 1, 0, "not a map");
    kspan others[DLS_FACT_MAX / 2];
    size_t val[N_KEYS] = {0}, nothers = 0, rep = SIZE_MAX, off = it.end;
    uint32_t present = 0; /* bit id: key id present */
    for (uint32_t i = 0; i < it.len; i++) {
        dls_mp_item k;
        if (dls_mp_read(p, n, off, &k))
            return fail(w, 1, off, "malformed msgpack");
        if (k.type != DLS_MP_STR)
            return fail(w, 1, off, "a top-level key is not a str");
        int id = key_id(&k);
        if (id < 0)
            others[nothers++] = (kspan){(uint16_t)off, (uint16_t)k.len, (uint8_t)(k.end - k.len - off)};
        else if (present & (1u << id))
            rep = rep < off ? rep : off;
        else {
            present |= 1u << id;
            val[id] = k.end;
        }
        /* the fact map is level 1: its values may nest 7 more */
        int rc = dls_mp_skip(p, n, k.end, DLS_FACT_MAX_DEPTH - 1, &off, NULL);
        if (rc)
            return fail(w, 1, off, rc == DLS_ERR_DEPTH ? "nests deeper than 8 levels" : "malformed msgpack");
    }
    if (off != n)
        return fail(w, 1, off, "trailing bytes after the fact");
    first_repeat(p, others, nothers, &rep);
    if (rep != SIZE_MAX)
        return fail(w, 1, rep, "a top-level key is repeated");

    /* Rule 2: dispatch. */
    bool st = present & (1u << K_STATUS), ev = present & (1u << K_EVENT);
    if (st && ev)
        return fail(w, 2, val[K_STATUS] > val[K_EVENT] ? val[K_STATUS] : val[K_EVENT],
                    "both dispatch keys");
    if (!st && !ev)
        return 0; /* not a lease fact: ignored, not defective */
    size_t doff = val[st ? K_STATUS : K_EVENT];
    dls_fact_kind kind = dispatch(p, n, doff, st);
    if (!kind)
        return fail(w, 2, doff, st ? "a status outside the table" : "an event outside the table");
    f->kind = kind;

    /* Rules 3–5, every vocabulary key whatever the kind; lowest rule wins. */
    problem pb = {0};
    for (int id = K_LEASE; id < N_KEYS; id++)
        if (present & (1u << id)) {
            f->keys |= BIT(id);
            check_key(p, n, id, val[id], f, &pb);
        }
    for (int id = K_LEASE; id < N_KEYS; id++)
        if ((required[kind] & BIT(id)) && !(f->keys & BIT(id)))
            note(&pb, 3, 0, missing_why[id]);
    if (kind == DLS_FACT_PROPOSAL && (f->keys & DLS_K_LEASE))
        note(&pb, 5, val[K_LEASE], "lease on a proposal");
    if (pb.rule)
        return fail(w, pb.rule, pb.off, pb.why);
    return dls_where_fill(w, 0, (dls_where){0}); /* success clears it */
}

/* ---- encoding ------------------------------------------------------------ */

/* Exactly one msgpack value. */
static bool raw_ok(dls_bytes v)
{
    size_t end;
    return v.p && v.n && dls_mp_skip(v.p, v.n, 0, DLS_MP_MAX_DEPTH, &end, NULL) == 0 &&
           end == v.n;
}

static bool duration_ok(const dls_duration *d)
{
    dls_duration chk;
    return dls_duration_make(&chk, d->unit, d->magnitude) == 0 && chk.ns == d->ns;
}

static bool encodable(const dls_fact *f, uint32_t keys)
{
    if ((keys & DLS_K_PROPOSAL) && !raw_ok(f->proposal))
        return false;
    if ((keys & DLS_K_SUBJECT) && !raw_ok(f->subject))
        return false;
    if (((keys & DLS_K_HOLDER) && !f->holder.p) || ((keys & DLS_K_REASON) && !f->reason.p && f->reason.n))
        return false;
    if (((keys & DLS_K_DURATION) && !duration_ok(&f->duration)) ||
        ((keys & DLS_K_MAX) && !duration_ok(&f->max)) ||
        ((keys & DLS_K_READING) && !duration_ok(&f->reading)))
        return false;
    if (((keys & DLS_K_CAUSE) && !dls_cause_name(f->cause)) ||
        ((keys & DLS_K_MODE) && !dls_mode_name(f->mode)))
        return false;
    return true;
}

static void put(dls_pk *b, const dls_fact *f, int id)
{
    dls_pk_str(b, key_tab[id].name, key_tab[id].len);
    switch (id) {
    case K_LEASE: dls_pk_uint(b, f->lease); break;
    case K_SEQ: dls_pk_uint(b, f->seq); break;
    case K_PROPOSAL: dls_pk_raw(b, f->proposal.p, f->proposal.n); break;
    case K_SUBJECT: dls_pk_raw(b, f->subject.p, f->subject.n); break;
    case K_HOLDER: dls_pk_str(b, f->holder.p, f->holder.n); break;
    case K_MEDIUM: dls_pk_bin(b, f->medium, DLS_MEDIUM_ID_LEN); break;
    case K_DURATION: dls_pk_duration(b, &f->duration); break;
    case K_MAX: dls_pk_duration(b, &f->max); break;
    case K_READING: dls_pk_duration(b, &f->reading); break;
    case K_CAUSE: dls_pk_cstr(b, dls_cause_name(f->cause)); break;
    case K_MODE: dls_pk_cstr(b, dls_mode_name(f->mode)); break;
    case K_COMMIT:
        if (f->commit)
            msgpack_pack_true(&b->pk);
        else
            msgpack_pack_false(&b->pk);
        break;
    case K_REASON: dls_pk_str(b, f->reason.p, f->reason.n); break;
    }
}

int dls_fact_encode(const dls_fact *f, uint8_t *out, size_t cap, size_t *len)
{
    if (!f || !out || !len || !kind_ok(f->kind))
        return DLS_ERR_INVAL;
    uint32_t keys = f->keys & DLS_K_ALL;
    if (!encodable(f, keys))
        return DLS_ERR_INVAL;
    dls_pk b;
    dls_pk_init(&b, out, cap);
    msgpack_pack_map(&b.pk, 1 + (size_t)__builtin_popcount(keys));
    int dk = f->kind <= DLS_FACT_RECLAIM ? K_STATUS : K_EVENT;
    dls_pk_str(&b, key_tab[dk].name, key_tab[dk].len);
    dls_pk_cstr(&b, dispatch_values[f->kind]);
    uint32_t written = 0;
    for (const uint8_t *r = rows[f->kind]; *r; r++)
        if (keys & BIT(*r)) {
            put(&b, f, *r);
            written |= BIT(*r);
        }
    for (int id = K_LEASE; id < N_KEYS; id++)
        if ((keys & BIT(id)) && !(written & BIT(id)))
            put(&b, f, id);
    if (b.overflow)
        return DLS_ERR_TOOBIG;
    dls_fact chk;
    if (dls_fact_decode(out, b.len, &chk, NULL) || chk.kind != f->kind)
        return DLS_ERR_INVAL;
    *len = b.len;
    return 0;
}

/* ---- building ------------------------------------------------------------ */

static int value(uint8_t *out, size_t cap, const void *p, size_t n, size_t *len, bool bin)
{
    if (!out || !len || (!p && n) || n > UINT32_MAX)
        return DLS_ERR_INVAL;
    dls_pk b;
    dls_pk_init(&b, out, cap);
    if (bin)
        dls_pk_bin(&b, p, n);
    else
        dls_pk_str(&b, p, n);
    if (b.overflow)
        return DLS_ERR_TOOBIG;
    *len = b.len;
    return 0;
}

int dls_value_str(uint8_t *out, size_t cap, const void *p, size_t n, size_t *len)
{
    return value(out, cap, p, n, len, false);
}

int dls_value_bin(uint8_t *out, size_t cap, const void *p, size_t n, size_t *len)
{
    return value(out, cap, p, n, len, true);
}

void dls_fact_init(dls_fact *f, dls_fact_kind kind)
{
    memset(f, 0, sizeof *f);
    f->kind = kind;
}

void dls_fact_proposal(dls_fact *f, dls_bytes proposal, dls_bytes subject, uint64_t seq)
{
    dls_fact_init(f, DLS_FACT_PROPOSAL);
    f->proposal = proposal;
    f->subject = subject;
    f->seq = seq;
    f->keys = DLS_K_PROPOSAL | DLS_K_SUBJECT | DLS_K_SEQ;
}

void dls_fact_grant(dls_fact *f, uint64_t lease, dls_bytes subject, dls_bytes holder,
                    dls_duration duration, const uint8_t medium[DLS_MEDIUM_ID_LEN])
{
    dls_fact_init(f, DLS_FACT_GRANT);
    f->lease = lease;
    f->subject = subject;
    f->holder = holder;
    f->duration = duration;
    memcpy(f->medium, medium, DLS_MEDIUM_ID_LEN);
    f->keys = DLS_K_LEASE | DLS_K_SUBJECT | DLS_K_HOLDER | DLS_K_DURATION | DLS_K_MEDIUM;
}

void dls_fact_refusal(dls_fact *f, dls_bytes proposal, dls_bytes holder, dls_bytes reason)
{
    dls_fact_init(f, DLS_FACT_REFUSAL);
    f->proposal = proposal;
    f->holder = holder;
    f->keys = DLS_K_PROPOSAL | DLS_K_HOLDER;
    if (reason.p) {
        f->reason = reason;
        f->keys |= DLS_K_REASON;
    }
}

void dls_fact_release(dls_fact *f, uint64_t lease, bool commit)
{
    dls_fact_init(f, DLS_FACT_RELEASE);
    f->lease = lease;
    f->keys = DLS_K_LEASE;
    if (commit) {
        f->commit = true;
        f->keys |= DLS_K_COMMIT;
    }
}

void dls_fact_reclaim(dls_fact *f, uint64_t lease, dls_cause cause)
{
    dls_fact_init(f, DLS_FACT_RECLAIM);
    f->lease = lease;
    f->cause = cause;
    f->keys = DLS_K_LEASE | DLS_K_CAUSE;
}

void dls_fact_renewal(dls_fact *f, uint64_t lease, uint64_t seq)
{
    dls_fact_init(f, DLS_FACT_RENEWAL);
    f->lease = lease;
    f->seq = seq;
    f->keys = DLS_K_LEASE | DLS_K_SEQ;
}

void dls_fact_tick(dls_fact *f, dls_duration reading)
{
    dls_fact_init(f, DLS_FACT_TICK);
    f->reading = reading;
    f->keys = DLS_K_READING;
}
