/* daolease — a bounds-checking, non-recursive msgpack walker.
 *
 * Untrusted bytes meet this walker before anything else (vocabulary.md,
 * "Decoding untrusted bytes"). It never allocates, never reads outside
 * [p, p + n), checks every announced count against the bytes left (each
 * element takes at least one byte) and counts nesting depth without
 * recursion. It yields raw slices so that callers can compare and copy
 * values by the bytes of their encoding. msgpack-c is used only to pack.
 *
 * Internal to the library (not part of the installed API).
 */
#ifndef DLS_VOCAB_MP_H
#define DLS_VOCAB_MP_H

#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"

/* The deepest nesting dls_mp_skip can count. */
#define DLS_MP_MAX_DEPTH 64

typedef enum dls_mp_type {
    DLS_MP_NIL,
    DLS_MP_BOOL,
    DLS_MP_UINT,  /* non-negative integer, any format (v.u) */
    DLS_MP_INT,   /* negative integer (v.i < 0) */
    DLS_MP_F32,
    DLS_MP_F64,
    DLS_MP_STR,
    DLS_MP_BIN,
    DLS_MP_EXT,
    DLS_MP_ARRAY,
    DLS_MP_MAP
} dls_mp_type;

/* One decoded header. For STR/BIN/EXT `data`/`len` are the payload (borrowed
 * from the input); for ARRAY `len` is the element count, for MAP the pair
 * count. `off` is where the value starts; `end` is the offset just past the
 * header (for scalars, STR, BIN and EXT: past the whole value). */
typedef struct dls_mp_item {
    dls_mp_type type;
    size_t off;
    size_t end;
    union {
        int b;
        uint64_t u;
        int64_t i;
        float f32;
        double f64;
    } v;
    const uint8_t *data;
    uint32_t len;
    int8_t ext_type;
} dls_mp_item;

/* Reads the header at p[off]. Returns 0, or DLS_ERR_MSGPACK when the header
 * or a str/bin/ext payload runs past n, when a container announces more
 * elements than bytes remain, or at the never-used byte 0xc1. */
int dls_mp_read(const uint8_t *p, size_t n, size_t off, dls_mp_item *it);

/* Walks one complete value starting at p[off] without recursion. On success
 * *end is the offset just past it and *depth (if not NULL) the deepest
 * container nesting met (0 for a scalar, 1 for a flat array or map, empty
 * containers included). Returns DLS_ERR_MSGPACK for malformed or truncated
 * input and DLS_ERR_DEPTH as soon as nesting exceeds max_depth
 * (max_depth <= DLS_MP_MAX_DEPTH); on an error *end (if not NULL) is the
 * offset of the value whose header failed or nested too deep. */
int dls_mp_skip(const uint8_t *p, size_t n, size_t off, unsigned max_depth,
                size_t *end, unsigned *depth);

#endif
