/* daolease — attribution internals shared by the files of resolver/.
 * Internal to the library (not part of the installed API). */
#ifndef DLS_RESOLVER_INTERNAL_H
#define DLS_RESOLVER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "vocab/where.h"

/* Writes v as 4 bytes little-endian (the MAC and batch headers of
 * attribution.md). */
static inline void dls_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* ---- keyring-line grammar (keyring files and secret key files) ---------- */

/* What a line may hold. */
typedef enum dls_line_kind {
    DLS_LINE_PUBLIC,  /* keyring: ed25519 | mac, 64 hex */
    DLS_LINE_SECRET   /* secret key file: ed25519-secret (128 hex) | mac-secret (64 hex) */
} dls_line_kind;

/* One parsed non-empty line. `key` holds 32 (public, mac, mac-secret) or
 * 64 (ed25519-secret) bytes, written to the caller's buffer. */
typedef struct dls_key_line {
    const uint8_t *name;
    size_t name_len;
    size_t name_col;      /* 1-based column of the name */
    dls_key_kind kind;
    size_t key_len;
} dls_key_line;

/* Iterates over lines: on 1, [*line, *line + *len) is the next line without
 * its LF or CRLF and *pos moved past its terminator; 0 at the end. */
int dls_text_next_line(const uint8_t *text, size_t n, size_t *pos,
                       const uint8_t **line, size_t *len);

/* Parses one line (without terminator) numbered `lineno`. Returns 1 for a
 * key line (filled *kl, the key decoded into key_out, which holds 64 bytes),
 * 0 for an empty or comment-only line, DLS_ERR_KEYRING with *w filled. */
int dls_key_line_parse(const uint8_t *line, size_t len, uint64_t lineno,
                       dls_line_kind lk, dls_key_line *kl, uint8_t *key_out,
                       dls_where *w);


/* Reads a whole regular file of at most `max` bytes into sodium_malloc
 * memory (*buf, *n; free with sodium_free). When mode_out is not NULL it
 * receives st_mode from fstat of the opened descriptor. */
int dls_read_secret_file(const char *path, size_t max, uint8_t **buf, size_t *n,
                         unsigned *mode_out, dls_where *w);

/* ---- envelopes ---------------------------------------------------------- */

/* An envelope or other record, decoded without verifying. */
typedef struct dls_env {
    dls_record_kind kind;  /* DLS_REC_BATCH only for a well-formed batch */
    bool ok;            /* an envelope (single or batch) that is well-formed */
    bool mac;           /* its tag is a mac (else a sig) */
    dls_bytes author;   /* claimed (set when present once with the right type) */
    dls_bytes fact;     /* inner fact (envelope) or the record (bare fact);
                           empty for any map carrying "dao.env/facts" */
    dls_bytes tag;      /* 64-byte sig or 32-byte mac */
    dls_bytes elems;    /* batch: the array's elements (bin items, back to back) */
    uint32_t count;     /* batch: number of elements */
    size_t fact_bytes;  /* batch: sum of the elements' payload lengths */
} dls_env;

void dls_env_parse(const uint8_t *rec, size_t n, dls_env *e);

/* Facts a parsed record carries (1 for a bare fact or a well-formed single
 * envelope, count for a batch, else 0), and an iterator over them. */
uint32_t dls_env_count(const dls_env *e);
void dls_env_facts(const dls_env *e, dls_facts *it);

/* Walks one complete msgpack value at p[off] with no depth limit (only a
 * count of values still to read). 0 and *end, or DLS_ERR_MSGPACK. */
int dls_mp_skip_any(const uint8_t *p, size_t n, size_t off, size_t *end);

/* ---- keyring: the verifier's view --------------------------------------- */

/* One key as a verifier needs it: kind, key bytes and, for a MAC key, the
 * HMAC-SHA-512-256 state after absorbing the key (inner and outer pads),
 * precomputed once when the key is added: a verify copies
 * it and hashes M only. All borrowed from the keyring's arenas. */
typedef struct dls_key_ref {
    dls_key_kind kind;
    const uint8_t *key;
    const crypto_auth_hmacsha512256_state *mac_state; /* NULL for Ed25519 */
} dls_key_ref;

/* 0 and *ref, or DLS_ERR_NOTFOUND. */
int dls_keyring_find(const dls_keyring *kr, const uint8_t *name, size_t name_len,
                     dls_key_ref *ref);

/* ---- attribution on several threads ------------------------------------ */

/* Bytes of scratch dls_resolver_attribute_scratch needs (M or M_batch). */
#define DLS_RESOLVER_SCRATCH                                                           \
    (DLS_MESSAGE_MAX > DLS_BATCH_MESSAGE_MAX ? DLS_MESSAGE_MAX : DLS_BATCH_MESSAGE_MAX)

/* dls_resolver_attribute (batches false) or dls_resolver_attribute_facts
 * (batches true; `it` may be NULL), building M in the caller's `scratch`
 * (DLS_RESOLVER_SCRATCH bytes) instead of the resolver's own buffer: r is
 * only read, so threads may attribute with one resolver at once, each with
 * its own scratch, while its owner keeps using the plain calls (the audit's
 * verifiers, audit/ahead.c). The keyring must not change meanwhile. */
void dls_resolver_attribute_scratch(const dls_resolver *r, uint8_t *scratch, bool batches,
                                    const uint8_t *rec, size_t n, dls_attribution *a,
                                    dls_facts *it);

/* ---- secrets ------------------------------------------------------------ */

/* Parses secret key file text (exactly one key line and an optional
 * terminator). Errors as dls_secret_load, without DLS_ERR_PERM/IO. */
int dls_secret_parse(dls_secret **out, const uint8_t *text, size_t n, dls_where *w);

/* The secret key bytes (Ed25519: 64; MAC: 32). */
const uint8_t *dls_secret_key(const dls_secret *s);
size_t dls_secret_name_len(const dls_secret *s);

#endif
