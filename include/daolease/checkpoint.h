/* daolease — judge checkpoints (judge.md rev 4, Checkpoints).
 *
 * A checkpoint is the judge's whole state after pass n (the last pass that
 * wrote a mark), written as a stream medium of its own — by default
 * `<journal>.ckpt/<n as 20 digits>.dls` — holding bare msgpack maps with
 * `dao.ckpt/` keys in the order judge.md fixes, and committed by a
 * grantor-signed journal record {"dao.judge/checkpoint": n,
 * "dao.judge/digest": bin 32, "dao.judge/records": uint}. A checkpoint
 * without that record, or whose digest differs, does not exist.
 * docs/checkpoints.md describes the format and the decisions.
 */
#ifndef DAOLEASE_CHECKPOINT_H
#define DAOLEASE_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/error.h"
#include "daolease/export.h"
#include "daolease/judge.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DLS_CKPT_DIGEST_LEN 32u

/* What dls_judge_checkpoint wrote. */
typedef struct dls_judge_checkpoint_info {
    uint64_t pass;            /* n: the pass the checkpoint stands after */
    uint64_t journal_next;    /* the journal position after pass n */
    uint64_t records;         /* records in the checkpoint */
    uint64_t bytes;           /* the checkpoint file's size on disk */
    uint64_t commit_position; /* the commit record's journal position */
    uint8_t digest[DLS_CKPT_DIGEST_LEN];
} dls_judge_checkpoint_info;

/* Writes a checkpoint of j between passes into `dir` (NULL: the journal's
 * path + ".ckpt", created when missing), makes it durable, then appends
 * the commit record to the journal. A second call with no pass mark in
 * between answers 0 and writes nothing (info->records = 0).
 * Errors: DLS_ERR_STATE before the judge's first pass mark since it
 * started (the state then still holds replay's unanswered proposals);
 * DLS_ERR_CONFIG with dir NULL and a journal that is not a file; DLS_ERR_IO
 * (w->sys_errno) writing the checkpoint (the judge carries on: an
 * uncommitted checkpoint does not exist); DLS_ERR_JOURNAL_WRITE (fatal)
 * appending the commit record; DLS_ERR_NOMEM; the usual handle errors. */
DLS_EXPORT int dls_judge_checkpoint(dls_judge *j, const char *dir,
                                    dls_judge_checkpoint_info *info, dls_where *w);

/* Retention (judge.md rev 4, Checkpoints, Retention): deletes the
 * checkpoints in `dir` older than the newest `keep` (at least 2) and any
 * leftover `.tmp` file of an interrupted write. *deleted (optional) counts
 * the files removed; *oldest_kept (optional) is the pass of the oldest
 * checkpoint kept (0: none). Errors: DLS_ERR_CONFIG (keep < 2), DLS_ERR_IO
 * (w->sys_errno), DLS_ERR_NOMEM. A folder that does not exist holds none. */
DLS_EXPORT int dls_checkpoint_prune(const char *dir, size_t keep, size_t *deleted,
                                    uint64_t *oldest_kept, dls_where *w);

/* Retention by commits (judge.md rev 4, Checkpoints, Retention: "the
 * oldest committed checkpoint it keeps"): like dls_checkpoint_prune, but
 * counts only checkpoints a restart can use — a file in `dir` (NULL: the
 * journal's path + ".ckpt") whose header names j's journal and its own
 * pass and whose grantor-signed commit record is on the journal after its
 * journal_next. Keeps the newest `keep` (at least 2) of those and deletes
 * every other checkpoint file (older committed ones, and files no restart
 * can use: one left uncommitted by a crash between its rename and its
 * commit; one whose digest or record count is not its commit record's:
 * judge.md, "does not exist") and any `.tmp` leftover; with no committed
 * checkpoint found it deletes only the leftovers. The committed files are
 * read whole and their digests checked, newest first, until `keep` match.
 * Cost: the checkpoints' headers, one walk of the journal from the least
 * journal_next among them (on a plain-file journal the walk starts at the
 * file's start: the format has no index), and reading the `keep` newest
 * committed checkpoints (O(their size): docs/checkpoints.md). Call it
 * between passes. *deleted (optional) counts the files removed. A
 * checkpoint file that exists but cannot be opened or read (EMFILE,
 * ENFILE, EACCES, EIO, ENOMEM, … — anything but its absence or unusable
 * content) stops the prune before anything is deleted. Errors:
 * DLS_ERR_CONFIG (keep < 2), DLS_ERR_JOURNAL (the journal cannot be read
 * to its end: a hole, corruption, an I/O error at w->offset — nothing is
 * deleted), DLS_ERR_IO / DLS_ERR_PERM (EACCES, EPERM) / DLS_ERR_NOMEM with
 * w->offset = the pass n of the checkpoint file `<dir>/<n as 20
 * digits>.dls` (dls_checkpoint_path) that cannot be read or deleted and
 * w->sys_errno its errno (w->offset 0: the folder cannot be listed), the
 * usual handle errors. */
DLS_EXPORT int dls_judge_prune_checkpoints(dls_judge *j, const char *dir, size_t keep,
                                           size_t *deleted, dls_where *w);

/* The journal's retention (judge.md rev 4, Checkpoints, Retention;
 * docs/checkpoints.md, Retention): deletes the whole segments of j's
 * journal — a segmented medium created without a bound — that lie before
 * every committed checkpoint in `dir` (NULL: the journal's path +
 * ".ckpt"), so the journal stays bounded while a restart from any of them
 * still finds the journal from its journal_next on. The position is the
 * least `journal_next` among the checkpoints in `dir` whose header names
 * this journal and its own pass and whose grantor-signed commit record is
 * on the journal after it (one walk of the journal from the least
 * journal_next); with fewer than two such checkpoints whose digest and
 * record count match their commit (the newest are read whole until two
 * match) nothing is trimmed (answers 0, *before 0), so a restart keeps a
 * checkpoint to fall back on. A checkpoint file that exists but cannot be
 * opened or read: nothing is trimmed, the error as for
 * dls_judge_prune_checkpoints (DLS_ERR_IO / DLS_ERR_PERM / DLS_ERR_NOMEM,
 * w->offset its pass, w->sys_errno).
 * Call it between passes, after dls_judge_checkpoint and
 * dls_judge_prune_checkpoints (keep at least 2). A judge whose journal was
 * trimmed restarts only from a checkpoint: full replay is refused (the
 * journal is not retained from position 0). *before (optional) receives
 * the position trimmed before (0: none), *oldest (optional) the journal's
 * oldest retained position after the call. Errors: DLS_ERR_RETENTION (the
 * journal is not segmented: a file journal retains everything),
 * DLS_ERR_JOURNAL (the journal cannot be read to its end to find the
 * commits: nothing is trimmed, w->offset), the
 * errors of dls_medium_trim (DLS_ERR_IO, DLS_ERR_LOCKED: not fatal, the
 * judge carries on with more on disk), DLS_ERR_NOMEM, the usual handle
 * errors. */
DLS_EXPORT int dls_judge_trim_journal(dls_judge *j, const char *dir, uint64_t *before,
                                      uint64_t *oldest, dls_where *w);

/* ---- reading one record (the fuzz target, dump, audit) -------------------- */

typedef enum dls_ckpt_kind {
    DLS_CKPT_HEADER = 1,
    DLS_CKPT_LEASE,
    DLS_CKPT_WAITER,
    DLS_CKPT_DELAY,
    DLS_CKPT_AUTHOR
} dls_ckpt_kind;

/* One decoded checkpoint record; byte fields borrow the input. Fields a
 * kind does not have are zero. `has_*` false: the value was nil. */
typedef struct dls_ckpt_rec {
    dls_ckpt_kind kind;
    /* header */
    uint64_t pass;
    uint64_t now_ns;
    dls_bytes basis;
    const uint8_t *journal;   /* 16 bytes */
    uint64_t journal_next;
    uint64_t highest;
    const uint8_t *media;     /* the encoded media array (dls_ckpt_next_medium) */
    size_t media_len;
    uint32_t nmedia;
    /* lease / waiter / delay / author */
    uint64_t id;              /* lease id or (waiter) 0 */
    dls_bytes proposal;       /* waiter: the encoded proposal id; lease: may be empty */
    dls_bytes subject;
    dls_bytes holder;         /* holder, or the author's name */
    const uint8_t *medium;    /* 16 bytes, NULL when nil */
    dls_mode mode;
    bool has_duration;
    dls_duration duration;
    bool has_max;
    dls_duration max;
    uint64_t start, last;
    bool has_resumed;
    uint64_t resumed;
    uint64_t seq;
    bool released, commit;
    dls_cause pending;        /* DLS_CAUSE_NONE: nil */
    uint64_t bound, until;
    uint64_t arrival[4];
} dls_ckpt_rec;

typedef struct dls_ckpt_medium {
    const uint8_t *id;        /* 16 bytes */
    uint64_t drained;
    bool has_run;
    uint64_t run_start;
} dls_ckpt_medium;

/* Decodes one checkpoint record (a bare msgpack map, keys in judge.md's
 * order). 0, or DLS_ERR_RECORD with w->offset/reason naming the problem. */
DLS_EXPORT int dls_ckpt_decode(const uint8_t *p, size_t n, dls_ckpt_rec *r, dls_where *w);
/* Iterates a header's media: *off starts at 0; false at the end. */
DLS_EXPORT bool dls_ckpt_next_medium(const dls_ckpt_rec *r, size_t *off, dls_ckpt_medium *m);

/* A journal record's fact that commits a checkpoint: 1 and the fields
 * when `fact` is {"dao.judge/checkpoint": n, "dao.judge/digest": bin 32,
 * "dao.judge/records": uint}; 0 when it is not one. */
DLS_EXPORT int dls_ckpt_commit_decode(const uint8_t *fact, size_t n, uint64_t *pass,
                                      uint8_t digest[DLS_CKPT_DIGEST_LEN], uint64_t *records);

/* ---- reading a checkpoint folder (restart, audit, status) ------------------ */

/* The passes of the checkpoint files in `dir` (names `<n as 20 digits>.dls`;
 * `.tmp` leftovers and other names are skipped), ascending, into *passes
 * (malloc'd, the caller frees; NULL when none) and *n. A folder that does
 * not exist or cannot be read holds none (0, *n = 0). Errors: DLS_ERR_INVAL
 * (a NULL argument), DLS_ERR_NOMEM. */
DLS_EXPORT int dls_checkpoint_list(const char *dir, uint64_t **passes, size_t *n);

/* Writes `<dir>/<pass as 20 digits>.dls` into out[0..cap). 0, or
 * DLS_ERR_INVAL when it does not fit (or an argument is NULL). */
DLS_EXPORT int dls_checkpoint_path(const char *dir, uint64_t pass, char *out, size_t cap);

/* Called by dls_checkpoint_read for each record, in file order; `r`
 * borrows the file's bytes until the callback returns. Return 0 to go on;
 * anything else stops the read and is returned by dls_checkpoint_read (a
 * positive value: stopped on purpose, e.g. after the header). */
typedef int (*dls_ckpt_record_fn)(void *user, const dls_ckpt_rec *r);

/* Reads the checkpoint of pass `pass` in `dir` once: every record is hashed
 * exactly as the commit record's digest is made (judge.md: BLAKE2b-256 over
 * the payloads, each preceded by its length as 4 bytes little-endian),
 * decoded with dls_ckpt_decode, checked to be the header first and only
 * first, and given to fn (optional). *digest and *records (each optional)
 * receive the digest and count of the records read — also on an error, so
 * a caller can tell a torn or planted file from the committed one by
 * comparing them with the commit record's. Errors: those of
 * dls_medium_open (DLS_ERR_NOTFOUND: no such checkpoint, w filled),
 * DLS_ERR_RECORD (a record that does not decode, or the header out of
 * place: w->offset = the record's position in the file, w->reason),
 * DLS_ERR_INVAL, DLS_ERR_SODIUM, DLS_ERR_NOMEM, or what fn returned. */
DLS_EXPORT int dls_checkpoint_read(const char *dir, uint64_t pass, dls_ckpt_record_fn fn,
                                   void *user, uint8_t digest[DLS_CKPT_DIGEST_LEN],
                                   uint64_t *records, dls_where *w);

#ifdef __cplusplus
}
#endif
#endif
