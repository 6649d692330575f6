/* daolease — holder internals shared by the holder sources and tests/test_holder.c
 * (not installed). The pure parts of the holder: the bound and the sizing
 * relations, testable without media. */
#ifndef DLS_HOLDER_INT_H
#define DLS_HOLDER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/holder.h"

/* The bound of holder.md: the earlier of
 *   (a) duration after the later of `observed` and (when `renewed`)
 *       `last_renewal` — the reading taken before the last ok append —, and
 *   (b) max after `observed` (when has_max).
 * Saturates at UINT64_MAX. may_act holds while now < bound. */
uint64_t dls_holder_bound_of(uint64_t observed, bool renewed, uint64_t last_renewal,
                             uint64_t duration_ns, bool has_max, uint64_t max_ns);

/* The reading at which the next renewal is due: interval after the later of
 * `observed` and (when `renewed`) `last_renewal`, saturating. */
uint64_t dls_holder_due_of(uint64_t observed, bool renewed, uint64_t last_renewal,
                           uint64_t interval_ns);

/* Writes `ns` as "<n> <unit>" in the coarsest v1 unit in which it is exact
 * ("3 s", "1600 ms", "0 ns") into buf[cap] (always NUL-terminated). */
void dls_holder_fmt_ns(char *buf, size_t cap, uint64_t ns);

/* The sizing relations of holder.md (dls_holder_sizing_check): 0, or
 * DLS_ERR_SIZING with the numbers written to buf[cap] (may be NULL) and
 * *relation the first that failed (1-5); DLS_ERR_INVAL when s is NULL. */
int hld_sizing_text(const dls_holder_settings *s, uint64_t duration_ns, uint64_t max_ns,
                    bool evicts, char *buf, size_t cap, int *relation);

/* ---- the holder's state, shared by holder.c, assembly.c and journal.c ---- */

#include <stdio.h>
#include <string.h>

#include "daolease/attrib.h"
#include "daolease/stream.h"
#include "vocab/heap.h"
#include "vocab/vec.h"

#define PROP_ID_LEN 16
#define PROP_ENC_LEN (2 + PROP_ID_LEN) /* bin 8 header + 16 bytes */
/* An envelope around a lease fact: the fact, the author, a sig, the keys. */
#define ENV_MAX (DLS_FACT_MAX + 256)

typedef struct hprop {
    uint64_t handle;
    uint64_t seq;
    uint8_t id[PROP_ENC_LEN]; /* the encoded proposal value, as written */
} hprop;

/* Ok renewals a pass mark has not confirmed yet, per lease: the newest are
 * kept (dropping the oldest only loses a confirmation: the safe side). */
#define HLD_PENDING_MAX 8

/* One record the step owes on the holder's medium (batch.c). */
typedef struct howed {
    uint32_t lease_ix; /* index in h->leases */
    bool release;      /* a retried release; else a renewal with `seq` */
    uint64_t seq;
} howed;

/* Room for one encoded renewal or release fact (they are under 64 bytes). */
#define HLD_FACT_SLOT 128

typedef struct hpend {
    uint64_t pos;     /* the renewal's position on the holder's medium */
    uint64_t reading; /* the reading taken before its append */
} hpend;

typedef struct hlease {
    uint64_t id;
    uint64_t proposal;
    dls_holder_lease_state state;
    uint8_t *subject;
    size_t subject_len;
    dls_mode mode;
    dls_duration duration, max;
    bool has_max;
    uint64_t interval;
    uint64_t observed;
    bool renewed;
    uint64_t last_renewal;
    uint64_t seq;
    bool failed;          /* the last renewal attempt failed ... */
    uint64_t failed_at;   /* ... at this reading */
    bool commit;
    /* holder.md rev 4, confirmed renewals: the bound extends only from these */
    bool confirmed;             /* a renewal was confirmed by a verified mark */
    uint64_t confirmed_reading; /* the reading before the newest confirmed one */
    uint64_t last_pos;          /* the position of the last ok renewal */
    hpend pend[HLD_PENDING_MAX];
    size_t npend;
    bool bound_unreported;      /* may_act found the bound: BOUND at the next step */
    bool orphan;                /* granted on a journal the holder left
                                   (dls_holder_rebind): not renewed, runs out */
    uint32_t hpos;              /* its schedule entry, UINT32_MAX when none (sched.c) */
} hlease;

struct dls_holder {
    long pid;               /* the process that made it (holder.md, "A holder
                               belongs to the process that made it") */
    char name[DLS_ID_MAX + 1];
    size_t name_len;
    char grantor[DLS_ID_MAX + 1];
    size_t grantor_len;
    char tick_party[DLS_ID_MAX + 1];
    size_t tick_party_len;
    const dls_secret *secret;
    dls_medium *medium;
    uint8_t medium_id[DLS_MEDIUM_ID_LEN];
    dls_cursor *journal;
    dls_resolver *jres;
    dls_cursor *ticks;
    dls_resolver *tres;
    dls_holder_settings s;
    dls_holder_callbacks cb;
    void *ud;

    bool has_now;
    uint64_t now;
    bool ticks_ended;
    bool journal_ended;
    uint64_t prop_seq;
    uint64_t next_handle;
    uint64_t max_seen;
    uint64_t own_floor; /* the largest lease id in its own renewals and releases
                           read back at assembly: leases of an earlier run */
    /* confirmation (holder.md rev 4) */
    bool has_confirmed_pos;
    uint64_t confirmed_pos;   /* own medium's drained position, newest verified mark */
    bool staged;              /* a mark's drained entry waits for the mark's end */
    uint64_t stage_pass, stage_d;

    hprop *props;
    size_t nprops;
    hlease *leases;
    size_t nleases;
    /* sched.c: the id index and the schedule of held leases */
    uint32_t *ix;         /* 2^ix_bits slots: 0 empty, else a lease's index + 1 */
    unsigned ix_bits;
    dls_heap sched;          /* held leases keyed by the reading they next need a step */
    uint32_t *popped;     /* max_leases: the leases a step took off the schedule */
    bool releasing;       /* a lease may be RELEASING (a release to retry) */

    dls_vec ev;           /* this step's dls_holder_event */
    uint64_t events_lost;

    /* step 4's writes (batch.c) */
    howed *owed;          /* max_leases */
    int *owed_rc;         /* max_leases */
    uint64_t *owed_pos;   /* max_leases */
    uint8_t *farena;      /* batch_max slots of HLD_FACT_SLOT */
    dls_bytes *facts;     /* batch_max */
    dls_vec out;          /* the step's records' bytes (uint8_t) */
    dls_vec roff;         /* each record's (offset, length) in out (2 size_t) */
    dls_vec recv, lenv;   /* the records as dls_medium_append_batch takes them */

    char msg[DLS_HOLDER_TEXT_MAX];
    uint8_t fact[DLS_FACT_MAX];
    uint8_t env[ENV_MAX];
};

static inline bool hld_bytes_is(dls_bytes b, const char *s, size_t n)
{
    return b.n == n && (n == 0 || memcmp(b.p, s, n) == 0);
}

/* Writes text into msg[cap] when msg is not NULL. */
static inline void hld_say(char *msg, size_t cap, const char *text)
{
    if (msg && cap > 0)
        snprintf(msg, cap, "%s", text);
}

/* Events of the current step (holder.c). */
dls_holder_event *hld_event_push(dls_holder *h, dls_holder_event_kind kind,
                                 uint64_t lease, uint64_t proposal);
void hld_event_text(dls_holder_event *e, const void *p, size_t n);

/* The tracked leases (sched.c): found by id through the index; a lease
 * added at leases[ix] is indexed with hld_index_add; dropping one moves the
 * last into its place. */
hlease *hld_find_lease(dls_holder *h, uint64_t id);
const hlease *hld_find_lease_c(const dls_holder *h, uint64_t id);
void hld_index_add(dls_holder *h, uint32_t ix);
void hld_drop_lease(dls_holder *h, hlease *l);

/* The schedule (sched.c). hld_sched_update re-keys a lease after any change
 * to its state or timing (removing it when it is no longer held);
 * hld_sched_pop_due takes every lease whose key is at or before now off the
 * schedule into h->popped (lease order) and returns how many; each must be
 * given back with hld_sched_update. hld_sched_next: the reading at which the
 * next step is needed (dls_holder_result.next_reading). */
int hld_sched_init(dls_holder *h);
void hld_sched_fini(dls_holder *h);
uint64_t hld_lease_next(const hlease *l);
void hld_sched_update(dls_holder *h, hlease *l);
size_t hld_sched_pop_due(dls_holder *h);
bool hld_sched_next(const dls_holder *h, uint64_t *reading);

/* The outstanding proposals (holder.c). */
hprop *hld_find_prop(dls_holder *h, dls_bytes enc);
void hld_drop_prop(dls_holder *h, hprop *p);
uint64_t hld_lease_bound(const hlease *l);

/* Step 3: drains the grantor's journal (journal.c). */
void hld_drain_journal(dls_holder *h, dls_holder_result *r);

/* Encodes f, seals it when the holder has a secret, appends it (holder.c). */
int hld_append_fact(dls_holder *h, const dls_fact *f, uint64_t *pos);

/* Step 4's writes (batch.c): allocate / free the buffers; append owed[0..n)
 * in one append when batching (settings.batch_max >= 2), else one each;
 * rcs[k] and pos[k] the outcome of each; returns the number of appends
 * made. */
int hld_batch_init(dls_holder *h);
void hld_batch_fini(dls_holder *h);
int hld_write_owed(dls_holder *h, const howed *owed, size_t n, int *rcs, uint64_t *pos);

/* The lease is lost for good (holder.md rev 4): AT_BOUND, a BOUND event
 * whose text says why (holder.c). */
void hld_lose(dls_holder *h, hlease *l, const char *why);

/* 0 in the process that made the holder; else DLS_ERR_STATE with h->msg
 * saying whose it is (holder.md, "A holder belongs to the process that
 * made it"). */
int hld_own_process(dls_holder *h);

#endif
