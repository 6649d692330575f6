/* daolease — strict unsigned decimal, shared by the URL and reply parsers
 * of the Redis and JetStream media. Internal to the library (not part of
 * the installed API); components include it as "vocab/dec.h". */
#ifndef DLS_VOCAB_DEC_H
#define DLS_VOCAB_DEC_H

#include <stddef.h>
#include <stdint.h>

/* Parses s[0 … n) as 1 to 20 decimal digits (no sign, no spaces) into
 * *out. Returns 0, or -1 for an empty string, a non-digit, or a value past
 * UINT64_MAX (*out untouched). */
static inline int dls_dec_u64(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 20)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

#endif
