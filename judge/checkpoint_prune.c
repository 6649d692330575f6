/* Checkpoint retention (judge.md rev 4, Checkpoints; docs/checkpoints.md,
 * Retention): pruning a checkpoint folder to the newest `keep`, and
 * trimming a segmented journal to what the kept checkpoints still need.
 * Nothing is deleted unless the folder reads as a restart would read it:
 * a checkpoint file that cannot be opened or read now stops the prune.
 * Writing a checkpoint is in checkpoint.c, restarting from one in
 * checkpoint_load.c. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daolease/checkpoint.h"
#include "judge/checkpoint_hooks.h"
#include "judge/ckhash.h"
#include "judge/internal.h"
#include "vocab/internal.h"
#include "vocab/where.h"

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
            rc = dls_where_fill(w, DLS_ERR_IO, (dls_where){.reason = "an old checkpoint cannot "
                                                                     "be deleted",
                                                           .sys_errno = errno});
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
    if (!dir && !(dir = path = jc_default_dir(j)))
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
    if (!dir && !(dir = path = jc_default_dir(j)))
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
