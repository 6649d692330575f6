/* Checkpoints (judge.md rev 4, Checkpoints): reading a
 * checkpoint folder and one checkpoint file — the one reader the judge's
 * restart, the audit and `daolease status` share (include/daolease/
 * checkpoint.h). Records are decoded by checkpoint_codec.c; this file walks
 * the file, checks that the header comes first and only first, and hashes
 * every payload exactly as the commit record's digest is made (each payload
 * preceded by its length, 4 bytes little-endian; BLAKE2b-256, unkeyed). */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "daolease/checkpoint.h"
#include "daolease/stream.h"
#include "judge/ckhash.h"
#include "vocab/dec.h"
#include "vocab/vec.h"
#include "vocab/where.h"

static int by_asc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int dls_checkpoint_list(const char *dir, uint64_t **passes, size_t *n)
{
    if (!passes || !n)
        return DLS_ERR_INVAL;
    *passes = NULL;
    *n = 0;
    if (!dir)
        return DLS_ERR_INVAL;
    DIR *d = opendir(dir);
    if (!d)
        return 0; /* none */
    dls_vec v = {0};
    int rc = 0;
    struct dirent *e;
    while (!rc && (e = readdir(d)) != NULL) {
        const char *s = e->d_name; /* PASS.dls, PASS 20 decimal digits */
        uint64_t x;
        if (strlen(s) != 24 || strcmp(s + 20, ".dls") != 0 || dls_dec_u64(s, 20, &x))
            continue;
        uint64_t *slot = dls_vec_push(&v, sizeof *slot);
        if (slot)
            *slot = x;
        else
            rc = DLS_ERR_NOMEM;
    }
    closedir(d);
    if (rc) {
        dls_vec_free(&v);
        return rc;
    }
    if (v.n > 1)
        qsort(v.p, v.n, sizeof(uint64_t), by_asc);
    *passes = v.p;
    *n = v.n;
    return 0;
}

int dls_checkpoint_path(const char *dir, uint64_t pass, char *out, size_t cap)
{
    if (!dir || !out)
        return DLS_ERR_INVAL;
    int k = snprintf(out, cap, "%s/%020" PRIu64 ".dls", dir, pass);
    return k < 0 || (size_t)k >= cap ? DLS_ERR_INVAL : 0;
}

static int fill(dls_where *w, int rc, uint64_t offset, const char *reason)
{
    return dls_where_fill(w, rc, (dls_where){.offset = offset, .reason = reason});
}

int dls_checkpoint_read(const char *dir, uint64_t pass, dls_ckpt_record_fn fn, void *user,
                        uint8_t digest[DLS_CKPT_DIGEST_LEN], uint64_t *records, dls_where *w)
{
    if (records)
        *records = 0;
    if (!dir)
        return fill(w, DLS_ERR_INVAL, 0, "no checkpoint folder");
    if (sodium_init() < 0)
        return fill(w, DLS_ERR_SODIUM, 0, "libsodium could not be initialised");
    size_t cap = strlen(dir) + 32;
    char *path = malloc(cap);
    if (!path)
        return DLS_ERR_NOMEM;
    dls_checkpoint_path(dir, pass, path, cap);
    dls_medium *m = NULL;
    int rc = dls_medium_open(&m, path, DLS_OPEN_READ, NULL, w);
    free(path);
    if (rc)
        return rc;
    dls_cursor *c = NULL;
    if ((rc = dls_cursor_new(&c, m, 0)) != 0) {
        dls_medium_del(m);
        return rc;
    }
    dls_ckhash *h = NULL;
    if ((rc = dls_ckhash_new(&h)) != 0) {
        dls_cursor_del(c);
        dls_medium_del(m);
        return rc;
    }
    uint64_t count = 0;
    for (;;) {
        dls_record rec;
        if (dls_cursor_next(c, &rec, NULL) != DLS_NEXT_OK)
            break;
        if ((rc = dls_ckhash_add(h, rec.p, rec.n)) != 0)
            break;
        dls_ckpt_rec r;
        if ((rc = dls_ckpt_decode(rec.p, rec.n, &r, w)) != 0) {
            if (w)
                w->offset = rec.position;
            break;
        }
        if ((r.kind == DLS_CKPT_HEADER) != (count++ == 0)) {
            rc = fill(w, DLS_ERR_RECORD, rec.position,
                      "the header is not the checkpoint's first record (and only that)");
            break;
        }
        if (fn && (rc = fn(user, &r)) != 0)
            break;
    }
    dls_cursor_del(c);
    dls_medium_del(m);
    uint8_t got[DLS_CKPT_DIGEST_LEN];
    dls_ckhash_final(h, got);
    if (digest)
        memcpy(digest, got, sizeof got);
    if (records)
        *records = count;
    return rc;
}
