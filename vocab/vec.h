/* daolease — one growable array.
 *
 * Elements of one size in one malloc'd block that doubles when full; every
 * size computation is checked for overflow, and a failed growth leaves the
 * array as it was. Usage:
 *
 *     dls_vec v = {0};
 *     T *slot = dls_vec_push(&v, sizeof(T));     NULL: out of memory
 *     if (!slot) return DLS_ERR_NOMEM;
 *     *slot = x;
 *     for (size_t i = 0; i < v.n; i++) use(DLS_VEC_AT(v, T, i));
 *     dls_vec_free(&v);
 *
 * or reserve room first (dls_vec_reserve(&v, sizeof(T), v.n + k)) and
 * write through DLS_VEC_AT. Not for secrets (they live in sodium_malloc
 * arenas). Internal to the library (not part of the installed API); other
 * components include it as "vocab/vec.h".
 */
#ifndef DLS_VOCAB_VEC_H
#define DLS_VOCAB_VEC_H

#include <stdint.h>
#include <stdlib.h>

#include "daolease/error.h"

typedef struct dls_vec {
    void *p;    /* cap elements; the first n in use */
    size_t n;
    size_t cap;
} dls_vec;

/* The i-th element as an lvalue of type T. */
#define DLS_VEC_AT(v, T, i) (((T *)(v).p)[i])

/* Room for at least `need` elements of `elem` bytes: 0, or DLS_ERR_NOMEM
 * (allocation failed or need * elem overflows; v unchanged). */
static inline int dls_vec_reserve(dls_vec *v, size_t elem, size_t need)
{
    if (need <= v->cap)
        return 0;
    size_t cap = v->cap ? v->cap : 8;
    while (cap < need) {
        if (cap > SIZE_MAX / 2)
            return DLS_ERR_NOMEM;
        cap *= 2;
    }
    if (elem && cap > SIZE_MAX / elem)
        return DLS_ERR_NOMEM;
    void *p = realloc(v->p, cap * elem);
    if (!p)
        return DLS_ERR_NOMEM;
    v->p = p;
    v->cap = cap;
    return 0;
}

/* Appends one element and answers its (uninitialised) slot, or NULL when
 * out of memory (v unchanged). */
static inline void *dls_vec_push(dls_vec *v, size_t elem)
{
    if (v->n == SIZE_MAX || dls_vec_reserve(v, elem, v->n + 1))
        return NULL;
    return (char *)v->p + elem * v->n++;
}

/* Frees the block; v is empty again. NULL-safe. */
static inline void dls_vec_free(dls_vec *v)
{
    if (v) {
        free(v->p);
        v->p = NULL;
        v->n = v->cap = 0;
    }
}

#endif
