/* daolease — attribution: keys, keyrings, signed envelopes and resolvers
 * (spec: attribution.md).
 *
 * A resolver answers one question: who authored this record, read from this
 * medium? — a party name, or nobody. Verification answers yes or no; a
 * forged record is counted and ignored, never explained to the forger.
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
#define DLS_SIG_LEN 64
#define DLS_MAC_LEN 32
#define DLS_NAME_MAX 64
/* "daolease.fact.v1" || medium id || author_len || author */
#define DLS_SIGN_PREFIX "daolease.fact.v1"
#define DLS_SIGN_PREFIX_LEN 16

typedef enum dls_key_kind { DLS_KEY_ED25519 = 0, DLS_KEY_MAC } dls_key_kind;

/* ---- keyrings ------------------------------------------------------------ */

/* A set of (name, kind, 32-byte public or MAC key). Reference-counted and
 * read-only once shared: resolvers take a reference. MAC keys are held in
 * sodium_malloc memory and wiped on free. */
typedef struct dls_keyring dls_keyring;

DLS_EXPORT int dls_keyring_new(dls_keyring **out);
/* Parses keyring text (attribution.md, "Keyrings and keys"). Errors:
 * DLS_ERR_KEYRING (w->line, w->offset = column, w->reason),
 * DLS_ERR_DUPLICATE for a name listed twice, DLS_ERR_NOMEM. */
DLS_EXPORT int dls_keyring_parse(dls_keyring **out, const char *text, size_t n,
                                 dls_where *w);
/* Reads and parses a keyring file; DLS_ERR_IO when it cannot be read. */
DLS_EXPORT int dls_keyring_load(dls_keyring **out, const char *path, dls_where *w);
DLS_EXPORT int dls_keyring_add(dls_keyring *kr, const uint8_t *name, size_t name_len,
                               dls_key_kind kind, const uint8_t key[DLS_KEY_LEN]);
/* Finds a name; 0 and the key (borrowed from the keyring) or DLS_ERR_NOTFOUND. */
DLS_EXPORT int dls_keyring_lookup(const dls_keyring *kr, const uint8_t *name,
                                  size_t name_len, dls_key_kind *kind,
                                  const uint8_t **key);
DLS_EXPORT size_t dls_keyring_count(const dls_keyring *kr);
DLS_EXPORT dls_keyring *dls_keyring_ref(dls_keyring *kr);
/* Drops a reference; frees on the last. NULL-safe. */
DLS_EXPORT void dls_keyring_del(dls_keyring *kr);

/* ---- secret keys --------------------------------------------------------- */

/* One party's secret: its name, kind and key (Ed25519 64-byte secret key or
 * 32-byte MAC key), in sodium_malloc memory, wiped on free. */
typedef struct dls_secret dls_secret;

DLS_EXPORT int dls_secret_generate(dls_secret **out, const char *name, dls_key_kind kind);
/* Deterministic key from a 32-byte seed (Ed25519) or key (MAC): for tests. */
DLS_EXPORT int dls_secret_from_seed(dls_secret **out, const char *name,
                                    dls_key_kind kind, const uint8_t seed[32]);
/* Loads a secret key file; refuses one whose mode & 077 with DLS_ERR_PERM
 * (w->reason says how to fix it); DLS_ERR_KEYRING when malformed or when an
 * Ed25519 secret's public half does not match its seed. */
DLS_EXPORT int dls_secret_load(dls_secret **out, const char *path, dls_where *w);
/* Writes the secret key file with mode 0600, atomically. */
DLS_EXPORT int dls_secret_save(const dls_secret *s, const char *path, dls_where *w);
/* The keyring line for the public half: "NAME ed25519 HEX" or "NAME mac HEX"
 * (no newline). DLS_ERR_TOOBIG when it does not fit in cap. */
DLS_EXPORT int dls_secret_keyring_line(const dls_secret *s, char *buf, size_t cap);
DLS_EXPORT const char *dls_secret_name(const dls_secret *s);
DLS_EXPORT dls_key_kind dls_secret_kind(const dls_secret *s);
/* The 32-byte public key (Ed25519) or MAC key. */
DLS_EXPORT const uint8_t *dls_secret_public(const dls_secret *s);
DLS_EXPORT void dls_secret_del(dls_secret *s);

/* ---- envelopes ----------------------------------------------------------- */

/* Wraps a fact's bytes in an envelope signed (Ed25519) or MACed by s for the
 * medium `medium_id`, keys in the order author, fact, sig|mac, shortest form.
 * Writes into out[cap]; DLS_ERR_TOOBIG when it does not fit. */
DLS_EXPORT int dls_envelope_seal(const dls_secret *s,
                                 const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                                 const uint8_t *fact, size_t fact_len,
                                 uint8_t *out, size_t cap, size_t *len);

/* ---- attribution of one record -------------------------------------------- */

typedef enum dls_record_kind {
    DLS_REC_FACT = 0,   /* a bare fact (a map with no "dao.env/" key) */
    DLS_REC_ENVELOPE,   /* a map with a "dao.env/" key */
    DLS_REC_SEAL,       /* the stream seal record */
    DLS_REC_MALFORMED   /* not exactly one msgpack map */
} dls_record_kind;

/* Why a record is attributed to nobody (cli.md's words). */
typedef enum dls_why {
    DLS_WHY_NONE = 0,          /* attributed */
    DLS_WHY_BARE_FACT,         /* "bare-fact": a bare fact on a signed medium */
    DLS_WHY_SIGNATURE,         /* "signature": sig/mac does not verify */
    DLS_WHY_UNKNOWN_AUTHOR,    /* "unknown-author": not in the keyring (or no keyring) */
    DLS_WHY_WRONG_KEY_KIND,    /* "wrong-key-kind": sig under a MAC name or mac under Ed25519 */
    DLS_WHY_MALFORMED          /* "malformed": an envelope that is not well-formed */
} dls_why;

DLS_EXPORT const char *dls_why_name(dls_why w);

/* The answer for one record. Slices borrow from the record bytes (or, for
 * `author` under a medium resolver, from the resolver). */
typedef struct dls_attribution {
    dls_record_kind kind;
    bool attributed;     /* true: `author` is who authored `fact` */
    dls_why why;
    dls_bytes author;    /* the verified author, or the name claimed (may be empty) */
    dls_bytes fact;      /* the fact bytes (an envelope's inner fact, or the record) */
} dls_attribution;

/* Decodes an envelope or bare record without verifying: fills kind, author
 * (claimed), fact; `attributed` false; why DLS_WHY_MALFORMED for an
 * envelope that is not well-formed. Never allocates. */
DLS_EXPORT void dls_record_classify(const uint8_t *rec, size_t n, dls_attribution *a);

/* ---- resolvers ----------------------------------------------------------- */

typedef struct dls_resolver dls_resolver;

/* A `signed` resolver bound to a medium id, verifying under kr (a reference
 * is taken). DLS_ERR_EMPTY_KEYRING when kr holds no key. */
DLS_EXPORT int dls_resolver_new_signed(dls_resolver **out,
                                       const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                                       dls_keyring *kr);
/* A `medium` resolver: every bare fact on the medium is `party`'s;
 * envelopes verify as `signed` would under kr when kr is not NULL, else
 * nobody. DLS_ERR_INVAL for a party name outside 1–64 bytes of 0x21–0x7E
 * or 0x80–0xFF. */
DLS_EXPORT int dls_resolver_new_medium(dls_resolver **out,
                                       const uint8_t medium_id[DLS_MEDIUM_ID_LEN],
                                       const char *party, dls_keyring *kr);
DLS_EXPORT void dls_resolver_del(dls_resolver *r);
DLS_EXPORT const uint8_t *dls_resolver_medium_id(const dls_resolver *r);

/* Who authored this record, read from the resolver's medium? Fills *a.
 * Uses the resolver's scratch buffer: one thread at a time per resolver. */
DLS_EXPORT void dls_resolver_attribute(dls_resolver *r, const uint8_t *rec, size_t n,
                                       dls_attribution *a);

/* Assembly check: 0 when r is bound to `medium_id`; DLS_ERR_NORESOLVER when
 * r is NULL; DLS_ERR_RESOLVER_MEDIUM when bound to another medium. */
DLS_EXPORT int dls_resolver_check(const dls_resolver *r,
                                  const uint8_t medium_id[DLS_MEDIUM_ID_LEN]);

#ifdef __cplusplus
}
#endif
#endif
