/* Checkpoints (judge.md rev 4, Checkpoints): writing one between
 * passes and restarting from the newest committed one.
 *
 * Writing: the state after the last pass that wrote a mark is encoded as
 * bare msgpack maps in judge.md's record order (header; leases by
 * ascending id; waiters by subject bytes then arrival; lock-delays by
 * subject bytes; proposal counters by author bytes then medium id) — no
 * order comes from a hash table — into `<dir>/<n>.dls.tmp`, synced, renamed
 * to `<dir>/<n as 20 digits>.dls` (directory synced), and only then
 * committed by a grantor-signed journal record carrying the BLAKE2b-256
 * digest over the payloads, each preceded by its length (4 bytes LE).
 *
 * Restart from a checkpoint is in checkpoint_load.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daolease/checkpoint.h"
#include "judge/checkpoint_hooks.h"
#include "judge/ckhash.h"
#include "judge/internal.h"
#include "vocab/internal.h"
#include "vocab/where.h"

#define CK_CHUNK 65536u          /* records per append at most */
#define CK_FLUSH (4u << 20)      /* bytes of payloads buffered before an append */

/* ---- writing ------------------------------------------------------------------ */

/* The checkpoint being written: payloads are buffered and appended to the
 * `.tmp` file every CK_FLUSH bytes (memory stays a few MiB whatever the
 * number of leases), and each append asks the kernel to start writing the
 * pages back, so the final fdatasync finds little left to do. */
typedef struct ck_out {
    dls_medium *m;          /* the .tmp file, sync none: one fdatasync at the end */
    int fd;                 /* the same file read-only, for writeback hints and the sync */
    jvec bytes;             /* payloads not yet appended, back to back */
    jvec lens;              /* size_t */
    jvec recs;              /* const uint8_t *: scratch for the append */
    uint64_t records;
    off_t hinted;           /* the file's bytes already handed to writeback */
    dls_ckhash *h;          /* the digest, hashed beside (ckhash.h) */
    dls_where *w;
} ck_out;

/* Appends the buffered payloads to the file. */
static int ck_flush(ck_out *o)
{
    size_t n = o->lens.n;
    if (n == 0)
        return 0;
    o->recs.n = 0;
    int rc = jvec_reserve(&o->recs, sizeof(const uint8_t *), n);
    if (rc)
        return rc;
    const uint8_t **recs = o->recs.p;
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        recs[i] = (const uint8_t *)o->bytes.p + off;
        off += JVEC_AT(o->lens, size_t, i);
    }
    uint64_t first;
    rc = dls_medium_append_batch(o->m, recs, o->lens.p, n, &first, o->w);
    o->bytes.n = o->lens.n = 0;
#ifdef SYNC_FILE_RANGE_WRITE
    off_t end;
    if (!rc && o->fd >= 0 && (end = lseek(o->fd, 0, SEEK_END)) > o->hinted) {
        /* a hint: start writing back what this append wrote, wait for it
         * in ck_close's fdatasync */
        (void)sync_file_range(o->fd, o->hinted, end - o->hinted, SYNC_FILE_RANGE_WRITE);
        o->hinted = end;
    }
#endif
    return rc;
}

/* Starts the next record: packed in place at the end of the buffer, which
 * ck_open sized for CK_FLUSH bytes plus one record of the largest size
 * (so it never moves). */
static void ck_begin(ck_out *o, dls_pk *b)
{
    dls_pk_init(b, (uint8_t *)o->bytes.p + o->bytes.n, DLS_RECORD_MAX);
}

/* Ends the record ck_begin started: hashed, counted, appended with the
 * others once CK_FLUSH bytes are buffered. */
static int ck_emit(ck_out *o, dls_pk *b)
{
    if (b->overflow)
        return DLS_ERR_TOOBIG;
    int rc = jvec_push(&o->lens, sizeof(size_t), &b->len);
    if (!rc)
        rc = dls_ckhash_add(o->h, (const uint8_t *)o->bytes.p + o->bytes.n, b->len);
    if (rc)
        return rc;
    o->bytes.n += b->len;
    o->records++;
    if (o->bytes.n >= CK_FLUSH || o->lens.n >= CK_CHUNK)
        return ck_flush(o);
    return 0;
}

/* A key of judge.md's checkpoint records (a string literal: its length is
 * known when compiled). */
#define PK_KEY(b, lit) dls_pk_str((b), (lit), sizeof(lit) - 1)

static void pk_ns_or_nil(dls_pk *b, bool has, uint64_t v)
{
    if (has)
        dls_pk_uint(b, v);
    else
        msgpack_pack_nil(&b->pk);
}

static void pk_bool(dls_pk *b, bool v)
{
    if (v)
        msgpack_pack_true(&b->pk);
    else
        msgpack_pack_false(&b->pk);
}

static void pk_dur(dls_pk *b, uint64_t ns)
{
    dls_duration d = dls_duration_from_ns(ns);
    dls_pk_duration(b, &d);
}

static int write_header(dls_judge *j, ck_out *o)
{
    dls_pk b;
    ck_begin(o, &b);
    msgpack_pack_map(&b.pk, 7);
    PK_KEY(&b, "dao.ckpt/pass");
    dls_pk_uint(&b, j->ck_pass);
    PK_KEY(&b, "dao.ckpt/now");
    pk_dur(&b, j->ck_now);
    PK_KEY(&b, "dao.ckpt/basis");
    dls_pk_cstr(&b, j->basis);
    PK_KEY(&b, "dao.ckpt/journal");
    dls_pk_bin(&b, j->journal_id, DLS_MEDIUM_ID_LEN);
    PK_KEY(&b, "dao.ckpt/journal_next");
    dls_pk_uint(&b, j->ck_next);
    PK_KEY(&b, "dao.ckpt/highest");
    dls_pk_uint(&b, j->highest);
    PK_KEY(&b, "dao.ckpt/media");
    msgpack_pack_array(&b.pk, j->nmedia);
    for (size_t i = 0; i < j->nmedia; i++) {
        const jm_medium *m = &j->media[i];
        msgpack_pack_array(&b.pk, 3);
        dls_pk_bin(&b, m->id, DLS_MEDIUM_ID_LEN);
        dls_pk_uint(&b, jm_position(m));
        /* The failing run's first reading (ns), nil when none: see
         * docs/checkpoints.md (judge.md names a pass; the ledger needs
         * the reading to continue the run). */
        pk_ns_or_nil(&b, m->in_run, m->fail_since);
    }
    return ck_emit(o, &b);
}

/* A live lease's id and pool index, sorted by id for judge.md's order. */
typedef struct ck_lid {
    uint64_t id;
    uint32_t idx;
} ck_lid;

static int by_lid(const void *a, const void *b)
{
    uint64_t x = ((const ck_lid *)a)->id, y = ((const ck_lid *)b)->id;
    return (x > y) - (x < y);
}

/* The live leases by ascending id. Read in pool order, they usually come
 * sorted already (grants ascend; a freed slot reused breaks it): sorted
 * only when not, and by the (id, index) pairs themselves, never through
 * the pool (one cache miss a comparison at 10^6 leases). */
static int leases_by_id(dls_judge *j, jvec *v)
{
    int rc = jvec_reserve(v, sizeof(ck_lid), j->live ? j->live : 1);
    if (rc)
        return rc;
    bool sorted = true;
    for (uint32_t i = 0; i < j->leases.next; i++) {
        const jl_lease *l = jl_lease_at(j, i);
        if (!(l->flags & JL_USED))
            continue;
        if (v->n == v->cap && (rc = jvec_reserve(v, sizeof(ck_lid), 1)) != 0)
            return rc;
        ck_lid *x = &JVEC_AT(*v, ck_lid, v->n);
        sorted = sorted && (v->n == 0 || x[-1].id < l->id);
        x->id = l->id;
        x->idx = i;
        v->n++;
    }
    if (!sorted)
        qsort(v->p, v->n, sizeof(ck_lid), by_lid);
    return 0;
}

static int write_leases(dls_judge *j, ck_out *o)
{
    jvec v = {0};
    int rc = leases_by_id(j, &v);
    for (size_t k = 0; k < v.n && !rc; k++) {
        jl_lease *l = jl_lease_at(j, JVEC_AT(v, ck_lid, k).idx);
        jl_normalize(j, l);
        const jl_subject *s = jl_subject_at(j, l->subject);
        const jl_party *h = jl_party_at(j, l->holder);
        bool unknown = (l->flags & (JL_UNKNOWN | JL_RECOVERED)) != 0;
        dls_pk b;
        ck_begin(o, &b);
        msgpack_pack_map(&b.pk, 15);
        PK_KEY(&b, "dao.ckpt/lease");
        dls_pk_uint(&b, l->id);
        PK_KEY(&b, "dao.ckpt/subject");
        dls_pk_bin(&b, jl_subject_bytes(s), s->len);
        PK_KEY(&b, "dao.ckpt/holder");
        dls_pk_str(&b, h->name, h->len);
        PK_KEY(&b, "dao.ckpt/mode");
        if (l->flags & JL_SHARED)
            PK_KEY(&b, "shared");
        else
            PK_KEY(&b, "exclusive");
        PK_KEY(&b, "dao.ckpt/medium");
        if (l->medium == JL_NO_MEDIUM)
            msgpack_pack_nil(&b.pk);
        else
            dls_pk_bin(&b, j->media[l->medium].id, DLS_MEDIUM_ID_LEN);
        PK_KEY(&b, "dao.ckpt/duration");
        pk_dur(&b, l->duration_ns);
        PK_KEY(&b, "dao.ckpt/max");
        if (l->flags & JL_CAPPED)
            pk_dur(&b, jl_max_ns(j, l));
        else
            msgpack_pack_nil(&b.pk);
        PK_KEY(&b, "dao.ckpt/start");
        dls_pk_uint(&b, l->tenure_start);
        PK_KEY(&b, "dao.ckpt/last");
        dls_pk_uint(&b, l->last_obs);
        PK_KEY(&b, "dao.ckpt/resumed");
        pk_ns_or_nil(&b, unknown, (l->flags & JL_UNKNOWN) ? l->resumed : j->ck_now);
        PK_KEY(&b, "dao.ckpt/seq");
        dls_pk_uint(&b, l->last_seq);
        PK_KEY(&b, "dao.ckpt/released");
        pk_bool(&b, (l->flags & JL_RELEASED) != 0);
        PK_KEY(&b, "dao.ckpt/commit");
        pk_bool(&b, (l->flags & JL_COMMIT) != 0);
        PK_KEY(&b, "dao.ckpt/pending");
        if (l->flags & JL_PENDING)
            dls_pk_cstr(&b, dls_cause_name((dls_cause)l->cause));
        else
            msgpack_pack_nil(&b.pk);
        PK_KEY(&b, "dao.ckpt/proposal");
        msgpack_pack_nil(&b.pk); /* not kept in the ledger: docs/checkpoints.md */
        rc = ck_emit(o, &b);
    }
    jvec_free(&v);
    return rc;
}

/* Subject refs sorted by their bytes (shorter first on a common prefix). */
static int by_bytes(const void *a, const void *b, void *ctx)
{
    const jl_subject *x = jl_subject_at(ctx, *(const uint32_t *)a);
    const jl_subject *y = jl_subject_at(ctx, *(const uint32_t *)b);
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(jl_subject_bytes(x), jl_subject_bytes(y), n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int subjects_where(dls_judge *j, jvec *v, bool delayed)
{
    for (uint32_t i = 0; i < j->subjects.next; i++) {
        const jl_subject *s = jl_subject_at(j, i);
        if (!(s->flags & JS_USED) || (delayed ? !(s->flags & JS_DELAYED) : !jl_subx_peek(j, s)->nwaiters))
            continue;
        if (jvec_push(v, sizeof(uint32_t), &i))
            return DLS_ERR_NOMEM;
    }
    if (v->n > 1)
        qsort_r(v->p, v->n, sizeof(uint32_t), by_bytes, j);
    return 0;
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A waiter's rank among all waiters in drain order (0 first): the same
 * whether the judge restarted from a checkpoint or by full replay, where
 * the drain counter itself differs. */
static uint64_t rank_of(const jvec *sorted, uint64_t arrival)
{
    size_t lo = 0, hi = sorted->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (JVEC_AT(*sorted, uint64_t, mid) < arrival)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int write_waiters_delays(dls_judge *j, ck_out *o)
{
    jvec v = {0}, ranks = {0};
    int rc = subjects_where(j, &v, false);
    for (size_t k = 0; k < v.n && !rc; k++) {
        const jl_subject *s = jl_subject_at(j, JVEC_AT(v, uint32_t, k));
        for (const jl_waiter *w = jl_subx_peek(j, s)->whead; w && !rc; w = w->next)
            rc = jvec_push(&ranks, sizeof(uint64_t), &w->p.arrival);
    }
    if (!rc && ranks.n > 1)
        qsort(ranks.p, ranks.n, sizeof(uint64_t), by_u64);
    for (size_t k = 0; k < v.n && !rc; k++) {
        const jl_subject *s = jl_subject_at(j, JVEC_AT(v, uint32_t, k));
        for (const jl_waiter *w = jl_subx_peek(j, s)->whead; w && !rc; w = w->next) {
            const jl_party *h = jl_party_at(j, w->p.holder);
            dls_pk b;
            ck_begin(o, &b);
            msgpack_pack_map(&b.pk, 8);
            PK_KEY(&b, "dao.ckpt/waiter");
            dls_pk_raw(&b, w->p.proposal, w->p.plen);
            PK_KEY(&b, "dao.ckpt/subject");
            dls_pk_bin(&b, jl_subject_bytes(s), s->len);
            PK_KEY(&b, "dao.ckpt/holder");
            dls_pk_str(&b, h->name, h->len);
            PK_KEY(&b, "dao.ckpt/medium");
            dls_pk_bin(&b, j->media[w->p.medium].id, DLS_MEDIUM_ID_LEN);
            PK_KEY(&b, "dao.ckpt/mode");
            dls_pk_cstr(&b, w->p.has_mode && w->p.mode == DLS_MODE_SHARED ? "shared"
                                                                           : "exclusive");
            PK_KEY(&b, "dao.ckpt/duration");
            if (w->p.has_ask)
                dls_pk_duration(&b, &w->p.ask);
            else
                msgpack_pack_nil(&b.pk);
            PK_KEY(&b, "dao.ckpt/bound");
            dls_pk_uint(&b, w->bound);
            PK_KEY(&b, "dao.ckpt/arrival");
            /* [pass, medium index, position, index]: the ledger keeps the
             * drain order only: index is the rank in it (docs/checkpoints.md). */
            msgpack_pack_array(&b.pk, 4);
            dls_pk_uint(&b, 0);
            dls_pk_uint(&b, w->p.medium);
            dls_pk_uint(&b, 0);
            dls_pk_uint(&b, rank_of(&ranks, w->p.arrival));
            rc = ck_emit(o, &b);
        }
    }
    v.n = 0;
    if (!rc)
        rc = subjects_where(j, &v, true);
    for (size_t k = 0; k < v.n && !rc; k++) {
        const jl_subject *s = jl_subject_at(j, JVEC_AT(v, uint32_t, k));
        dls_pk b;
        ck_begin(o, &b);
        msgpack_pack_map(&b.pk, 2);
        PK_KEY(&b, "dao.ckpt/delay");
        dls_pk_bin(&b, jl_subject_bytes(s), s->len);
        PK_KEY(&b, "dao.ckpt/until");
        dls_pk_uint(&b, dls_add_sat(jl_subx_peek(j, s)->delay_start, j->lock_delay));
        rc = ck_emit(o, &b);
    }
    jvec_free(&v);
    jvec_free(&ranks);
    return rc;
}

static int by_party(const void *a, const void *b, void *ctx)
{
    const jl_party *x = jl_party_at(ctx, *(const uint32_t *)a);
    const jl_party *y = jl_party_at(ctx, *(const uint32_t *)b);
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int by_medium_id(const void *a, const void *b, void *ctx)
{
    const dls_judge *j = ctx;
    const jl_pseq *x = a, *y = b;
    return memcmp(j->media[x->medium].id, j->media[y->medium].id, DLS_MEDIUM_ID_LEN);
}

static int write_authors(dls_judge *j, ck_out *o)
{
    jvec v = {0}, s = {0};
    int rc = 0;
    for (uint32_t i = 0; i < j->parties.n && !rc; i++)
        if (jl_party_at(j, i)->npseq)
            rc = jvec_push(&v, sizeof(uint32_t), &i);
    if (!rc && v.n > 1)
        qsort_r(v.p, v.n, sizeof(uint32_t), by_party, j);
    for (size_t k = 0; k < v.n && !rc; k++) {
        const jl_party *pa = jl_party_at(j, JVEC_AT(v, uint32_t, k));
        s.n = 0;
        if ((rc = jvec_reserve(&s, sizeof(jl_pseq), pa->npseq)) != 0)
            break;
        memcpy(s.p, pa->pseq, pa->npseq * sizeof(jl_pseq));
        s.n = pa->npseq;
        qsort_r(s.p, s.n, sizeof(jl_pseq), by_medium_id, j);
        for (size_t q = 0; q < s.n && !rc; q++) {
            const jl_pseq *ps = &JVEC_AT(s, jl_pseq, q);
            if (ps->medium >= j->nmedia)
                continue;
            dls_pk b;
            ck_begin(o, &b);
            msgpack_pack_map(&b.pk, 3);
            PK_KEY(&b, "dao.ckpt/author");
            dls_pk_str(&b, pa->name, pa->len);
            PK_KEY(&b, "dao.ckpt/medium");
            dls_pk_bin(&b, j->media[ps->medium].id, DLS_MEDIUM_ID_LEN);
            PK_KEY(&b, "dao.ckpt/seq");
            dls_pk_uint(&b, ps->seq);
            rc = ck_emit(o, &b);
        }
    }
    jvec_free(&v);
    jvec_free(&s);
    return rc;
}

static int io_fail(dls_where *w, int e, const char *reason)
{
    return dls_where_fill(w, DLS_ERR_IO, (dls_where){.reason = reason, .sys_errno = e});
}

/* Creates tmp (a torn attempt a crash left there is never committed:
 * replaced) for o's appends. */
static int ck_open(ck_out *o, const char *tmp, dls_where *w)
{
    o->fd = -1;
    o->w = w;
    if (jvec_reserve(&o->bytes, 1, CK_FLUSH + DLS_RECORD_MAX))
        return DLS_ERR_NOMEM;
    unlink(tmp);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.sync = DLS_SYNC_NONE; /* one fdatasync of the whole file in ck_close */
    ms.exclusive = true;
    int rc = dls_medium_create(&o->m, DLS_MEDIUM_FILE, tmp, &ms, w);
    if (!rc && (o->fd = open(tmp, O_RDONLY | O_CLOEXEC)) < 0)
        rc = io_fail(w, errno, "the checkpoint cannot be opened to be synced");
    return rc;
}

/* Appends what is buffered, syncs, renames tmp to final and syncs the
 * folder; on failure (or when rc is one already) removes tmp. */
static int ck_close(ck_out *o, int rc, const char *dir, const char *tmp, const char *final,
                    uint64_t *bytes, dls_where *w)
{
    if (!rc)
        rc = ck_flush(o);
    dls_medium_del(o->m);
    o->m = NULL;
    if (!rc && fdatasync(o->fd) != 0) /* durable before renamed and committed */
        rc = io_fail(w, errno, "the checkpoint cannot be synced");
    struct stat st;
    if (!rc && fstat(o->fd, &st) == 0)
        *bytes = (uint64_t)st.st_size;
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (!rc && rename(tmp, final) != 0)
        rc = io_fail(w, errno, "the checkpoint cannot be renamed into place");
    if (!rc) {
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fsync(fd) != 0)
            rc = io_fail(w, errno, "the checkpoint folder cannot be synced");
        if (fd >= 0)
            close(fd);
    }
    if (rc)
        unlink(tmp);
    return rc;
}

static int commit(dls_judge *j, uint64_t n, const uint8_t *digest, uint64_t records,
                  uint64_t *pos)
{
    uint8_t fact[128];
    dls_pk b;
    dls_pk_init(&b, fact, sizeof fact);
    msgpack_pack_map(&b.pk, 3);
    dls_pk_cstr(&b, "dao.judge/checkpoint");
    dls_pk_uint(&b, n);
    dls_pk_cstr(&b, "dao.judge/digest");
    dls_pk_bin(&b, digest, DLS_CKPT_DIGEST_LEN);
    dls_pk_cstr(&b, "dao.judge/records");
    dls_pk_uint(&b, records);
    if (b.overflow)
        return DLS_ERR_TOOBIG;
    size_t len = 0;
    int rc = dls_envelope_seal(j->grantor, j->journal_id, fact, b.len, j->scratch,
                               DLS_RECORD_MAX, &len);
    if (rc)
        return rc;
    dls_where w = {0};
    if ((rc = dls_medium_append(j->journal, j->scratch, len, pos, &w)) != 0) {
        j->fatal = true; /* judge.md, Failure of the journal */
        jj_failed(j, rc, &w);
        return DLS_ERR_JOURNAL_WRITE;
    }
    return 0;
}

/* The default checkpoint folder: the journal's path + ".ckpt" (malloc'd;
 * NULL when out of memory). */
static char *default_dir(const dls_judge *j)
{
    const char *jn = dls_medium_name(j->journal);
    char *path = malloc(strlen(jn) + 6);
    if (path)
        sprintf(path, "%s.ckpt", jn);
    return path;
}

int dls_judge_checkpoint(dls_judge *j, const char *dir, dls_judge_checkpoint_info *info,
                         dls_where *w)
{
    int rc = jx_usable(j);
    if (!rc)
        rc = js_refuse(j); /* a standby never appends nor acts */
    if (rc)
        return rc;
    dls_judge_checkpoint_info scratch;
    if (!info)
        info = &scratch;
    memset(info, 0, sizeof *info);
    if (!j->ck_mark) {
        if (w)
            w->reason = "no pass mark since the judge started: run a pass first";
        return DLS_ERR_STATE;
    }
    info->pass = j->ck_pass;
    info->journal_next = j->ck_next;
    if (j->ck_written == j->ck_pass)
        return 0;
    char *path = NULL;
    if (!dir) {
        if (dls_medium_kind_of(j->journal) != DLS_MEDIUM_FILE &&
            dls_medium_kind_of(j->journal) != DLS_MEDIUM_SEGMENTED) {
            if (w)
                w->reason = "a journal that is not a local file or directory needs a "
                            "checkpoint folder";
            return DLS_ERR_CONFIG;
        }
        if (!(dir = path = default_dir(j)))
            return DLS_ERR_NOMEM;
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        free(path);
        return io_fail(w, errno, "the checkpoint folder cannot be created");
    }
    size_t dl = strlen(dir);
    char *final = malloc(dl + 32), *tmp = malloc(dl + 36);
    ck_out o;
    memset(&o, 0, sizeof o);
    o.fd = -1;
    rc = final && tmp ? 0 : DLS_ERR_NOMEM;
    if (!rc) {
        sprintf(final, "%s/%020llu.dls", dir, (unsigned long long)j->ck_pass);
        sprintf(tmp, "%s.tmp", final);
        rc = dls_ckhash_new(&o.h);
        if (!rc)
            rc = ck_open(&o, tmp, w);
        if (!rc)
            rc = write_header(j, &o);
        if (!rc)
            rc = write_leases(j, &o);
        if (!rc)
            rc = write_waiters_delays(j, &o);
        if (!rc)
            rc = write_authors(j, &o);
        if (o.m || o.fd >= 0)
            rc = ck_close(&o, rc, dir, tmp, final, &info->bytes, w);
    }
    dls_ckhash_final(o.h, rc ? NULL : info->digest);
    if (!rc)
        info->records = o.records;
    if (!rc)
        rc = commit(j, j->ck_pass, info->digest, info->records, &info->commit_position);
    if (!rc)
        j->ck_written = j->ck_pass;
    else if (rc != DLS_ERR_JOURNAL_WRITE)
        info->records = 0;
    jvec_free(&o.bytes);
    jvec_free(&o.lens);
    jvec_free(&o.recs);
    free(final);
    free(tmp);
    free(path);
    return rc;
}

/* Deletes the `<n>.dls.tmp` leftovers of interrupted writes in dir (never
 * committed), counting them in *deleted (optional); buf[0 … cap) is the
 * caller's path buffer. */
static void remove_leftovers(const char *dir, char *buf, size_t cap, size_t *deleted)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l == 28 && strcmp(e->d_name + 20, ".dls.tmp") == 0) {
            snprintf(buf, cap, "%s/%s", dir, e->d_name);
            if (unlink(buf) == 0 && deleted)
                (*deleted)++;
        }
    }
    if (d)
        closedir(d);
}

/* ---- retention ---------------------------------------------------------------- */

int dls_checkpoint_prune(const char *dir, size_t keep, size_t *deleted, uint64_t *oldest_kept,
                         dls_where *w)
{
    if (deleted)
        *deleted = 0;
    if (oldest_kept)
        *oldest_kept = 0;
    if (!dir)
        return DLS_ERR_INVAL;
    if (keep < 2) {
        if (w)
            w->reason = "keep at least two checkpoints";
        return DLS_ERR_CONFIG;
    }
    jvec list = {0};
    int rc = jc_list_dir(dir, &list);
    size_t dl = strlen(dir);
    char *path = malloc(dl + 40);
    if (!path)
        rc = DLS_ERR_NOMEM;
    for (size_t i = 0; !rc && i < list.n; i++) {
        uint64_t n = JVEC_AT(list, uint64_t, i);
        sprintf(path, "%s/%020llu.dls", dir, (unsigned long long)n);
        if (i < keep) {
            if (oldest_kept)
                *oldest_kept = n;
            continue;
        }
        if (unlink(path) != 0 && errno != ENOENT)
            rc = io_fail(w, errno, "an old checkpoint cannot be deleted");
        else if (deleted)
            (*deleted)++;
    }
    if (!rc) /* leftovers of interrupted writes (never committed) */
        remove_leftovers(dir, path, dl + 40, deleted);
    free(path);
    jvec_free(&list);
    return rc;
}

/* ---- the journal's retention -------------------------------- */

/* A checkpoint file of the folder as a restart would see it. */
typedef struct ck_file {
    uint64_t pass, next;
    bool ok;        /* the header names this journal and this pass */
    bool committed; /* a grantor-signed commit record for it follows its journal_next
                       (and, once verified, its digest and count are the file's) */
    bool verified;  /* its payloads were hashed and matched the commit record */
    uint8_t digest[DLS_CKPT_DIGEST_LEN]; /* the commit record's */
    uint64_t records;
} ck_file;

/* The one reason for a checkpoint file that exists but cannot be opened or
 * read now (EMFILE, ENFILE, EACCES, EIO, ENOMEM, …): it may well be a
 * committed checkpoint, so nothing is decided from the folder. */
static const char CK_UNREADABLE[] =
    "a checkpoint file (its pass in w.offset) cannot be opened or read: nothing is deleted or "
    "trimmed";

static int file_fail(dls_where *w, int rc, uint64_t pass, int e, const char *reason)
{
    if (w) {
        memset(w, 0, sizeof *w);
        w->offset = pass;
        w->sys_errno = e;
        w->reason = reason;
    }
    return rc;
}

/* Opens checkpoint file `path` (of `pass`) for reading: 0 with *m set; 0
 * with *m NULL when the file is not there (ENOENT) or is no stream file a
 * restart could read (a bad stream header, not a regular file); any other
 * failure is returned with w filled (w->offset = pass, w->sys_errno): the
 * file may be a good checkpoint that this process cannot open just now. */
static int open_ckpt(const char *path, uint64_t pass, const jc_hooks *hk, dls_medium **m,
                     dls_where *w)
{
    *m = NULL;
    if (hk && hk->before_open)
        hk->before_open(hk->user, path);
    dls_where ow = {0};
    int rc = dls_medium_open(m, path, DLS_OPEN_READ, NULL, &ow);
    if (!rc)
        return 0;
    *m = NULL;
    if (rc == DLS_ERR_NOTFOUND || rc == DLS_ERR_HEADER || rc == DLS_ERR_INVAL)
        return 0;
    return file_fail(w, rc, pass, ow.sys_errno, CK_UNREADABLE);
}

/* The next record of a checkpoint file: 1 with *rec; 0 at its end or where
 * its content stops being usable (a torn tail, a corrupt record, a file
 * shorter than a position read); < 0, w filled, when the file cannot be
 * read (the stream layer names an errno: EIO, …). */
static int next_rec(dls_cursor *c, dls_record *rec, uint64_t pass, dls_where *w)
{
    dls_where cw = {0};
    switch (dls_cursor_next(c, rec, &cw)) {
    case DLS_NEXT_OK:
        return 1;
    case DLS_NEXT_ERROR:
        if (cw.sys_errno)
            return file_fail(w, cw.sys_errno == EACCES || cw.sys_errno == EPERM ? DLS_ERR_PERM
                                                                                 : DLS_ERR_IO,
                             pass, cw.sys_errno, CK_UNREADABLE);
        return 0;
    default:
        return 0;
    }
}

/* Opens checkpoint `pass` at path and a cursor at its start: 0 with *m
 * NULL when the file is gone or not a stream file (open_ckpt), an error
 * when it cannot be read. */
static int open_cursor(const char *path, uint64_t pass, const jc_hooks *hk, dls_medium **m,
                       dls_cursor **c, dls_where *w)
{
    int rc = open_ckpt(path, pass, hk, m, w);
    if (rc || !*m)
        return rc;
    if ((rc = dls_cursor_new(c, *m, 0)) != 0) {
        dls_medium_del(*m);
        *m = NULL;
        return file_fail(w, rc, pass, 0, CK_UNREADABLE);
    }
    return 0;
}

/* Reads f's header: f->ok and f->next when it names this journal and f's
 * pass. Answers an error only when the file exists and cannot be read
 * (open_ckpt, next_rec); a missing file or unusable content leaves f->ok
 * false. */
static int header_next(const dls_judge *j, const char *path, ck_file *f, const jc_hooks *hk,
                       dls_where *w)
{
    f->ok = false;
    dls_medium *m;
    dls_cursor *c;
    int rc = open_cursor(path, f->pass, hk, &m, &c, w);
    if (rc || !m)
        return rc;
    dls_record rec;
    dls_ckpt_rec r;
    int k = next_rec(c, &rec, f->pass, w);
    if (k < 0)
        rc = k;
    else if (k == 1 && dls_ckpt_decode(rec.p, rec.n, &r, NULL) == 0 &&
             r.kind == DLS_CKPT_HEADER && r.pass == f->pass &&
             memcmp(r.journal, j->journal_id, DLS_MEDIUM_ID_LEN) == 0) {
        f->next = r.journal_next;
        f->ok = true;
    }
    dls_cursor_del(c);
    dls_medium_del(m);
    return rc;
}

/* judge.md rev 4, Checkpoints, Commit: "A checkpoint without that record,
 * or whose digest differs, does not exist." Hashes f's payloads exactly as
 * the commit's digest is made (each preceded by its length, 4 bytes LE;
 * BLAKE2b-256) and counts them, stopping one past the committed count (a
 * grown file costs no more than the real one): *good when both are the
 * commit record's. O(the file's size). Errors as header_next. */
static int verify_file(const char *path, const ck_file *f, const jc_hooks *hk, bool *good,
                       dls_where *w)
{
    *good = false;
    dls_medium *m;
    dls_cursor *c;
    int rc = open_cursor(path, f->pass, hk, &m, &c, w);
    if (rc || !m)
        return rc;
    dls_ckhash *h;
    if ((rc = dls_ckhash_new(&h)) != 0) {
        dls_cursor_del(c);
        dls_medium_del(m);
        return rc;
    }
    uint64_t count = 0;
    int k = 1;
    while (count <= f->records) {
        dls_record rec;
        if ((k = next_rec(c, &rec, f->pass, w)) != 1)
            break;
        int ar = dls_ckhash_add(h, rec.p, rec.n);
        if (ar) {
            k = ar;
            break;
        }
        count++;
    }
    dls_cursor_del(c);
    dls_medium_del(m);
    uint8_t got[DLS_CKPT_DIGEST_LEN];
    dls_ckhash_final(h, k < 0 ? NULL : got);
    if (k < 0)
        return k;
    *good = count == f->records && sodium_memcmp(got, f->digest, sizeof got) == 0;
    return 0;
}

/* Marks the files whose commit record is on the journal at or after their
 * journal_next (keeping that record's digest and count): one walk from the
 * least journal_next to the end. A walk
 * that cannot reach the end (a hole, corruption, an I/O error) answers
 * DLS_ERR_JOURNAL with w filled: the files whose commits lie beyond are
 * unknown, and taking them for uncommitted would delete the newest
 * checkpoints, which a restart may need most. */
static int find_commits(const dls_judge *j, ck_file *f, size_t n, dls_where *w)
{
    uint64_t from = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        if (f[i].ok && f[i].next < from)
            from = f[i].next;
    if (from == UINT64_MAX)
        return 0;
    dls_resolver *verify = NULL;
    int rc = jr_grantor_verifier(j, &verify);
    dls_cursor *c = NULL;
    if (!rc && dls_cursor_new(&c, j->journal, from))
        rc = DLS_ERR_NOMEM;
    for (bool more = !rc; more;) {
        dls_record rec;
        switch (dls_cursor_next(c, &rec, NULL)) {
        case DLS_NEXT_OK: {
            dls_attribution a;
            dls_resolver_attribute(verify, rec.p, rec.n, &a);
            uint64_t pass, records;
            uint8_t digest[DLS_CKPT_DIGEST_LEN];
            if (!a.attributed || a.author.n != j->grantor_len ||
                memcmp(a.author.p, j->grantor_name, j->grantor_len) != 0 ||
                !dls_ckpt_commit_decode(a.fact.p, a.fact.n, &pass, digest, &records))
                break;
            /* the first commit after journal_next, as restart takes it */
            for (size_t i = 0; i < n; i++)
                if (f[i].ok && !f[i].committed && f[i].pass == pass && rec.position >= f[i].next) {
                    f[i].committed = true;
                    memcpy(f[i].digest, digest, sizeof digest);
                    f[i].records = records;
                }
            break;
        }
        case DLS_NEXT_GAP:
            break; /* trimmed meanwhile: what follows still counts */
        case DLS_NEXT_ERROR: {
            uint64_t at = dls_cursor_position(c);
            dls_where cw = {0};
            dls_cursor_next(c, &rec, &cw); /* again, for the reason */
            if (w) {
                memset(w, 0, sizeof *w);
                w->offset = at;
                w->sys_errno = cw.sys_errno;
                w->reason = "the journal cannot be read to its end (a hole, corruption or an "
                            "I/O error at this position): which checkpoints are committed is "
                            "unknown, nothing is deleted";
            }
            rc = DLS_ERR_JOURNAL;
            more = false;
            break;
        }
        default:
            more = false;
        }
    }
    dls_cursor_del(c);
    dls_resolver_del(verify);
    return rc;
}

/* The checkpoint files of dir (newest first) with their headers and
 * commits; the committed ones are then verified newest first (verify_file)
 * until `want` of them match their commit record — one that does not is
 * no longer `committed` (it does not exist) — so the newest `want`
 * committed files are exactly the newest `want` a restart can load. Older
 * committed files are left unverified. *out malloc'd. Errors: a folder
 * that exists but cannot be listed, or a file that cannot be opened or
 * read (DLS_ERR_IO, DLS_ERR_PERM, DLS_ERR_NOMEM: w->offset its pass,
 * w->sys_errno), DLS_ERR_JOURNAL (find_commits). */
static int scan_folder(const dls_judge *j, const char *dir, size_t want, const jc_hooks *hk,
                       ck_file **out, size_t *count, dls_where *w)
{
    *out = NULL;
    *count = 0;
    /* the shared lister reads a folder it cannot open as empty (restart
     * then falls back): here only a missing folder holds none */
    DIR *d = opendir(dir);
    if (!d && errno != ENOENT)
        return file_fail(w, errno == EACCES || errno == EPERM ? DLS_ERR_PERM : DLS_ERR_IO, 0,
                         errno, "the checkpoint folder cannot be listed: nothing is deleted or "
                                "trimmed");
    if (d)
        closedir(d);
    jvec list = {0};
    int rc = jc_list_dir(dir, &list); /* newest first */
    size_t dl = strlen(dir);
    char *file = malloc(dl + 40);
    ck_file *f = calloc(list.n ? list.n : 1, sizeof *f);
    if (!file || !f)
        rc = DLS_ERR_NOMEM;
    for (size_t i = 0; !rc && i < list.n; i++) {
        f[i].pass = JVEC_AT(list, uint64_t, i);
        sprintf(file, "%s/%020llu.dls", dir, (unsigned long long)f[i].pass);
        rc = header_next(j, file, &f[i], hk, w);
    }
    if (!rc)
        rc = find_commits(j, f, list.n, w);
    for (size_t i = 0, good = 0; !rc && i < list.n && good < want; i++) {
        if (!f[i].committed)
            continue;
        bool ok = false;
        sprintf(file, "%s/%020llu.dls", dir, (unsigned long long)f[i].pass);
        if ((rc = verify_file(file, &f[i], hk, &ok, w)) != 0)
            break;
        f[i].verified = true;
        f[i].committed = ok;
        good += ok;
    }
    free(file);
    if (rc) {
        free(f);
        f = NULL;
    } else {
        *count = list.n;
    }
    jvec_free(&list);
    *out = f;
    return rc;
}

/* judge.md rev 4, Checkpoints, Retention ("the oldest committed checkpoint
 * it keeps"): keep the newest `keep` checkpoints whose commit record is on
 * the journal and whose digest and record count are that record's (judge.md,
 * Commit: any other "does not exist"), delete every other file — older
 * committed ones, and files no restart can use (never committed: a crash
 * between the rename and the commit; a digest that differs; a header
 * naming another journal or pass) — and .tmp leftovers. With no committed
 * checkpoint found, only the leftovers go. A file that exists but cannot be
 * read stops the prune before anything is deleted (scan_folder). */
int jc_prune_checkpoints(dls_judge *j, const char *dir, size_t keep, size_t *deleted,
                         dls_where *w, const jc_hooks *hooks)
{
    if (deleted)
        *deleted = 0;
    int rc = jx_usable(j);
    if (!rc)
        rc = js_refuse(j); /* a standby never appends nor acts */
    if (rc)
        return rc;
    if (keep < 2) {
        if (w)
            w->reason = "keep at least two checkpoints";
        return DLS_ERR_CONFIG;
    }
    char *path = NULL;
    if (!dir && !(dir = path = default_dir(j)))
        return DLS_ERR_NOMEM;
    ck_file *f = NULL;
    size_t n = 0;
    rc = scan_folder(j, dir, keep, hooks, &f, &n, w);
    size_t dl = strlen(dir);
    char *file = malloc(dl + 40);
    if (!file) {
        free(f);
        free(path);
        return DLS_ERR_NOMEM;
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        kept += f[i].committed;
    for (size_t i = 0, k = 0; !rc && kept && i < n; i++) {
        if (f[i].committed && k++ < keep)
            continue;
        sprintf(file, "%s/%020llu.dls", dir, (unsigned long long)f[i].pass);
        if (unlink(file) != 0 && errno != ENOENT)
            rc = file_fail(w, DLS_ERR_IO, f[i].pass, errno,
                           "an old or unusable checkpoint (its pass in w.offset) cannot be "
                           "deleted");
        else if (deleted)
            (*deleted)++;
    }
    if (!rc)
        remove_leftovers(dir, file, dl + 40, deleted);
    free(f);
    free(file);
    free(path);
    return rc;
}

int dls_judge_prune_checkpoints(dls_judge *j, const char *dir, size_t keep, size_t *deleted,
                                dls_where *w)
{
    return jc_prune_checkpoints(j, dir, keep, deleted, w, NULL);
}

/* judge.md rev 4, Checkpoints, Retention: the journal may lose whole
 * segments before the journal_next of the oldest committed checkpoint it
 * keeps. The position is the least journal_next among the committed
 * checkpoints in `dir` (their commit records are on the journal after it:
 * every one a restart could load), so whichever of them a restart loads —
 * the newest, or an older one when the newest is unusable — the journal
 * holds what follows it. Fewer than two committed checkpoints there whose
 * digest matches (the newest two are verified; an older committed one
 * left unverified only holds the position further back): nothing is
 * trimmed, so a restart always has one to fall back on. A file that exists
 * but cannot be read: nothing is trimmed (the error). */
int jc_trim_journal(dls_judge *j, const char *dir, uint64_t *before, uint64_t *oldest,
                    dls_where *w, const jc_hooks *hooks)
{
    if (before)
        *before = 0;
    if (oldest)
        *oldest = 0;
    int rc = jx_usable(j);
    if (!rc)
        rc = js_refuse(j); /* a standby never appends nor acts */
    if (rc)
        return rc;
    if (dls_medium_kind_of(j->journal) != DLS_MEDIUM_SEGMENTED) {
        if (w)
            w->reason = "only a segmented journal can be trimmed (a file journal retains "
                        "everything)";
        return DLS_ERR_RETENTION;
    }
    char *path = NULL;
    if (!dir && !(dir = path = default_dir(j)))
        return DLS_ERR_NOMEM;
    ck_file *f;
    size_t n;
    rc = scan_folder(j, dir, 2, hooks, &f, &n, w);
    free(path);
    if (rc)
        return rc;
    uint64_t pos = UINT64_MAX;
    size_t good = 0;
    for (size_t i = 0; i < n; i++) {
        good += f[i].committed && f[i].verified;
        if (f[i].committed && f[i].next < pos)
            pos = f[i].next;
    }
    free(f);
    /* Fewer than two checkpoints a restart can load: trimming would leave
     * it one and no fallback (the owner keeps at least two). */
    if (good < 2)
        return 0;
    if (before)
        *before = pos;
    return dls_medium_trim(j->journal, pos, oldest, w);
}

int dls_judge_trim_journal(dls_judge *j, const char *dir, uint64_t *before, uint64_t *oldest,
                           dls_where *w)
{
    return jc_trim_journal(j, dir, before, oldest, w, NULL);
}
