/* daolease — attribution: keys, keyrings, signed envelopes and resolvers
 * (spec: attribution.md).
 *
 * A resolver answers one question: who authored this record, read from this
 * medium? — a party name, or nobody. Verification answers yes or no; a
 * forged record is counted and ignored, never explained to the forger.
 *
 * Every envelope is signed (Ed25519) or MACed (HMAC-SHA-512-256) over
 *
 *     M = "daolease.fact.v1" || medium_id (16) || author_len (1) || author || fact
 *
 * so a record copied to another medium, or re-labelled with another author,
 * does not verify. Usage:
 *
 *     dls_keyring *kr;  dls_where w;
 *     if (dls_keyring_load(&kr, "keyring", &w)) ... report w.line, w.offset, w.reason
 *     dls_resolver *r;
 *     dls_resolver_new_signed(&r, medium_id, kr);   (takes its own reference)
 *     dls_keyring_del(kr);
 *     dls_attribution a;
 *     dls_resolver_attribute(r, rec, n, &a);
 *     if (a.attributed) ... a.author wrote a.fact
 *     dls_resolver_del(r);
 *
 * Thread safety: a keyring is read-only once shared and may be read by any
 * number of threads; a resolver and a secret belong to one thread at a time.
 * Every constructor calls sodium_init() itself.
 */
#ifndef DAOLEASE_ATTRIB_H
#define DAOLEASE_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"
#include "daolease/export.h"
#include "daolease/fact.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DLS_KEY_LEN 32          /* Ed25519 public key, or MAC key */
#define DLS_SECRET_KEY_LEN 64   /* Ed25519 secret key: seed || public key */
#define DLS_SIG_LEN 64
#define DLS_MAC_LEN 32
#define DLS_NAME_MAX 64
/* "daolease.fact.v1" || medium id || author_len || author */
#define DLS_SIGN_PREFIX "daolease.fact.v1"
#define DLS_SIGN_PREFIX_LEN 16
/* The largest fact an envelope may carry: the record limit of a journal
 * (lease facts obey the 4096-byte rule, checked by the fact decoder). */
#define DLS_ENVELOPE_FACT_MAX 65536
/* An envelope map with more pairs than this is malformed (the spec's "no key
 * repeated" is then checked without allocating; writers put exactly 3). */
#define DLS_ENVELOPE_PAIRS_MAX 64
/* The most bytes an envelope adds around its fact (author of 64 bytes,
 * fact as bin 32, an Ed25519 signature). */
#define DLS_ENVELOPE_OVERHEAD_MAX 178
/* The longest signed message M: prefix, medium id, author length, author,
 * fact. */
#define DLS_MESSAGE_MAX (DLS_SIGN_PREFIX_LEN + 16 + 1 + DLS_NAME_MAX + DLS_ENVELOPE_FACT_MAX)
/* The longest keyring or secret key file line, terminator excluded. */
#define DLS_KEYRING_LINE_MAX 1024

typedef enum dls_key_kind { DLS_KEY_ED25519 = 0, DLS_KEY_MAC } dls_key_kind;

/* True when name[0..n) is a valid party name: 1–64 bytes, each in
 * 0x21–0x7E or 0x80–0xFF (attribution.md). */
DLS_EXPORT bool dls_name_valid(const uint8_t *name, size_t n);

/* ---- keyrings ------------------------------------------------------------ */

/* A set of (name, kind, 32-byte public or MAC key). Reference-counted and
 * read-only once shared: the first dls_keyring_ref() freezes it (later
 * dls_keyring_add calls answer DLS_ERR_STATE). All keys live in one
 * sodium_malloc arena, read-only between changes and wiped on free. Lookup
 * is O(1): a hash table keyed with crypto_shorthash under a random key, since
 * names are attacker-chosen bytes. */
typedef struct dls_keyring dls_keyring;

/* Creates an empty keyring with one reference. Errors: DLS_ERR_INVAL (out
 * NULL), DLS_ERR_NOMEM, DLS_ERR_SODIUM (sodium_init failed). */
DLS_EXPORT int dls_keyring_new(dls_keyring **out);

/* Parses keyring text (attribution.md, "Keyrings and keys"): one party per
 * line, `NAME KIND HEX` with KIND `ed25519` or `mac` and 64 hex digits of
 * either case; fields separated by spaces or tabs; `#` starts a comment
 * where a field would start; lines end in LF or CRLF (the last may lack
 * it) and hold at most 1024 bytes besides the terminator. `text` need not be
 * NUL-terminated and is not kept. On success *out holds one reference.
 * Errors: DLS_ERR_KEYRING (w->line is 1-based, w->offset the 1-based byte
 * column, w->reason a static sentence), DLS_ERR_DUPLICATE for a name listed
 * twice (line and column of the second), DLS_ERR_INVAL, DLS_ERR_NOMEM,
 * DLS_ERR_SODIUM. `w` may be NULL. */
DLS_EXPORT int dls_keyring_parse(dls_keyring **out, const char *text, size_t n,
                                 dls_where *w);

/* Reads and parses a keyring file (at most 16 MiB, read into wiped memory).
 * Errors: those of dls_keyring_parse, DLS_ERR_IO when it cannot be read
 * (w->sys_errno) or is not a regular file (a FIFO, device or directory is
 * refused at once, never waited on: w->reason says so, w->sys_errno 0),
 * DLS_ERR_TOOBIG for a larger file. */
DLS_EXPORT int dls_keyring_load(dls_keyring **out, const char *path, dls_where *w);

/* Adds one name. Errors: DLS_ERR_INVAL (invalid name or kind, NULL
 * argument), DLS_ERR_DUPLICATE, DLS_ERR_STATE (the keyring is shared),
 * DLS_ERR_NOMEM. */
DLS_EXPORT int dls_keyring_add(dls_keyring *kr, const uint8_t *name, size_t name_len,
                               dls_key_kind kind, const uint8_t key[DLS_KEY_LEN]);

/* Finds a name; 0 and the kind and key (borrowed from the keyring, valid
 * while it lives) or DLS_ERR_NOTFOUND. `kind` and `key` may be NULL. */
DLS_EXPORT int dls_keyring_lookup(const dls_keyring *kr, const uint8_t *name,
                                  size_t name_len, dls_key_kind *kind,
                                  const uint8_t **key);

/* The number of names (0 for NULL). */
DLS_EXPORT size_t dls_keyring_count(const dls_keyring *kr);

/* Takes a reference (and freezes the keyring); returns kr. */
DLS_EXPORT dls_keyring *dls_keyring_ref(dls_keyring *kr);

/* Drops a reference; frees and wipes on the last. NULL-safe. */
DLS_EXPORT void dls_keyring_del(dls_keyring *kr);

/* ---- secret keys --------------------------------------------------------- */

/* One party's secret: its name, kind and key (Ed25519 64-byte secret key or
 * 32-byte MAC key), in one sodium_malloc block, read-only, wiped on free. */
typedef struct dls_secret dls_secret;

/* Makes a fresh key from libsodium's randomness. Errors: DLS_ERR_INVAL
 * (invalid name or kind), DLS_ERR_NOMEM, DLS_ERR_SODIUM. */
DLS_EXPORT int dls_secret_generate(dls_secret **out, const char *name, dls_key_kind kind);

/* Deterministic key from a 32-byte seed (Ed25519, crypto_sign_seed_keypair)
 * or the 32-byte key itself (MAC): for tests and vectors. Errors as
 * dls_secret_generate. */
DLS_EXPORT int dls_secret_from_seed(dls_secret **out, const char *name,
                                    dls_key_kind kind, const uint8_t seed[32]);

/* Loads a secret key file: exactly one line `NAME ed25519-secret <128 hex>`
 * or `NAME mac-secret <64 hex>` (the keyring line grammar), an optional LF
 * or CRLF after it and nothing else. Errors: DLS_ERR_PERM when the file's
 * mode grants any access to group or others (mode & 077; w->reason says to
 * run `chmod 600 FILE`), DLS_ERR_KEYRING when malformed (w->line, w->offset
 * = column, w->reason) or when an Ed25519 secret's public half does not
 * match its seed, DLS_ERR_IO (w->sys_errno) when it cannot be opened, or
 * (w->sys_errno 0) when it is not a regular file — a FIFO is refused at once,
 * never waited on —, DLS_ERR_NOMEM, DLS_ERR_SODIUM. The file's bytes are
 * read into sodium_malloc memory and wiped. */
DLS_EXPORT int dls_secret_load(dls_secret **out, const char *path, dls_where *w);

/* Writes the secret key file with mode 0600, atomically (a temporary file in
 * the same directory, fsync, then a hard link to `path`, so an existing
 * file is never replaced). Errors: DLS_ERR_EXISTS when `path` exists,
 * DLS_ERR_IO (w->sys_errno, w->reason), DLS_ERR_INVAL, DLS_ERR_NOMEM. */
DLS_EXPORT int dls_secret_save(const dls_secret *s, const char *path, dls_where *w);

/* The keyring line for the public half: "NAME ed25519 HEX" or "NAME mac HEX"
 * (no newline), NUL-terminated. DLS_ERR_TOOBIG when it does not fit in cap
 * (DLS_NAME_MAX + 80 bytes always do); DLS_ERR_INVAL for NULL. */
DLS_EXPORT int dls_secret_keyring_line(const dls_secret *s, char *buf, size_t cap);

/* The name (NUL-terminated, borrowed from s). */
DLS_EXPORT const char *dls_secret_name(const dls_secret *s);
DLS_EXPORT dls_key_kind dls_secret_kind(const dls_secret *s);
/* The 32-byte public key (Ed25519) or MAC key, borrowed from s. */
DLS_EXPORT const uint8_t *dls_secret_public(const dls_secret *s);
/* Wipes and frees. NULL-safe. */
DLS_EXPORT void dls_secret_del(dls_secret *s);

/* ---- envelopes ----------------------------------------------------------- */

/* Writes the signed message M for (medium, author, fact) into out[cap].
 * Errors: DLS_ERR_INVAL (author not 1–64 bytes, NULL argument),
 * DLS_ERR_TOOBIG (fact over DLS_ENVELOPE_FACT_MAX, or M does not fit). */
DLS_EXPORT int dls_envelope_message(const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                                    const uint8_t *author, size_t author_len,
                                    const uint8_t *fact, size_t fact_len,
                                    uint8_t *out, size_t cap, size_t *len);

/* The exact size of the envelope dls_envelope_seal writes (0 for an author
 * outside 1–64 bytes or a fact over DLS_ENVELOPE_FACT_MAX). */
DLS_EXPORT size_t dls_envelope_size(size_t author_len, size_t fact_len, dls_key_kind kind);

/* Wraps a fact's bytes in an envelope signed (Ed25519) or MACed by s for the
 * medium `medium_id`, keys in the order author, fact, sig|mac, shortest form
 * (what every conforming writer produces byte for byte). Writes into
 * out[cap], which must not overlap `fact` (M is built in `out` first).
 * Errors: DLS_ERR_TOOBIG when it does not fit or the fact is over
 * DLS_ENVELOPE_FACT_MAX, DLS_ERR_INVAL, DLS_ERR_SODIUM. */
DLS_EXPORT int dls_envelope_seal(const dls_secret *s,
                                 const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                                 const uint8_t *fact, size_t fact_len,
                                 uint8_t *out, size_t cap, size_t *len);

/* ---- batch envelopes (attribution.md revision 4) ------------------------- */

/* One author puts 1 … 4096 facts in one record under one tag:
 *
 *     {"dao.env/author": str, "dao.env/facts": [bin, …], "dao.env/sig"|"dao.env/mac": bin}
 *
 * signed (or MACed) over
 *
 *     M_batch = "daolease.batch.v1" || medium_id (16) || author_len (1) || author
 *               || count (4, LE) || for each fact: len (4, LE) || fact
 *
 * A verified batch attributes every fact to its author, each as if it stood
 * alone at the record's position, in array order, with its 0-based index:
 * a fact's place is (position, index). Never on a journal (judge.md). */
#define DLS_BATCH_PREFIX "daolease.batch.v1"
#define DLS_BATCH_PREFIX_LEN 17
#define DLS_BATCH_COUNT_MAX 4096      /* facts in one batch */
#define DLS_BATCH_FACT_MAX 4096       /* bytes of one fact in a batch */
#define DLS_BATCH_RECORD_MAX 65536    /* the whole envelope: the record limit */
/* The longest M_batch of a batch envelope within DLS_BATCH_RECORD_MAX: each
 * element's 4-byte length replaces a bin header of at least 2 bytes. */
#define DLS_BATCH_MESSAGE_MAX                                                            \
    (DLS_BATCH_PREFIX_LEN + 16 + 1 + DLS_NAME_MAX + 4 + DLS_BATCH_RECORD_MAX +           \
     2 * DLS_BATCH_COUNT_MAX)

/* Writes M_batch for (medium, author, facts[0..count)) into out[cap].
 * Errors: DLS_ERR_INVAL (author not 1–64 bytes, count 0 or over
 * DLS_BATCH_COUNT_MAX, NULL argument), DLS_ERR_TOOBIG (a fact over
 * DLS_BATCH_FACT_MAX, or M_batch does not fit in cap). */
DLS_EXPORT int dls_batch_message(const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                                 const uint8_t *author, size_t author_len,
                                 const dls_bytes *facts, size_t count,
                                 uint8_t *out, size_t cap, size_t *len);

/* The exact size of the batch envelope dls_batch_seal writes for these
 * facts; 0 when the author is not 1–64 bytes, count is 0 or over
 * DLS_BATCH_COUNT_MAX, or a fact is over DLS_BATCH_FACT_MAX. (It may exceed
 * DLS_BATCH_RECORD_MAX: dls_batch_seal then refuses.) */
DLS_EXPORT size_t dls_batch_size(size_t author_len, const dls_bytes *facts, size_t count,
                                 dls_key_kind kind);

/* The bytes a batch envelope grows by when one fact of fact_len bytes is
 * added to count_before facts (its bin header and bytes, plus 2 when the
 * array header grows from fixarray to array 16, at the 16th fact): lets a
 * writer fill a batch up to DLS_BATCH_RECORD_MAX fact by fact, starting
 * from dls_batch_size of its first fact. */
DLS_EXPORT size_t dls_batch_fact_cost(size_t count_before, size_t fact_len);

/* Wraps facts[0..count) (each the msgpack bytes of one fact, applied in
 * array order) in one batch envelope signed or MACed by s for `medium_id`:
 * keys in the order author, facts, sig|mac, shortest form (what every
 * conforming writer produces byte for byte). Writes into out[cap], which
 * must not overlap the facts. Allocates M_batch for the call (freed before
 * returning). Errors: DLS_ERR_INVAL (count 0 or over DLS_BATCH_COUNT_MAX,
 * NULL argument), DLS_ERR_TOOBIG (a fact over DLS_BATCH_FACT_MAX, the
 * envelope over DLS_BATCH_RECORD_MAX, or over cap), DLS_ERR_NOMEM,
 * DLS_ERR_SODIUM. */
DLS_EXPORT int dls_batch_seal(const dls_secret *s,
                              const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                              const dls_bytes *facts, size_t count,
                              uint8_t *out, size_t cap, size_t *len);

/* ---- attribution of one record -------------------------------------------- */

typedef enum dls_record_kind {
    DLS_REC_FACT = 0,   /* a bare fact (a map with no "dao.env/" key) */
    DLS_REC_ENVELOPE,   /* a map with a "dao.env/" key (and every malformed batch) */
    DLS_REC_SEAL,       /* the stream seal record */
    DLS_REC_MALFORMED,  /* not exactly one msgpack map */
    DLS_REC_BATCH       /* a well-formed batch envelope (revision 4) */
} dls_record_kind;

/* cli.md's word for a kind: "fact", "envelope", "seal", "malformed",
 * "batch". */
DLS_EXPORT const char *dls_record_kind_name(dls_record_kind k);

/* Why a record is attributed to nobody (cli.md's words). */
typedef enum dls_why {
    DLS_WHY_NONE = 0,          /* attributed (or a seal) */
    DLS_WHY_BARE_FACT,         /* "bare-fact": a bare fact on a signed medium */
    DLS_WHY_SIGNATURE,         /* "signature": sig/mac does not verify */
    DLS_WHY_UNKNOWN_AUTHOR,    /* "unknown-author": not in the keyring (or no keyring) */
    DLS_WHY_WRONG_KEY_KIND,    /* "wrong-key-kind": sig under a MAC name or mac under Ed25519 */
    DLS_WHY_MALFORMED          /* "malformed": an envelope that is not well-formed, or not a map */
} dls_why;

/* cli.md's word for w, or NULL for DLS_WHY_NONE (JSON null). */
DLS_EXPORT const char *dls_why_name(dls_why w);

/* The answer for one record. Slices borrow from the record bytes (or, for
 * `author` under a medium resolver, from the resolver). */
typedef struct dls_attribution {
    dls_record_kind kind;
    bool attributed;     /* true: `author` is who authored `fact` (every fact of a batch) */
    dls_why why;
    dls_bytes author;    /* the verified author, or the name claimed (may be empty) */
    dls_bytes fact;      /* the fact bytes (an envelope's inner fact, or the record);
                            empty for a batch: iterate with dls_facts_next */
    uint32_t count;      /* facts the record carries: 1 for a bare fact or an
                            envelope, 1 … 4096 for a well-formed batch, 0 for a
                            seal, a malformed record or a malformed envelope */
} dls_attribution;

/* An iterator over the facts of one record, in array order, with their
 * index: filled by dls_resolver_attribute_facts (the facts it attributes) or
 * dls_record_facts (the facts as carried, unverified). Its slices borrow
 * from the record bytes. Plain data: copy it to iterate twice. */
typedef struct dls_facts {
    const uint8_t *p;    /* the next element (batch) or the one fact */
    const uint8_t *end;
    uint32_t index;      /* the index the next fact will have */
    uint32_t count;      /* facts in all (0: yields nothing) */
    bool batch;          /* p walks bin elements; else [p, end) is one fact */
} dls_facts;

/* Yields the next fact and its 0-based index (the fact of a single envelope
 * or a bare fact has index 0); false when there is none left. `index` may be
 * NULL. Never allocates. */
DLS_EXPORT bool dls_facts_next(dls_facts *it, dls_bytes *fact, uint32_t *index);

/* Decodes an envelope or bare record without verifying: fills kind, author
 * (claimed), fact, count; `attributed` false; why DLS_WHY_MALFORMED for an
 * envelope that is not well-formed and for kind DLS_REC_MALFORMED, else
 * DLS_WHY_NONE. A well-formed batch envelope is kind DLS_REC_BATCH (fact
 * empty, count its facts); a malformed one is kind DLS_REC_ENVELOPE, why
 * MALFORMED, fact empty. A batch envelope is well-formed when it holds
 * `dao.env/facts` (an array of 1 … 4096 bin of at most 4096 bytes each) and
 * no `dao.env/fact`, is at most DLS_BATCH_RECORD_MAX bytes, and otherwise
 * obeys the rules below. An envelope is well-formed when it holds `dao.env/author`
 * (str, 1–64 bytes), `dao.env/fact` (bin, at most DLS_ENVELOPE_FACT_MAX) and
 * exactly one of `dao.env/sig` (bin 64) and `dao.env/mac` (bin 32), no key
 * twice (keys compared as values: str and bin by type and bytes, integers
 * by value, others by their encoding), at most DLS_ENVELOPE_PAIRS_MAX pairs,
 * and nothing after the map; other keys are ignored. For a malformed
 * envelope `author` and `fact` are set only when their key appears once with
 * the right type. Never allocates; O(n). */
DLS_EXPORT void dls_record_classify(const uint8_t *rec, size_t n, dls_attribution *a);

/* dls_record_classify, and *it set to iterate the facts the record carries
 * without verifying them (a bare fact, an envelope's fact, a well-formed
 * batch's elements; nothing for a seal or anything malformed). For tools
 * that show what a record holds (`dump`) — never for counting. */
DLS_EXPORT void dls_record_facts(const uint8_t *rec, size_t n, dls_attribution *a,
                                 dls_facts *it);

/* ---- resolvers ----------------------------------------------------------- */

typedef struct dls_resolver dls_resolver;

/* A `signed` resolver bound to a medium id, verifying under kr (a reference
 * is taken, which freezes kr). Errors: DLS_ERR_EMPTY_KEYRING when kr holds
 * no key, DLS_ERR_INVAL (NULL argument), DLS_ERR_NOMEM, DLS_ERR_SODIUM. The
 * resolver allocates its scratch buffer for M (DLS_MESSAGE_MAX bytes) once,
 * here. */
DLS_EXPORT int dls_resolver_new_signed(dls_resolver **out,
                                       const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                                       dls_keyring *kr);

/* A `medium` resolver: every bare fact on the medium is `party`'s;
 * envelopes verify as `signed` would under kr when kr is not NULL, else
 * nobody (why DLS_WHY_UNKNOWN_AUTHOR). DLS_ERR_INVAL for a party name
 * outside 1–64 bytes of 0x21–0x7E or 0x80–0xFF; DLS_ERR_NOMEM,
 * DLS_ERR_SODIUM. */
DLS_EXPORT int dls_resolver_new_medium(dls_resolver **out,
                                       const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                                       const char *party, dls_keyring *kr);

/* Frees the resolver and drops its keyring reference. NULL-safe. */
DLS_EXPORT void dls_resolver_del(dls_resolver *r);

/* The 16-byte medium id the resolver is bound to (borrowed). */
DLS_EXPORT const uint8_t *dls_resolver_medium_id(const dls_resolver *r);

/* Who authored this record, read from the resolver's medium? One fact per
 * record — the journal's rule. Fills *a:
 *  - seal: kind SEAL, not attributed, why NONE;
 *  - not a map: kind MALFORMED, why MALFORMED;
 *  - bare fact: under a medium resolver attributed to its party; under a
 *    signed one nobody, why BARE_FACT;
 *  - envelope: attributed when well-formed, its author is in the keyring,
 *    the tag kind matches the key kind and the tag verifies over M; else
 *    why MALFORMED, UNKNOWN_AUTHOR, WRONG_KEY_KIND or SIGNATURE;
 *  - batch envelope: kind BATCH, `count` its facts, NOT attributed, why
 *    MALFORMED, without verifying (a batch on a journal is malformed,
 *    judge.md). A reader of media that may carry batches (lease-fact and
 *    tick media) calls dls_resolver_attribute_facts instead.
 * Costs one classification, one hash lookup, one copy into the scratch
 * buffer (none for a MAC: its precomputed key state is kept in the keyring)
 * and one verification; never allocates. Uses the resolver's scratch
 * buffer: one thread at a time per resolver. */
DLS_EXPORT void dls_resolver_attribute(dls_resolver *r, const uint8_t *rec, size_t n,
                                       dls_attribution *a);

/* Attribution of a record of a lease-fact or tick medium, where a batch
 * envelope may carry several facts (attribution.md revision 4). Fills *a as
 * dls_resolver_attribute does, except that a well-formed batch is verified
 * — ONE signature or MAC check over M_batch for all its facts — and is
 * attributed (a->author, a->count) or not (why UNKNOWN_AUTHOR,
 * WRONG_KEY_KIND, SIGNATURE). Sets *it to yield every attributed fact with
 * its index: the record's one fact at index 0, or the batch's facts in
 * array order; nothing when the record is not attributed. Usage:
 *
 *     dls_attribution a;  dls_facts it;  dls_bytes f;  uint32_t ix;
 *     dls_resolver_attribute_facts(r, rec.p, rec.n, &a, &it);
 *     if (!a.attributed) { count one forged record (a.why); continue; }
 *     while (dls_facts_next(&it, &f, &ix))
 *         apply(a.author, f, position, ix);   each fact as if alone
 *
 * A defective fact inside a verified batch is the caller's to count on its
 * own; it does not stop the others. Never allocates; one thread at a time
 * per resolver. */
DLS_EXPORT void dls_resolver_attribute_facts(dls_resolver *r, const uint8_t *rec, size_t n,
                                             dls_attribution *a, dls_facts *it);

/* Assembly check: 0 when r is bound to `medium_id`; DLS_ERR_NORESOLVER when
 * r is NULL; DLS_ERR_RESOLVER_MEDIUM when bound to another medium (or
 * medium_id is NULL). (A signed resolver with an empty keyring cannot be
 * made: dls_resolver_new_signed refuses it with DLS_ERR_EMPTY_KEYRING.) */
DLS_EXPORT int dls_resolver_check(const dls_resolver *r,
                                  const uint8_t medium_id[DLS_MEDIUM_ID_LEN]);

#ifdef __cplusplus
}
#endif
#endif
