/* Snapshots from the files alone (files.h). */
#include "cli/observe/files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

struct reader {
    obs_snap *s;
    obs_ledger *g;
    obs_event ring[OBS_EVENTS];
    size_t head, n;
    int err;
};

static int on_lease(void *user, const dls_status_lease *l)
{
    struct reader *r = user;
    return obs_ledger_add(r->g, l);
}

static int on_summary(void *user, const dls_status_summary *sum, const dls_status_counts *c)
{
    struct reader *r = user;
    r->g->sum = *sum;
    r->s->pass = sum->pass;
    r->s->now = sum->now;
    r->s->live = sum->live;
    r->s->c.granted = c->grants;
    r->s->c.refused = c->refusals;
    memcpy(r->s->c.lapsed, c->lapsed, sizeof c->lapsed);
    return 0;
}

static int on_event(void *user, int kind, uint64_t at, uint64_t lease, dls_cause cause,
                    dls_bytes subject, dls_bytes holder)
{
    struct reader *r = user;
    obs_event *e;
    if (r->n < OBS_EVENTS) {
        e = &r->ring[(r->head + r->n) % OBS_EVENTS];
        r->n++;
    } else {
        e = &r->ring[r->head];
        r->head = (r->head + 1) % OBS_EVENTS;
    }
    obs_event_set(e, kind, at, lease, cause, subject, holder);
    return 0;
}

/* The journal's size on disk: a file, or a segmented journal's files. */
static uint64_t size_on_disk(const char *path)
{
    struct stat st;
    if (!path || strstr(path, "://") || stat(path, &st) != 0)
        return 0;
    if (!S_ISDIR(st.st_mode))
        return (uint64_t)st.st_size;
    uint64_t sum = 0;
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && fstatat(dirfd(d), e->d_name, &st, 0) == 0 &&
            S_ISREG(st.st_mode))
            sum += (uint64_t)st.st_size;
    if (d)
        closedir(d);
    return sum;
}

int obs_files_snapshot(const dls_status_args *a, obs_snap **out)
{
    *out = NULL;
    struct reader *r = calloc(1, sizeof *r);
    obs_ledger *g = obs_ledger_new();
    obs_snap *s = g ? obs_snap_new("files", g) : NULL;
    obs_ledger_release(g); /* the snapshot holds it */
    if (!r || !s) {
        free(r);
        obs_snap_free(s);
        dls_cli_error(a->sub, "%s: out of memory", a->journal);
        return DLS_EXIT_FAIL;
    }
    r->s = s;
    r->g = g;
    dls_status_visit v = {.user = r, .lease = on_lease, .summary = on_summary,
                          .event = on_event};
    int code = dls_status_scan(a, &v);
    if (code == DLS_EXIT_OK) {
        s->events = malloc((r->n ? r->n : 1) * sizeof *s->events);
        if (!s->events) {
            dls_cli_error(a->sub, "%s: out of memory", a->journal);
            code = DLS_EXIT_FAIL;
        } else {
            for (size_t i = 0; i < r->n; i++)
                s->events[i] = r->ring[(r->head + i) % OBS_EVENTS];
            s->nevents = r->n;
        }
    }
    s->journal_bytes = size_on_disk(a->journal);
    s->media = calloc(a->nmedia ? a->nmedia : 1, sizeof *s->media);
    if (s->media) {
        s->nmedia = a->nmedia;
        for (size_t i = 0; i < a->nmedia; i++)
            snprintf(s->media[i].name, sizeof s->media[i].name, "%s", a->media[i]);
    }
    free(r);
    if (code != DLS_EXIT_OK) {
        obs_snap_free(s);
        return code;
    }
    *out = s;
    return DLS_EXIT_OK;
}
