/* daolease demo — the main job on the embedded default (cli.md `demo`).
 *
 * In a folder of stream files: a judge (this process, the owner of the work
 * items) and N agent processes, each a holder, claiming M work items. K
 * agents are killed with SIGKILL mid-work; their items are reclaimed by
 * silence and granted again to the others. Every item is done exactly once:
 * the owner counts an item done when its reclaim arrives with `commit`, and
 * checks the results file, where each result carries its lease id (the
 * fencing token). The run ends with an audit of the journal and the media
 * (the same code as `daolease audit`), an SVG timeline, and manifest.json
 * so that anyone can audit the run again.
 *
 * With --standby (judge.md rev 5, "Standby judges and takeover";
 * docs/standby.md) the owner's judge runs in a child process with the same
 * callbacks, reporting its grants and reclaims over a pipe, while this
 * process assembles a standby judge on the same inputs and follows the
 * journal. Mid-run the child is killed with SIGKILL; the kernel frees the
 * journal's writer lock, the standby takes over and this process is the
 * owner from then on (cli/demo_standby.c). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/demo.h"
#include "cli/demo_owner.h"
#include "cli/media.h"
#include "cli/proc.h"
#include "daolease/judge.h"
#include "daolease/redis.h"

#define MS DLS_NS_PER_MS
#define SECOND DLS_NS_PER_S
#define RUN_LIMIT (120 * SECOND)
#define ITEMS_MAX 1000

static const char usage_text[] =
    "usage: daolease demo [--agents N] [--items M] [--kill K] [--dir D] [--seed S]\n"
    "                     [--redis URL | --nats URL] [--standby]\n\n"
    "Runs a judge and N agent processes over stream files in a new temporary\n"
    "folder (or D), claiming M work items; kills K agents mid-work; their items\n"
    "are reclaimed by silence and granted again. Ends with an audit of the run.\n\n"
    "  --agents N   agent processes (default 4, at most 64)\n"
    "  --items M    work items (default 12, at most 1000)\n"
    "  --kill K     agents killed with SIGKILL mid-work (default 1, < N)\n"
    "  --dir D      the run's folder (created; default: a new folder in /tmp)\n"
    "  --seed S     the seed of the work times and the victims (default 1)\n"
    "  --redis URL  the agents' media on this Redis server (redis://host:port),\n"
    "               keys <run folder>-agent-N; the journal stays a local file\n"
    "  --nats URL   likewise on a NATS JetStream server or cluster\n"
    "               (nats://host:port[,host:port...][?replicas=3...]), one stream\n"
    "               <run folder>-agent-N each\n"
    "  --standby    run the judge in a child process and a standby judge in this\n"
    "               one; kill the judge with SIGKILL mid-run (some items done,\n"
    "               leases held): the standby takes over and finishes the run\n";

static int parse_item(dls_bytes subject, unsigned items)
{
    /* subjects are the str "item/NN" the agents encode */
    if (subject.n < 7 || subject.n > 12 || (subject.p[0] & 0xe0) != 0xa0 ||
        memcmp(subject.p + 1, "item/", 5))
        return -1;
    unsigned v = 0;
    for (size_t i = 6; i < subject.n; i++) {
        if (subject.p[i] < '0' || subject.p[i] > '9')
            return -1;
        v = v * 10 + (unsigned)(subject.p[i] - '0');
    }
    return v < items ? (int)v : -1;
}

/* ---- the owner's callbacks --------------------------------------------- */

/* The owner's reclaim of item i's lease; idempotent: after a takeover the
 * standby runs again a reclaim whose lapse had not landed (docs/standby.md,
 * When it takes over), which the dead judge's process may have run. */
void cmd_demo_note_reclaim(struct demo *d, int i, uint64_t lease, dls_cause cause, bool commit,
                         uint64_t now)
{
    struct item *it = &d->items[i];
    if (it->reclaimed == lease) {
        d->sb.repeated++;
        return;
    }
    it->reclaimed = lease;
    if (commit) {
        it->commits++;
        it->done_lease = lease;
        d->done++;
    }
    if (cause == DLS_CAUSE_SILENCE) {
        d->reclaimed_silence++;
        for (unsigned v = 0; v < d->n_victims; v++)
            if (d->victims[v].lease == lease)
                d->victims[v].reclaimed_at = now;
    } else if (cause == DLS_CAUSE_RELEASE) {
        d->reclaimed_release++;
    }
    if (it->lease == lease) {
        it->lease = 0;
        it->holder = -1;
    }
}

static int on_reclaim(void *user, dls_bytes subject, uint64_t lease, dls_cause cause,
                      bool commit)
{
    struct demo *d = user;
    int i = parse_item(subject, d->p.items);
    if (i < 0)
        return DLS_RECLAIM_DONE;
    demo_standby_event(d, "r %d %" PRIu64 " %d %d %" PRIu64 "\n", i, lease, (int)cause, (int)commit,
               d->now);
    cmd_demo_note_reclaim(d, i, lease, cause, commit, d->now);
    return DLS_RECLAIM_DONE;
}

/* A work queue's policy on top of the default answer (which arrives in
 * *answer): an item released with commit is finished and refused with
 * reason "done"; a held item is refused with "busy" rather than queued, so
 * that a proposal never waits in a queue past the item's completion (a
 * waiter is served without asking the policy again). Agents try a busy
 * item again later. */
static int on_policy(void *user, const dls_judge_ask *ask, dls_judge_answer *answer)
{
    struct demo *d = user;
    int i = parse_item(ask->subject, d->p.items);
    if (i >= 0 && d->items[i].commits) {
        answer->verdict = DLS_JUDGE_REFUSE;
        answer->reason = "done";
    } else if (answer->verdict == DLS_JUDGE_WAIT) {
        answer->verdict = DLS_JUDGE_REFUSE;
        answer->reason = "busy";
    }
    return 0;
}

/* Every grant, once it is on the journal: the demo's grant count is the
 * judge's, not what the agents report (an agent killed before it reports
 * its grant still received one). */
static void on_granted(void *user, const dls_judge_lease_info *l)
{
    struct demo *d = user;
    d->granted++;
    int i = parse_item(l->subject, d->p.items);
    if (i >= 0) {
        demo_standby_event(d, "g %d %" PRIu64 "\n", i, l->lease);
        d->items[i].lease = l->lease;
    }
}

/* ---- setting the run up -------------------------------------------------- */

static int write_keys(struct demo *d)
{
    char path[DEMO_PATH_MAX], line[256];
    demo_path(path, d->dir, "keyring");
    FILE *kr = fopen(path, "we");
    if (!kr) {
        dls_cli_error("demo", "%s: %s", path, strerror(errno));
        return -1;
    }
    fprintf(kr, "# the demo's parties: the grantor and %u agents\n", d->agents);
    int rc = 0;
    for (unsigned i = 0; i <= d->agents && !rc; i++) {
        char name[32], file[64];
        if (i == 0)
            strcpy(name, DEMO_GRANTOR);
        else
            demo_agent_name(name, i - 1);
        dls_secret *s;
        dls_where w = {0};
        snprintf(file, sizeof file, "%s.secret", name);
        demo_path(path, d->dir, file);
        rc = dls_secret_generate(&s, name, DLS_KEY_ED25519);
        if (!rc)
            rc = dls_secret_save(s, path, &w);
        if (!rc)
            rc = dls_secret_keyring_line(s, line, sizeof line);
        if (!rc)
            fprintf(kr, "%s\n", line);
        dls_secret_del(s);
    }
    if (fclose(kr) || rc) {
        dls_cli_error("demo", "%s: cannot write the demo's keys", d->dir);
        return -1;
    }
    return 0;
}

static int create_media_now(void *arg)
{
    struct demo *d = arg;
    char path[DEMO_PATH_MAX];
    dls_medium_settings s;
    dls_medium_settings_default(&s);
    dls_where w = {0};
    dls_medium *m;
    demo_path(path, d->dir, "journal.dls");
    int jrc = dls_medium_create(&m, DLS_MEDIUM_FILE, path, &s, &w);
    if (jrc) {
        dls_cli_error("demo", "%s: %s", path, w.reason ? w.reason : dls_strerror(jrc));
        return -1;
    }
    dls_medium_del(m);
    for (unsigned i = 0; i < d->agents; i++) {
        demo_medium(path, &d->p, i);
        int rc = d->p.redis ? dls_redis_create(&m, path, NULL, &w)
                            : dls_medium_create(&m, DLS_MEDIUM_FILE, path, &s, &w);
        if (rc) {
            dls_cli_error("demo", "%s: %s", path, w.reason ? w.reason : dls_strerror(rc));
            return -1;
        }
        dls_medium_del(m);
    }
    return 0;
}

/* With --nats, in a child process (cli/demo_nats.c): the NATS client must
 * not start in the owner before the agents are forked. */
static int create_media(struct demo *d)
{
    return d->p.nats ? demo_nats_in_child(create_media_now, d) : create_media_now(d);
}

static int fork_agents(struct demo *d)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC))
        return -1;
    d->p.progress_fd = fds[1];
    fflush(NULL);
    for (unsigned i = 0; i < d->agents; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return -1;
        if (pid == 0) {
            close(fds[0]);
            _exit(demo_agent_main(&d->p, i));
        }
        d->pid[i] = pid;
        d->alive[i] = true;
    }
    close(fds[1]);
    d->progress_rd = fds[0];
    return fcntl(d->progress_rd, F_SETFL, O_NONBLOCK);
}

/* The owner's judge; with `standby` the standby judge of --standby, which
 * follows the journal through a read handle and opens it for append itself
 * when it takes over (include/daolease/judge.h, takeover_sync). The inputs
 * are the judge's exactly (judge.md rev 5, Standby judges). */
int cmd_demo_assemble(struct demo *d, bool standby)
{
    char path[DEMO_PATH_MAX], keyring[DEMO_PATH_MAX];
    dls_where w = {0};
    demo_path(path, d->dir, DEMO_GRANTOR ".secret");
    demo_path(keyring, d->dir, "keyring");
    if (dls_cli_load_keys("demo", path, keyring, &d->secret, &d->keyring))
        return -1;
    demo_path(path, d->dir, "journal.dls");
    if (dls_cli_open(&d->journal, "demo", path, standby ? DLS_OPEN_READ : DLS_OPEN_APPEND,
                     false, DLS_SYNC_DATA))
        return -1;
    for (unsigned i = 0; i < d->agents; i++) {
        demo_medium(path, &d->p, i);
        if (dls_cli_open(&d->media[i], "demo", path, DLS_OPEN_READ, false, DLS_SYNC_DATA) ||
            dls_resolver_new_signed(&d->resolvers[i], dls_medium_id(d->media[i]), d->keyring))
            return -1;
        d->jm[i] = (dls_judge_medium){d->media[i], d->resolvers[i]};
    }
    if (dls_cli_ticks_new(&d->ticks, "demo", false))
        return -1;
    dls_judge_tick_source ts;
    dls_judge_settings s;
    dls_cli_judge_settings(&s, &ts, &d->ticks, d->secret, d->journal, d->jm, d->agents);
    s.tolerance_ns = 250 * MS;
    s.cadence_ns = 100 * MS;
    s.default_duration = dls_duration_from_ns(d->p.duration_ns);
    s.standby = standby;
    s.takeover_sync = DLS_SYNC_DATA;
    dls_judge_callbacks cb = {.reclaim = on_reclaim, .policy = on_policy, .granted = on_granted,
                              .took_over = demo_standby_took_over};
    int rc = dls_judge_new(&d->judge, &s, &cb, d, &w);
    if (rc)
        dls_cli_error("demo", "judge: %s", w.reason ? w.reason : dls_strerror(rc));
    return rc;
}

void cmd_demo_teardown(struct demo *d)
{
    dls_judge_del(d->judge);
    dls_cli_ticks_del(&d->ticks);
    for (unsigned i = 0; i < d->agents; i++) {
        dls_resolver_del(d->resolvers[i]);
        dls_medium_del(d->media[i]);
    }
    dls_medium_del(d->journal);
    dls_keyring_del(d->keyring);
    dls_secret_del(d->secret);
    free(d->items);
    if (d->progress_rd > 0)
        close(d->progress_rd);
}

/* ---- the run --------------------------------------------------------------- */

static int agent_index(const char *name)
{
    unsigned v;
    return sscanf(name, "agent-%u", &v) == 1 && v >= 1 && v <= AGENTS_MAX ? (int)v - 1 : -1;
}

static void kill_agent(struct demo *d, int a, unsigned item, uint64_t lease)
{
    kill(d->pid[a], SIGKILL);
    struct victim *v = &d->victims[d->n_victims++];
    *v = (struct victim){a, item, lease, d->now, 0};
    printf("%skilled agent-%d (SIGKILL) while it worked on item/%02u under lease %" PRIu64 "\n",
           d->tty ? "\r\033[K" : "", a + 1, item, lease);
}

/* Victims: the first K distinct agents to be granted an item after the
 * first few grants, each killed right at its grant — so mid-work. */
static bool choose_victim(struct demo *d, int a)
{
    if (d->n_victims >= d->kills || d->granted < d->agents)
        return false;
    for (unsigned v = 0; v < d->n_victims; v++)
        if (d->victims[v].agent == a)
            return false;
    return (d->granted + d->p.seed) % 2 == 0 || d->granted > 2 * d->agents;
}

static void on_progress_line(struct demo *d, const char *line)
{
    char kind, name[32];
    unsigned item = 0;
    uint64_t lease = 0;
    if (sscanf(line, "%c %31s %u %" SCNu64, &kind, name, &item, &lease) < 2)
        return;
    int a = agent_index(name);
    if (a < 0 || (unsigned)a >= d->agents || (kind != 'X' && item >= d->p.items))
        return;
    switch (kind) {
    case 'G':
        d->items[item].lease = lease;
        d->items[item].holder = a;
        if (d->alive[a] && choose_victim(d, a))
            kill_agent(d, a, item, lease);
        break;
    case 'L': d->lost++; break;
    case 'A': d->items[item].adopted = lease; break;
    case 'X': d->finished[a] = true; break;
    default: break;
    }
}

/* Reads what `fd` (non-blocking) has and hands each whole line to fn.
 * Returns 1 at the end of the pipe (every writer gone), else 0. */
int cmd_demo_read_lines(struct demo *d, int fd, struct demo_lines *lb,
                      void (*fn)(struct demo *, const char *))
{
    ssize_t n;
    while ((n = read(fd, lb->buf + lb->have, sizeof lb->buf - 1 - lb->have)) > 0) {
        lb->have += (size_t)n;
        lb->buf[lb->have] = 0;
        char *start = lb->buf, *nl;
        while ((nl = strchr(start, '\n'))) {
            *nl = 0;
            fn(d, start);
            start = nl + 1;
        }
        lb->have = (size_t)(lb->buf + lb->have - start);
        memmove(lb->buf, start, lb->have);
        if (lb->have == sizeof lb->buf - 1) /* no line is this long: drop it */
            lb->have = 0;
    }
    return n == 0;
}

static void read_progress(struct demo *d)
{
    cmd_demo_read_lines(d, d->progress_rd, &d->progress, on_progress_line);
}

static void reap(struct demo *d)
{
    int ws;
    pid_t pid;
    while ((pid = waitpid(-1, &ws, WNOHANG)) > 0) {
        bool sigkill = WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL;
        if (pid == d->sb.pid) {
            d->sb.pid = 0;
            if (!(d->sb.killed && sigkill))
                fprintf(stderr, "daolease demo: the judge's process ended with status %d\n",
                        dls_cli_exit_status(ws));
        }
        for (unsigned i = 0; i < d->agents; i++)
            if (d->pid[i] == pid) {
                d->alive[i] = false;
                if (!d->finished[i] && !sigkill)
                    fprintf(stderr, "daolease demo: agent-%u ended with status %d\n", i + 1,
                            dls_cli_exit_status(ws));
            }
    }
}

static unsigned alive_count(const struct demo *d)
{
    unsigned n = 0;
    for (unsigned i = 0; i < d->agents; i++)
        n += d->alive[i];
    return n;
}

static void show(const struct demo *d, bool final)
{
    if (!d->tty && !final)
        return;
    printf("%sitems done %u/%u  agents alive %u/%u  grants %u  reclaimed: release %u silence %u%s",
           d->tty ? "\r\033[K" : "", d->done, d->p.items, alive_count(d), d->agents, d->granted,
           d->reclaimed_release, d->reclaimed_silence, final || !d->tty ? "\n" : "");
    fflush(stdout);
}

static int run(struct demo *d)
{
    uint64_t start = 0, last_show = 0, settle = 0;
    for (;;) {
        if (dls_tick_now(d->ticks.adapter, &d->now))
            return -1;
        if (!start)
            start = d->now;
        dls_judge_pass_result r;
        int rc = dls_judge_pass(d->judge, &r);
        if (rc) {
            dls_cli_error("demo", "judge pass: %s", dls_strerror(rc));
            return -1;
        }
        read_progress(d);
        demo_standby_step(d, &r);
        reap(d);
        if (dls_passed(last_show, d->now, 100 * MS)) {
            show(d, false);
            last_show = d->now;
        }
        /* Done when every item is done and no agent is left; then a few
         * passes more so the journal records the last lapses. */
        if (d->done == d->p.items && alive_count(d) == 0 && r.live == 0 &&
            (!d->sb.on || d->sb.took_over_pass)) {
            if (!settle)
                settle = d->now;
            else if (dls_passed(settle, d->now, 300 * MS))
                return 0;
        }
        if (dls_passed(start, d->now, RUN_LIMIT)) {
            dls_cli_error("demo", "the run did not finish within %llu s",
                          (unsigned long long)(RUN_LIMIT / SECOND));
            return -1;
        }
        dls_cli_sleep(20 * MS);
    }
}

/* ---- checking the outcome --------------------------------------------------- */

/* Every item done exactly once: one reclaim with commit, and exactly one
 * result line carrying that lease; a result under any other lease would be
 * a write by a holder that had lost its lease. One exception, announced by
 * the agent ('A'): the committed lease's holder found the result already
 * written under an earlier lease of the item, whose commit never counted
 * (its release arrived after the judge had lapsed it by silence, e.g.
 * while a medium failed over) — then exactly one result line, under an
 * earlier lease, is the item done once. */
static int check_results(const struct demo *d)
{
    char path[DEMO_PATH_MAX], line[256];
    demo_path(path, d->dir, "results.jsonl");
    unsigned *results = calloc(d->p.items, sizeof *results);
    unsigned stale = 0, bad = 0;
    FILE *f = fopen(path, "re");
    while (results && f && fgets(line, sizeof line, f)) {
        unsigned item;
        uint64_t lease;
        if (sscanf(line, "{\"item\": %u, \"lease\": %" SCNu64, &item, &lease) != 2 ||
            item >= d->p.items) {
            bad++;
            continue;
        }
        const struct item *it = &d->items[item];
        bool adopted = it->adopted && it->adopted == it->done_lease && lease < it->done_lease;
        if (it->done_lease == lease || adopted)
            results[item]++;
        else
            stale++;
    }
    if (f)
        fclose(f);
    unsigned ok = 0;
    for (unsigned i = 0; results && i < d->p.items; i++) {
        if (d->items[i].commits == 1 && results[i] == 1)
            ok++;
        else
            printf("item/%02u: %u commits, %u results under its committed lease\n", i,
                   d->items[i].commits, results[i]);
    }
    free(results);
    printf("exactly once: %u of %u items done once, %u stale results, %u unreadable lines\n",
           ok, d->p.items, stale, bad);
    return ok == d->p.items && stale == 0 && bad == 0 ? 0 : -1;
}

static void report_victims(const struct demo *d)
{
    uint64_t bound = d->p.duration_ns + 250 * MS + 100 * MS;
    for (unsigned v = 0; v < d->n_victims; v++) {
        const struct victim *x = &d->victims[v];
        if (x->reclaimed_at)
            printf("agent-%d's item/%02u (lease %" PRIu64 "): reclaimed by silence %.3f s after "
                   "the kill (bound from the last renewal: duration + tolerance + cadence "
                   "= %.3f s)\n",
                   x->agent + 1, x->item, x->lease,
                   (double)(x->reclaimed_at - x->killed_at) / (double)DLS_NS_PER_S,
                   (double)bound / (double)DLS_NS_PER_S);
    }
}

static int write_manifest(const struct demo *d)
{
    char path[DEMO_PATH_MAX];
    demo_path(path, d->dir, "manifest.json");
    FILE *f = fopen(path, "we");
    if (!f)
        return -1;
    fprintf(f, "{\"journal\": \"journal.dls\", \"grantor\": \"%s\", \"keyring\": \"keyring\", "
               "\"media\": [", DEMO_GRANTOR);
    for (unsigned i = 0; i < d->agents; i++) {
        char where[DEMO_PATH_MAX];
        demo_medium(where, &d->p, i);
        const char *shown = d->p.redis || d->p.nats ? where : where + strlen(d->dir) + 1;
        fprintf(f, "%s\"%s\"", i ? ", " : "", shown);
    }
    fprintf(f, "], \"svg\": \"timeline.svg\"}\n");
    return fclose(f);
}

static int audit(const struct demo *d)
{
    char journal[DEMO_PATH_MAX], keyring[DEMO_PATH_MAX], svg[DEMO_PATH_MAX];
    char media[AGENTS_MAX][DEMO_PATH_MAX];
    char *argv[16 + AGENTS_MAX];
    int argc = 0;
    demo_path(journal, d->dir, "journal.dls");
    demo_path(keyring, d->dir, "keyring");
    demo_path(svg, d->dir, "timeline.svg");
    argv[argc++] = "audit";
    argv[argc++] = "--journal";
    argv[argc++] = journal;
    argv[argc++] = "--grantor";
    argv[argc++] = DEMO_GRANTOR;
    argv[argc++] = "--keyring";
    argv[argc++] = keyring;
    argv[argc++] = "--svg";
    argv[argc++] = svg;
    argv[argc++] = "--media";
    for (unsigned i = 0; i < d->agents; i++) {
        demo_medium(media[i], &d->p, i);
        argv[argc++] = media[i];
    }
    argv[argc] = NULL;
    printf("\naudit of the run (daolease audit):\n");
    fflush(stdout);
    return dls_cmd_audit(argc, argv);
}

static int make_dir(struct demo *d, const char *dir)
{
    if (dir) {
        int made = mkdir(dir, 0700);
        if (made && errno != EEXIST) {
            dls_cli_error("demo", "%s: %s", dir, strerror(errno));
            return -1;
        }
        d->made_dir = made == 0;
        if (strlen(dir) > 3900) {
            dls_cli_error("demo", "--dir: a path of at most 3900 bytes");
            return -1;
        }
        snprintf(d->dir, sizeof d->dir, "%s", dir);
        return 0;
    }
    snprintf(d->dir, sizeof d->dir, "/tmp/daolease-demo-XXXXXX");
    if (!mkdtemp(d->dir)) {
        dls_cli_error("demo", "/tmp: cannot make a folder: %s", strerror(errno));
        return -1;
    }
    d->made_dir = true;
    return 0;
}

/* Set-up failed (docs/cli.md `demo`): the folder this run made holds
 * only the files set-up wrote (keys, keyring, empty media): remove them
 * and it, leaving nothing half-made behind. A folder given by --dir that
 * existed before is left alone. */
static void remove_made_dir(const struct demo *d)
{
    if (!d->made_dir)
        return;
    DIR *dh = opendir(d->dir);
    if (dh) {
        struct dirent *e;
        while ((e = readdir(dh)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                (void)unlinkat(dirfd(dh), e->d_name, 0);
        closedir(dh);
    }
    (void)rmdir(d->dir);
}

static int parse(struct demo *d, int argc, char **argv, const char **dir)
{
    static const struct option opts[] = {
        {"agents", required_argument, 0, 'a'}, {"items", required_argument, 0, 'm'},
        {"kill", required_argument, 0, 'k'}, {"dir", required_argument, 0, 'd'},
        {"seed", required_argument, 0, 's'}, {"redis", required_argument, 0, 'r'},
        {"nats", required_argument, 0, 'n'}, {"standby", no_argument, 0, 'S'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
    };
    int c;
    optind = 1;
    opterr = 0;
    if (dls_cli_exact_options("demo", argc, argv, opts, 0))
        return -1;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        unsigned long long v = 0;
        if (c == 'a' || c == 'm' || c == 'k' || c == 's') {
            char *end;
            v = strtoull(optarg, &end, 10);
            if (!*optarg || *end || optarg[0] == '-') {
                char problem[96];
                snprintf(problem, sizeof problem, "--%s takes a number, not '%.40s'",
                         c == 'a' ? "agents" : c == 'm' ? "items" : c == 'k' ? "kill" : "seed",
                         optarg);
                dls_cli_usage("demo", problem);
                return -1;
            }
        }
        switch (c) {
        case 'a': d->agents = v > AGENTS_MAX ? AGENTS_MAX + 1 : (unsigned)v; break;
        case 'm': d->p.items = v > ITEMS_MAX ? ITEMS_MAX + 1 : (unsigned)v; break;
        case 'k': d->kills = v > AGENTS_MAX ? AGENTS_MAX + 1 : (unsigned)v; break;
        case 'd': *dir = optarg; break;
        case 's': d->p.seed = v; break;
        case 'r': d->p.redis = optarg; break;
        case 'n': d->p.nats = optarg; break;
        case 'S': d->sb.on = true; break;
        case 'h': fputs(usage_text, stdout); return 1;
        default: dls_cli_bad_option("demo", c, argv); return -1;
        }
    }
    char problem[96] = "";
    if (optind != argc)
        snprintf(problem, sizeof problem, "unexpected argument '%.40s'", argv[optind]);
    else if (d->agents < 1 || d->agents > AGENTS_MAX)
        snprintf(problem, sizeof problem, "--agents must be 1 to %d", AGENTS_MAX);
    else if (d->p.items < 1 || d->p.items > ITEMS_MAX)
        snprintf(problem, sizeof problem, "--items must be 1 to %d", ITEMS_MAX);
    else if (d->kills >= d->agents)
        snprintf(problem, sizeof problem, "--kill must be below --agents");
    if (problem[0]) {
        dls_cli_usage("demo", problem);
        return -1;
    }
    return 0;
}

int dls_cmd_demo(int argc, char **argv)
{
    struct demo d;
    memset(&d, 0, sizeof d);
    d.agents = 4;
    d.kills = 1;
    d.p.items = 12;
    d.p.seed = 1;
    d.p.duration_ns = 1 * SECOND;
    d.p.work_min_ns = 300 * MS;
    d.p.work_max_ns = 700 * MS;
    d.progress_rd = -1;
    d.sb.events_rd = d.sb.events_wr = -1;
    const char *dir = NULL;
    int rc = parse(&d, argc, argv, &dir);
    if (rc)
        return rc > 0 ? DLS_EXIT_OK : DLS_EXIT_USAGE;
    d.tty = isatty(STDOUT_FILENO);
    if (make_dir(&d, dir))
        return DLS_EXIT_FAIL;
    d.p.dir = d.dir;
    d.p.agents = d.agents;
    d.items = calloc(d.p.items, sizeof *d.items);
    for (unsigned i = 0; d.items && i < d.p.items; i++)
        d.items[i].holder = -1;
    int code = DLS_EXIT_FAIL;
    /* set-up first: when it fails (say, a Redis server that does not
     * answer) its one line is the whole story, and the folder goes */
    if (!d.items || write_keys(&d) || create_media(&d)) {
        if (!d.items)
            dls_cli_error("demo", "out of memory");
        remove_made_dir(&d);
        cmd_demo_teardown(&d);
        return DLS_EXIT_FAIL;
    }
    printf("daolease demo: %u agents, %u items, %u to be killed, in %s\n", d.agents,
           d.p.items, d.kills, d.dir);
    printf("lease duration 1 s, tolerance 250 ms, cadence 100 ms; work takes 300-700 ms an item\n");
    if (d.sb.on)
        printf("the judge runs in its own process, a standby judge in this one; the judge's "
               "process is killed mid-run\n");
    if (fork_agents(&d) || (d.sb.on ? demo_standby_start(&d) : cmd_demo_assemble(&d, false)) ||
        run(&d)) {
        dls_cli_error("demo", "%s: the run failed", d.dir);
    } else {
        show(&d, true);
        report_victims(&d);
        demo_standby_report(&d);
        int checked = check_results(&d);
        dls_judge_del(d.judge); /* the journal is complete: audit it */
        d.judge = NULL;
        int audited = write_manifest(&d) ? DLS_EXIT_FAIL : audit(&d);
        char url[512];
        if (d.p.redis || d.p.nats) /* the agents' media are streams on the server */
            printf("\nthe run's files: %s (manifest.json, journal.dls, keyring, results.jsonl, "
                   "timeline.svg); the agents' media: on %s (manifest.json names them)\n",
                   d.dir, d.p.redis ? dls_cli_shown(d.p.redis, url, sizeof url) : d.p.nats);
        else
            printf("\nthe run's files: %s (manifest.json, journal.dls, agent-N.dls, keyring, "
                   "results.jsonl, timeline.svg)\n", d.dir);
        code = checked == 0 && audited == 0 ? DLS_EXIT_OK : DLS_EXIT_FAIL;
        if (code == 0 && d.sb.on)
            printf("demo passed: every item done exactly once, audit clean, the standby judge "
                   "took over at pass %" PRIu64 "\n", d.sb.took_over_pass);
        else
            printf("demo %s\n", code == 0 ? "passed: every item done exactly once, audit clean"
                                          : "FAILED");
    }
    demo_standby_stop(&d);
    for (unsigned i = 0; i < d.agents; i++)
        if (d.alive[i]) {
            kill(d.pid[i], SIGKILL);
            waitpid(d.pid[i], NULL, 0);
        }
    cmd_demo_teardown(&d);
    return code;
}
