/* The journal (judge.md, Journal; Failure of the journal): every record an
 * envelope signed by the grantor, appended to the journal medium.
 *
 * Records of one pass are collected in a batch and appended with one append
 * (one sync): the pass mark alone before any act (step 4), the lapsed
 * records after the acts (step 6), the grants and refusals at the end of
 * step 7. A mark owed only because the pass is about to append is put into
 * the batch immediately before the first record. Any failed or short write
 * or sync is fatal: the handle stops and a restart replays what landed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "daolease/mark.h"
#include "judge/internal.h"

#include "vocab/where.h"

/* Seals fact[0..n) for the journal and adds it to the batch. */
static int add_record(dls_judge *j, const uint8_t *fact, size_t n)
{
    size_t need = dls_envelope_size(j->grantor_len, n, DLS_KEY_ED25519);
    if (need == 0 || need > DLS_RECORD_MAX)
        return DLS_ERR_TOOBIG;
    int rc = jvec_reserve(&j->jbuf, 1, need);
    if (!rc)
        rc = jvec_reserve(&j->jlens, sizeof(size_t), 1);
    if (rc)
        return rc;
    size_t len = 0;
    rc = dls_envelope_seal(j->grantor, j->journal_id, fact, n,
                           (uint8_t *)j->jbuf.p + j->jbuf.n, need, &len);
    if (rc)
        return rc;
    j->jbuf.n += len;
    JVEC_AT(j->jlens, size_t, j->jlens.n++) = len;
    return 0;
}

/* The mark's lists, built in assembly order / ascending lease id. */
static int mark_lists(dls_judge *j, dls_mark *m)
{
    int rc = jvec_reserve(&j->mk_drained, sizeof(dls_mark_pos), j->nmedia);
    if (!rc)
        rc = jvec_reserve(&j->mk_errors, sizeof(dls_mark_pos), j->nmedia);
    if (!rc)
        rc = jvec_reserve(&j->mk_due, sizeof(dls_mark_due), j->due.n);
    if (rc)
        return rc;
    j->mk_drained.n = j->mk_errors.n = j->mk_due.n = 0;
    for (size_t i = 0; i < j->nmedia; i++) {
        const jm_medium *md = &j->media[i];
        dls_mark_pos *d = &JVEC_AT(j->mk_drained, dls_mark_pos, j->mk_drained.n++);
        memcpy(d->medium, md->id, DLS_MEDIUM_ID_LEN);
        d->position = jm_position(md);
        if (md->failed) {
            dls_mark_pos *e = &JVEC_AT(j->mk_errors, dls_mark_pos, j->mk_errors.n++);
            memcpy(e->medium, md->id, DLS_MEDIUM_ID_LEN);
            e->position = md->err_pos;
        }
    }
    for (size_t i = 0; i < j->due.n; i++) {
        const jl_lease *l = jl_lease_at(j, JVEC_AT(j->due, uint32_t, i));
        dls_mark_due *d = &JVEC_AT(j->mk_due, dls_mark_due, j->mk_due.n++);
        d->lease = l->id;
        d->cause = (dls_cause)l->cause;
    }
    m->drained = j->mk_drained.p;
    m->n_drained = j->mk_drained.n;
    m->errors = j->mk_errors.p;
    m->n_errors = j->mk_errors.n;
    m->due = j->mk_due.p;
    m->n_due = j->mk_due.n;
    m->gaps = j->gaps.p;
    m->n_gaps = j->gaps.n;
    return 0;
}

int jj_mark(dls_judge *j)
{
    dls_mark m;
    memset(&m, 0, sizeof m);
    m.pass = j->last_pass;
    m.now_ns = j->now;
    m.basis.p = (const uint8_t *)j->basis;
    m.basis.n = strlen(j->basis);
    m.tolerance_ns = j->tolerance;
    m.cadence_ns = j->cadence;
    m.late = j->late;
    m.restarted = j->restarted;
    m.kept = j->restarted && j->kept;
    m.takeover = j->restarted && j->took_over; /* judge.md rev 5, Standby judges */
    if (j->restarted && j->lost_mode && !j->replayed) {
        m.has_floor = true;
        m.floor = j->floor;
        m.from = j->from_marks;
        m.n_from = j->nmedia;
    }
    int rc = mark_lists(j, &m);
    if (rc)
        return rc;
    size_t limit = dls_mark_limit(j->grantor_len);
    dls_mark_writer wr;
    memset(&wr, 0, sizeof wr);
    for (;;) {
        size_t len = 0;
        rc = dls_mark_encode_next(&m, &wr, j->scratch, limit, &len);
        if (rc < 0)
            return rc;
        if (rc == 0)
            break;
        rc = add_record(j, j->scratch, len);
        if (rc)
            return rc;
    }
    j->mark_done = true;
    j->ck_mark = true; /* checkpoint.c: the pass a checkpoint stands after */
    j->ck_pass = j->last_pass;
    j->ck_now = j->now;
    if (j->res)
        j->res->mark = true;
    return 0;
}

int jj_fact(dls_judge *j, const dls_fact *f)
{
    int rc;
    if (!j->mark_done && (rc = jj_mark(j)) != 0)
        return rc;
    size_t len = 0;
    rc = dls_fact_encode(f, j->scratch, DLS_RECORD_MAX, &len);
    if (rc)
        return rc;
    return add_record(j, j->scratch, len);
}

void jj_failed(dls_judge *j, int code, const dls_where *w)
{
    j->jfailed = true;
    j->jwhere = *w;
    if (!j->jwhere.reason)
        j->jwhere.reason = dls_strerror(code);
    j->jcode = code;
}

int jj_flush(dls_judge *j)
{
    size_t count = j->jlens.n;
    if (count == 0)
        return 0;
    const uint8_t **recs = malloc(count * sizeof *recs);
    if (!recs) {
        j->fatal = true;
        return DLS_ERR_NOMEM;
    }
    size_t off = 0;
    for (size_t i = 0; i < count; i++) {
        recs[i] = (const uint8_t *)j->jbuf.p + off;
        off += JVEC_AT(j->jlens, size_t, i);
    }
    uint64_t first = 0;
    dls_where w = {0};
    int rc = dls_medium_append_batch(j->journal, recs, (const size_t *)j->jlens.p, count,
                                     &first, &w);
    free(recs);
    j->jbuf.n = 0;
    j->jlens.n = 0;
    if (rc) {
        j->fatal = true;
        jj_failed(j, rc, &w);
        return DLS_ERR_JOURNAL_WRITE;
    }
    j->appended_total += count;
    j->ck_next = first + count; /* checkpoint.c: journal_next */
    if (j->res)
        j->res->appended += count;
    return 0;
}

int jj_lock(dls_judge *j, const char *path, dls_where *w)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        return dls_where_fill(w, DLS_ERR_IO,
                              (dls_where){.reason = "the journal lock file cannot be opened",
                                          .sys_errno = errno});
    }
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
        int e = errno;
        close(fd);
        return dls_where_fill(
            w, e == EAGAIN || e == EACCES ? DLS_ERR_JOURNAL_LOCKED : DLS_ERR_IO,
            (dls_where){.reason = "another judge holds the journal (its .lock file is locked)",
                        .sys_errno = e});
    }
    j->lock_fd = fd;
    return 0;
}

/* The journal's own lock (judge.md, Assembly, revision 4):
 * an exclusive flock(2) on the journal itself — the file, or the directory
 * of a segmented journal — held for the judge's lifetime. flock locks
 * belong to the open file description of the inode, so two judges reaching
 * one journal through a symlink, a hard link or any other path exclude each
 * other; they are independent of the stream writer's OFD record locks, so
 * the judge's own appends (and an `exclusive` open of the journal, which is
 * the stream writer lock held for the medium's lifetime) never contend with
 * it. */
int jj_lock_journal(dls_judge *j, const char *path, dls_where *w)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return dls_where_fill(w, DLS_ERR_IO,
                              (dls_where){.reason = "the journal cannot be opened to lock it",
                                          .sys_errno = errno});
    }
    int rc;
    while ((rc = flock(fd, LOCK_EX | LOCK_NB)) < 0 && errno == EINTR) {
    }
    if (rc < 0) {
        int e = errno;
        close(fd);
        return dls_where_fill(
            w, e == EWOULDBLOCK ? DLS_ERR_JOURNAL_LOCKED : DLS_ERR_IO,
            (dls_where){.reason = "another judge holds this journal (through this or another path)",
                        .sys_errno = e});
    }
    j->lock_fd = fd;
    return 0;
}

void jj_unlock(dls_judge *j)
{
    if (j->lock_fd >= 0)
        close(j->lock_fd);
    j->lock_fd = -1;
}
