/* daolease — the tick adapter (spec: vocabulary.md "Tick"; judge.md
 * "Assembly", reading basis; holder.md).
 *
 * The judge and the holder read no clock: they learn time from tick facts
 *
 *     {"dao.lease/event": "tick", "dao.lease/reading": {"ns": 812345678901}}
 *
 * on a tick medium. This adapter is the one place in the library that reads
 * the host's monotonic clock (adapters/tick.c; the core never links a clock
 * call). Each dls_tick_now() reads the clock once and appends one tick to
 * the adapter's medium — typically an in-memory ring read by a holder or a
 * judge in the same process, or a file read by a judge process.
 *
 * Readings. A reading is the clock's value in ns, floored to a whole number
 * of the settings' unit and written in that unit (default "ns": exact).
 * Readings never go back: an adapter refuses to append a reading older than
 * the last one it appended (vocabulary.md rule 7).
 *
 * Basis. Readings are comparable only on one basis. The host source's basis
 * is "boot-<boot id>/CLOCK_MONOTONIC", the boot id exactly as the kernel
 * prints /proc/sys/kernel/random/boot_id (36 characters, lower-case hex and
 * dashes), e.g. "boot-5b1e07c4-8f0a-4d6e-9c55-0d1e2f3a4b5c/CLOCK_MONOTONIC":
 * a reboot changes it, and CLOCK_MONOTONIC readings from two boots are never
 * compared.
 *
 * Sources. DLS_TICK_HOST reads the clock (dls_tick_now). DLS_TICK_MANUAL
 * appends readings it is given (dls_tick_append) — for tests, simulations
 * and replays; its basis is the settings' `basis` ("manual" by default).
 * DLS_TICK_REALTIME reads CLOCK_REALTIME, the host's synchronised wall clock
 * (dls_tick_now), on the basis "realtime/<name>", <name> the settings'
 * `basis` (required: e.g. the cluster's name). Its readings are comparable
 * across machines whose clocks are kept synchronised (NTP, PTP): the
 * judge's tolerance must cover the largest skew between them
 * (docs/standby.md, Across machines). A wall clock may step back; the
 * adapter then appends nothing (DLS_ERR_RULE7) until the clock passes its
 * last reading, so its own stream never goes back (vocabulary.md rule 7).
 *
 * Attribution. With a signer the ticks are envelopes sealed for the medium
 * (a judge or holder reads them with a `signed` resolver); without one they
 * are bare facts (read with a `medium` resolver naming the tick party).
 *
 * Ownership: the medium and signer are borrowed and must outlive the
 * adapter. One thread at a time per adapter.
 */
#ifndef DAOLEASE_TICK_H
#define DAOLEASE_TICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/attrib.h"
#include "daolease/error.h"
#include "daolease/export.h"
#include "daolease/fact.h"
#include "daolease/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Room for any basis string the adapter makes, NUL included. */
#define DLS_TICK_BASIS_MAX 128

typedef struct dls_tick dls_tick;

typedef enum dls_tick_source {
    DLS_TICK_HOST = 0,  /* the host's monotonic clock */
    DLS_TICK_MANUAL,    /* readings given by the caller */
    DLS_TICK_REALTIME   /* the host's wall clock, CLOCK_REALTIME */
} dls_tick_source;

/* Settings. Defaults (dls_tick_settings_default):
 *   source  DLS_TICK_HOST
 *   unit    DLS_UNIT_NS   readings are floored to this unit and written in it;
 *                         a coarser unit adds up to one unit to the tick
 *                         period a sizing must allow for
 *   signer  NULL          bare facts; else envelopes sealed with this secret
 *   basis   NULL          host: "boot-<boot id>/CLOCK_MONOTONIC";
 *                         manual: "manual"; else this string (1–127 bytes),
 *                         copied. Realtime: required, the name N of the
 *                         basis "realtime/N" (1–118 bytes)
 */
typedef struct dls_tick_settings {
    dls_tick_source source;
    dls_unit unit;
    const dls_secret *signer;
    const char *basis;
} dls_tick_settings;

/* Fills s with the defaults above. */
DLS_EXPORT void dls_tick_settings_default(dls_tick_settings *s);

/* Makes a tick adapter appending to m (borrowed). For the host source
 * without a `basis`, reads the boot id. Errors: DLS_ERR_INVAL (m NULL, an
 * unknown unit or source, a basis of the wrong length, a realtime source
 * without a basis); DLS_ERR_IO (the boot
 * id cannot be read; w->sys_errno); DLS_ERR_NOMEM. */
DLS_EXPORT int dls_tick_new(dls_tick **out, dls_medium *m,
                            const dls_tick_settings *s, dls_where *w);

/* Frees the adapter (not the medium). NULL-safe. */
DLS_EXPORT void dls_tick_del(dls_tick *t);

/* Host and realtime sources: reads the clock once and appends a tick; on
 * 0, *reading_ns (may be NULL) is the reading appended (floored to the
 * unit). Realtime: when the clock reads older than the last reading
 * appended (it was stepped back), appends nothing and answers
 * DLS_ERR_RULE7 with *reading_ns the last reading; the next call that reads
 * the clock at or past it appends again (vocabulary.md rule 7).
 * Errors: DLS_ERR_STATE for a manual adapter; DLS_ERR_IO when the clock
 * cannot be read; the medium's append errors (DLS_ERR_SEALED, ...). */
DLS_EXPORT int dls_tick_now(dls_tick *t, uint64_t *reading_ns);

/* Manual source: appends a tick with `reading_ns` (floored to the unit).
 * Errors: DLS_ERR_STATE for a host adapter; DLS_ERR_INVAL for a reading
 * above 2^63−1 ns or older than the last one appended; the medium's
 * append errors. */
DLS_EXPORT int dls_tick_append(dls_tick *t, uint64_t reading_ns);

/* The adapter's reading basis (NUL-terminated, owned by the adapter). */
DLS_EXPORT const char *dls_tick_basis(const dls_tick *t);

/* The last reading appended ok: true and *reading_ns, or false. */
DLS_EXPORT bool dls_tick_last(const dls_tick *t, uint64_t *reading_ns);

/* The host's basis, "boot-<boot id>/CLOCK_MONOTONIC", into buf[cap].
 * Errors: DLS_ERR_IO (w->sys_errno), DLS_ERR_CONFIG (the boot id file does
 * not hold a boot id), DLS_ERR_TOOBIG. */
DLS_EXPORT int dls_tick_host_basis(char *buf, size_t cap, dls_where *w);

/* Formats a basis from a boot id as the kernel prints it (trailing
 * whitespace ignored; 1–64 characters of [0-9a-fA-F-], written lower-case)
 * and a clock name: "boot-<id>/<clock>". DLS_ERR_CONFIG for a malformed
 * boot id, DLS_ERR_TOOBIG when it does not fit. */
DLS_EXPORT int dls_tick_basis_format(char *buf, size_t cap, const char *boot_id,
                                     size_t boot_id_len, const char *clock_name);

/* Encodes the tick fact for `reading_ns` floored to `unit`, written in that
 * unit, into out[cap]. Errors: DLS_ERR_INVAL (reading above 2^63−1 ns or
 * an unknown unit), DLS_ERR_TOOBIG. */
DLS_EXPORT int dls_tick_fact(uint64_t reading_ns, dls_unit unit, uint8_t *out,
                             size_t cap, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
