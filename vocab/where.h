/* daolease — the one way to fill a dls_where (docs/style.md, The error model).
 *
 * Every decoder, reader and loader reports where and why through a
 * caller's dls_where (include/daolease/error.h), which may be NULL. Fill it
 * with one call that sets every field — those not named are zero, so no
 * stale reason, rule or errno from an earlier call survives — and return
 * the code in the same statement:
 *
 *     return dls_where_fill(w, DLS_ERR_KEYRING,
 *                           (dls_where){.line = lineno, .offset = col,
 *                                       .reason = "invalid hex digit in key"});
 *     return dls_where_fill(w, DLS_ERR_IO,
 *                           (dls_where){.reason = "cannot open the file",
 *                                       .sys_errno = errno});
 *
 * `reason` must be a static string (the struct does not own it).
 * Internal to the library (not part of the installed API); other
 * components include it as "vocab/where.h".
 */
#ifndef DLS_VOCAB_WHERE_H
#define DLS_VOCAB_WHERE_H

#include <stddef.h>

#include "daolease/error.h"

/* *w = what when w is not NULL; returns code. */
static inline int dls_where_fill(dls_where *w, int code, dls_where what)
{
    if (w)
        *w = what;
    return code;
}

#endif
