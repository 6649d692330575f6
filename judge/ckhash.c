/* The checkpoint digest on a second thread (see ckhash.h).
 *
 * Two chunks: the caller fills one while the thread hashes the other. A
 * full chunk is handed over once the thread has finished the previous one
 * (the caller waits then, never the thread on the caller), so at most one
 * chunk is being hashed while the next is filled. A digest of less than
 * one chunk (every checkpoint of a few thousand leases) starts no thread
 * and allocates only what it holds. */
#include "judge/ckhash.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "daolease/error.h"

#define CKH_CHUNK (4u << 20)
#define CKH_FIRST (64u << 10)

struct dls_ckhash {
    crypto_generichash_state st; /* the thread's alone while it runs */
    uint8_t *fill, *spare;       /* the chunk being filled; the other one */
    size_t n, cap;               /* bytes in fill; its size */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const uint8_t *work;         /* the chunk the thread is to hash, or NULL */
    size_t work_n;
    bool stop, threaded, tried;
    pthread_t thread;
};

static void *hash_loop(void *arg)
{
    dls_ckhash *h = arg;
    pthread_mutex_lock(&h->mu);
    for (;;) {
        while (!h->work && !h->stop)
            pthread_cond_wait(&h->cv, &h->mu);
        if (!h->work)
            break;
        const uint8_t *p = h->work;
        size_t n = h->work_n;
        pthread_mutex_unlock(&h->mu);
        crypto_generichash_update(&h->st, p, n);
        pthread_mutex_lock(&h->mu);
        h->work = NULL;
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

int dls_ckhash_new(dls_ckhash **out)
{
    dls_ckhash *h = calloc(1, sizeof *h);
    if (!h)
        return DLS_ERR_NOMEM;
    crypto_generichash_init(&h->st, NULL, 0, DLS_CKPT_DIGEST_LEN);
    *out = h;
    return 0;
}

/* Starts the thread and its second chunk, once; false when it cannot. */
static bool start(dls_ckhash *h)
{
    if (h->tried)
        return h->threaded;
    h->tried = true;
    if (!(h->spare = malloc(CKH_CHUNK)))
        return false;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->threaded = pthread_create(&h->thread, NULL, hash_loop, h) == 0;
    if (!h->threaded) {
        pthread_mutex_destroy(&h->mu);
        pthread_cond_destroy(&h->cv);
        free(h->spare);
        h->spare = NULL;
    }
    return h->threaded;
}

/* Hands the full chunk over (or, without a thread, hashes it here). */
static void hand_over(dls_ckhash *h)
{
    if (!start(h)) {
        crypto_generichash_update(&h->st, h->fill, h->n);
        h->n = 0;
        return;
    }
    pthread_mutex_lock(&h->mu);
    while (h->work) /* the previous chunk is still being hashed */
        pthread_cond_wait(&h->cv, &h->mu);
    h->work = h->fill;
    h->work_n = h->n;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    uint8_t *x = h->fill; /* the spare is free: its hashing ended above */
    h->fill = h->spare;
    h->spare = x;
    h->n = 0;
}

int dls_ckhash_add(dls_ckhash *h, const uint8_t *p, size_t n)
{
    if (n > CKH_CHUNK - 4)
        return DLS_ERR_TOOBIG;
    if (h->cap - h->n < 4 + n) {
        if (h->cap < CKH_CHUNK) { /* grow the first chunk as it fills */
            size_t cap = h->cap ? h->cap : CKH_FIRST;
            while (cap - h->n < 4 + n)
                cap *= 2;
            if (cap > CKH_CHUNK)
                cap = CKH_CHUNK;
            uint8_t *f = realloc(h->fill, cap);
            if (!f)
                return DLS_ERR_NOMEM;
            h->fill = f;
            h->cap = cap;
        }
        if (h->cap - h->n < 4 + n)
            hand_over(h);
    }
    uint8_t *d = h->fill + h->n;
    d[0] = (uint8_t)n;
    d[1] = (uint8_t)(n >> 8);
    d[2] = (uint8_t)(n >> 16);
    d[3] = (uint8_t)(n >> 24);
    memcpy(d + 4, p, n);
    h->n += 4 + n;
    return 0;
}

void dls_ckhash_final(dls_ckhash *h, uint8_t out[DLS_CKPT_DIGEST_LEN])
{
    if (!h)
        return;
    if (h->threaded) {
        pthread_mutex_lock(&h->mu);
        h->stop = true; /* the thread hashes what it was given, then ends */
        pthread_cond_broadcast(&h->cv);
        pthread_mutex_unlock(&h->mu);
        pthread_join(h->thread, NULL);
        pthread_mutex_destroy(&h->mu);
        pthread_cond_destroy(&h->cv);
    }
    if (h->n)
        crypto_generichash_update(&h->st, h->fill, h->n);
    if (out)
        crypto_generichash_final(&h->st, out, DLS_CKPT_DIGEST_LEN);
    sodium_memzero(&h->st, sizeof h->st);
    free(h->fill);
    free(h->spare);
    free(h);
}
