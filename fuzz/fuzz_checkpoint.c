/* Fuzz target for reading checkpoints (judge.md rev 4, Checkpoints). The
 * input is a sequence of records, each a 2-byte
 * little-endian length then that many bytes (a checkpoint file's payloads),
 * and is also tried whole as a commit record's fact. Properties:
 *  - dls_ckpt_decode never crashes, reads out of bounds or allocates; an
 *    error carries an offset inside the record and a reason;
 *  - a decoded record's borrowed fields lie inside the record; a header's
 *    media iterate exactly nmedia entries;
 *  - decoding is a function of the bytes (twice gives the same answer). */
#include <stdlib.h>
#include <string.h>

#include "daolease/checkpoint.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void inside(const uint8_t *p, size_t n, const uint8_t *q, size_t len)
{
    if (q)
        CHECK(q >= p && q + len <= p + n);
}

static void one(const uint8_t *p, size_t n)
{
    dls_ckpt_rec r, r2;
    dls_where w = {0};
    int rc = dls_ckpt_decode(p, n, &r, &w);
    CHECK(dls_ckpt_decode(p, n, &r2, NULL) == rc);
    if (rc) {
        CHECK(rc == DLS_ERR_RECORD);
        CHECK(w.reason != NULL);
        CHECK(w.offset <= n);
        return;
    }
    CHECK(r.kind >= DLS_CKPT_HEADER && r.kind <= DLS_CKPT_AUTHOR);
    CHECK(r2.kind == r.kind && r2.id == r.id && r2.pass == r.pass);
    inside(p, n, r.basis.p, r.basis.n);
    inside(p, n, r.subject.p, r.subject.n);
    inside(p, n, r.holder.p, r.holder.n);
    inside(p, n, r.proposal.p, r.proposal.n);
    inside(p, n, r.journal, 16);
    inside(p, n, r.medium, 16);
    inside(p, n, r.media, r.media_len);
    if (r.kind == DLS_CKPT_HEADER) {
        size_t off = 0;
        uint32_t count = 0;
        dls_ckpt_medium m;
        while (dls_ckpt_next_medium(&r, &off, &m)) {
            inside(p, n, m.id, 16);
            count++;
            CHECK(count <= r.nmedia);
        }
        CHECK(count == r.nmedia);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t pass = 0, records = 0;
    uint8_t digest[DLS_CKPT_DIGEST_LEN];
    int c = dls_ckpt_commit_decode(data, size, &pass, digest, &records);
    CHECK(c == 0 || c == 1);
    size_t off = 0;
    while (off + 2 <= size) {
        size_t len = (size_t)data[off] | ((size_t)data[off + 1] << 8);
        off += 2;
        if (len > size - off)
            len = size - off;
        /* a copy of exactly len bytes, so that reads past it are caught */
        uint8_t *rec = malloc(len ? len : 1);
        if (!rec)
            return 0;
        memcpy(rec, data + off, len);
        one(rec, len);
        free(rec);
        off += len;
    }
    return 0;
}
