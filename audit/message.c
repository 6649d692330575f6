/* The audit's bottom helpers, called from the ledger, the replay and the
 * report alike and calling nothing else of the audit: growable arrays, names
 * shown in messages, and the warnings and failure details (one sentence
 * each, at most MAX_MESSAGES of each). */
#include "audit/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "vocab/vec.h"

#define MAX_MESSAGES 1000 /* warnings and failure details kept (then counted) */

int au_grow(void **arr, size_t n, size_t *cap, size_t elem)
{
    dls_vec v = {*arr, n, *cap};
    int rc = n < SIZE_MAX ? dls_vec_reserve(&v, elem, n + 1) : DLS_ERR_NOMEM;
    *arr = v.p;
    *cap = v.cap;
    return rc;
}

/* A printable copy of a name for messages (bytes outside 0x20–0x7E as \xHH). */
void au_printable(const uint8_t *p, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < cap; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\') {
            out[o++] = (char)p[i];
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", p[i]);
        }
    }
    out[o < cap ? o : cap - 1] = 0;
}

static char *vfmt(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int len = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (len < 0)
        return NULL;
    char *s = malloc((size_t)len + 1);
    if (s)
        vsnprintf(s, (size_t)len + 1, fmt, ap);
    return s;
}

static void add_message(dls_audit *a, char ***arr, size_t *n, size_t *cap, uint64_t *dropped,
                        const char *fmt, va_list ap)
{
    if (*n >= MAX_MESSAGES) {
        (*dropped)++;
        return;
    }
    char *s = vfmt(fmt, ap);
    if (!s) {
        a->nomem = true;
        return;
    }
    if (au_grow((void **)arr, *n, cap, sizeof **arr)) {
        free(s);
        a->nomem = true;
        return;
    }
    (*arr)[(*n)++] = s;
}

void au_warn(dls_audit *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_message(a, &a->warnings, &a->sum.n_warnings, &a->cap_warnings, &a->warnings_dropped,
                fmt, ap);
    va_end(ap);
}

void au_detail(dls_audit *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_message(a, &a->details, &a->sum.n_failure_details, &a->cap_details,
                &a->details_dropped, fmt, ap);
    va_end(ap);
}

void au_set_incomplete(dls_audit *a, uint64_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void au_set_incomplete(dls_audit *a, uint64_t pos, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    free(a->incomplete);
    a->incomplete = vfmt(fmt, ap);
    va_end(ap);
    if (!a->incomplete)
        a->nomem = true;
    a->sum.incomplete = a->incomplete;
    a->sum.incomplete_position = pos;
}
