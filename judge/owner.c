/* An owner's judge assembled from a configuration (include/daolease/owner.h).
 * Only assembly: opening the files and wiring the parts dls_judge_new
 * borrows; every rule stays in the judge. The clock is read through the
 * tick adapter (adapters/tick.c), never here. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "daolease/attrib.h"
#include "daolease/owner.h"
#include "daolease/tick.h"

struct dls_owner {
    dls_secret *grantor;
    dls_keyring *keyring;
    dls_medium *journal;
    dls_medium **media;
    dls_resolver **resolvers;
    size_t nmedia;
    dls_medium *tickm;
    dls_tick *tick;
    dls_resolver *tickr;
    dls_judge *judge;
    uint64_t cadence_ns;
};

void dls_owner_config_default(dls_owner_config *c)
{
    if (!c)
        return;
    memset(c, 0, sizeof *c);
    c->sync = DLS_SYNC_DATA;
    dls_duration_make(&c->tolerance, DLS_UNIT_MS, 250);
    dls_duration_make(&c->cadence, DLS_UNIT_MS, 100);
    dls_duration_make(&c->duration, DLS_UNIT_S, 3);
    dls_duration_make(&c->min_duration, DLS_UNIT_MS, 100);
    dls_duration_make(&c->max_duration, DLS_UNIT_H, 1);
}

void dls_owner_del(dls_owner *o)
{
    if (!o)
        return;
    dls_judge_del(o->judge);
    for (size_t i = 0; i < o->nmedia; i++) {
        if (o->resolvers)
            dls_resolver_del(o->resolvers[i]);
        if (o->media)
            dls_medium_del(o->media[i]);
    }
    free(o->resolvers);
    free(o->media);
    dls_resolver_del(o->tickr);
    dls_tick_del(o->tick);
    dls_medium_del(o->tickm);
    dls_medium_del(o->journal);
    dls_keyring_del(o->keyring);
    dls_secret_del(o->grantor);
    free(o);
}

static int fail(dls_where *w, int rc, const char *reason, uint64_t offset)
{
    if (w && !w->reason)
        w->reason = reason;
    if (w)
        w->offset = offset;
    return rc;
}

/* Opens media[i] ("PATH" or "PATH=PARTY") and its resolver. */
static int open_medium(dls_owner *o, size_t i, const char *spec, dls_where *w)
{
    const char *eq = strrchr(spec, '=');
    size_t plen = eq ? (size_t)(eq - spec) : strlen(spec);
    char *path = malloc(plen + 1);
    if (!path)
        return DLS_ERR_NOMEM;
    memcpy(path, spec, plen);
    path[plen] = 0;
    int rc = dls_medium_open(&o->media[i], path, DLS_OPEN_READ, NULL, w);
    free(path);
    if (rc)
        return fail(w, rc, "a lease-fact medium cannot be opened", i);
    const uint8_t *id = dls_medium_id(o->media[i]);
    if (eq && !eq[1])
        return fail(w, DLS_ERR_INVAL, "a medium \"PATH=\" names no party", i);
    rc = eq ? dls_resolver_new_medium(&o->resolvers[i], id, eq + 1, o->keyring)
            : dls_resolver_new_signed(&o->resolvers[i], id, o->keyring);
    return rc ? fail(w, rc, "a medium's resolver cannot be made", i) : 0;
}

static int open_journal(dls_owner *o, const dls_owner_config *c, dls_where *w)
{
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.sync = c->sync;
    /* judge.md, Assembly and "Failure of the journal" (revision 5): the
     * journal's one writer holds its lock for its lifetime, never cuts
     * CRC-valid records (DLS_ERR_VALID_TAIL) and stops on a journal cut
     * back or replaced under it (DLS_ERR_SHRUNK) */
    ms.exclusive = true;
    ms.lock_timeout_ms = 0;
    struct stat st;
    int rc = stat(c->journal, &st) == 0
                 ? dls_medium_open(&o->journal, c->journal, DLS_OPEN_APPEND, &ms, w)
                 : dls_medium_create(&o->journal, DLS_MEDIUM_FILE, c->journal, &ms, w);
    if (rc == DLS_ERR_LOCKED) /* its one writer's lock: another judge holds it */
        return fail(w, DLS_ERR_JOURNAL_LOCKED, "another judge holds the journal", 0);
    return rc ? fail(w, rc, "the journal cannot be opened", 0) : 0;
}

static int open_ticks(dls_owner *o, dls_where *w)
{
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.ring_capacity = 1024;
    dls_tick_settings ts;
    dls_tick_settings_default(&ts);
    int rc = dls_ring_new(&o->tickm, &ms);
    if (!rc)
        rc = dls_tick_new(&o->tick, o->tickm, &ts, w);
    if (!rc)
        rc = dls_resolver_new_medium(&o->tickr, dls_medium_id(o->tickm), "ticks", NULL);
    return rc ? fail(w, rc, "the host-clock ticks cannot be set up", 0) : 0;
}

static int assemble(dls_owner *o, const dls_owner_config *c, const dls_judge_callbacks *cb,
                    void *user, dls_where *w)
{
    int rc = dls_secret_load(&o->grantor, c->key, w);
    if (rc)
        return fail(w, rc, "the grantor's key cannot be loaded", 0);
    if (strcmp(dls_secret_name(o->grantor), c->party))
        return fail(w, DLS_ERR_NO_GRANTOR, "the key file names another party", 0);
    if ((rc = dls_keyring_load(&o->keyring, c->keyring, w)) != 0)
        return fail(w, rc, "the keyring cannot be loaded", 0);
    if ((rc = open_journal(o, c, w)) != 0 || (rc = open_ticks(o, w)) != 0)
        return rc;
    size_t n = 0;
    while (c->media && c->media[n])
        n++;
    o->media = calloc(n ? n : 1, sizeof *o->media);
    o->resolvers = calloc(n ? n : 1, sizeof *o->resolvers);
    dls_judge_medium *jm = calloc(n ? n : 1, sizeof *jm);
    if (!o->media || !o->resolvers || !jm) {
        free(jm);
        return DLS_ERR_NOMEM;
    }
    o->nmedia = n;
    for (size_t i = 0; i < n && !rc; i++) {
        rc = open_medium(o, i, c->media[i], w);
        jm[i] = (dls_judge_medium){o->media[i], o->resolvers[i]};
    }
    if (!rc) {
        dls_judge_tick_source ts = {o->tickm, o->tickr, "ticks", dls_tick_basis(o->tick), 0};
        dls_judge_settings s;
        dls_judge_settings_default(&s);
        s.grantor = o->grantor;
        s.journal = o->journal;
        s.ticks = &ts;
        s.nticks = 1;
        s.media = jm;
        s.nmedia = n;
        s.tolerance_ns = c->tolerance.ns;
        s.cadence_ns = c->cadence.ns;
        s.default_duration = c->duration;
        s.min_duration = c->min_duration;
        s.max_duration = c->max_duration;
        s.tenure_max = c->max;
        s.lock_delay_ns = c->lock_delay.ns;
        o->cadence_ns = c->cadence.ns;
        rc = dls_judge_new(&o->judge, &s, cb, user, w);
    }
    free(jm);
    return rc;
}

int dls_owner_new(dls_owner **out, const dls_owner_config *c, const dls_judge_callbacks *cb,
                  void *user_data, dls_where *w)
{
    if (w)
        memset(w, 0, sizeof *w);
    if (!out || !c || !c->party || !c->key || !c->keyring || !c->journal)
        return fail(w, DLS_ERR_INVAL, "party, key, keyring and journal are required", 0);
    *out = NULL;
    dls_owner *o = calloc(1, sizeof *o);
    if (!o)
        return DLS_ERR_NOMEM;
    int rc = assemble(o, c, cb, user_data, w);
    if (rc) {
        dls_owner_del(o);
        return rc;
    }
    *out = o;
    return 0;
}

dls_judge *dls_owner_judge(const dls_owner *o)
{
    return o ? o->judge : NULL;
}

int dls_owner_pass(dls_owner *o, dls_judge_pass_result *r)
{
    if (!o)
        return DLS_ERR_INVAL;
    int rc = dls_tick_now(o->tick, NULL);
    return rc ? rc : dls_judge_pass(o->judge, r);
}

uint64_t dls_owner_wait_ns(const dls_owner *o, const dls_judge_pass_result *r)
{
    uint64_t wait = o ? o->cadence_ns / 2 : 0;
    if (r && r->has_now && r->next_due > r->now && r->next_due - r->now < wait)
        wait = r->next_due - r->now;
    return wait < 100000 ? 100000 : wait;
}
