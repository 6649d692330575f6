/* Durations (vocabulary.md, "Durations and units"): a unit and a magnitude,
 * exact in nanoseconds up to 2^63−1. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vocab/internal.h"

static const struct {
    const char *name;
    uint64_t ns;
} units[] = {
    [DLS_UNIT_NS] = {"ns", 1},
    [DLS_UNIT_US] = {"us", DLS_NS_PER_US},
    [DLS_UNIT_MS] = {"ms", DLS_NS_PER_MS},
    [DLS_UNIT_S] = {"s", DLS_NS_PER_S},
    [DLS_UNIT_MIN] = {"min", 60 * DLS_NS_PER_S},
    [DLS_UNIT_H] = {"h", 3600 * DLS_NS_PER_S},
};
#define N_UNITS (sizeof units / sizeof units[0])

static bool unit_ok(dls_unit u)
{
    return (unsigned)u < N_UNITS;
}

const char *dls_unit_name(dls_unit u)
{
    return unit_ok(u) ? units[u].name : NULL;
}

uint64_t dls_unit_ns(dls_unit u)
{
    return unit_ok(u) ? units[u].ns : 0;
}

int dls_unit_parse(const char *name, size_t n, dls_unit *u)
{
    if (!name || !u)
        return DLS_ERR_INVAL;
    for (unsigned i = 0; i < N_UNITS; i++)
        if (strlen(units[i].name) == n && memcmp(units[i].name, name, n) == 0) {
            *u = (dls_unit)i;
            return 0;
        }
    return DLS_ERR_INVAL;
}

int dls_duration_make(dls_duration *d, dls_unit unit, uint64_t magnitude)
{
    if (!d || !unit_ok(unit))
        return DLS_ERR_INVAL;
    if (magnitude > DLS_NS_MAX / units[unit].ns)
        return DLS_ERR_RULE4;
    d->unit = unit;
    d->magnitude = magnitude;
    d->ns = magnitude * units[unit].ns;
    return 0;
}

dls_duration dls_duration_from_ns(uint64_t ns)
{
    dls_duration d = {.ns = ns, .magnitude = ns, .unit = DLS_UNIT_NS};
    for (int u = DLS_UNIT_H; u > DLS_UNIT_NS; u--)
        if (ns % units[u].ns == 0) {
            d.unit = (dls_unit)u;
            d.magnitude = ns / units[u].ns;
            break;
        }
    return d;
}

int dls_duration_parse(const char *text, dls_duration *d)
{
    if (!text || !d)
        return DLS_ERR_INVAL;
    uint64_t v = 0;
    size_t i = 0;
    for (; text[i] >= '0' && text[i] <= '9'; i++) {
        unsigned digit = (unsigned)(text[i] - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return DLS_ERR_RULE4;
        v = v * 10 + digit;
    }
    dls_unit u;
    if (i == 0 || dls_unit_parse(text + i, strlen(text + i), &u))
        return DLS_ERR_INVAL;
    return dls_duration_make(d, u, v);
}

int dls_duration_format(const dls_duration *d, char *buf, size_t cap)
{
    if (!d || !buf || !unit_ok(d->unit))
        return DLS_ERR_INVAL;
    int k = snprintf(buf, cap, "%" PRIu64 "%s", d->magnitude, units[d->unit].name);
    return k < 0 || (size_t)k >= cap ? DLS_ERR_TOOBIG : k;
}

int dls_duration_read(const uint8_t *p, size_t n, size_t off, uint64_t min,
                      dls_duration *d, size_t *at, const char **why)
{
    dls_mp_item it;
    *at = off;
    if (dls_mp_read(p, n, off, &it) || it.type != DLS_MP_MAP || it.len != 1) {
        *why = "a duration is not a map of exactly one entry";
        return DLS_ERR_RULE4;
    }
    dls_unit u;
    *at = it.end;
    if (dls_mp_read(p, n, it.end, &it) || it.type != DLS_MP_STR ||
        dls_unit_parse((const char *)it.data, it.len, &u)) {
        *why = "a duration's unit is not a v1 unit";
        return DLS_ERR_RULE4;
    }
    *at = it.end;
    if (dls_mp_read(p, n, it.end, &it) || it.type != DLS_MP_UINT) {
        *why = "a duration's magnitude is not a non-negative integer";
        return DLS_ERR_RULE4;
    }
    if (it.v.u < min) {
        *why = "a duration or max is below 1";
        return DLS_ERR_RULE4;
    }
    if (dls_duration_make(d, u, it.v.u)) {
        *why = "a duration exceeds 2^63-1 ns";
        return DLS_ERR_RULE4;
    }
    *at = it.end; /* the end of the duration */
    return 0;
}
