/* Realtime tick streams shared by machines (cli/tick_streams.h). */
#include "cli/tick_streams.h"

#include <stdlib.h>
#include <string.h>

#include "adapters/tick_clock.h"
#include "cli/cli.h"
#include "cli/media.h"

/* A sealed tick: an envelope around a 30-byte fact (adapters/tick.c). */
#define TICK_REC_MAX 512

/* The position of the last record of m (0 when it has none): a judge's
 * tick cursor starts there (judge.h, dls_judge_tick_source: only the
 * newest reading matters), so a long stream is not drained from its start
 * at every start, and the newest reading of every stream — a dead
 * machine's too — counts from the first pass: now never goes back behind
 * what the journal's marks say. The last record (at most `cap` bytes) is
 * copied to last[], *last_n its length (0: none, or longer). */
static int stream_last(dls_medium *m, uint64_t *from, uint8_t *last, size_t cap, size_t *last_n)
{
    dls_cursor *c;
    int rc = dls_cursor_new(&c, m, 0);
    if (rc)
        return rc;
    dls_record rec;
    dls_next r;
    *last_n = 0;
    *from = 0;
    while ((r = dls_cursor_next(c, &rec, NULL)) == DLS_NEXT_OK || r == DLS_NEXT_GAP) {
        if (r == DLS_NEXT_OK) {
            *from = rec.position;
            *last_n = rec.n <= cap ? rec.n : 0;
            memcpy(last, rec.p, *last_n);
        }
    }
    dls_cursor_del(c);
    return r == DLS_NEXT_ERROR ? DLS_ERR_TRANSPORT : 0;
}

/* The reading of the own stream's last tick, when it is the grantor's
 * (party): a restarted judge's adapter appends nothing older (vocabulary.md
 * rule 7), even after its wall clock stepped back between the two runs. */
static void resume_own(dls_tick *t, dls_resolver *r, const char *party, const uint8_t *rec,
                       size_t n)
{
    dls_attribution a;
    if (n == 0)
        return;
    dls_resolver_attribute(r, rec, n, &a);
    if (!a.attributed || a.author.n != strlen(party) || memcmp(a.author.p, party, a.author.n))
        return;
    dls_fact f;
    if (dls_fact_decode(a.fact.p, a.fact.n, &f, NULL) == 0 && f.kind == DLS_FACT_TICK)
        dls_tick_resume(t, f.reading.ns);
}

/* Opens stream i: the own stream for append, the others for reading; a
 * missing one is created (a standby may start before the machine whose
 * stream it is). Ticks need no durability: a tick lost in a crash is
 * followed by a newer one (docs/standby.md, Across machines). */
static int open_stream(dls_cli_tick_streams *t, const char *sub, const dls_config *cfg,
                       size_t i, dls_keyring *kr, uint8_t *last, size_t cap, size_t *last_n)
{
    const char *where = cfg->tick_streams[i];
    dls_open_mode mode = i == cfg->tick_own ? DLS_OPEN_APPEND : DLS_OPEN_READ;
    int rc = dls_cli_open(&t->media[i], sub, where, mode, true, DLS_SYNC_NONE);
    if (rc)
        return rc;
    rc = dls_resolver_new_signed(&t->resolvers[i], dls_medium_id(t->media[i]), kr);
    uint64_t from = 0;
    if (!rc)
        rc = stream_last(t->media[i], &from, last, cap, last_n);
    if (rc) {
        dls_cli_error(sub, "tick stream %s: %s", where, dls_strerror(rc));
        return rc;
    }
    t->sources[i] = (dls_judge_tick_source){
        .medium = t->media[i], .resolver = t->resolvers[i], .adapter = cfg->party, .from = from,
    };
    return 0;
}

int dls_cli_tick_streams_new(dls_cli_tick_streams *t, const char *sub, const dls_config *cfg,
                             const dls_secret *grantor, dls_keyring *kr)
{
    memset(t, 0, sizeof *t);
    size_t n = cfg->n_tick_streams;
    t->media = calloc(n, sizeof *t->media);
    t->resolvers = calloc(n, sizeof *t->resolvers);
    t->sources = calloc(n, sizeof *t->sources);
    t->n = n; /* dls_cli_tick_streams_del frees what was made */
    if (!t->media || !t->resolvers || !t->sources)
        return DLS_ERR_NOMEM;
    int rc = 0;
    uint8_t last[TICK_REC_MAX], scratch[TICK_REC_MAX];
    size_t last_n = 0, scratch_n;
    for (size_t i = 0; i < n && !rc; i++)
        rc = i == cfg->tick_own ? open_stream(t, sub, cfg, i, kr, last, sizeof last, &last_n)
                                : open_stream(t, sub, cfg, i, kr, scratch, sizeof scratch,
                                              &scratch_n);
    if (rc)
        return rc;
    dls_tick_settings ts;
    dls_tick_settings_default(&ts);
    ts.source = DLS_TICK_REALTIME;
    ts.basis = cfg->ticks_basis;
    ts.signer = grantor;
    dls_where w = {0};
    rc = dls_tick_new(&t->adapter, t->media[cfg->tick_own], &ts, &w);
    if (rc) {
        dls_cli_error(sub, "tick stream %s: %s", cfg->tick_streams[cfg->tick_own],
                      w.reason ? w.reason : dls_strerror(rc));
        return rc;
    }
    resume_own(t->adapter, t->resolvers[cfg->tick_own], cfg->party, last, last_n);
    for (size_t i = 0; i < n; i++)
        t->sources[i].basis = dls_tick_basis(t->adapter); /* one basis (judge.md, Assembly) */
    return 0;
}

void dls_cli_tick_streams_del(dls_cli_tick_streams *t)
{
    dls_tick_del(t->adapter);
    for (size_t i = 0; i < t->n; i++) {
        if (t->resolvers)
            dls_resolver_del(t->resolvers[i]);
        if (t->media)
            dls_medium_del(t->media[i]);
    }
    free(t->resolvers);
    free(t->media);
    free(t->sources);
    memset(t, 0, sizeof *t);
}
