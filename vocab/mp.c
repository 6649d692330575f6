#include "mp.h"

#include <string.h>

static uint64_t be(const uint8_t *p, unsigned k)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < k; i++)
        v = (v << 8) | p[i];
    return v;
}

/* Needs `k` bytes at `off`? */
static int have(size_t n, size_t off, uint64_t k)
{
    return off <= n && k <= n - off;
}

static int payload(const uint8_t *p, size_t n, dls_mp_item *it, size_t at,
                   uint64_t len)
{
    if (!have(n, at, len))
        return DLS_ERR_MSGPACK;
    it->data = p + at;
    it->len = (uint32_t)len;
    it->end = at + (size_t)len;
    return 0;
}

/* Sized header: `k` big-endian length bytes after the type byte. */
static int sized(const uint8_t *p, size_t n, size_t off, dls_mp_item *it,
                 dls_mp_type t, unsigned k)
{
    if (!have(n, off + 1, k))
        return DLS_ERR_MSGPACK;
    it->type = t;
    return payload(p, n, it, off + 1 + k, be(p + off + 1, k));
}

static int container(size_t n, size_t at, dls_mp_item *it, dls_mp_type t,
                     uint64_t count)
{
    uint64_t min = t == DLS_MP_MAP ? count * 2 : count;
    if (min > n - at)
        return DLS_ERR_MSGPACK;
    it->type = t;
    it->len = (uint32_t)count;
    it->end = at;
    return 0;
}

static int ext(const uint8_t *p, size_t n, size_t off, dls_mp_item *it,
               unsigned k, uint64_t fixed)
{
    uint64_t len = fixed;
    size_t at = off + 1 + k;
    if (!have(n, off + 1, (uint64_t)k + 1))
        return DLS_ERR_MSGPACK;
    if (k)
        len = be(p + off + 1, k);
    it->type = DLS_MP_EXT;
    it->ext_type = (int8_t)p[at];
    return payload(p, n, it, at + 1, len);
}

static int number(const uint8_t *p, size_t n, size_t off, dls_mp_item *it,
                  uint8_t b)
{
    static const unsigned width[] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
    unsigned k = width[b - 0xca];
    if (!have(n, off + 1, k))
        return DLS_ERR_MSGPACK;
    uint64_t raw = be(p + off + 1, k);
    it->end = off + 1 + k;
    if (b == 0xca) {
        uint32_t r32 = (uint32_t)raw;
        it->type = DLS_MP_F32;
        memcpy(&it->v.f32, &r32, 4);
    } else if (b == 0xcb) {
        it->type = DLS_MP_F64;
        memcpy(&it->v.f64, &raw, 8);
    } else if (b <= 0xcf) {
        it->type = DLS_MP_UINT;
        it->v.u = raw;
    } else {
        /* sign-extend a k-byte two's complement value */
        unsigned bits = k * 8;
        int64_t s = bits == 64 ? (int64_t)raw
                               : (int64_t)(raw ^ (1ull << (bits - 1))) -
                                     (int64_t)(1ull << (bits - 1));
        if (s >= 0) {
            it->type = DLS_MP_UINT;
            it->v.u = (uint64_t)s;
        } else {
            it->type = DLS_MP_INT;
            it->v.i = s;
        }
    }
    return 0;
}

int dls_mp_read(const uint8_t *p, size_t n, size_t off, dls_mp_item *it)
{
    if (!p || !it || off >= n)
        return DLS_ERR_MSGPACK;
    memset(it, 0, sizeof *it);
    it->off = off;
    it->end = off + 1;
    uint8_t b = p[off];
    if (b <= 0x7f) {
        it->type = DLS_MP_UINT;
        it->v.u = b;
        return 0;
    }
    if (b >= 0xe0) {
        it->type = DLS_MP_INT;
        it->v.i = (int8_t)b;
        return 0;
    }
    if (b <= 0x8f)
        return container(n, off + 1, it, DLS_MP_MAP, b & 0x0f);
    if (b <= 0x9f)
        return container(n, off + 1, it, DLS_MP_ARRAY, b & 0x0f);
    if (b <= 0xbf) {
        it->type = DLS_MP_STR;
        return payload(p, n, it, off + 1, b & 0x1f);
    }
    switch (b) {
    case 0xc0: it->type = DLS_MP_NIL; return 0;
    case 0xc2: case 0xc3:
        it->type = DLS_MP_BOOL;
        it->v.b = b == 0xc3;
        return 0;
    case 0xc4: return sized(p, n, off, it, DLS_MP_BIN, 1);
    case 0xc5: return sized(p, n, off, it, DLS_MP_BIN, 2);
    case 0xc6: return sized(p, n, off, it, DLS_MP_BIN, 4);
    case 0xc7: return ext(p, n, off, it, 1, 0);
    case 0xc8: return ext(p, n, off, it, 2, 0);
    case 0xc9: return ext(p, n, off, it, 4, 0);
    case 0xd4: return ext(p, n, off, it, 0, 1);
    case 0xd5: return ext(p, n, off, it, 0, 2);
    case 0xd6: return ext(p, n, off, it, 0, 4);
    case 0xd7: return ext(p, n, off, it, 0, 8);
    case 0xd8: return ext(p, n, off, it, 0, 16);
    case 0xd9: return sized(p, n, off, it, DLS_MP_STR, 1);
    case 0xda: return sized(p, n, off, it, DLS_MP_STR, 2);
    case 0xdb: return sized(p, n, off, it, DLS_MP_STR, 4);
    case 0xdc: case 0xdd: case 0xde: case 0xdf: {
        unsigned k = (b & 1) ? 4 : 2;
        if (!have(n, off + 1, k))
            return DLS_ERR_MSGPACK;
        return container(n, off + 1 + k, it,
                         b >= 0xde ? DLS_MP_MAP : DLS_MP_ARRAY,
                         be(p + off + 1, k));
    }
    case 0xc1: return DLS_ERR_MSGPACK;
    default: return number(p, n, off, it, b); /* 0xca … 0xd3 */
    }
}

int dls_mp_skip(const uint8_t *p, size_t n, size_t off, unsigned max_depth,
                size_t *end, unsigned *depth)
{
    /* left[d]: values still to read in the container open at depth d+1. */
    uint64_t left[DLS_MP_MAX_DEPTH];
    unsigned d = 0, deepest = 0;
    uint64_t todo = 1; /* values still to read at the current level */
    if (max_depth > DLS_MP_MAX_DEPTH)
        max_depth = DLS_MP_MAX_DEPTH;
    for (;;) {
        while (todo == 0) {
            if (d == 0)
                goto done;
            todo = left[--d];
        }
        dls_mp_item it;
        int rc = dls_mp_read(p, n, off, &it);
        if (rc == 0 && (it.type == DLS_MP_ARRAY || it.type == DLS_MP_MAP) &&
            d + 1 > max_depth)
            rc = DLS_ERR_DEPTH;
        if (rc) {
            if (end)
                *end = off;
            return rc;
        }
        off = it.end;
        todo--;
        if (it.type != DLS_MP_ARRAY && it.type != DLS_MP_MAP)
            continue;
        left[d++] = todo;
        if (d > deepest)
            deepest = d;
        todo = it.type == DLS_MP_MAP ? (uint64_t)it.len * 2 : it.len;
    }
done:
    if (end)
        *end = off;
    if (depth)
        *depth = deepest;
    return 0;
}
