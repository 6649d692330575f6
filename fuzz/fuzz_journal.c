/* Fuzz target: journal replay, in both of its places — the audit
 * (dls_audit_run) and the judge's restart (dls_judge_new on a journal that
 * has records).
 *
 * Signatures would stop random bytes at the door, so the target signs what
 * the fuzzer writes. The input is
 *
 *   byte 0   flags:
 *              bits 0-1  how the chosen payloads are spoiled: 0 none,
 *                        1 appended bare (unsigned), 2 one signature byte
 *                        flipped, 3 signed by worker-east instead of the
 *                        grantor
 *              bits 2-4  k: payload i is spoiled when i % (k + 1) == k
 *              bit 5     the judge's ticks name another reading basis
 *              bit 6     the reclaim procedure answers "not yet"
 *              bit 7     no lease-fact media are given (audit and judge)
 *   byte 1   first tick: the last valid mark's now + byte * 100 ms
 *   byte 2   second tick: byte * 100 ms later (0: one pass only)
 *   then     payloads, each a 2-byte little-endian length and that many
 *            bytes (a short last one is cut to what is there); at most
 *            FJ_PAYLOADS_MAX are used.
 *
 * Each payload is the fact of one journal record: sealed as an Ed25519
 * envelope by the grantor `arbiter` (the conformance vectors' seed) for the
 * journal's medium id (the vector run's), and appended to a file journal
 * (the judge refuses journals that do not retain everything, or that sync
 * nothing) made afresh for each input in one private directory of the
 * process, on tmpfs when /dev/shm exists. The lease-fact media are rings
 * holding the vector run's holder facts (tests/vectors/run/worker-east.dls
 * and worker-west.dls, re-signed), built once, so a corpus entry made from
 * the vector journal's facts replays the whole clean run; after them come
 * one record of each kind a replay counts and ignores (forged, wrong
 * author, replayed seq, misplaced tick, defective, stale release).
 *
 * Then (1) the audit runs over the journal and its result is read (lease
 * table, summary, SVG into a sink — under libFuzzer for one input in
 * FJ_SVG_EVERY, in the corpus replay for every one) and freed; (2) a judge
 * is made on the journal — it replays it or refuses with DLS_ERR_JOURNAL —
 * and, when made, runs one or two passes on ticks after the journal's last
 * now, then is deleted. Anything else than those answers aborts, as does
 * any crash, leak or out-of-bounds access the sanitizers see.
 *
 * Speed (docs/fuzzing.md has the figures).
 *   - Ed25519 is memoized: the target defines libsodium's
 *     crypto_sign_detached and crypto_sign_verify_detached, so the
 *     library's calls bind here; each answer is computed once by the real
 *     function (dlsym(RTLD_NEXT)) and kept in a direct-mapped table keyed by
 *     a BLAKE2b digest of every input byte (key, signature, message). The
 *     functions are pure, so every answer is libsodium's; only repeats are
 *     saved. A signature the target makes is entered as verifying (its own
 *     public key, libsodium's deterministic Ed25519), so the audit does not
 *     verify a fresh record again; the corpus replay checks that claim with
 *     the real function on every signature it makes.
 *   - libFuzzer's entropic schedule is bounded (LLVMFuzzerInitialize): with
 *     its defaults, UpdateFeatureFrequency and AddRareFeature took 57-67 %
 *     of the process's CPU (perf), more than the target itself.
 *   - One directory per process instead of one per input, removed at
 *     exit (or, when libFuzzer ended the process without exit handlers, at
 *     the next start); the journal file is created once and, for each input, cut back
 *     to its header and opened for append. The SVG is rendered for one input
 *     in FJ_SVG_EVERY (8) under libFuzzer.
 *   - Not changed, because the judge or the test needs them: the journal is
 *     a file (the judge takes no ring journal) with sync data (the judge
 *     refuses sync none; on tmpfs fdatasync does no I/O), empty at each
 *     input's start; the audit and the judge both run on every input.
 * Old (3a78724) and new side by side, same flags and corpus, 60 s: 45 -> 223
 * exec/s on the loaded machine (4.8x per CPU second), 383 -> 776 exec/s
 * (2.0x) on a quieter one where the old made 23,000 executions and its
 * entropic cost had faded; with -entropic=0 given to both, 1.37x. What
 * is left, with ASan, UBSan and coverage, is the library's own work: ~0.3 ms
 * an input for an empty journal (the judge's restart and the audit setting
 * up keyrings, resolvers, cursors and buffers), ~0.05 ms a record more.
 * The journal takes at most FJ_PAYLOADS_MAX (24)
 * payloads, enough for every corpus entry (the longest has 15).
 *   - Payloads are decoded as marks only from the last one back to the
 *     first valid mark (build_journal), not each as it is appended.
 *   - The fuzz build compiles with -fno-sanitize-recover=undefined
 *     (meson.build): the same UBSan checks, a report still ends the run
 *     (as halt_on_error=1 did), but coverage no longer instruments the
 *     blocks each check split: 35,713 -> 14,806 counters, 1.2-1.35x
 *     executions per CPU second; cov/ft figures before and after are not
 *     comparable.
 * Why not the 10x (docs/fuzzing.md, "Third round", has the perf
 * figures): an input with an empty journal costs ~300 us before libFuzzer
 * looks at it, 3x the 100 us that 10,000 exec/s allow, and the library's
 * own instructions (self time) are 13 % of a fuzzing run's CPU; the rest is
 * libFuzzer (21 %), the ASan/UBSan runtime (18.5 %), trace-cmp callbacks
 * (18 %), the kernel (15 %; fdatasync 0.09 %), libsodium and libc (before
 * the -fno-sanitize-recover change). Built with no sanitizer at all the
 * target is 2.5x faster, not 10x. Measured and not taken: a smaller ASan
 * quarantine, shorter malloc stacks, no malloc fill (no gain above noise),
 * a coverage allowlist (unreached code costs nothing in libFuzzer's scan),
 * fewer payloads or a lower -max_len (the seeds that replay the whole
 * vector run would be cut). Side by side with 0bc258a, from the seeds,
 * both changes: 1.17-1.25x executions per CPU second over 60 s, 1.21x over
 * a 600 s campaign (523,305 against 442,532 executions) -- ~1.6-1.7k per
 * CPU second, not the 10k. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/audit.h"
#include "daolease/judge.h"
#include "daolease/mark.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FJ_PAYLOADS_MAX 24
#define FJ_HEADER 3
#define FJ_SVG_EVERY 8 /* under libFuzzer: the SVG of one input in 8 */
#define FJ_MS DLS_NS_PER_MS
#define FJ_BASIS "boot-5b1e07c4/CLOCK_MONOTONIC"

/* Under libFuzzer (LLVMFuzzerInitialize ran); false in the corpus replay. */
static bool fj_fuzzing;

/* ---- memoized Ed25519 ----------------------------------------------------------- */

#define FJ_MEMO_SLOTS 16384 /* a power of two */

typedef struct fj_memo {
    uint8_t key[16];  /* BLAKE2b-128 of the call's inputs */
    uint8_t used;
    uint8_t ok;       /* verify: libsodium's answer was 0 */
    uint8_t sig[crypto_sign_BYTES];
} fj_memo;

static fj_memo memo_sign[FJ_MEMO_SLOTS], memo_verify[FJ_MEMO_SLOTS];

typedef int (*fj_sign_fn)(unsigned char *, unsigned long long *, const unsigned char *,
                          unsigned long long, const unsigned char *);
typedef int (*fj_verify_fn)(const unsigned char *, const unsigned char *, unsigned long long,
                            const unsigned char *);

static void *real_fn(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "fuzz_journal: %s not found\n", name);
        abort();
    }
    return f;
}

/* The digest of (a, b, m) and its slot. */
static fj_memo *memo_slot(fj_memo *table, const uint8_t *a, size_t an, const uint8_t *b,
                          size_t bn, const uint8_t *m, size_t mn, uint8_t key[16])
{
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, 16);
    crypto_generichash_update(&st, a, an);
    if (bn)
        crypto_generichash_update(&st, b, bn);
    crypto_generichash_update(&st, m, mn);
    crypto_generichash_final(&st, key, 16);
    uint32_t h = (uint32_t)key[0] | (uint32_t)key[1] << 8 | (uint32_t)key[2] << 16;
    return &table[h & (FJ_MEMO_SLOTS - 1)];
}

static fj_verify_fn fj_real_verify(void)
{
    static fj_verify_fn real;
    if (!real)
        real = (fj_verify_fn)real_fn("crypto_sign_verify_detached");
    return real;
}

int crypto_sign_detached(unsigned char *sig, unsigned long long *siglen_p, const unsigned char *m,
                         unsigned long long mlen, const unsigned char *sk)
{
    static fj_sign_fn real;
    if (!real)
        real = (fj_sign_fn)real_fn("crypto_sign_detached");
    uint8_t key[16];
    fj_memo *e = memo_slot(memo_sign, sk, crypto_sign_SECRETKEYBYTES, NULL, 0, m, mlen, key);
    if (e->used && memcmp(e->key, key, 16) == 0) {
        memcpy(sig, e->sig, crypto_sign_BYTES);
        if (siglen_p)
            *siglen_p = crypto_sign_BYTES;
        return 0;
    }
    int rc = real(sig, siglen_p, m, mlen, sk);
    if (rc == 0) {
        memcpy(e->key, key, 16);
        memcpy(e->sig, sig, crypto_sign_BYTES);
        e->used = 1;
        /* the verify answer for this signature is known: libsodium's own
         * signature under the secret key's public half verifies (Ed25519 is
         * deterministic, its S canonical, the public keys here are real) */
        uint8_t pk[crypto_sign_PUBLICKEYBYTES];
        crypto_sign_ed25519_sk_to_pk(pk, sk);
        if (!fj_fuzzing && fj_real_verify()(sig, m, mlen, pk) != 0)
            abort(); /* the replay test checks that claim on every corpus entry */
        fj_memo *v = memo_slot(memo_verify, pk, sizeof pk, sig, crypto_sign_BYTES, m, mlen, key);
        memcpy(v->key, key, 16);
        v->ok = 1;
        v->used = 1;
    }
    return rc;
}

int crypto_sign_verify_detached(const unsigned char *sig, const unsigned char *m,
                                unsigned long long mlen, const unsigned char *pk)
{
    fj_verify_fn real = fj_real_verify();
    uint8_t key[16];
    fj_memo *e = memo_slot(memo_verify, pk, crypto_sign_PUBLICKEYBYTES, sig, crypto_sign_BYTES,
                           m, mlen, key);
    if (e->used && memcmp(e->key, key, 16) == 0)
        return e->ok ? 0 : -1;
    int rc = real(sig, m, mlen, pk);
    memcpy(e->key, key, 16);
    e->ok = rc == 0;
    e->used = 1;
    return rc;
}

/* The vector run's medium ids: the journal, worker-east's and worker-west's. */
static const uint8_t journal_id[16] = {0x55, 0xc0, 0x52, 0x52, 0xed, 0x97, 0x25, 0x4c,
                                       0x32, 0xcc, 0x5e, 0xbe, 0x0f, 0x3b, 0xdb, 0xdb};
static const uint8_t east_id[16] = {0x08, 0x82, 0x6a, 0x3e, 0x58, 0x76, 0x6d, 0x1d,
                                    0x84, 0x93, 0x83, 0xd1, 0x0d, 0xfd, 0x16, 0x4c};
static const uint8_t west_id[16] = {0x76, 0xa7, 0xed, 0x3b, 0x57, 0x77, 0x25, 0x32,
                                    0x5c, 0x5c, 0x9b, 0x59, 0xf3, 0x59, 0x85, 0xe7};

/* Seeds: arbiter's and worker-east's from tests/vectors/envelopes.jsonl;
 * worker-west's is this target's own. */
static const uint8_t arbiter_seed[32] = {
    0x79, 0xa5, 0x9f, 0xa4, 0xed, 0xf9, 0x05, 0x84, 0xf3, 0x94, 0xc9, 0x9b, 0x90, 0x45, 0x71, 0xb5,
    0xa1, 0x6c, 0x27, 0xa3, 0xbd, 0x5c, 0xe3, 0x69, 0x14, 0x3a, 0x14, 0x2d, 0x00, 0x36, 0x64, 0xd3};
static const uint8_t east_seed[32] = {
    0x4c, 0x60, 0x72, 0x6d, 0xa9, 0x0c, 0x01, 0x5d, 0x2b, 0x03, 0x74, 0x23, 0x89, 0xd1, 0x78, 0xb7,
    0xc5, 0xe4, 0xb3, 0xd4, 0xc2, 0x4e, 0xa4, 0xc7, 0x28, 0x09, 0x89, 0x78, 0x7e, 0xae, 0x9f, 0xd5};
static const uint8_t west_seed[32] = {
    0x77, 0x65, 0x73, 0x74, 0x77, 0x65, 0x73, 0x74, 0x77, 0x65, 0x73, 0x74, 0x77, 0x65, 0x73, 0x74,
    0x77, 0x65, 0x73, 0x74, 0x77, 0x65, 0x73, 0x74, 0x77, 0x65, 0x73, 0x74, 0x77, 0x65, 0x73, 0x74};

/* The proposal ids of the vector run. */
static const uint8_t east_prop1[16] = {0x99, 0xec, 0x82, 0x46, 0x85, 0x02, 0xd8, 0x8b,
                                       0x9c, 0xe8, 0xd5, 0x35, 0x24, 0x56, 0xfe, 0x6d};
static const uint8_t east_prop2[16] = {0xf1, 0xea, 0x21, 0x65, 0xf5, 0xb2, 0xec, 0x21,
                                       0xd8, 0x52, 0xf6, 0x91, 0x0a, 0xf9, 0xcb, 0x99};
/* ["shard", 7] */
static const uint8_t shard7[8] = {0x92, 0xa5, 's', 'h', 'a', 'r', 'd', 0x07};

static const uint8_t tick_id[16] = {0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee,
                                    0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee};
static const uint8_t hash_key[16] = {0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a,
                                     0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a, 0x5a};

static struct {
    bool ready;
    dls_secret *arbiter, *east, *west;
    dls_keyring *kr;
    dls_medium *media[2];
    dls_resolver *res[2];
    dls_resolver *tick_res;
    char dir[256];
    char journal_path[300];
} G;

/* A fixed buffer for one envelope (the largest fact fits). */
static uint8_t env_buf[DLS_ENVELOPE_FACT_MAX + DLS_ENVELOPE_OVERHEAD_MAX];

static void must(int rc)
{
    if (rc) {
        fprintf(stderr, "fuzz_journal: setup failed: %s\n", dls_strerror(rc));
        abort();
    }
}

/* Appends fact bytes p/n sealed by signer (NULL: bare), the signature's
 * last byte flipped when `forge`. */
static void append_raw(dls_medium *m, const uint8_t *p, size_t n, const dls_secret *signer,
                       bool forge)
{
    size_t en;
    if (!signer) {
        must(dls_medium_append(m, p, n, NULL, NULL));
        return;
    }
    must(dls_envelope_seal(signer, dls_medium_id(m), p, n, env_buf, sizeof env_buf, &en));
    if (forge)
        env_buf[en - 1] ^= 0x01;
    must(dls_medium_append(m, env_buf, en, NULL, NULL));
}

static void append_fact(dls_medium *m, const dls_fact *f, const dls_secret *signer, bool forge)
{
    uint8_t fact[DLS_FACT_MAX];
    size_t n;
    must(dls_fact_encode(f, fact, sizeof fact, &n));
    append_raw(m, fact, n, signer, forge);
}

static void append_signed(dls_medium *m, const dls_fact *f, const dls_secret *signer)
{
    append_fact(m, f, signer, false);
}

static void add_proposal(dls_medium *m, const dls_secret *who, dls_bytes prop, dls_bytes subject,
                         uint64_t seq, dls_unit unit, uint64_t ask)
{
    dls_fact f;
    dls_fact_proposal(&f, prop, subject, seq);
    if (ask) {
        must(dls_duration_make(&f.duration, unit, ask));
        f.keys |= DLS_K_DURATION;
    }
    append_signed(m, &f, who);
}

static void add_renewal(dls_medium *m, const dls_secret *who, uint64_t lease, uint64_t seq)
{
    dls_fact f;
    dls_fact_renewal(&f, lease, seq);
    append_signed(m, &f, who);
}

static dls_medium *ring(const uint8_t id[16])
{
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.id = id;
    ms.ring_capacity = 64;
    dls_medium *m;
    must(dls_ring_new(&m, &ms));
    return m;
}

/* After the vector run's records: one record of each kind the replays
 * count and ignore (drained by the judge's passes, and by the audit when a
 * mark's drained position covers them). */
static void add_noise(dls_medium *e, dls_medium *w)
{
    /* {"dao.lease/event": "renewal", "dao.lease/lease": 3}: no seq (rule 3) */
    static const uint8_t no_seq[] = {0x82, 0xaf, 'd', 'a', 'o', '.', 'l', 'e', 'a', 's', 'e', '/',
                                     'e', 'v', 'e', 'n', 't', 0xa7, 'r', 'e', 'n', 'e', 'w', 'a',
                                     'l', 0xaf, 'd', 'a', 'o', '.', 'l', 'e', 'a', 's', 'e', '/',
                                     'l', 'e', 'a', 's', 'e', 0x03};
    dls_fact f;
    dls_fact_renewal(&f, 3, 3);
    append_fact(e, &f, NULL, false);   /* bare on a signed medium: forged */
    append_fact(e, &f, G.west, false); /* not the lease's holder */
    append_fact(e, &f, G.east, true);  /* signature does not verify */
    dls_fact_renewal(&f, 3, 2);
    append_fact(e, &f, G.east, false); /* seq replayed */
    dls_duration d;
    must(dls_duration_make(&d, DLS_UNIT_S, 9999));
    dls_fact_tick(&f, d);
    append_fact(e, &f, G.east, false); /* a tick on a lease-fact medium */
    append_raw(e, no_seq, sizeof no_seq, G.east, false);
    dls_fact_renewal(&f, 3, 3);
    append_fact(e, &f, G.east, false); /* counted */
    dls_fact_release(&f, 2, false);
    append_fact(w, &f, G.west, false); /* a lease already lapsed */
}

/* The holder media of the vector run (tests/vectors/README.md, run/). */
static void fill_media(void)
{
    uint8_t p1[18], p2[18], p3[16], inv[16];
    size_t n1, n2, n3, ni;
    must(dls_value_bin(p1, sizeof p1, east_prop1, 16, &n1));
    must(dls_value_bin(p2, sizeof p2, east_prop2, 16, &n2));
    must(dls_value_str(p3, sizeof p3, "west-0001", 9, &n3));
    must(dls_value_str(inv, sizeof inv, "queue/invoices", 14, &ni));
    dls_bytes shard = {shard7, sizeof shard7};
    dls_medium *e = G.media[0], *w = G.media[1];
    add_proposal(e, G.east, (dls_bytes){p1, n1}, (dls_bytes){inv, ni}, 1, DLS_UNIT_S, 4);
    add_renewal(e, G.east, 1, 1);
    add_renewal(e, G.east, 1, 2);
    add_proposal(e, G.east, (dls_bytes){p2, n2}, shard, 2, DLS_UNIT_MS, 2500);
    add_renewal(e, G.east, 1, 3);
    add_renewal(e, G.east, 3, 1);
    dls_fact f;
    dls_fact_release(&f, 1, true);
    append_signed(e, &f, G.east);
    add_renewal(e, G.east, 3, 2);
    add_proposal(w, G.west, (dls_bytes){p3, n3}, shard, 1, DLS_UNIT_S, 0);
    add_renewal(w, G.west, 2, 1);
    add_noise(e, w);
}

static void journal_settings(dls_medium_settings *ms)
{
    dls_medium_settings_default(ms);
    ms->id = journal_id;
    ms->sync = DLS_SYNC_DATA;
}

static void remove_dir(void)
{
    unlink(G.journal_path);
    rmdir(G.dir);
}

/* libFuzzer ends a process without its atexit handlers on a find, a
 * timeout or an interrupt (the campaign script stops targets so): the
 * directories such processes left, named by their process id, are removed
 * at the next start. */
#define FJ_DIR_PREFIX "dls-fuzz-journal-"

static void remove_stale(const char *base)
{
    DIR *d = opendir(base);
    if (!d)
        return;
    struct dirent *e;
    size_t np = strlen(FJ_DIR_PREFIX);
    while ((e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, FJ_DIR_PREFIX, np) != 0)
            continue;
        long pid = strtol(e->d_name + np, &end, 10);
        if (end == e->d_name + np || *end != '-' || pid <= 0 || (pid_t)pid == getpid() ||
            kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* not ours, or its process is still there */
        char path[512];
        snprintf(path, sizeof path, "%s/%s/journal.dls", base, e->d_name);
        unlink(path);
        snprintf(path, sizeof path, "%s/%s", base, e->d_name);
        rmdir(path);
    }
    closedir(d);
}

static void init(void)
{
    if (G.ready)
        return;
    must(dls_secret_from_seed(&G.arbiter, "arbiter", DLS_KEY_ED25519, arbiter_seed));
    must(dls_secret_from_seed(&G.east, "worker-east", DLS_KEY_ED25519, east_seed));
    must(dls_secret_from_seed(&G.west, "worker-west", DLS_KEY_ED25519, west_seed));
    must(dls_keyring_new(&G.kr));
    const dls_secret *all[3] = {G.arbiter, G.east, G.west};
    for (int i = 0; i < 3; i++) {
        const char *name = dls_secret_name(all[i]);
        must(dls_keyring_add(G.kr, (const uint8_t *)name, strlen(name), DLS_KEY_ED25519,
                             dls_secret_public(all[i])));
    }
    G.media[0] = ring(east_id);
    G.media[1] = ring(west_id);
    must(dls_resolver_new_signed(&G.res[0], east_id, G.kr));
    must(dls_resolver_new_signed(&G.res[1], west_id, G.kr));
    must(dls_resolver_new_medium(&G.tick_res, tick_id, "ticker", NULL));
    fill_media();

    /* one private directory for the process, on tmpfs when /dev/shm
     * exists, removed at exit */
    struct stat st;
    const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : NULL;
    if (!base)
        base = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
    remove_stale(base);
    snprintf(G.dir, sizeof G.dir, "%s/" FJ_DIR_PREFIX "%ld-XXXXXX", base, (long)getpid());
    if (!mkdtemp(G.dir)) {
        fprintf(stderr, "fuzz_journal: mkdtemp %s: %s\n", G.dir, strerror(errno));
        abort();
    }
    snprintf(G.journal_path, sizeof G.journal_path, "%s/journal.dls", G.dir);
    atexit(remove_dir);
    dls_medium_settings ms;
    journal_settings(&ms);
    dls_medium *j;
    must(dls_medium_create(&j, DLS_MEDIUM_FILE, G.journal_path, &ms, NULL));
    dls_medium_del(j);
    G.ready = true;
}

/* ---- building the journal --------------------------------------------------- */

typedef struct fj_input {
    uint8_t flags;
    uint8_t step1, step2;
    const uint8_t *p; /* payloads */
    size_t n;
} fj_input;

/* What the journal says about time: the last valid mark's now and basis.
 * The payloads appended signed and unspoiled are listed while the journal
 * is built, and only the last ones are decoded, from the end back to the
 * first valid mark (the only one the ticks need). */
typedef struct fj_time {
    bool have;
    uint64_t now;
    char basis[256];
    size_t nsigned;
    const uint8_t *sp[FJ_PAYLOADS_MAX];
    size_t sn[FJ_PAYLOADS_MAX];
} fj_time;

static bool spoiled(const fj_input *in, size_t i)
{
    unsigned k = (in->flags >> 2) & 7u;
    return (in->flags & 3u) != 0 && i % (k + 1) == k;
}

static bool note_mark(fj_time *t, const uint8_t *p, size_t n)
{
    dls_mark_view v;
    if (dls_mark_classify(p, n) != DLS_MARK_REC_MARK || dls_mark_decode(p, n, &v, NULL) ||
        v.continued)
        return false;
    t->have = true;
    t->now = v.now.ns;
    size_t b = v.basis.n < sizeof t->basis - 1 ? v.basis.n : 0;
    memcpy(t->basis, v.basis.p, b);
    t->basis[b] = 0;
    return true;
}

/* Appends payload i (fact bytes p/n) as the input says; append errors (a
 * payload that is no record, a sealed journal) are part of the game. */
static void append_payload(dls_medium *j, const fj_input *in, size_t i, const uint8_t *p,
                           size_t n, fj_time *t)
{
    unsigned how = spoiled(in, i) ? in->flags & 3u : 0;
    if (how == 1) {
        (void)dls_medium_append(j, p, n, NULL, NULL);
        return;
    }
    const dls_secret *signer = how == 3 ? G.east : G.arbiter;
    size_t en;
    if (dls_envelope_seal(signer, journal_id, p, n, env_buf, sizeof env_buf, &en))
        return; /* too big for an envelope */
    if (how == 2)
        env_buf[en - 1 - (i % 64)] ^= 0x01; /* the signature is the envelope's tail */
    if (dls_medium_append(j, env_buf, en, NULL, NULL) == 0 && how == 0) {
        t->sp[t->nsigned] = p;
        t->sn[t->nsigned++] = n;
    }
}

/* The journal file is created once (init) and cut back to its header for
 * each input, then opened for append: an empty journal of the same id,
 * without the create's temporary file, link and directory sync. */
static dls_medium *build_journal(const fj_input *in, fj_time *t)
{
    dls_medium_settings ms;
    journal_settings(&ms);
    if (truncate(G.journal_path, DLS_STREAM_HEADER_LEN) != 0) {
        fprintf(stderr, "fuzz_journal: truncate %s: %s\n", G.journal_path, strerror(errno));
        abort();
    }
    dls_medium *j;
    must(dls_medium_open(&j, G.journal_path, DLS_OPEN_APPEND, &ms, NULL));
    const uint8_t *p = in->p;
    size_t left = in->n;
    for (size_t i = 0; i < FJ_PAYLOADS_MAX && left >= 2; i++) {
        size_t len = (size_t)p[0] | (size_t)p[1] << 8;
        p += 2;
        left -= 2;
        if (len > left)
            len = left;
        append_payload(j, in, i, p, len, t);
        p += len;
        left -= len;
    }
    for (size_t i = t->nsigned; i-- > 0;)
        if (note_mark(t, t->sp[i], t->sn[i]))
            break;
    return j;
}

/* ---- (1) the audit ------------------------------------------------------------- */

static int sink(void *user, const char *p, size_t n)
{
    size_t *total = user;
    if (n && !p)
        abort();
    *total += n;
    return 0;
}

static void run_audit(dls_medium *journal, const dls_audit_medium *media, size_t nmedia, bool svg)
{
    dls_audit *a = NULL;
    dls_where w;
    memset(&w, 0, sizeof w);
    int rc = dls_audit_run(&a, NULL, journal, "arbiter", G.kr, media, nmedia, &w);
    if (rc == DLS_ERR_NOMEM)
        return;
    if (rc || !a) {
        fprintf(stderr, "fuzz_journal: audit: %s (%s)\n", dls_strerror(rc),
                w.reason ? w.reason : "");
        abort();
    }
    const dls_audit_summary *s = dls_audit_summary_of(a);
    int status = dls_audit_exit_status(a);
    if (!s || (status != 0 && status != 1 && status != 3))
        abort();
    size_t count = dls_audit_lease_count(a);
    uint64_t prev = 0;
    for (size_t i = 0; i < count; i++) {
        const dls_audit_lease *l = dls_audit_lease_at(a, i);
        if (!l || (i && l->lease <= prev) || !dls_audit_verdict_name(l->verdict))
            abort(); /* ascending lease ids, one entry each */
        prev = l->lease;
    }
    if (dls_audit_lease_at(a, count))
        abort();
    if (svg) {
        size_t total = 0;
        rc = dls_audit_svg(a, NULL, sink, &total);
        if (rc && rc != DLS_ERR_NOMEM)
            abort();
    }
    dls_audit_del(a);
}

/* ---- (2) the judge's restart ------------------------------------------------- */

static int reclaim(void *user, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    const fj_input *in = user;
    (void)subject, (void)lease, (void)cause, (void)commit;
    return in->flags & 0x40 ? DLS_RECLAIM_NOT_YET : DLS_RECLAIM_DONE;
}

static void tick(dls_medium *m, uint64_t reading)
{
    dls_fact f;
    dls_duration d;
    must(dls_duration_make(&d, DLS_UNIT_NS, reading > DLS_NS_MAX ? DLS_NS_MAX : reading));
    dls_fact_tick(&f, d);
    uint8_t fact[DLS_FACT_MAX];
    size_t n;
    must(dls_fact_encode(&f, fact, sizeof fact, &n));
    must(dls_medium_append(m, fact, n, NULL, NULL));
}

static void run_judge(dls_medium *journal, const fj_input *in, const fj_time *t,
                      const dls_judge_medium *media, size_t nmedia)
{
    dls_medium *tickm = ring(tick_id);
    const char *basis = in->flags & 0x20 ? "fuzz-other-basis" : t->have && t->basis[0] ? t->basis
                                                                                      : FJ_BASIS;
    dls_judge_tick_source ts = {tickm, G.tick_res, "ticker", basis, 0};
    dls_judge_settings s;
    dls_judge_settings_default(&s);
    s.grantor = G.arbiter;
    s.journal = journal;
    s.ticks = &ts;
    s.nticks = 1;
    s.media = media;
    s.nmedia = nmedia;
    s.tolerance_ns = 250 * FJ_MS;
    s.cadence_ns = 1000 * FJ_MS;
    must(dls_duration_make(&s.default_duration, DLS_UNIT_S, 3));
    s.hash_key = hash_key;
    dls_judge_callbacks cb = {.reclaim = reclaim};
    dls_judge *j = NULL;
    dls_where w;
    memset(&w, 0, sizeof w);
    int rc = dls_judge_new(&j, &s, &cb, (void *)in, &w);
    if (rc == 0) {
        uint64_t now = (t->have ? t->now : 0) + in->step1 * 100 * FJ_MS;
        tick(tickm, now);
        dls_judge_pass_result r;
        rc = dls_judge_pass(j, &r);
        if (rc == 0 && in->step2) {
            tick(tickm, now + in->step2 * 100 * FJ_MS);
            rc = dls_judge_pass(j, &r);
        }
        if (rc && rc != DLS_ERR_NOMEM && rc != DLS_ERR_FATAL_NOMEM) {
            fprintf(stderr, "fuzz_journal: pass: %s\n", dls_strerror(rc));
            abort();
        }
        dls_judge_del(j);
    } else if (rc != DLS_ERR_JOURNAL && rc != DLS_ERR_NOMEM &&
               rc != DLS_ERR_JOURNAL_SHORT) { /* judge.md Restart: evidence above the journal */
        fprintf(stderr, "fuzz_journal: judge: %s (%s)\n", dls_strerror(rc),
                w.reason ? w.reason : "");
        abort();
    }
    dls_medium_del(tickm);
}

/* libFuzzer calls this before it reads its flags. Unless the command line
 * sets any -entropic* flag itself, the entropic schedule's rare-feature
 * bookkeeping is bounded (FJ_ENTROPIC_FLAGS): with the defaults, libFuzzer
 * 14 compares every feature an input covers against its whole list of
 * rare features (std::find in InputCorpus::UpdateFeatureFrequency), and
 * that list stays in the thousands while this target's ~25,000 features are
 * young — 57-67 % of the process's CPU time (perf). */
#define FJ_ENTROPIC_FLAGS "-entropic_feature_frequency_threshold=8", \
                          "-entropic_number_of_rarest_features=50"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static const char *extra[] = {FJ_ENTROPIC_FLAGS};
    static char *args[256];
    fj_fuzzing = true;
    int n = *argc;
    for (int i = 1; i < n; i++)
        if (strncmp((*argv)[i], "-entropic", 9) == 0)
            return 0;
    size_t k = sizeof extra / sizeof extra[0];
    if ((size_t)n + k + 1 > sizeof args / sizeof args[0])
        return 0;
    args[0] = (*argv)[0];
    for (size_t i = 0; i < k; i++)
        args[1 + i] = (char *)extra[i];
    for (int i = 1; i < n; i++)
        args[k + (size_t)i] = (*argv)[i];
    args[k + (size_t)n] = NULL;
    *argc = n + (int)k;
    *argv = args;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    init();
    fj_input in;
    memset(&in, 0, sizeof in);
    if (size > 0)
        in.flags = data[0];
    if (size > 1)
        in.step1 = data[1];
    if (size > 2)
        in.step2 = data[2];
    in.p = data + (size < FJ_HEADER ? size : FJ_HEADER);
    in.n = size < FJ_HEADER ? 0 : size - FJ_HEADER;

    fj_time t;
    memset(&t, 0, sizeof t);
    dls_medium *journal = build_journal(&in, &t);

    size_t nmedia = in.flags & 0x80 ? 0 : 2;
    dls_audit_medium am[2] = {{G.media[0], NULL}, {G.media[1], NULL}};
    /* the SVG of every corpus entry in the replay test; under libFuzzer of
     * one input in FJ_SVG_EVERY, chosen by the input's length so that a
     * find replays alike */
    run_audit(journal, am, nmedia, !fj_fuzzing || size % FJ_SVG_EVERY == 0);

    dls_judge_medium jm[2] = {{G.media[0], G.res[0]}, {G.media[1], G.res[1]}};
    run_judge(journal, &in, &t, jm, nmedia);

    dls_medium_del(journal);
    return 0;
}
