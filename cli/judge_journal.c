/* daolease judge — its journal: opening it as judge.md's Assembly asks
 * (exclusive, created only when asked, never cut), and starting a new one
 * by the lost-ledger procedure (judge.md, Restart). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/judge_journal.h"
#include "cli/media.h"
#include "daolease/jetstream.h"

/* A nats:// journal (docs/jetstream.md, A journal on
 * JetStream): opened `exclusive` — every append expects the last sequence
 * this handle saw, so a judge that finds another writer's record fails
 * (DLS_ERR_LOCKED) and stops instead of interleaving — with the config's
 * sync (a stream provides data/group only with file storage on 2 or more
 * replicas). Created only when asked, like a file journal. */
static int open_jetstream_journal(dls_medium **out, const dls_config *cfg, const char *path,
                                  bool create, bool standby)
{
    dls_jetstream_settings js;
    dls_jetstream_settings_default(&js);
    js.sync = dls_cli_sync(cfg->sync);
    js.exclusive = true;
    dls_where w = {0};
    int rc = dls_jetstream_open(out, path, DLS_OPEN_APPEND, &js, &w);
    if (rc == DLS_ERR_NOTFOUND) {
        if (!create) {
            dls_cli_error("judge", "%s: no such journal (%s)", path,
                          standby ? "a standby follows an existing journal"
                                        : "pass --create or set \"create_journal\": true to "
                                          "start a new ledger; after a lost journal see "
                                          "docs/judge.md, Lost ledger");
            return DLS_ERR_NOTFOUND;
        }
        memset(&w, 0, sizeof w);
        rc = dls_jetstream_create(out, path, &js, &w);
        if (rc == DLS_ERR_EXISTS) { /* made meanwhile (another judge's --create) */
            memset(&w, 0, sizeof w);
            rc = dls_jetstream_open(out, path, DLS_OPEN_APPEND, &js, &w);
        }
    }
    if (rc)
        dls_cli_error("judge", "%s: %s", path, w.reason ? w.reason : dls_strerror(rc));
    return rc;
}

/* judge --standby (docs/standby.md): a file journal is followed through a
 * read handle (the judge holds its writer lock for its lifetime); the
 * library opens it for append itself when it takes over. A remote journal
 * is the handle the standby fences and appends through (docs/standby.md,
 * Remote journals): Redis opened for append (it sets <key>:writer when it
 * takes over), JetStream opened exclusive for append (its first append
 * names the last sequence it read). None is created. */
static int open_standby_journal(dls_medium **out, const dls_config *cfg)
{
    const char *path = cfg->journal;
    if (!strncmp(path, "redis://", 8))
        return dls_cli_open(out, "judge", path, DLS_OPEN_APPEND, false, dls_cli_sync(cfg->sync));
    if (dls_jetstream_is_url(path))
        return open_jetstream_journal(out, cfg, path, false, true);
    dls_where w = {0};
    int rc = dls_medium_open(out, path, DLS_OPEN_READ, NULL, &w);
    if (rc)
        dls_cli_error("judge", "%s: %s", path, rc == DLS_ERR_NOTFOUND
                                                  ? "no such journal (a standby follows an "
                                                    "existing journal)"
                                                  : w.reason ? w.reason : dls_strerror(rc));
    return rc;
}

/* The journal (judge.md, Assembly, revision 4): a file journal is opened
 * `exclusive` — the stream writer lock taken on its own open file
 * description and held for the judge's lifetime, so a second judge reaching
 * it by any path is refused at once — and is created only when asked
 * (--create or --lost-ledger): a missing journal is an error, never a
 * silent fresh ledger (docs/cli.md, judge). */
int dls_cli_judge_journal(dls_medium **out, const dls_config *cfg, bool create, bool standby)
{
    const char *path = cfg->journal;
    if (standby)
        return open_standby_journal(out, cfg);
    if (!strncmp(path, "redis://", 8)) {
        int rc = dls_cli_open(out, "judge", path, DLS_OPEN_APPEND, create, dls_cli_sync(cfg->sync));
        char shown[1024];
        if (rc == DLS_ERR_NOTFOUND) /* as a file journal's: never a silent fresh ledger */
            dls_cli_error("judge", "%s: no such journal (pass --create or set "
                                   "\"create_journal\": true to start a new ledger)",
                          dls_cli_shown(path, shown, sizeof shown));
        return rc;
    }
    if (dls_jetstream_is_url(path))
        return open_jetstream_journal(out, cfg, path, create, false);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.sync = dls_cli_sync(cfg->sync);
    ms.exclusive = true;
    ms.lock_timeout_ms = 0;
    dls_where w = {0};
    struct stat st;
    int rc;
    if (stat(path, &st) != 0 && errno == ENOENT) {
        if (!create) {
            dls_cli_error("judge", "%s: no such journal (pass --create or set "
                                   "\"create_journal\": true to start a new ledger; after a "
                                   "lost journal see docs/judge.md, Lost ledger)",
                          path);
            return DLS_ERR_NOTFOUND;
        }
        /* docs/checkpoints.md, Retention: a segmented journal without a
         * bound of its own, trimmed by this judge after checkpoints */
        ms.segment_bytes = cfg->journal_segment_bytes;
        rc = dls_medium_create(out,
                               ms.segment_bytes ? DLS_MEDIUM_SEGMENTED : DLS_MEDIUM_FILE, path,
                               &ms, &w);
    } else {
        rc = dls_medium_open(out, path, DLS_OPEN_APPEND, &ms, &w);
    }
    if (rc == DLS_ERR_LOCKED)
        dls_cli_error("judge", "%s: %s", path, "another judge holds this journal");
    else if (rc == DLS_ERR_VALID_TAIL)
        /* judge.md, Failure of the journal (revision 5) */
        dls_cli_error("judge", "%s: refusing to start: the record at byte %" PRIu64
                               " is bad and %" PRIu64 " CRC-valid record%s follow%s it "
                               "(acknowledged records are never cut from a journal); "
                               "inspect with `daolease dump %s`, then move the tail to a "
                               "sidecar with `daolease stream repair %s`",
                      path, w.offset, w.count, w.count == 1 ? "" : "s",
                      w.count == 1 ? "s" : "", path, path);
    else if (rc && w.sys_errno)
        dls_cli_error("judge", "%s: %s (%s)", path, w.reason ? w.reason : dls_strerror(rc),
                      strerror(w.sys_errno));
    else if (rc)
        dls_cli_error("judge", "%s: %s", path, w.reason ? w.reason : dls_strerror(rc));
    return rc;
}

/* The medium an inventory line names: an index or a configured path. */
static int inventory_medium(const dls_config *cfg, json_t *v, uint32_t *out)
{
    if (json_is_integer(v) && json_integer_value(v) >= 0 &&
        (size_t)json_integer_value(v) < cfg->n_media) {
        *out = (uint32_t)json_integer_value(v);
        return 0;
    }
    if (!json_is_string(v))
        return -1;
    const char *want = json_string_value(v);
    for (size_t i = 0; i < cfg->n_media; i++) {
        const char *where = cfg->media[i].where;
        size_t wl = strlen(where), nl = strlen(want);
        /* configured paths are resolved against the config's folder */
        if (!strcmp(where, want) ||
            (wl > nl && where[wl - nl - 1] == '/' && !strcmp(where + wl - nl, want))) {
            *out = (uint32_t)i;
            return 0;
        }
    }
    return -1;
}

/* The lost-ledger procedure (judge.md, Restart): each resource of the
 * inventory is reclaimed (this process owns none: the reclaim is reported)
 * and re-granted to its holder at the first pass, on a new journal whose
 * ids start above --floor and whose media are read from their end. One
 * JSON object a line: {"subject": "S", "holder": "NAME", "lease": N,
 * "medium": "PATH" | INDEX, "duration": "3s" (optional)}. */
int dls_cli_lost_ledger(dls_judge *j, const dls_config *cfg, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        dls_cli_error("judge", "%s: %s", path, strerror(errno));
        return DLS_ERR_IO;
    }
    char line[4096];
    int rc = 0;
    unsigned long ln = 0;
    while (!rc && fgets(line, sizeof line, f)) {
        ln++;
        if (line[strspn(line, " \t\r\n")] == 0)
            continue;
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        json_t *sv = o ? json_object_get(o, "subject") : NULL;
        json_t *hv = o ? json_object_get(o, "holder") : NULL;
        json_t *lv = o ? json_object_get(o, "lease") : NULL;
        json_t *dv = o ? json_object_get(o, "duration") : NULL;
        uint8_t subj[1100];
        size_t sn = 0;
        uint32_t medium = 0;
        dls_duration d;
        if (!o || !json_is_string(sv) || !json_is_string(hv) ||
            (lv && (!json_is_integer(lv) || json_integer_value(lv) < 0)) ||
            inventory_medium(cfg, json_object_get(o, "medium"), &medium) ||
            dls_cli_subject(json_string_value(sv), subj, sizeof subj, &sn) ||
            (dv && (!json_is_string(dv) || dls_cli_duration(json_string_value(dv), &d)))) {
            dls_cli_error("judge", "%s: line %lu: expected {\"subject\": \"S\", \"holder\": "
                                   "\"NAME\", \"lease\": N, \"medium\": \"PATH\" or INDEX}",
                          path, ln);
            rc = DLS_ERR_CONFIG;
        } else {
            const char *holder = json_string_value(hv);
            dls_judge_possession item = {
                .subject = {subj, sn},
                .holder = {(const uint8_t *)holder, strlen(holder)},
                .lease = lv ? (uint64_t)json_integer_value(lv) : 0,
                .medium = medium,
                .duration = dv ? &d : NULL,
            };
            int status = 0;
            rc = dls_judge_lost_ledger(j, &item, 1, &status);
            if (rc)
                dls_cli_error("judge", "%s: line %lu: %s", path, ln,
                              rc == DLS_ERR_STATE ? "the journal is not new (a lost ledger "
                                                    "starts a new, empty journal)"
                                                  : dls_strerror(rc));
        }
        json_decref(o);
    }
    fclose(f);
    return rc;
}
