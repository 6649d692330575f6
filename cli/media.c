#include "cli/media.h"

#include <inttypes.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "daolease/jetstream.h"
#ifdef DLS_HAVE_REDIS
#include "daolease/redis.h"
#endif

dls_sync dls_cli_sync(const char *name)
{
    if (name && !strcmp(name, "none"))
        return DLS_SYNC_NONE;
    if (name && !strcmp(name, "group"))
        return DLS_SYNC_GROUP;
    return DLS_SYNC_DATA;
}

/* `where` as messages show it: a redis:// URL without its user and password
 * (docs/redis.md: the password never appears in messages). */
const char *dls_cli_shown(const char *where, char *buf, size_t n)
{
    if (strncmp(where, "redis://", 8) != 0)
        return where;
    const char *a = where + 8, *slash = strchr(a, '/'), *at = NULL;
    for (const char *p = a; *p && (!slash || p < slash); p++)
        if (*p == '@')
            at = p;
    if (!at)
        return where;
    snprintf(buf, n, "redis://%s", at + 1);
    return buf;
}

static int report(const char *sub, const char *where, int rc, const dls_where *w)
{
    char buf[1024];
    where = dls_cli_shown(where, buf, sizeof buf);
    bool at = rc == DLS_ERR_CORRUPT || rc == DLS_ERR_HEADER || rc == DLS_ERR_RECORD;
    /* the reason, then the errno's or the code's words unless they only
       repeat it ("no such file or directory") */
    const char *also = w->sys_errno ? strerror(w->sys_errno) : dls_strerror(rc);
    if (w->reason && !at && !strcasecmp(w->reason, also))
        dls_cli_error(sub, "%s: %s", where, w->reason);
    else if (w->reason && !at) /* name EACCES, EMFILE, ENOSPC, … as such */
        dls_cli_error(sub, "%s: %s (%s)", where, w->reason, also);
    else if (w->reason)
        dls_cli_error(sub, "%s: position %llu: %s (%s)", where,
                      (unsigned long long)w->offset, w->reason, dls_strerror(rc));
    else
        dls_cli_error(sub, "%s: %s", where, dls_strerror(rc));
    return rc;
}

/* "PATH=PARTY": a path that exists as given is a path; otherwise the text
 * after the last '=' is the party. A redis:// or nats:// URL with a query
 * string (which holds '=') names no party. */
void dls_cli_split_media(char *arg, const char **path, const char **party)
{
    struct stat st;
    char *eq = strrchr(arg, '=');
    *path = arg;
    *party = NULL;
    bool url = dls_redis_is_url(arg) || dls_jetstream_is_url(arg);
    if (!eq || (url ? strchr(arg, '?') != NULL : stat(arg, &st) == 0))
        return;
    *eq = 0;
    *party = eq + 1;
}

/* stream-format.md rev 4, torn tails: `dump` and `audit` warn about any
 * sidecar beside a medium they read (cut bytes kept for inspection). */
void dls_cli_warn_sidecars(const char *sub, const char *where)
{
    size_t n = 0;
    char *first = NULL;
    if (strstr(where, "://") == NULL && dls_medium_sidecars(where, &n, &first, NULL) == 0 && n > 0)
        dls_cli_error(sub, "%s: warning: %zu torn-tail sidecar%s beside the medium (e.g. %s): "
                           "bytes cut from a torn tail, kept for inspection",
                      where, n, n == 1 ? "" : "s", first ? first : "?");
    free(first);
}

/* A cut whose bytes held CRC-valid records may have removed acknowledged
 * data (a flipped bit, not a crash): every command that cuts one warns. */
static void warn_torn(const char *sub, const char *where, dls_medium *m)
{
    dls_torn_cut cut;
    if (dls_medium_last_cut(m, &cut) && cut.valid_records > 0)
        dls_cli_error(sub,
                      "%s: warning: cut a torn tail at byte %" PRIu64 ": %" PRIu64
                      " bytes holding %s%" PRIu64 " CRC-valid records (acknowledged records "
                      "may be among them: a damaged record, not a crash); saved in %s",
                      where, cut.offset, cut.bytes, cut.capped ? "at least " : "",
                      cut.valid_records, cut.sidecar ? cut.sidecar : "a sidecar");
    if (!strcmp(sub, "dump"))
        dls_cli_warn_sidecars(sub, where);
}

int dls_cli_check_end(const char *sub, const char *where)
{
    if (!strncmp(where, "redis://", 8) || dls_jetstream_is_url(where))
        return 0;
    dls_torn_cut t;
    dls_where w = {0};
    int rc = dls_medium_check_tail(where, &t, &w);
    if (rc == DLS_ERR_NOTFOUND) {
        dls_cli_error(sub, "%s: the file is gone", where);
        return rc;
    }
    if (rc == DLS_ERR_HEADER && w.reason)
        dls_cli_error(sub, "%s: byte %" PRIu64 ": %s: not a readable stream file", where,
                      w.offset, w.reason);
    else if (rc)
        dls_cli_error(sub, "%s: byte %" PRIu64 ": %s", where, w.offset,
                      w.reason ? w.reason : dls_strerror(rc));
    else if (t.bytes && t.valid_records)
        dls_cli_error(sub, "%s: byte %" PRIu64 ": a bad record followed by %s%" PRIu64
                           " CRC-valid record%s: the file is damaged (not a write in progress); "
                           "nothing after byte %" PRIu64 " was read",
                      where, t.offset, t.capped ? "at least " : "", t.valid_records,
                      t.valid_records == 1 ? "" : "s", t.offset);
    else
        return 0;
    return rc ? rc : DLS_ERR_CORRUPT;
}

#ifdef DLS_HAVE_REDIS
static int open_redis(dls_medium **out, const char *where, dls_open_mode mode,
                      bool create, dls_sync sync, dls_where *w)
{
    dls_redis_settings rs;
    dls_redis_settings_default(&rs);
    rs.sync = sync == DLS_SYNC_NONE ? DLS_SYNC_NONE : rs.sync;
    int rc = dls_redis_open(out, where, mode, &rs, w);
    if (rc == DLS_ERR_NOTFOUND && create) {
        memset(w, 0, sizeof *w);
        rc = dls_redis_create(out, where, &rs, w);
    }
    return rc;
}
#endif

int dls_cli_open(dls_medium **out, const char *sub, const char *where,
                 dls_open_mode mode, bool create, dls_sync sync)
{
    dls_medium_settings s;
    dls_medium_settings_default(&s);
    s.sync = sync;
    dls_where w = {0};
    int rc;
    if (!strncmp(where, "redis://", 8)) {
#ifdef DLS_HAVE_REDIS
        rc = open_redis(out, where, mode, create, sync, &w);
#else
        dls_cli_error(sub, "%s: this build has no Redis medium", where);
        return DLS_ERR_CONFIG;
#endif
    } else if (dls_jetstream_is_url(where)) { /* docs/jetstream.md: sync is the stream's own */
        rc = dls_medium_open(out, where, mode, &s, &w);
        if (rc == DLS_ERR_NOTFOUND && create) {
            memset(&w, 0, sizeof w);
            rc = dls_medium_create(out, DLS_MEDIUM_JETSTREAM, where, &s, &w);
        }
    } else {
        struct stat st;
        if (create && stat(where, &st) != 0)
            rc = dls_medium_create(out, DLS_MEDIUM_FILE, where, &s, &w);
        else
            rc = dls_medium_open(out, where, mode, &s, &w);
    }
    if (rc)
        return report(sub, where, rc, &w);
    warn_torn(sub, where, *out);
    return 0;
}

int dls_cli_ticks_new(dls_cli_ticks *t, const char *sub, bool cursor)
{
    memset(t, 0, sizeof *t);
    dls_medium_settings ms;
    dls_medium_settings_default(&ms);
    ms.ring_capacity = 1024;
    dls_tick_settings ts;
    dls_tick_settings_default(&ts);
    dls_where w = {0};
    int rc = dls_ring_new(&t->ring, &ms);
    if (!rc)
        rc = dls_tick_new(&t->adapter, t->ring, &ts, &w);
    if (!rc)
        rc = dls_resolver_new_medium(&t->resolver, dls_medium_id(t->ring),
                                     DLS_CLI_TICK_PARTY, NULL);
    if (!rc && cursor)
        rc = dls_cursor_new(&t->cursor, t->ring, 0);
    if (rc) {
        dls_cli_error(sub, "tick adapter: %s%s%s", dls_strerror(rc),
                      w.reason ? ": " : "", w.reason ? w.reason : "");
        dls_cli_ticks_del(t);
    }
    return rc;
}

void dls_cli_ticks_del(dls_cli_ticks *t)
{
    dls_cursor_del(t->cursor);
    dls_resolver_del(t->resolver);
    dls_tick_del(t->adapter);
    dls_medium_del(t->ring);
    memset(t, 0, sizeof *t);
}

int dls_cli_duration(const char *text, dls_duration *d)
{
    static const struct { const char *suffix; dls_unit unit; } units[] = {
        {"ns", DLS_UNIT_NS}, {"us", DLS_UNIT_US}, {"ms", DLS_UNIT_MS},
        {"min", DLS_UNIT_MIN}, {"s", DLS_UNIT_S}, {"h", DLS_UNIT_H},
    };
    char *end;
    if (!text || text[0] < '0' || text[0] > '9')
        return DLS_ERR_INVAL;
    unsigned long long mag = strtoull(text, &end, 10);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].suffix))
            return mag == 0 ? DLS_ERR_INVAL : dls_duration_make(d, units[i].unit, mag);
    return DLS_ERR_INVAL;
}

int dls_cli_subject(const char *s, uint8_t *out, size_t cap, size_t *len)
{
    size_t n = strlen(s);
    if (n == 0 || n > DLS_SUBJECT_MAX - 3)
        return DLS_ERR_INVAL;
    msgpack_sbuffer sb;
    msgpack_sbuffer_init(&sb);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    int rc = msgpack_pack_str(&pk, n) || msgpack_pack_str_body(&pk, s, n) ? DLS_ERR_NOMEM : 0;
    if (!rc && sb.size > cap)
        rc = DLS_ERR_TOOBIG;
    if (!rc) {
        memcpy(out, sb.data, sb.size);
        *len = sb.size;
    }
    msgpack_sbuffer_destroy(&sb);
    return rc;
}

int dls_cli_load_keys(const char *sub, const char *key, const char *keyring,
                      dls_secret **secret, dls_keyring **kr)
{
    dls_where w = {0};
    int rc = dls_secret_load(secret, key, &w);
    if (rc) {
        dls_cli_error(sub, "%s: %s", key, w.reason ? w.reason : dls_strerror(rc));
        return rc;
    }
    memset(&w, 0, sizeof w);
    rc = dls_keyring_load(kr, keyring, &w);
    if (rc)
        dls_cli_error(sub, "%s: line %llu: %s", keyring, (unsigned long long)w.line,
                      w.reason ? w.reason : dls_strerror(rc));
    return rc;
}

void dls_cli_judge_settings(dls_judge_settings *s, dls_judge_tick_source *ts,
                            const dls_cli_ticks *t, const dls_secret *grantor,
                            dls_medium *journal, const dls_judge_medium *media, size_t n)
{
    *ts = (dls_judge_tick_source){
        .medium = t->ring, .resolver = t->resolver,
        .adapter = DLS_CLI_TICK_PARTY, .basis = dls_tick_basis(t->adapter),
    };
    dls_judge_settings_default(s);
    s->grantor = grantor;
    s->journal = journal;
    s->ticks = ts;
    s->nticks = 1;
    s->media = media;
    s->nmedia = n;
}

int dls_cli_holder_new(dls_holder **out, const char *sub, const char *where,
                       const dls_holder_parts *parts_without_ticks, dls_cli_ticks *t)
{
    dls_holder_parts parts = *parts_without_ticks;
    parts.ticks = t->cursor;
    parts.tick_resolver = t->resolver;
    parts.tick_party = DLS_CLI_TICK_PARTY;
    dls_holder_settings hs;
    dls_holder_settings_default(&hs);
    hs.batch_max = 64; /* run and demo: one batch envelope per step (docs/holder.md) */
    dls_where w;
    int rc = dls_holder_new(out, &parts, &hs, NULL, NULL, &w);
    if (rc)
        dls_cli_error(sub, "%s: %s", where, w.reason ? w.reason : dls_strerror(rc));
    return rc;
}

int dls_cli_ckpt_folder(const char *journal, char **out)
{
    *out = NULL;
    if (strstr(journal, "://"))
        return 0;
    size_t n = strlen(journal);
    char *d = malloc(n + sizeof ".ckpt");
    if (!d)
        return DLS_ERR_NOMEM;
    memcpy(d, journal, n);
    memcpy(d + n, ".ckpt", sizeof ".ckpt");
    *out = d;
    return 0;
}
