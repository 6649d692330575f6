/* The checkpoint digest (judge.md rev 4, Checkpoints, Commit): BLAKE2b-256,
 * unkeyed, over every record payload preceded by its length as 4 bytes
 * little-endian — computed beside the caller on a second thread.
 *
 * Hashing 10^6 leases' payloads (≈ 336 MB) takes ≈ 0.4 s of one core here,
 * as long as encoding and writing them, or reading and loading them: the
 * caller copies each payload into a 4 MiB chunk and goes on while a thread
 * hashes the previous chunk (docs/checkpoints.md, Cost). The digest is the
 * one a single-threaded crypto_generichash would give; when the thread
 * cannot be started the caller's thread hashes each chunk itself. The
 * caller must not fork between new and final.
 *
 * Internal to the library. */
#ifndef DLS_JUDGE_CKHASH_H
#define DLS_JUDGE_CKHASH_H

#include <stddef.h>
#include <stdint.h>

#include "daolease/checkpoint.h"

typedef struct dls_ckhash dls_ckhash;

/* A new digest: 0 or DLS_ERR_NOMEM. */
int dls_ckhash_new(dls_ckhash **out);
/* Adds one payload (its length first). 0, DLS_ERR_NOMEM, or
 * DLS_ERR_TOOBIG (a payload over 4 MiB: no record is). */
int dls_ckhash_add(dls_ckhash *h, const uint8_t *p, size_t n);
/* The digest of everything added (out may be NULL: abandoned); frees h.
 * NULL-safe. */
void dls_ckhash_final(dls_ckhash *h, uint8_t out[DLS_CKPT_DIGEST_LEN]);

#endif
