/* daolease judge — a judge as a process (cli.md `judge`).
 *
 * For compositions that want the judge outside their own loop. The process
 * owns no resource of its own, so its reclaim procedure only reports: each
 * reclaim is printed as a JSON line on stdout and answered done. Once a
 * second it prints a status line (human on a terminal, JSON Lines
 * otherwise). SIGINT/SIGTERM stop it after the current pass. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/config.h"
#include "cli/media.h"
#include "cli/proc.h"
#include "daolease/judge.h"
#include "cli/json/json.h"

#define SECOND 1000000000ull

static const char usage_text[] =
    "usage: daolease judge --config FILE [--passes N]\n\n"
    "Runs a judge over the configured journal and lease-fact media, one pass\n"
    "at least every cadence, until SIGINT or SIGTERM (or N passes with a now).\n"
    "Reclaims are reported on stdout; a status line is printed every second.\n\n"
    "  --config FILE   party (the grantor), key, keyring, journal, media,\n"
    "                  tolerance, cadence, duration ... (docs/config.md)\n";

struct judge_proc {
    dls_config cfg;
    dls_secret *secret;
    dls_keyring *keyring;
    dls_medium *journal;
    dls_medium **media;
    dls_resolver **resolvers;
    dls_judge_medium *jm;
    dls_cli_ticks ticks;
    dls_judge *judge;
    bool tty;
};

static int on_reclaim(void *user, dls_bytes subject, uint64_t lease, dls_cause cause,
                      bool commit)
{
    (void)user;
    dls_jbuf b = {0};
    dls_jbuf_puts(&b, "{\"reclaim\": ");
    dls_jbuf_uint(&b, lease);
    dls_jbuf_puts(&b, ", \"subject\": ");
    if (dls_json_emit(&b, subject.p, subject.n, NULL))
        dls_jbuf_puts(&b, "null");
    dls_jbuf_puts(&b, ", \"cause\": \"");
    dls_jbuf_puts(&b, dls_cause_name(cause));
    dls_jbuf_puts(&b, commit ? "\", \"commit\": true}\n" : "\", \"commit\": false}\n");
    if (b.p)
        fwrite(b.p, 1, b.n, stdout);
    fflush(stdout);
    dls_jbuf_free(&b);
    return DLS_RECLAIM_DONE;
}

static int open_media(struct judge_proc *p)
{
    size_t n = p->cfg.n_media;
    p->media = calloc(n, sizeof *p->media);
    p->resolvers = calloc(n, sizeof *p->resolvers);
    p->jm = calloc(n, sizeof *p->jm);
    if (!p->media || !p->resolvers || !p->jm)
        return DLS_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const dls_config_medium *cm = &p->cfg.media[i];
        int rc = dls_cli_open(&p->media[i], "judge", cm->where, DLS_OPEN_READ, false,
                              DLS_SYNC_DATA);
        if (rc)
            return rc;
        const uint8_t *id = dls_medium_id(p->media[i]);
        rc = cm->party ? dls_resolver_new_medium(&p->resolvers[i], id, cm->party, p->keyring)
                       : dls_resolver_new_signed(&p->resolvers[i], id, p->keyring);
        if (rc) {
            dls_cli_error("judge", "%s: resolver: %s", cm->where, dls_strerror(rc));
            return rc;
        }
        p->jm[i].medium = p->media[i];
        p->jm[i].resolver = p->resolvers[i];
    }
    return 0;
}

static int assemble(struct judge_proc *p)
{
    int rc = dls_cli_load_keys("judge", p->cfg.key, p->cfg.keyring, &p->secret, &p->keyring);
    if (rc)
        return rc;
    if ((rc = dls_cli_open(&p->journal, "judge", p->cfg.journal, DLS_OPEN_APPEND, true,
                           dls_cli_sync(p->cfg.sync))) ||
        (rc = open_media(p)) || (rc = dls_cli_ticks_new(&p->ticks, "judge", false)))
        return rc;
    dls_judge_tick_source ts;
    dls_judge_settings s;
    dls_cli_judge_settings(&s, &ts, &p->ticks, p->secret, p->journal, p->jm, p->cfg.n_media);
    s.tolerance_ns = p->cfg.tolerance.ns;
    s.cadence_ns = p->cfg.cadence.ns;
    s.default_duration = p->cfg.duration;
    s.min_duration = p->cfg.min_duration;
    s.max_duration = p->cfg.max_duration;
    s.tenure_max = p->cfg.max;
    s.lock_delay_ns = p->cfg.lock_delay.ns;
    dls_judge_callbacks cb = {.reclaim = on_reclaim};
    dls_where w = {0};
    rc = dls_judge_new(&p->judge, &s, &cb, p, &w);
    if (rc)
        dls_cli_error("judge", "%s: %s", dls_medium_name(p->journal),
                      w.reason ? w.reason : dls_strerror(rc));
    return rc;
}

static void teardown(struct judge_proc *p)
{
    dls_judge_del(p->judge);
    dls_cli_ticks_del(&p->ticks);
    for (size_t i = 0; i < p->cfg.n_media; i++) {
        if (p->resolvers)
            dls_resolver_del(p->resolvers[i]);
        if (p->media)
            dls_medium_del(p->media[i]);
    }
    free(p->resolvers);
    free(p->media);
    free(p->jm);
    dls_medium_del(p->journal);
    dls_keyring_del(p->keyring);
    dls_secret_del(p->secret);
    dls_config_free(&p->cfg);
}

struct totals {
    uint64_t granted, refused, lapsed[5], forged, defective, ignored, drained, overruns;
};

static void add(struct totals *t, const dls_judge_pass_result *r)
{
    t->granted += r->granted;
    t->refused += r->refused;
    for (int i = 0; i < 5; i++)
        t->lapsed[i] += r->lapsed[i];
    t->forged += r->forged;
    for (int i = 0; i < 8; i++)
        t->defective += r->defective[i];
    t->ignored += r->ignored_misplaced + r->ignored_wrong_author + r->ignored_replayed +
                  r->ignored_unknown_lease;
    t->drained += r->drained;
    t->overruns += r->cadence_overrun;
}

static void status(const struct judge_proc *p, const dls_judge_pass_result *r,
                   const struct totals *t)
{
    const char *fmt = p->tty
        ? "pass %" PRIu64 "  live %" PRIu64 "  waiting %" PRIu64 "  pending %" PRIu64
          "  granted %" PRIu64 "  refused %" PRIu64 "  lapsed release %" PRIu64
          " cap %" PRIu64 " policy %" PRIu64 " silence %" PRIu64 "  forged %" PRIu64
          "  defective %" PRIu64 "  ignored %" PRIu64 "  drained %" PRIu64
          "  overruns %" PRIu64 "\n"
        : "{\"status\": true, \"pass\": %" PRIu64 ", \"live\": %" PRIu64
          ", \"waiting\": %" PRIu64 ", \"pending\": %" PRIu64 ", \"granted\": %" PRIu64
          ", \"refused\": %" PRIu64 ", \"lapsed\": {\"release\": %" PRIu64
          ", \"cap\": %" PRIu64 ", \"policy\": %" PRIu64 ", \"silence\": %" PRIu64
          "}, \"forged\": %" PRIu64 ", \"defective\": %" PRIu64 ", \"ignored\": %" PRIu64
          ", \"drained\": %" PRIu64 ", \"cadence_overruns\": %" PRIu64 "}\n";
    printf(fmt, r->pass, r->live, r->waiting, r->pending, t->granted, t->refused,
           t->lapsed[DLS_CAUSE_RELEASE], t->lapsed[DLS_CAUSE_CAP], t->lapsed[DLS_CAUSE_POLICY],
           t->lapsed[DLS_CAUSE_SILENCE], t->forged, t->defective, t->ignored, t->drained,
           t->overruns);
    fflush(stdout);
}

static int loop(struct judge_proc *p, uint64_t max_passes)
{
    struct totals t = {0};
    uint64_t last_status = 0, passes = 0;
    bool first = true;
    while (!dls_cli_stop_requested()) {
        uint64_t now;
        if (dls_tick_now(p->ticks.adapter, &now))
            return DLS_EXIT_FAIL;
        dls_judge_pass_result r;
        int rc = dls_judge_pass(p->judge, &r);
        if (rc) {
            dls_cli_error("judge", "%s: pass: %s", dls_medium_name(p->journal), dls_strerror(rc));
            if (dls_err_is_fatal(rc) || rc == DLS_ERR_TICKS_ENDED)
                return DLS_EXIT_FAIL;
        }
        add(&t, &r);
        if (first || dls_passed(last_status, now, SECOND - 1)) {
            status(p, &r, &t);
            last_status = now;
            first = false;
        }
        if (r.has_now && max_passes && ++passes >= max_passes)
            break;
        uint64_t sleep = p->cfg.cadence.ns / 2;
        if (r.next_due > now && r.next_due - now < sleep)
            sleep = r.next_due - now;
        dls_cli_sleep(sleep ? sleep : 1000000);
    }
    return DLS_EXIT_OK;
}

int dls_cmd_judge(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, 0, 'c'},
        {"passes", required_argument, 0, 'n'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    const char *config = NULL;
    uint64_t passes = 0;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': config = optarg; break;
        case 'n': passes = strtoull(optarg, NULL, 10); break;
        case 'h': fputs(usage_text, stdout); return DLS_EXIT_OK;
        default: fputs(usage_text, stderr); return DLS_EXIT_USAGE;
        }
    }
    if (!config || optind != argc) {
        fputs(usage_text, stderr);
        return DLS_EXIT_USAGE;
    }
    struct judge_proc p;
    memset(&p, 0, sizeof p);
    p.tty = isatty(STDOUT_FILENO);
    if (dls_config_load(&p.cfg, config, "media")) {
        dls_config_free(&p.cfg);
        return DLS_EXIT_USAGE;
    }
    dls_cli_catch_stop();
    int code = assemble(&p) ? DLS_EXIT_FAIL : loop(&p, passes);
    teardown(&p);
    return code;
}
