/* daolease demo — one agent process: a holder claiming work items.
 *
 * The agent proposes one item at a time. A grant starts the work (a few
 * hundred milliseconds of "processing", renewing through the holder's
 * steps); before writing its result the agent asks the holder whether it may
 * still act, writes one line carrying the lease id (the fencing token) to
 * results.jsonl, and releases with commit. A refusal "done" tells it an item
 * is finished; "unavailable" means another agent holds it: try later. */
#include <fcntl.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/demo.h"
#include "cli/media.h"
#include "cli/proc.h"
#include "daolease/holder.h"

#define TURN_NS (5 * DLS_NS_PER_MS)
#define ANSWER_WAIT_NS (30 * DLS_NS_PER_S)   /* a judge that never answers */
#define BUSY_BACKOFF_NS (50 * DLS_NS_PER_MS) /* after a "busy" refusal */

struct agent {
    const demo_params *p;
    unsigned index;
    char name[32];
    dls_secret *secret;
    dls_keyring *keyring;
    dls_medium *own, *journal;
    dls_cursor *jcursor;
    dls_resolver *jresolver;
    dls_cli_ticks ticks;
    dls_holder *holder;
    unsigned char *done;
    unsigned n_done;
    uint64_t rng;
};

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void progress(const struct agent *a, char kind, unsigned item, uint64_t lease)
{
    char line[128];
    int n = kind == 'X' ? snprintf(line, sizeof line, "X %s\n", a->name)
                        : snprintf(line, sizeof line, "%c %s %u %" PRIu64 "\n", kind,
                                   a->name, item, lease);
    if (write(a->p->progress_fd, line, (size_t)n) != n)
        _exit(3);
}

static int assemble(struct agent *a)
{
    char path[DEMO_PATH_MAX], keyring[DEMO_PATH_MAX], file[64];
    snprintf(file, sizeof file, "%s.secret", a->name);
    demo_path(path, a->p->dir, file);
    demo_path(keyring, a->p->dir, "keyring");
    if (dls_cli_load_keys("demo", path, keyring, &a->secret, &a->keyring))
        return -1;
    demo_medium(path, a->p, a->index);
    if (dls_cli_open(&a->own, "demo", path, DLS_OPEN_APPEND, false, DLS_SYNC_DATA))
        return -1;
    demo_path(path, a->p->dir, "journal.dls");
    if (dls_cli_open(&a->journal, "demo", path, DLS_OPEN_READ, false, DLS_SYNC_DATA) ||
        dls_cursor_new(&a->jcursor, a->journal, 0) ||
        dls_resolver_new_signed(&a->jresolver, dls_medium_id(a->journal), a->keyring) ||
        dls_cli_ticks_new(&a->ticks, "demo", true))
        return -1;
    dls_holder_parts parts = {
        .name = a->name, .secret = a->secret, .medium = a->own,
        .grantor = DEMO_GRANTOR, .journal = a->jcursor, .journal_resolver = a->jresolver,
    };
    if (dls_cli_holder_new(&a->holder, "demo", a->name, &parts, &a->ticks))
        return -1;
    a->done = calloc(a->p->items, 1);
    return a->done ? 0 : -1;
}

static void teardown(struct agent *a)
{
    dls_holder_del(a->holder);
    dls_cli_ticks_del(&a->ticks);
    dls_resolver_del(a->jresolver);
    dls_cursor_del(a->jcursor);
    dls_medium_del(a->journal);
    dls_medium_del(a->own);
    dls_keyring_del(a->keyring);
    dls_secret_del(a->secret);
    free(a->done);
}

/* One turn of the loop: a tick, a step; returns now. */
static uint64_t turn(struct agent *a, dls_holder_result *res)
{
    uint64_t now = 0;
    dls_tick_now(a->ticks.adapter, &now);
    dls_holder_step(a->holder, res);
    return now;
}

static void mark_done(struct agent *a, unsigned item)
{
    if (!a->done[item]) {
        a->done[item] = 1;
        a->n_done++;
    }
}

/* Waits for the answer to proposal `handle`: the lease id, or 0. */
static uint64_t await_answer(struct agent *a, uint64_t handle, unsigned item)
{
    uint64_t start = 0;
    dls_tick_now(a->ticks.adapter, &start);
    for (;;) {
        dls_holder_result res;
        uint64_t now = turn(a, &res);
        for (size_t i = 0; i < res.n_events; i++) {
            const dls_holder_event *e = &res.events[i];
            if (e->proposal != handle)
                continue;
            if (e->kind == DLS_HOLDER_GRANTED)
                return e->lease;
            if (e->kind == DLS_HOLDER_REFUSED) {
                if (!strcmp(e->text, "done"))
                    mark_done(a, item);
                else if (!strcmp(e->text, "busy"))
                    dls_cli_sleep(BUSY_BACKOFF_NS); /* held by another: try later */
                return 0;
            }
        }
        if (dls_passed(start, now, ANSWER_WAIT_NS)) {
            fprintf(stderr, "daolease demo: %s: no answer from the judge\n", a->name);
            _exit(4);
        }
        dls_cli_sleep(TURN_NS);
    }
}

static int write_result(const struct agent *a, unsigned item, uint64_t lease)
{
    char path[DEMO_PATH_MAX], line[160];
    demo_path(path, a->p->dir, "results.jsonl");
    int n = snprintf(line, sizeof line,
                     "{\"item\": %u, \"lease\": %" PRIu64 ", \"agent\": \"%s\"}\n", item,
                     lease, a->name);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    int ok = write(fd, line, (size_t)n) == n && fdatasync(fd) == 0;
    close(fd);
    return ok ? 0 : -1;
}

/* Was the item finished by another agent while this one waited for it? */
static bool result_exists(const struct agent *a, unsigned item)
{
    char path[DEMO_PATH_MAX], line[160], want[32];
    demo_path(path, a->p->dir, "results.jsonl");
    snprintf(want, sizeof want, "{\"item\": %u,", item);
    FILE *f = fopen(path, "re");
    bool found = false;
    while (f && !found && fgets(line, sizeof line, f))
        found = !strncmp(line, want, strlen(want));
    if (f)
        fclose(f);
    return found;
}

/* Works on `item` under `lease`; stops when the holder may no longer act. */
static void work(struct agent *a, unsigned item, uint64_t lease)
{
    if (result_exists(a, item)) {
        /* Done under an earlier lease whose commit never counted (the lease
         * lapsed first, e.g. while a medium failed over): release with commit
         * now, so the owner learns the item is finished and stops granting it. */
        progress(a, 'A', item, lease);
        if (dls_holder_release(a->holder, lease, true) == 0)
            dls_holder_forget(a->holder, lease);
        mark_done(a, item);
        return;
    }
    uint64_t span = a->p->work_max_ns - a->p->work_min_ns;
    uint64_t need = a->p->work_min_ns + (span ? next_random(&a->rng) % span : 0);
    progress(a, 'G', item, lease);
    uint64_t start = 0;
    dls_tick_now(a->ticks.adapter, &start);
    for (;;) {
        dls_holder_result res;
        uint64_t now = turn(a, &res);
        if (!dls_holder_may_act(a->holder, lease)) {
            progress(a, 'L', item, lease);
            dls_holder_forget(a->holder, lease);
            return;
        }
        if (dls_passed(start, now, need))
            break;
        dls_cli_sleep(TURN_NS);
    }
    if (!dls_holder_may_act(a->holder, lease) || write_result(a, item, lease)) {
        progress(a, 'L', item, lease);
        return;
    }
    if (dls_holder_release(a->holder, lease, true) == 0)
        dls_holder_forget(a->holder, lease);
    mark_done(a, item);
    progress(a, 'D', item, lease);
}

/* The next item to claim: first the agent's own share (items index,
 * index + agents, …), then every other item not known to be done. */
static unsigned pick(const struct agent *a, unsigned index, unsigned *cursor)
{
    unsigned m = a->p->items, n = a->p->agents;
    for (unsigned k = 0; k < m; k++) {
        unsigned i = (*cursor + k) % m;
        if (!a->done[i] && i % n == index % n) {
            *cursor = i + 1;
            return i;
        }
    }
    for (unsigned k = 0; k < m; k++) {
        unsigned i = (*cursor + k) % m;
        if (!a->done[i]) {
            *cursor = i + 1;
            return i;
        }
    }
    return 0;
}

int demo_agent_main(const demo_params *p, unsigned index)
{
    struct agent a;
    memset(&a, 0, sizeof a);
    a.p = p;
    a.index = index;
    a.rng = p->seed * 2654435761u + index + 1;
    demo_agent_name(a.name, index);
    if (assemble(&a)) {
        fprintf(stderr, "daolease demo: %s: cannot assemble its holder\n", a.name);
        teardown(&a);
        return 1;
    }
    unsigned cursor = index % p->items;
    while (a.n_done < p->items) {
        unsigned item = pick(&a, index, &cursor);
        char subject[32];
        uint8_t enc[40];
        size_t n;
        demo_item_subject(subject, item);
        dls_duration ask = dls_duration_from_ns(p->duration_ns);
        uint64_t handle;
        if (dls_cli_subject(subject, enc, sizeof enc, &n) ||
            dls_holder_propose(a.holder, enc, n, &ask, DLS_MODE_EXCLUSIVE, &handle)) {
            fprintf(stderr, "daolease demo: %s: proposal failed\n", a.name);
            teardown(&a);
            return 1;
        }
        uint64_t lease = await_answer(&a, handle, item);
        if (lease)
            work(&a, item, lease);
    }
    progress(&a, 'X', 0, 0);
    teardown(&a);
    return 0;
}
