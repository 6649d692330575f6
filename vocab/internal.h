/* daolease — helpers shared by the vocabulary codec and the pass-mark codec.
 * Internal to the library (not part of the installed API). */
#ifndef DLS_VOCAB_INTERNAL_H
#define DLS_VOCAB_INTERNAL_H

#include <msgpack.h>
#include <stdbool.h>
#include <string.h>

#include "daolease/fact.h"
#include "vocab/mp.h"
#include "vocab/where.h"

/* A msgpack-c packer writing into a caller's fixed buffer: once a write
 * does not fit, `overflow` is set and everything after is dropped. */
typedef struct dls_pk {
    msgpack_packer pk;
    uint8_t *out;
    size_t cap, len;
    bool overflow;
} dls_pk;

void dls_pk_init(dls_pk *b, uint8_t *out, size_t cap);
/* Raw bytes, copied as they are (an already encoded value). */
void dls_pk_raw(dls_pk *b, const void *p, size_t n);
/* A NUL-terminated key or text as a str. */
void dls_pk_cstr(dls_pk *b, const char *s);
void dls_pk_str(dls_pk *b, const void *p, size_t n);
void dls_pk_bin(dls_pk *b, const void *p, size_t n);
void dls_pk_uint(dls_pk *b, uint64_t v);
/* {unit: magnitude} */
void dls_pk_duration(dls_pk *b, const dls_duration *d);

/* Bytes of the shortest encodings, for size planning. */
size_t dls_mp_uint_size(uint64_t v);
size_t dls_mp_str_size(size_t n);     /* header + payload */
size_t dls_mp_bin_size(size_t n);     /* header + payload */
size_t dls_mp_array_hdr_size(size_t count);
size_t dls_mp_duration_size(const dls_duration *d);

/* Reads a duration map at p[off] (vocabulary.md rule 4): exactly one entry,
 * a v1 unit str → an integer >= min, at most 2^63−1 ns once converted.
 * Returns 0 (d filled, *at the offset just after the map), or
 * DLS_ERR_RULE4 with *at / *why naming the offending offset and reason. */
int dls_duration_read(const uint8_t *p, size_t n, size_t off, uint64_t min,
                      dls_duration *d, size_t *at, const char **why);

/* Matches a str item against s[0..n) / a NUL-terminated text. */
static inline bool dls_mp_str_eq(const dls_mp_item *it, const char *s, size_t n)
{
    return it->type == DLS_MP_STR && it->len == n && memcmp(it->data, s, n) == 0;
}

static inline bool dls_mp_str_is(const dls_mp_item *it, const char *s)
{
    return dls_mp_str_eq(it, s, strlen(s));
}

/* A cause str → dls_cause, or DLS_CAUSE_NONE. */
dls_cause dls_cause_from(const uint8_t *p, size_t n);

#endif
