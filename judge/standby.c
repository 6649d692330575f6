/* Standby judges and takeover (judge.md rev 5, Standby judges; docs/standby.md).
 *
 * A standby is assembled with exactly the inputs of the judge that owns the
 * journal. It tries the journal's writer lock once without blocking and
 * replays the journal by the restart replay's own code (replay.c), from a
 * checkpoint when there is one, keeping that replay alive: each step
 * applies what the journal gained, reading each lease-fact medium only up
 * to the positions the marks record. It never appends, never calls the
 * reclaim procedure, the policy or the grant callbacks, answers no
 * proposal.
 *
 * Takeover. A file journal's writer lock (the flock on the journal, or the
 * journal_lock_path lock) is held by the owning judge for its lifetime and
 * freed by the kernel when its process ends, so each step tries it once,
 * without blocking. Obtained, the standby holds it (the fence), reads the
 * journal to its end, ends the replay exactly as a restart does (replay.c
 * jr_end, then the restart's refusal of a journal shorter than the
 * holders' evidence and the media cursors at the last mark's positions),
 * and the handle is a restarted judge: its first pass marks `restarted`
 * (and `kept`) and `takeover`, keeps every observation and re-runs the
 * reclaims the `due` entries left pending.
 *
 * Remote journals (Redis, JetStream; docs/standby.md, Remote journals).
 * No lock is freed by a kernel there: the writer is presumed abandoned
 * when the newest tick reading is at least `takeover_after` past the now
 * of the journal's newest mark on the same basis (readings, never a
 * clock), or, on Redis, at once when <key>:writer is cleared. The standby
 * fences first — Redis: dls_redis_take_over sets <key>:writer to its
 * token only while <key>:next is still the position it read up to;
 * JetStream: dls_jetstream_expect_after makes its first append name the
 * last sequence it read — then reads to the end and goes on as on a file.
 * A fence refused because the writer appended meanwhile leaves it
 * following; a first append refused because another writer appended
 * first stops the handle (fatal) with dls_judge_standby_info.lost_race
 * set: the caller assembles a standby again (daolease judge --standby
 * does, and says so).
 */
#include <stdlib.h>
#include <string.h>

#include "daolease/jetstream.h"
#include "daolease/redis.h"
#include "judge/internal.h"

#include "vocab/where.h"

static int refuse(dls_where *w, int code, const char *reason)
{
    return dls_where_fill(w, code, (dls_where){.reason = reason});
}

int js_refuse(const dls_judge *j)
{
    return j && j->standby ? DLS_ERR_STATE : 0;
}

/* One non-blocking try of the writer lock the owning judge holds:
 * 0 (held now), DLS_ERR_JOURNAL_LOCKED (the owner is alive) or another
 * error (the lock cannot be tried). */
static int try_lock(dls_judge *j, dls_where *w)
{
    if (j->lock_path)
        return jj_lock(j, j->lock_path, w);
    return jj_lock_journal(j, dls_medium_name(j->journal), w);
}

static bool is_remote(dls_medium *journal)
{
    return dls_redis_is_medium(journal) || dls_medium_kind_of(journal) == DLS_MEDIUM_JETSTREAM;
}

/* A remote journal's standby fences the journal itself when it takes
 * over: the handle must be one it can fence (docs/standby.md). */
static int check_remote(const dls_judge_settings *s, dls_where *w)
{
    if (s->journal_lock_path)
        return refuse(w, DLS_ERR_CONFIG,
                      "a standby on a Redis or JetStream journal takes over by the journal's "
                      "own fence: journal_lock_path is not supported with it");
    if (dls_redis_is_medium(s->journal) && dls_medium_mode(s->journal) != DLS_OPEN_APPEND)
        return refuse(w, DLS_ERR_CONFIG,
                      "a standby on a Redis journal needs it opened for append (it sets "
                      "<key>:writer to its own token when it takes over)");
    if (!dls_redis_is_medium(s->journal) && !dls_jetstream_is_exclusive(s->journal))
        return refuse(w, DLS_ERR_CONFIG,
                      "a standby on a JetStream journal needs it opened exclusive for append "
                      "(its first append names the last sequence it read)");
    if (!s->heartbeat_ns && s->takeover_after_ns == DLS_JUDGE_UNSET)
        return refuse(w, DLS_ERR_CONFIG,
                      "a standby on a remote journal needs heartbeat (the judge's) or "
                      "takeover_after: it takes over when no mark came for takeover_after");
    if (s->heartbeat_ns && s->takeover_after_ns != DLS_JUDGE_UNSET &&
        s->takeover_after_ns <= dls_add_sat(s->heartbeat_ns, s->cadence_ns))
        return refuse(w, DLS_ERR_CONFIG,
                      "takeover_after must be longer than heartbeat + cadence: a live "
                      "judge's marks may come that far apart");
    return 0;
}

static int check_standby(const dls_judge_settings *s, dls_where *w)
{
    if (is_remote(s->journal)) {
        int rc = check_remote(s, w);
        if (rc)
            return rc;
    }
    if (s->lost_ledger)
        return refuse(w, DLS_ERR_CONFIG,
                      "a standby judge follows an existing journal: lost_ledger is for the "
                      "judge that starts the new journal");
    return 0;
}

int js_assemble(dls_judge *j, const dls_judge_settings *s, dls_where *w)
{
    int rc = check_standby(s, w);
    if (rc)
        return rc;
    j->standby = true;
    j->takeover_sync = s->takeover_sync;
    if (s->journal_lock_path && !(j->lock_path = strdup(s->journal_lock_path)))
        return DLS_ERR_NOMEM;
    j->sb_remote = is_remote(s->journal);
    dls_where lw = {0};
    rc = j->sb_remote ? 0 : try_lock(j, &lw);
    if (rc && rc != DLS_ERR_JOURNAL_LOCKED) {
        if (w)
            *w = lw;
        return rc;
    }
    j->rp_starts = calloc(j->nmedia ? j->nmedia : 1, sizeof *j->rp_starts);
    if (!j->rp_starts)
        return DLS_ERR_NOMEM;
    if (s->checkpoint_dir && (rc = jc_restart(j, s, j->rp_starts, w)) != 0)
        return rc;
    if ((rc = jr_begin(j, j->rp_starts, w)) != 0 || (rc = jr_step(j, false, w)) != 0)
        return rc;
    return jr_check_inputs(j, w);
}

/* A standby that followed a journal opened for read appends through a
 * handle of its own: the same journal by its name, exclusive (the stream
 * writer lock for the judge's lifetime), the settings' sync. */
static int open_for_append(dls_judge *j)
{
    if (j->own_journal || dls_medium_mode(j->journal) == DLS_OPEN_APPEND)
        return 0;
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.sync = j->takeover_sync;
    ms.exclusive = true;
    ms.lock_timeout_ms = 0;
    dls_medium *m;
    int rc = dls_medium_open(&m, dls_medium_name(j->journal), DLS_OPEN_APPEND, &ms, NULL);
    if (rc)
        return rc;
    if (memcmp(dls_medium_id(m), j->journal_id, DLS_MEDIUM_ID_LEN) != 0) {
        dls_medium_del(m);
        return DLS_ERR_MEDIUM_ID; /* another file under the journal's name */
    }
    j->own_journal = m;
    return 0;
}

/* The standby becomes the judge: the journal read to its end, the replay
 * ended as a restart ends it, the restart's checks and cursors. */
static int take_over(dls_judge *j)
{
    dls_where w = {0};
    int rc = jr_step(j, true, &w);
    if (rc)
        return rc;
    if ((rc = open_for_append(j)) != 0)
        return rc;
    jr_end(j, true);
    if ((rc = jx_check_evidence(j, j->rp_starts, &w)) != 0 ||
        (rc = jx_open_cursors(j, j->rp_starts)) != 0)
        return rc;
    free(j->rp_starts);
    j->rp_starts = NULL;
    if (j->own_journal)
        j->journal = j->own_journal; /* read to its end: the handle to append to */
    j->standby = false;
    j->took_over = true;
    if (j->res)
        j->res->took_over = true;
    if (j->cb.took_over) {
        j->in_callback = true;
        j->cb.took_over(j->user, j->last_pass + 1);
        j->in_callback = false;
    }
    return 0;
}

/* A remote journal's writer is presumed abandoned once the newest reading
 * is takeover_after past the now of the newest mark on the same basis
 * (judge.md rev 5, Standby judges: readings, never the standby's clock). */
static bool abandoned(const dls_judge *j, uint64_t *end)
{
    uint64_t mark_now;
    if (!jr_newest_mark(j, &mark_now, end) || !j->now_valid)
        return false;
    return j->now >= dls_add_sat(mark_now, j->takeover_after);
}

/* The fence first, at the position read when the judge was presumed gone
 * (judge.md rev 5, Standby judges: it fences first, then reads the journal
 * to its end). Redis: <key>:writer set to this standby's token while
 * <key>:next is still that position; absent token: at once (a clean stop).
 * JetStream: the first append names that position's last sequence, so a
 * rival's takeover mark landing before the read to the end (read, not
 * fenced against) makes it fail: lost_race. 0 and *go when it may take
 * over; 0 and !*go to keep following (the writer is alive, or the server
 * cannot be reached now); another error is fatal. */
static int remote_fence(dls_judge *j, bool *go)
{
    uint64_t end = 0;
    bool gone = abandoned(j, &end);
    *go = false;
    if (!dls_redis_is_medium(j->journal)) {
        *go = gone;
        return gone ? dls_jetstream_expect_after(j->journal, end) : 0;
    }
    int rc = dls_redis_take_over(j->journal, end, gone, NULL);
    if (rc == DLS_ERR_JOURNAL_LOCKED || rc == DLS_ERR_TRANSPORT)
        return 0;
    *go = rc == 0;
    return rc;
}

int js_step(dls_judge *j)
{
    j->sb_steps++;
    uint64_t errors = j->sb_read_errors;
    int rc = jr_step(j, false, NULL);
    if (rc)
        return rc;
    if (j->sb_remote) {
        if (j->sb_read_errors != errors)
            return 0; /* a journal it cannot read now shows no mark: no guess from that */
        bool go;
        if ((rc = remote_fence(j, &go)) != 0 || !go)
            return rc;
        return take_over(j);
    }
    if (j->lock_fd < 0) {
        rc = try_lock(j, NULL);
        if (rc == DLS_ERR_JOURNAL_LOCKED)
            return 0; /* the owner is alive: keep following */
        if (rc)
            return rc;
    }
    /* The owner's lifetime lock and its journal's writer lock are two
     * locks, let go one after the other when its process ends or its
     * owner closes it (or the owner locks through journal_lock_path and
     * this standby does not): while the writer lock is held the writer is
     * not gone — keep following, the lifetime lock let go again. */
    rc = open_for_append(j);
    if (rc == DLS_ERR_LOCKED) {
        jj_unlock(j);
        return 0;
    }
    return rc ? rc : take_over(j);
}

int dls_judge_standby_status(dls_judge *j, dls_judge_standby_info *info)
{
    if (!j || !info)
        return DLS_ERR_INVAL;
    memset(info, 0, sizeof *info);
    info->standby = j->standby;
    info->took_over = j->took_over;
    info->holds_lock = j->lock_fd >= 0;
    /* a remote takeover whose first append another writer beat */
    info->lost_race = j->took_over && !j->started && j->jfailed && j->jcode == DLS_ERR_LOCKED;
    info->steps = j->sb_steps;
    info->read_errors = j->sb_read_errors;
    if (!j->standby) {
        info->journal_pass = j->last_pass;
        return 0;
    }
    return jr_behind(j, &info->applied, &info->journal_pass, &info->behind_records,
                     &info->behind_bytes, &info->behind_passes);
}
