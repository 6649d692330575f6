/* The judge's test harness, shared by tests/test_judge.c and
 * tests/test_checkpoint.c: a file journal, ring lease-fact media and a
 * ring tick stream, Ed25519 holders and grantor from fixed seeds, and a
 * reclaim callback that records its calls. The judge is made by h_open()
 * so a test can change h->s first.
 */
#ifndef DLS_TESTS_JUDGE_HARNESS_H
#define DLS_TESTS_JUDGE_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/judge.h"
#include "daolease/stream.h"

#define JH_MAXM 8    /* lease-fact media */
#define JH_MAXH 8    /* holders */
#define JH_CALLS 1024 /* reclaim calls recorded */

char *make_tmpdir(void);
void rm_rf(const char *dir);

/* An encoded str value (subjects and proposal ids). */
typedef struct val {
    uint8_t b[80];
    size_t n;
} val;

typedef struct reclaim_call {
    uint64_t lease;
    dls_cause cause;
    bool commit;
    uint64_t pass_now;
} reclaim_call;

typedef struct harness {
    char *dir;
    char journal_path[256];
    dls_secret *grantor;
    dls_keyring *kr;
    dls_medium *journal;
    dls_medium *tickm;
    dls_resolver *tickr;
    dls_medium *media[JH_MAXM];
    dls_resolver *res[JH_MAXM];
    size_t nmedia;
    dls_secret *holders[JH_MAXH];
    uint64_t seq[JH_MAXH][JH_MAXM];    /* proposal seq per holder and medium */
    uint64_t rseq[JH_MAXH][64];     /* renewal seq per holder and lease */
    dls_judge_settings s;
    dls_judge_tick_source tick;
    dls_judge_medium jm[JH_MAXM];
    dls_judge *j;
    reclaim_call calls[JH_CALLS];
    size_t ncalls;
    int answer;                  /* what reclaim answers */
    uint64_t refuse_lease;       /* reclaim of this lease answers FAILED */
    bool reenter;                /* reclaim calls back into the judge */
    int reenter_rc;
    uint64_t now;
    uint8_t hash_key[16];
    char lock_path[256];
    char ckpt_dir[256];
    void *user;                  /* the test file's own state (a journal wrapper) */
} harness;

val str_val(const char *s);

typedef struct jh_options {
    size_t ring_capacity;                                   /* 0: 4096 */
    dls_medium *(*wrap_journal)(harness *h, dls_medium *inner); /* NULL: none */
    bool lock;                                              /* set journal_lock_path */
    bool mac_holders;                                       /* holders' keys are MAC keys */
} jh_options;

/* A harness with `nmedia` ring lease-fact media and `nholders` holders
 * (o may be NULL: the defaults). */
void jh_init(harness *h, size_t nmedia, size_t nholders, const jh_options *o);
/* The reclaim callback the harness gives the judge (user: the harness). */
int h_reclaim(void *u, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit);
void h_keys(harness *h, size_t nholders, dls_key_kind holder_kind);
dls_medium *ring_with_id(uint8_t tag, size_t cap);
int h_try_open(harness *h, dls_where *w);
void h_open(harness *h);
void h_close_judge(harness *h);
void h_fini(harness *h);
/* Appends f to m, sealed by signer (NULL: bare). */
void append_fact(dls_medium *m, const dls_fact *f, const dls_secret *signer);
void h_tick(harness *h, uint64_t reading);
void h_propose_full(harness *h, size_t holder, size_t medium, const char *subject,
                    const char *prop, uint64_t ask_ms, const dls_mode *mode);
void h_propose(harness *h, size_t holder, size_t medium, const char *subject,
               const char *prop, uint64_t ask_ms);
void h_renew(harness *h, size_t holder, size_t medium, uint64_t lease);
void h_release(harness *h, size_t holder, size_t medium, uint64_t lease, bool commit);
dls_judge_pass_result h_pass(harness *h);
/* judge.md rev 5, Standby judges and takeover: holder 0 (medium 0) takes
 * "s-dead" (lease 1, 2 s) at reading 1 s, renews it every 250 ms step for 8
 * steps and dies; the steps go on for 10 s of readings. h->j (opened) is
 * the judge; with `standby` (a standby judge on the same journal, its
 * reclaim h_reclaim with user h) the judge is never stepped again from step
 * `kill_at` on (its process died) and the standby, stepped every step,
 * takes over. Answers the reading at which lease 1 was reclaimed (0:
 * never); asserts it was reclaimed at most once, by silence. */
uint64_t h_dead_holder_reclaimed_at(harness *h, dls_judge *standby, size_t kill_at);

#endif
