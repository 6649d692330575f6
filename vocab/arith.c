/* Overflow-safe interval arithmetic on unsigned 64-bit nanoseconds. */
#include "daolease/fact.h"

uint64_t dls_add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

uint64_t dls_sub_floor(uint64_t a, uint64_t b)
{
    return b >= a ? 0 : a - b;
}

bool dls_passed(uint64_t base, uint64_t now, uint64_t d)
{
    return now > base && now - base > d;
}
