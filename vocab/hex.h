/* daolease — 16-byte ids (medium ids, journal ids) as 32 lower-case hex
 * digits and back: the form streams.md's segmented directories and the
 * Redis and JetStream layouts write them in. Internal to the library (not
 * part of the installed API); components include it as "vocab/hex.h". */
#ifndef DLS_VOCAB_HEX_H
#define DLS_VOCAB_HEX_H

#include <sodium.h>
#include <stddef.h>
#include <stdint.h>

/* id as 32 lower-case hex digits and a NUL. */
static inline void dls_hex16(const uint8_t id[16], char out[33])
{
    sodium_bin2hex(out, 33, id, 16);
}

/* s[0 … n) as exactly 32 lower-case hex digits into id. Returns 0, or -1
 * for another length, an upper-case or non-hex digit (id then undefined). */
static inline int dls_unhex16(const char *s, size_t n, uint8_t id[16])
{
    if (n != 32)
        return -1;
    for (size_t i = 0; i < 32; i++)
        if (s[i] >= 'A' && s[i] <= 'F')
            return -1;
    return sodium_hex2bin(id, 16, s, 32, NULL, NULL, NULL) == 0 ? 0 : -1;
}

#endif
