/* daolease run — claim a subject, run a command while the lease holds
 * (cli.md `run`, holder.md "Running a command under a lease").
 *
 * The loop is the holder's: each turn reads the host clock once through the
 * tick adapter, steps the holder (which renews on its own ticks), and
 * watches the child. At the holder's bound the child's process group gets
 * SIGTERM, then SIGKILL after the grace; when the child exits the lease is
 * released, with commit when it exited 0. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/config.h"
#include "cli/media.h"
#include "cli/proc.h"
#include "daolease/holder.h"

#define EXIT_NO_LEASE 75
#define TURN_NS (5 * DLS_NS_PER_MS) /* the loop's longest sleep */
/* cli.md `run`, start-up: a transport error opening the media, assembling
 * the holder or appending the proposal (a remote medium's leader being
 * re-elected, a server restarting) is tried again every STARTUP_PAUSE_NS
 * for STARTUP_RETRY_NS from the start, then exits 1 as any other error. */
#define STARTUP_RETRY_NS (30 * DLS_NS_PER_S)
#define STARTUP_PAUSE_NS (500 * DLS_NS_PER_MS)

static const char usage_text[] =
    "usage: daolease run --config FILE --subject S [--duration D] [--wait D]\n"
    "                    [--shared] [--create] [--lease-file F] -- CMD [ARG...]\n\n"
    "Claims subject S (a string), runs CMD while the lease holds, renews it,\n"
    "stops CMD at the bound if renewals stop succeeding (SIGTERM to its process\n"
    "group, SIGKILL after the configured grace), and releases the lease when\n"
    "CMD exits (with commit when it exited 0).\n\n"
    "  --config FILE   party, key, keyring, grantor, journal, medium (docs/config.md)\n"
    "  --subject S     what to lease (a msgpack str)\n"
    "  --duration D    the duration to ask for, e.g. 3s, 500ms (default: config)\n"
    "  --wait D        give up when no grant arrived within D (default: wait\n"
    "                  until the grantor answers: a refusal ends the wait)\n"
    "  --shared        ask for a shared lease\n"
    "  --create        create the holder's medium when it does not exist\n"
    "                  (also: \"create_medium\": true in the config)\n"
    "  --lease-file F  keep the current lease id in file F (it changes when a\n"
    "                  new journal re-grants the subject after a lost one)\n\n"
    "CMD's environment gets DAOLEASE_LEASE (the lease id: its fencing token)\n"
    "and DAOLEASE_SUBJECT. CMD is killed (SIGKILL) if `run` itself dies.\n"
    "Exit status: CMD's; 128 + signal when CMD died by a signal; 75 when no\n"
    "lease was obtained (refused, e.g. \"unavailable\" once the current\n"
    "holder's term at arrival elapsed while it kept renewing; --wait elapsed;\n"
    "stopped before a grant); 1 when the medium is missing without --create;\n"
    "2 for usage errors. A transport error at start-up (opening the media,\n"
    "the proposal's append) is tried again every 500 ms for 30 s first.\n";

struct run {
    dls_config cfg;
    dls_secret *secret;
    dls_keyring *keyring;
    dls_medium *own;
    dls_medium *journal;
    dls_cursor *jcursor;
    dls_resolver *jresolver;
    dls_cli_ticks ticks;
    dls_holder *holder;
    const char *subject;
    uint64_t proposal;
    uint64_t lease;
    pid_t child;
    bool stopping;      /* the child was told to stop at the bound */
    uint64_t stop_at;   /* reading of the SIGTERM */
    bool killed;
    int child_status;   /* exit status once the child ended, else -1 */
    bool create;        /* --create or "create_medium": true */
    const char *lease_file; /* --lease-file: the current lease id, for CMD */
    dls_bytes subject_enc;  /* the subject as proposed (msgpack str) */
    struct stat jstat;      /* the journal file opened (a path, not a URL) */
    struct timespec t0;     /* the start (host clock: start-up retries) */
    int renew_err;          /* the error of the last failed renewal said */
    bool watch_journal;
    unsigned turns;
};

/* Writes the current lease id to --lease-file (write a temporary file, then
 * rename: CMD never reads half a number). */
static void write_lease_file(const struct run *r)
{
    if (!r->lease_file)
        return;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", r->lease_file);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%" PRIu64 "\n", r->lease) < 0 || fclose(f) != 0 ||
        rename(tmp, r->lease_file) != 0)
        dls_cli_error("run", "%s: cannot write the lease id: %s", r->lease_file,
                      strerror(errno));
}

/* judge.md rev 4 "Lost ledger", holder.md rev 4 Sizing: when the grantor's
 * journal file is replaced by a new journal (another inode at the path),
 * move the holder to it (dls_holder_rebind). The command keeps running
 * under the old lease until its bound; the re-grant of its subject, above
 * the new journal's floor, becomes the run's lease (handle_events). */
static void watch_journal(struct run *r)
{
    struct stat st;
    if (!r->watch_journal || ++r->turns % 20 != 0 || stat(r->cfg.journal, &st) != 0 ||
        (st.st_ino == r->jstat.st_ino && st.st_dev == r->jstat.st_dev))
        return;
    dls_medium *m = NULL;
    dls_cursor *c = NULL;
    dls_resolver *res = NULL;
    dls_where w = {0};
    int rc = dls_medium_open(&m, r->cfg.journal, DLS_OPEN_READ, NULL, &w);
    if (rc == 0 && memcmp(dls_medium_id(m), dls_medium_id(r->journal), DLS_MEDIUM_ID_LEN) == 0)
        rc = 1; /* the same journal (renamed back): nothing to do */
    if (rc == 0)
        rc = dls_cursor_new(&c, m, 0);
    if (rc == 0)
        rc = dls_resolver_new_signed(&res, dls_medium_id(m), r->keyring);
    if (rc == 0)
        rc = dls_holder_rebind(r->holder, c, res, &w);
    if (rc != 0) {
        dls_cursor_del(c);
        dls_resolver_del(res);
        dls_medium_del(m);
        if (rc == 1)
            r->jstat = st;
        return; /* not readable yet (being created): try again later */
    }
    r->jstat = st;
    dls_cursor_del(r->jcursor);
    dls_resolver_del(r->jresolver);
    dls_medium_del(r->journal);
    r->journal = m;
    r->jcursor = c;
    r->jresolver = res;
    fprintf(stderr, "daolease run: %s: the grantor's journal was replaced; waiting for "
                    "the re-grant of \"%s\" (lease %" PRIu64 " runs out at its bound)\n",
            r->cfg.journal, r->subject, r->lease);
}

/* cli.md `run`: a medium path that does not exist is an
 * error (a typo would otherwise start a fresh medium the judge never reads)
 * unless creating it was asked for. */
static int check_medium(const struct run *r)
{
    struct stat st;
    if (r->create || strstr(r->cfg.medium, "://") || stat(r->cfg.medium, &st) == 0)
        return 0;
    dls_cli_error("run", "%s: the holder's medium does not exist (create it with "
                  "`daolease stream create`, or pass --create, or set \"create_medium\": "
                  "true in %s)", r->cfg.medium, r->cfg.file);
    return DLS_ERR_NOTFOUND;
}

static int assemble(struct run *r)
{
    int rc = check_medium(r);
    if (rc)
        return rc;
    if ((rc = dls_cli_load_keys("run", r->cfg.key, r->cfg.keyring, &r->secret, &r->keyring)))
        return rc;
    dls_sync sync = dls_cli_sync(r->cfg.sync);
    if ((rc = dls_cli_open(&r->own, "run", r->cfg.medium, DLS_OPEN_APPEND, r->create,
                           sync)) ||
        (rc = dls_cli_open(&r->journal, "run", r->cfg.journal, DLS_OPEN_READ, false, sync)))
        return rc;
    if ((rc = dls_cursor_new(&r->jcursor, r->journal, 0)) ||
        (rc = dls_resolver_new_signed(&r->jresolver, dls_medium_id(r->journal), r->keyring)) ||
        (rc = dls_cli_ticks_new(&r->ticks, "run", true))) {
        dls_cli_error("run", "%s: %s", r->cfg.journal, dls_strerror(rc));
        return rc;
    }
    dls_holder_parts parts = {
        .name = r->cfg.party, .secret = r->secret, .medium = r->own,
        .grantor = r->cfg.grantor, .journal = r->jcursor, .journal_resolver = r->jresolver,
    };
    r->watch_journal = !strstr(r->cfg.journal, "://") && stat(r->cfg.journal, &r->jstat) == 0;
    return dls_cli_holder_new(&r->holder, "run", r->cfg.file, &parts, &r->ticks);
}

/* Frees what assemble() made (the configuration stays). */
static void disassemble(struct run *r)
{
    dls_holder_del(r->holder);
    dls_cli_ticks_del(&r->ticks);
    dls_resolver_del(r->jresolver);
    dls_cursor_del(r->jcursor);
    dls_medium_del(r->journal);
    dls_medium_del(r->own);
    dls_keyring_del(r->keyring);
    dls_secret_del(r->secret);
    r->holder = NULL;
    r->jresolver = NULL;
    r->jcursor = NULL;
    r->journal = r->own = NULL;
    r->keyring = NULL;
    r->secret = NULL;
}

static void teardown(struct run *r)
{
    disassemble(r);
    dls_config_free(&r->cfg);
}

/* Is there start-up budget left for another try after a transport error
 * (STARTUP_RETRY_NS since the start)? Says so on stderr when there is. */
static bool startup_retry(const struct run *r, const char *what, unsigned tries)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t spent = (int64_t)(now.tv_sec - r->t0.tv_sec) * (int64_t)DLS_NS_PER_S +
                    (int64_t)(now.tv_nsec - r->t0.tv_nsec);
    if (dls_cli_stop_requested() || spent + (int64_t)STARTUP_PAUSE_NS >= (int64_t)STARTUP_RETRY_NS)
        return false;
    fprintf(stderr, "daolease run: %s: transport error at start-up (try %u); trying again "
                    "every %u ms for up to %u s from the start\n",
            what, tries, (unsigned)(STARTUP_PAUSE_NS / DLS_NS_PER_MS),
            (unsigned)(STARTUP_RETRY_NS / DLS_NS_PER_S));
    dls_cli_sleep(STARTUP_PAUSE_NS);
    return true;
}

/* assemble(), tried again after a transport error within the start-up
 * budget (a remote medium or journal briefly unreachable). */
static int assemble_retrying(struct run *r)
{
    for (unsigned tries = 1;; tries++) {
        int rc = assemble(r);
        if (rc != DLS_ERR_TRANSPORT || !startup_retry(r, "opening the media", tries))
            return rc;
        disassemble(r);
    }
}

/* Starts CMD in its own process group with the parent-death signal set:
 * if `run` dies — even by SIGKILL, when it can neither
 * stop CMD nor renew — the kernel sends CMD SIGKILL, so CMD never works on
 * past a lease nobody renews. SIGKILL, not SIGTERM: nobody is left to
 * escalate after a grace. The getppid() check closes the race of `run`
 * dying between fork() and prctl(). */
static pid_t spawn_child(char *const argv[], char *const env[])
{
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid != 0) {
        if (pid > 0)
            setpgid(pid, pid); /* also in the child: whichever runs first */
        return pid;
    }
    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(127);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    for (size_t i = 0; env && env[i]; i++)
        putenv(env[i]);
    execvp(argv[0], argv);
    _exit(127);
}

static int start_child(struct run *r, char **cmd)
{
    static char lease_env[64], subject_env[DLS_SUBJECT_MAX + 32];
    snprintf(lease_env, sizeof lease_env, "DAOLEASE_LEASE=%" PRIu64, r->lease);
    snprintf(subject_env, sizeof subject_env, "DAOLEASE_SUBJECT=%s", r->subject);
    char *env[] = {lease_env, subject_env, NULL};
    r->child = spawn_child(cmd, env);
    if (r->child < 0) {
        dls_cli_error("run", "%s: cannot start: %s", cmd[0], strerror(errno));
        return -1;
    }
    return 0;
}

/* The bound was reached (or the lease lapsed): stop the child. */
static void lose(struct run *r, uint64_t now, const char *why)
{
    if (r->child <= 0 || r->stopping)
        return;
    fprintf(stderr, "daolease run: lease lost: lease %" PRIu64 " on \"%s\" %s; stopping %d\n",
            r->lease, r->subject, why, (int)r->child);
    kill(-r->child, SIGTERM);
    r->stopping = true;
    r->stop_at = now;
}

/* A renewal of the run's lease failed (holder.md, `daolease run`; a
 * broken medium: docs/redis.md, docs/jetstream.md). Each new error is said
 * once. A medium that refuses the append — a bogus entry on it, its id
 * changed, a key of another type, an ACL — will refuse every renewal until
 * an operator acts: CMD is stopped at once rather than at the bound. A
 * transport error may heal: the holder tries again at its next step and
 * the bound protects the lease; a sealed medium (an operator's deliberate
 * end) runs to the bound as before. */
static void renewal_failed(struct run *r, uint64_t now, int err)
{
    if (err != r->renew_err)
        fprintf(stderr, "daolease run: %s: a renewal of lease %" PRIu64 " failed: %s\n",
                r->cfg.medium, r->lease, dls_strerror(err));
    r->renew_err = err;
    if (err == DLS_ERR_CORRUPT || err == DLS_ERR_MEDIUM_ID || err == DLS_ERR_REDIS_TYPE ||
        err == DLS_ERR_PERM) {
        char why[200];
        snprintf(why, sizeof why,
                 "stopped: its medium refuses every append (%s): the medium is unusable "
                 "(docs/redis.md, docs/jetstream.md: A broken medium)",
                 dls_strerror(err));
        lose(r, now, why);
    }
}

static void handle_events(struct run *r, const dls_holder_result *res, char **cmd, int *exit_code)
{
    for (size_t i = 0; i < res->n_events; i++) {
        const dls_holder_event *e = &res->events[i];
        dls_holder_lease li;
        if (e->kind == DLS_HOLDER_GRANTED && e->proposal == r->proposal && !r->lease) {
            r->lease = e->lease;
            write_lease_file(r);
            if (start_child(r, cmd))
                *exit_code = DLS_EXIT_FAIL;
        } else if (e->kind == DLS_HOLDER_GRANTED && e->proposal == 0 && r->lease &&
                   r->child > 0 && !r->stopping &&
                   dls_holder_lease_info(r->holder, e->lease, &li) == 0 &&
                   li.subject.n == r->subject_enc.n &&
                   memcmp(li.subject.p, r->subject_enc.p, li.subject.n) == 0) {
            /* a new journal re-granted the subject: the run goes on under it */
            fprintf(stderr, "daolease run: re-granted: lease %" PRIu64 " on \"%s\" "
                            "(was %" PRIu64 ")\n", e->lease, r->subject, r->lease);
            r->lease = e->lease;
            write_lease_file(r);
        } else if (e->kind == DLS_HOLDER_REFUSED && e->proposal == r->proposal) {
            dls_cli_error("run", "no lease on \"%s\": refused (%s)", r->subject,
                          e->text[0] ? e->text : "no reason");
            *exit_code = EXIT_NO_LEASE;
        } else if (e->lease && e->lease == r->lease && e->kind == DLS_HOLDER_BOUND) {
            /* holder.md rev 4: say how far behind confirmation is */
            char why[DLS_HOLDER_TEXT_MAX + 160];
            dls_holder_lease li;
            if (dls_holder_lease_info(r->holder, r->lease, &li) == 0 && li.renewed)
                snprintf(why, sizeof why,
                         "stopped: %s (last ok renewal at reading %" PRIu64
                         " ns, last confirmed %s%" PRIu64 " ns)",
                         e->text[0] ? e->text : "reached its bound", li.last_renewal,
                         li.confirmed ? "at reading " : "none; granted at ",
                         li.confirmed ? li.confirmed_renewal : li.observed);
            else
                snprintf(why, sizeof why, "stopped: %s",
                         e->text[0] ? e->text : "reached its bound");
            lose(r, res->now, why);
        } else if (e->lease && e->lease == r->lease && e->kind == DLS_HOLDER_RENEWAL_FAILED) {
            renewal_failed(r, res->now, e->error);
        } else if (e->lease && e->lease == r->lease && e->kind == DLS_HOLDER_LAPSED) {
            lose(r, res->now, "was reclaimed by the grantor");
        } else if (e->kind == DLS_HOLDER_SIZING) {
            fprintf(stderr, "daolease run: warning: %s\n", e->text);
        }
    }
}

static void watch_child(struct run *r, uint64_t now)
{
    int ws;
    if (r->child > 0 && waitpid(r->child, &ws, WNOHANG) == r->child) {
        r->child_status = dls_cli_exit_status(ws);
        r->child = 0;
        return;
    }
    if (r->stopping && !r->killed && r->child > 0 &&
        dls_passed(r->stop_at, now, r->cfg.grace.ns)) {
        kill(-r->child, SIGKILL);
        r->killed = true;
    }
    int sig = dls_cli_stop_requested();
    if (sig && r->child > 0 && !r->stopping) {
        kill(-r->child, sig);
        r->stopping = true;
        r->stop_at = now;
    }
}

/* After the child exited: release (retrying through steps) unless lost. */
static int finish(struct run *r)
{
    if (r->stopping && !dls_holder_may_act(r->holder, r->lease))
        return r->child_status;
    bool commit = r->child_status == 0;
    int rc = dls_holder_release(r->holder, r->lease, commit);
    for (int i = 0; rc && i < 200; i++) {
        dls_cli_sleep(TURN_NS);
        dls_tick_now(r->ticks.adapter, NULL);
        dls_holder_result res;
        dls_holder_step(r->holder, &res);
        dls_holder_lease info;
        if (dls_holder_lease_info(r->holder, r->lease, &info) == 0 &&
            info.state == DLS_HOLDER_RELEASED_OK)
            rc = 0;
    }
    if (rc)
        dls_cli_error("run", "%s: release of lease %" PRIu64 " failed: %s",
                      r->cfg.medium, r->lease, dls_strerror(rc));
    return r->child_status;
}

static int loop(struct run *r, char **cmd, const dls_duration *ask, dls_mode mode,
                uint64_t wait_ns)
{
    uint8_t subject[DLS_SUBJECT_MAX];
    size_t n;
    if (dls_cli_subject(r->subject, subject, sizeof subject, &n)) {
        dls_cli_error("run", "--subject: must be 1 to 1021 bytes");
        return DLS_EXIT_USAGE;
    }
    uint64_t start;
    if (dls_tick_now(r->ticks.adapter, &start))
        return DLS_EXIT_FAIL;
    r->subject_enc = (dls_bytes){subject, n};
    int rc;
    for (unsigned tries = 1;; tries++) {
        /* a proposal whose append failed may have been stored all the same:
         * a grant of it is then one this holder cannot match, and lapses by
         * silence (cli.md `run`, start-up) */
        rc = dls_holder_propose(r->holder, subject, n, ask, mode, &r->proposal);
        if (rc != DLS_ERR_TRANSPORT || !startup_retry(r, r->cfg.medium, tries))
            break;
    }
    if (rc) {
        dls_cli_error("run", "%s: proposal: %s", r->cfg.medium,
                      dls_holder_message(r->holder)[0] ? dls_holder_message(r->holder)
                                                       : dls_strerror(rc));
        return rc == DLS_ERR_SIZING ? DLS_EXIT_USAGE : DLS_EXIT_FAIL;
    }
    int exit_code = -1;
    while (exit_code < 0) {
        uint64_t now;
        dls_tick_now(r->ticks.adapter, &now);
        dls_holder_result res;
        dls_holder_step(r->holder, &res);
        handle_events(r, &res, cmd, &exit_code);
        watch_child(r, now);
        if (r->lease && r->child > 0)
            watch_journal(r);
        if (r->lease && r->child == 0 && r->child_status >= 0)
            return finish(r);
        if (!r->lease && exit_code < 0 &&
            (dls_cli_stop_requested() || (wait_ns && dls_passed(start, now, wait_ns)))) {
            dls_cli_error("run", "no lease on \"%s\" within the wait", r->subject);
            exit_code = EXIT_NO_LEASE;
        }
        uint64_t sleep = TURN_NS;
        if (res.has_next && res.next_reading > now && res.next_reading - now < sleep)
            sleep = res.next_reading - now;
        if (exit_code < 0)
            dls_cli_sleep(sleep);
    }
    return exit_code;
}

int dls_cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, 0, 'c'}, {"subject", required_argument, 0, 's'},
        {"duration", required_argument, 0, 'd'}, {"wait", required_argument, 0, 'w'},
        {"shared", no_argument, 0, 'S'}, {"create", no_argument, 0, 'C'},
        {"lease-file", required_argument, 0, 'L'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    struct run r;
    memset(&r, 0, sizeof r);
    r.child_status = -1;
    const char *config = NULL;
    dls_duration ask, wait = {0};
    bool has_ask = false;
    dls_mode mode = DLS_MODE_EXCLUSIVE;
    int c;
    optind = 1;
    opterr = 0;
    if (dls_cli_exact_options("run", argc, argv, opts, 1))
        return DLS_EXIT_USAGE;
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': config = optarg; break;
        case 's': r.subject = optarg; break;
        case 'd':
            if (dls_cli_duration(optarg, &ask)) {
                dls_cli_error("run", "--duration %s: not a duration such as 3s or 500ms", optarg);
                return DLS_EXIT_USAGE;
            }
            has_ask = true;
            break;
        case 'w':
            if (dls_cli_duration(optarg, &wait)) {
                dls_cli_error("run", "--wait %s: not a duration such as 10s", optarg);
                return DLS_EXIT_USAGE;
            }
            break;
        case 'S': mode = DLS_MODE_SHARED; break;
        case 'C': r.create = true; break;
        case 'L': r.lease_file = optarg; break;
        case 'h': fputs(usage_text, stdout); return DLS_EXIT_OK;
        default: return dls_cli_bad_option("run", c, argv);
        }
    }
    if (!config || !r.subject || optind >= argc)
        return dls_cli_usage("run", !config ? "--config is required"
                                    : !r.subject ? "--subject is required"
                                                 : "a command to run is required (after --)");
    if (dls_config_load(&r.cfg, config, "medium grantor")) {
        dls_config_free(&r.cfg);
        return DLS_EXIT_USAGE;
    }
    if (!has_ask)
        ask = r.cfg.duration;
    r.create = r.create || r.cfg.create_medium;
    dls_cli_catch_stop();
    clock_gettime(CLOCK_MONOTONIC, &r.t0);
    int code = assemble_retrying(&r) ? DLS_EXIT_FAIL : loop(&r, argv + optind, &ask, mode, wait.ns);
    if (r.child > 0) { /* never leave the child behind */
        kill(-r.child, SIGKILL);
        waitpid(r.child, NULL, 0);
    }
    teardown(&r);
    return code;
}
