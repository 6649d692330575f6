/* A msgpack-c packer over a fixed buffer, and encoding-size arithmetic. */
#include <string.h>

#include "vocab/internal.h"

static int write_fixed(void *data, const char *buf, size_t len)
{
    dls_pk *b = data;
    if (b->overflow || len > b->cap - b->len) {
        b->overflow = true;
        return -1;
    }
    uint8_t *d = b->out + b->len;
    if (len <= 8) /* msgpack-c writes headers of 1-9 bytes: no call for them */
        for (size_t i = 0; i < len; i++)
            d[i] = (uint8_t)buf[i];
    else
        memcpy(d, buf, len);
    b->len += len;
    return 0;
}

void dls_pk_init(dls_pk *b, uint8_t *out, size_t cap)
{
    b->out = out;
    b->cap = out ? cap : 0;
    b->len = 0;
    b->overflow = false;
    msgpack_packer_init(&b->pk, b, write_fixed);
}

void dls_pk_raw(dls_pk *b, const void *p, size_t n)
{
    if (n)
        write_fixed(b, p, n);
}

void dls_pk_str(dls_pk *b, const void *p, size_t n)
{
    msgpack_pack_str(&b->pk, n);
    dls_pk_raw(b, p, n);
}

void dls_pk_cstr(dls_pk *b, const char *s)
{
    dls_pk_str(b, s, strlen(s));
}

void dls_pk_bin(dls_pk *b, const void *p, size_t n)
{
    msgpack_pack_bin(&b->pk, n);
    dls_pk_raw(b, p, n);
}

void dls_pk_uint(dls_pk *b, uint64_t v)
{
    msgpack_pack_uint64(&b->pk, v);
}

void dls_pk_duration(dls_pk *b, const dls_duration *d)
{
    msgpack_pack_map(&b->pk, 1);
    dls_pk_cstr(b, dls_unit_name(d->unit));
    dls_pk_uint(b, d->magnitude);
}

size_t dls_mp_uint_size(uint64_t v)
{
    return v < 128 ? 1 : v < 0x100 ? 2 : v < 0x10000 ? 3 : v < 0x100000000ull ? 5 : 9;
}

size_t dls_mp_str_size(size_t n)
{
    return n + (n < 32 ? 1 : n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);
}

size_t dls_mp_bin_size(size_t n)
{
    return n + (n < 0x100 ? 2 : n < 0x10000 ? 3 : 5);
}

size_t dls_mp_array_hdr_size(size_t count)
{
    return count < 16 ? 1 : count < 0x10000 ? 3 : 5;
}

size_t dls_mp_duration_size(const dls_duration *d)
{
    return 1 + dls_mp_str_size(strlen(dls_unit_name(d->unit))) +
           dls_mp_uint_size(d->magnitude);
}
