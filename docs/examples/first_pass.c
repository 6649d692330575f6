/* first_pass — an owner's judge from its configuration in ten lines
 * (docs/judge.md "A first pass"; include/daolease/owner.h).
 *
 *     example_first_pass DIR
 *
 * Setup (not part of the ten lines): DIR gets the grantor's key, a keyring,
 * and agent-1.dls on which a worker (bare facts, attributed to agent-1 by
 * the medium) proposes to take job/7 for 500 ms. The owner's loop then
 * grants it (the `granted` callback), and — the worker never renews —
 * reclaims it by silence through the owner's reclaim callback. Exits 0 once
 * the job is back. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daolease/attrib.h"
#include "daolease/fact.h"
#include "daolease/owner.h"
#include "daolease/stream.h"

static int back; /* the owner's resource: is job/7 back? */

static int my_reclaim(void *user, dls_bytes subject, uint64_t lease, dls_cause cause, bool commit)
{
    (void)user, (void)subject, (void)commit;
    printf("reclaim lease %" PRIu64 ": %s\n", lease, dls_cause_name(cause));
    back = 1;
    return DLS_RECLAIM_DONE;
}

static void my_granted(void *user, const dls_judge_lease_info *l)
{
    (void)user;
    printf("granted lease %" PRIu64 " to %.*s\n", l->lease, (int)l->holder.n,
           (const char *)l->holder.p);
}

static int setup(const char *dir)
{
    char path[512], line[256];
    dls_secret *k;
    snprintf(path, sizeof path, "%s/arbiter.secret", dir);
    if (dls_secret_generate(&k, "arbiter", DLS_KEY_ED25519) || dls_secret_save(k, path, NULL) ||
        dls_secret_keyring_line(k, line, sizeof line))
        return 1;
    dls_secret_del(k);
    snprintf(path, sizeof path, "%s/keyring", dir);
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f))
        return 1;
    /* the worker's proposal, a bare fact on its own stream */
    dls_medium *m;
    snprintf(path, sizeof path, "%s/agent-1.dls", dir);
    if (dls_medium_create(&m, DLS_MEDIUM_FILE, path, NULL, NULL))
        return 1;
    uint8_t subject[16], id[16], fact[DLS_FACT_MAX];
    size_t sn, in, n;
    dls_value_str(subject, sizeof subject, "job/7", 5, &sn);
    dls_value_str(id, sizeof id, "p-1", 3, &in);
    dls_fact p;
    dls_fact_proposal(&p, (dls_bytes){id, in}, (dls_bytes){subject, sn}, 1);
    dls_duration_make(&p.duration, DLS_UNIT_MS, 500);
    p.keys |= DLS_K_DURATION;
    int rc = dls_fact_encode(&p, fact, sizeof fact, &n) ||
             dls_medium_append(m, fact, n, NULL, NULL);
    dls_medium_del(m);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2 || setup(argv[1])) {
        fprintf(stderr, "usage: example_first_pass DIR (an empty folder)\n");
        return 2;
    }
    if (chdir(argv[1]))
        return 1;
    /* ---- the owner's first pass: ten lines ---- */
    dls_owner_config c;
    dls_owner_config_default(&c);
    c.party = "arbiter", c.key = "arbiter.secret", c.keyring = "keyring";
    c.journal = "journal.dls", c.media = (const char *[]){"agent-1.dls=agent-1", NULL};
    dls_judge_callbacks cb = {.reclaim = my_reclaim, .granted = my_granted};
    dls_owner *o;
    dls_where w = {0};
    dls_judge_pass_result r;
    if (dls_owner_new(&o, &c, &cb, NULL, &w) || dls_owner_pass(o, &r))
        return fprintf(stderr, "owner: %s\n", w.reason ? w.reason : "pass failed"), 1;
    /* ---- then the loop: wait, pass, until the job is back ---- */
    for (int i = 0; !back && i < 1000; i++) {
        uint64_t ns = dls_owner_wait_ns(o, &r);
        nanosleep(&(struct timespec){(time_t)(ns / DLS_NS_PER_S), (long)(ns % DLS_NS_PER_S)}, NULL);
        if (dls_owner_pass(o, &r))
            break;
    }
    dls_owner_del(o);
    return back ? 0 : 1;
}
