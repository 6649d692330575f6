/* Fences (seed 000, "The terminus, and carrying it as a fence") and the
 * fence guard (host.md "Fencing tokens"; seed 001, note n1).
 *
 * A fence is minted from expires_at with the fenced party's own allowance,
 * never from another fence: dls_fence_mint takes an expires_at and returns a
 * dls_fence, and nothing turns a dls_fence back into an input of a mint
 * (Fence 8, Fence 9). The fenced party compares its own reading against the
 * fence bare (Fence 6).
 *
 * The guard keeps the highest fencing token (lease id) it has admitted and
 * refuses any lower one. Raising the mark goes through the optional persist
 * callback first, so a mark that was acted on is a mark that was saved.
 */
#include <pthread.h>
#include <stdlib.h>

#include "daolease/fact.h"
#include "daolease/host.h"

/* ---- fences ------------------------------------------------------------------ */

int dls_fence_mint(uint64_t expires_at, uint64_t allowance, dls_fence *out)
{
    if (!out)
        return DLS_ERR_INVAL;
    if (allowance > expires_at)
        return DLS_ERR_FENCE; /* the ceiling would precede instant 0 */
    out->at = expires_at - allowance; /* the fence ceiling (Fence 5) */
    return 0;
}

int dls_fence_mint_earlier(uint64_t expires_at, uint64_t allowance,
                           uint64_t not_after, dls_fence *out)
{
    int rc = dls_fence_mint(expires_at, allowance, out);
    if (rc == 0 && not_after < out->at)
        out->at = not_after; /* earlier keeps more margin, never less */
    return rc;
}

bool dls_fence_admits(dls_fence fence, uint64_t effect_instant)
{
    /* Fence 3: refuse when the fence precedes the effect instant. */
    return effect_instant <= fence.at;
}

/* ---- the guard ------------------------------------------------------------- */

struct dls_fence_guard {
    pthread_mutex_t mu;
    uint64_t mark;
    dls_fence_persist_fn persist;
    void *user_data;
};

void dls_fence_guard_settings_default(dls_fence_guard_settings *s)
{
    if (s)
        s->mark = 0;
}

int dls_fence_guard_new(dls_fence_guard **out, const dls_fence_guard_settings *s,
                        const dls_fence_guard_callbacks *cb, void *user_data)
{
    if (!out)
        return DLS_ERR_INVAL;
    *out = NULL;
    dls_fence_guard_settings d;
    dls_fence_guard_settings_default(&d);
    if (!s)
        s = &d;
    if (s->mark > DLS_NS_MAX)
        return DLS_ERR_INVAL;
    dls_fence_guard *g = calloc(1, sizeof *g);
    if (!g)
        return DLS_ERR_NOMEM;
    if (pthread_mutex_init(&g->mu, NULL) != 0) {
        free(g);
        return DLS_ERR_NOMEM;
    }
    g->mark = s->mark;
    g->persist = cb ? cb->persist : NULL;
    g->user_data = user_data;
    *out = g;
    return 0;
}

void dls_fence_guard_del(dls_fence_guard *g)
{
    if (!g)
        return;
    pthread_mutex_destroy(&g->mu);
    free(g);
}

/* Raises the mark to `to` (> the mark), persisting first. Locked. */
static int raise_locked(dls_fence_guard *g, uint64_t to)
{
    if (g->persist && g->persist(g->user_data, to) != 0)
        return DLS_ERR_CALLBACK;
    g->mark = to;
    return 0;
}

/* Judges `token`; locked. */
static int judge_locked(dls_fence_guard *g, uint64_t token)
{
    if (token < g->mark)
        return DLS_ERR_STALE_TOKEN; /* a newer holder took over */
    if (token > g->mark)
        return raise_locked(g, token);
    return 0; /* the same grant again */
}

int dls_fence_guard_admit(dls_fence_guard *g, uint64_t token)
{
    if (!g || token == 0 || token > DLS_NS_MAX)
        return DLS_ERR_INVAL;
    pthread_mutex_lock(&g->mu);
    int rc = judge_locked(g, token);
    pthread_mutex_unlock(&g->mu);
    return rc;
}

int dls_fence_guard_enter(dls_fence_guard *g, uint64_t token)
{
    if (!g || token == 0 || token > DLS_NS_MAX)
        return DLS_ERR_INVAL;
    pthread_mutex_lock(&g->mu);
    int rc = judge_locked(g, token);
    if (rc != 0)
        pthread_mutex_unlock(&g->mu);
    return rc;
}

void dls_fence_guard_leave(dls_fence_guard *g)
{
    if (g)
        pthread_mutex_unlock(&g->mu);
}

uint64_t dls_fence_guard_mark(dls_fence_guard *g)
{
    if (!g)
        return 0;
    pthread_mutex_lock(&g->mu);
    uint64_t m = g->mark;
    pthread_mutex_unlock(&g->mu);
    return m;
}

int dls_fence_guard_set_mark(dls_fence_guard *g, uint64_t mark)
{
    if (!g || mark > DLS_NS_MAX)
        return DLS_ERR_INVAL;
    pthread_mutex_lock(&g->mu);
    int rc = 0;
    if (mark < g->mark)
        rc = DLS_ERR_STALE_TOKEN;
    else if (mark > g->mark)
        rc = raise_locked(g, mark);
    pthread_mutex_unlock(&g->mu);
    return rc;
}
