/* bench_status — `daolease status` on a journal of many live leases (issue
 * 15 item 3: 10^6 live leases answer in seconds, not minutes).
 *
 *     bench_status [N] [DIR]     (N default 10^6 or $DLS_BENCH_MAX; DIR a
 *                                 scratch folder, default /tmp)
 *
 * Writes a journal signed by the grantor: a pass mark, N grants (each its
 * own subject and holder medium), a second pass mark; the lease-fact
 * medium holds N/100 renewals that the second mark drained. Then runs the
 * built `daolease status --json` on it (beside this program in the build
 * tree, or $DAOLEASE_BIN) and prints JSON Lines:
 *
 *   status_s_<N>           wall time of status, records taken as they
 *                          claim; baseline: a raw cursor walk of the same
 *                          journal and medium (reading alone)
 *   status_verified_s_<M>  the same with --keyring (every record verified),
 *                          M = min(N, 10^5); baseline: M raw Ed25519
 *                          verifications of the same messages' size
 *
 * Generation is not timed. Benchmarks may read the clock; the library
 * never does. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/mark.h"
#include "daolease/stream.h"
#include "common.h"

#define CHUNK 4096

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench_status: %s: %s\n", what, dls_strerror(rc));
    exit(1);
}

/* Appends records in batches. */
typedef struct batcher {
    dls_medium *m;
    uint8_t *buf;
    size_t used;
    const uint8_t *recs[CHUNK];
    size_t lens[CHUNK];
    size_t n;
} batcher;

static void flush(batcher *b)
{
    if (!b->n)
        return;
    uint64_t first;
    int rc = dls_medium_append_batch(b->m, b->recs, b->lens, b->n, &first, NULL);
    if (rc)
        die("append", rc);
    b->n = 0;
    b->used = 0;
}

static void add(batcher *b, const uint8_t *rec, size_t n)
{
    if (b->n == CHUNK || b->used + n > (size_t)CHUNK * 512)
        flush(b);
    memcpy(b->buf + b->used, rec, n);
    b->recs[b->n] = b->buf + b->used;
    b->lens[b->n++] = n;
    b->used += n;
}

static void add_sealed(batcher *b, const dls_secret *k, const uint8_t *fact, size_t n)
{
    uint8_t env[DLS_RECORD_MAX];
    size_t en;
    int rc = dls_envelope_seal(k, dls_medium_id(b->m), fact, n, env, sizeof env, &en);
    if (rc)
        die("seal", rc);
    add(b, env, en);
}

static void add_mark(batcher *b, const dls_secret *k, uint64_t pass, uint64_t now,
                     const uint8_t *medium, uint64_t drained)
{
    dls_mark_pos pos;
    memcpy(pos.medium, medium, DLS_MEDIUM_ID_LEN);
    pos.position = drained;
    dls_mark m = {.pass = pass, .now_ns = now, .basis = {(const uint8_t *)"bench", 5},
                  .tolerance_ns = 250000000, .cadence_ns = 100000000, .drained = &pos,
                  .n_drained = 1};
    dls_mark_writer w = {0};
    uint8_t rec[DLS_JOURNAL_RECORD_MAX];
    size_t n;
    int rc;
    while ((rc = dls_mark_encode_next(&m, &w, rec, dls_mark_limit(7), &n)) == 1)
        add_sealed(b, k, rec, n);
    if (rc < 0)
        die("mark", rc);
}

static const char *daolease_bin(char *buf, size_t cap)
{
    const char *env = getenv("DAOLEASE_BIN");
    if (env)
        return env;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return "daolease";
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = 0;
    snprintf(buf, cap, "%s/../cli/daolease", self);
    return buf;
}

static double run_status(const char *bin, const char *dir, bool verify)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "'%s' status --journal '%s/journal.dls' --media '%s/agent.dls' %s --json "
             "| tail -n 1 > '%s/status.last'",
             bin, dir, dir, verify ? "--grantor arbiter --keyring keyring" : "", dir);
    char full[8400];
    snprintf(full, sizeof full, "cd '%s' && %s", dir, cmd);
    double t = bench_now_s();
    if (system(full) != 0)
        die("status", DLS_ERR_IO);
    return bench_now_s() - t;
}

static double raw_walk(const char *dir)
{
    char path[4096];
    double t = bench_now_s();
    const char *names[] = {"journal.dls", "agent.dls"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%.3000s/%s", dir, names[i]);
        dls_medium *m;
        if (dls_medium_open(&m, path, DLS_OPEN_READ, NULL, NULL))
            die("open", DLS_ERR_IO);
        dls_cursor *c;
        dls_cursor_new(&c, m, 0);
        dls_record r;
        while (dls_cursor_next(c, &r, NULL) == DLS_NEXT_OK)
            ;
        dls_cursor_del(c);
        dls_medium_del(m);
    }
    return bench_now_s() - t;
}

static double raw_verify(uint64_t m)
{
    uint8_t pk[32], sk[64], msg[200], sig[64];
    crypto_sign_keypair(pk, sk);
    randombytes_buf(msg, sizeof msg);
    crypto_sign_detached(sig, NULL, msg, sizeof msg, sk);
    double t = bench_now_s();
    for (uint64_t i = 0; i < m; i++)
        if (crypto_sign_verify_detached(sig, msg, sizeof msg, pk))
            die("verify", DLS_ERR_SODIUM);
    return bench_now_s() - t;
}

static void write_journal(const char *dir, uint64_t n)
{
    char path[4096];
    dls_secret *grantor, *agent;
    if (dls_secret_generate(&grantor, "arbiter", DLS_KEY_ED25519) ||
        dls_secret_generate(&agent, "agent-1", DLS_KEY_ED25519))
        die("keys", DLS_ERR_SODIUM);
    char line[256];
    snprintf(path, sizeof path, "%.3000s/keyring", dir);
    FILE *f = fopen(path, "w");
    dls_secret_keyring_line(grantor, line, sizeof line);
    fprintf(f, "%s\n", line);
    dls_secret_keyring_line(agent, line, sizeof line);
    fprintf(f, "%s\n", line);
    fclose(f);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.sync = DLS_SYNC_NONE;
    dls_medium *jm = NULL, *am = NULL;
    snprintf(path, sizeof path, "%.3000s/journal.dls", dir);
    int rc = dls_medium_create(&jm, DLS_MEDIUM_FILE, path, &ms, NULL);
    snprintf(path, sizeof path, "%.3000s/agent.dls", dir);
    if (rc || (rc = dls_medium_create(&am, DLS_MEDIUM_FILE, path, &ms, NULL)))
        die("create", rc);
    batcher jb = {.m = jm, .buf = malloc((size_t)CHUNK * 512)};
    batcher ab = {.m = am, .buf = malloc((size_t)CHUNK * 512)};
    /* renewals on the agent's medium: every 100th lease */
    uint64_t renewals = n / 100;
    for (uint64_t i = 0; i < renewals; i++) {
        dls_fact fct;
        uint8_t fact[DLS_FACT_MAX];
        size_t fn;
        dls_fact_renewal(&fct, 1 + i * 100, 1);
        dls_fact_encode(&fct, fact, sizeof fact, &fn);
        add_sealed(&ab, agent, fact, fn);
    }
    flush(&ab);
    const uint8_t *aid = dls_medium_id(am);
    add_mark(&jb, grantor, 1, DLS_NS_PER_S, aid, 0);
    dls_duration d;
    dls_duration_make(&d, DLS_UNIT_S, 30);
    for (uint64_t i = 1; i <= n; i++) {
        char s[32];
        uint8_t subj[40], fact[DLS_FACT_MAX];
        size_t sn, fn;
        int len = snprintf(s, sizeof s, "job/%llu", (unsigned long long)i);
        dls_value_str(subj, sizeof subj, s, (size_t)len, &sn);
        dls_fact fct;
        dls_fact_grant(&fct, i, (dls_bytes){subj, sn}, (dls_bytes){(const uint8_t *)"agent-1", 7},
                       d, aid);
        if ((rc = dls_fact_encode(&fct, fact, sizeof fact, &fn)))
            die("encode", rc);
        add_sealed(&jb, grantor, fact, fn);
    }
    add_mark(&jb, grantor, 2, 2000000000ull, aid, renewals);
    flush(&jb);
    free(jb.buf);
    free(ab.buf);
    dls_medium_del(jm);
    dls_medium_del(am);
    dls_secret_del(grantor);
    dls_secret_del(agent);
}

int main(int argc, char **argv)
{
    if (sodium_init() < 0)
        return 1;
    const char *envmax = getenv("DLS_BENCH_MAX");
    uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10)
                          : envmax ? strtoull(envmax, NULL, 10) : 1000000;
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/dls-bench-status-XXXXXX", argc > 2 ? argv[2] : "/tmp");
    if (!mkdtemp(tmpl))
        die("mkdtemp", DLS_ERR_IO);
    char binbuf[PATH_MAX + 32];
    const char *bin = daolease_bin(binbuf, sizeof binbuf);
    char metric[64];
    uint64_t m = n < 100000 ? n : 100000;
    /* the verified run first, on a journal of M leases */
    write_journal(tmpl, m);
    double tv = run_status(bin, tmpl, true);
    snprintf(metric, sizeof metric, "status_verified_s_%llu", (unsigned long long)m);
    bench_line("status", metric, tv, raw_verify(m + m / 100));
    char cmd[8300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", tmpl);
    if (system(cmd)) {
    }
    write_journal(tmpl, n);
    double t = run_status(bin, tmpl, false);
    snprintf(metric, sizeof metric, "status_s_%llu", (unsigned long long)n);
    bench_line("status", metric, t, raw_walk(tmpl));
    snprintf(cmd, sizeof cmd, "cat '%s/status.last' >&2; rm -rf '%s'", tmpl, tmpl);
    if (system(cmd)) {
    }
    return 0;
}
