#include "cli/config.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_url(const char *s)
{
    return !strncmp(s, "redis://", 8) || !strncmp(s, "nats://", 7);
}

static void err(const char *file, const char *key, const char *why)
{
    fprintf(stderr, "daolease: %s: key \"%s\": %s\n", file, key, why);
}

/* Resolves `rel` against the folder of `file` (absolute paths and URLs kept). */
static char *resolve(const char *file, const char *rel)
{
    if (rel[0] == '/' || is_url(rel))
        return strdup(rel);
    const char *slash = strrchr(file, '/');
    size_t dir = slash ? (size_t)(slash - file) + 1 : 0;
    char *out = malloc(dir + strlen(rel) + 1);
    if (!out)
        return NULL;
    memcpy(out, file, dir);
    strcpy(out + dir, rel);
    return out;
}

static int must_exist(const char *file, const char *key, const char *path)
{
    struct stat st;
    if (is_url(path) || stat(path, &st) == 0)
        return 0;
    fprintf(stderr, "daolease: %s: key \"%s\": %s: %s\n", file, key, path, strerror(errno));
    return DLS_ERR_CONFIG;
}

static int get_path(const char *file, json_t *v, const char *key, char **out, int exists)
{
    if (!json_is_string(v) || json_string_length(v) == 0) {
        err(file, key, "must be a non-empty string");
        return DLS_ERR_CONFIG;
    }
    *out = resolve(file, json_string_value(v));
    if (!*out)
        return DLS_ERR_NOMEM;
    return exists ? must_exist(file, key, *out) : 0;
}

static int get_name(const char *file, json_t *v, const char *key, char **out)
{
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > DLS_ID_MAX) {
        err(file, key, "must be a party name of 1 to 64 bytes");
        return DLS_ERR_CONFIG;
    }
    *out = strdup(json_string_value(v));
    return *out ? 0 : DLS_ERR_NOMEM;
}

static int get_duration(const char *file, json_t *v, const char *key, dls_duration *d,
                        int allow_zero)
{
    static const char *units[] = {"ns", "us", "ms", "s", "min", "h"};
    const char *u;
    json_t *m;
    if (!json_is_object(v) || json_object_size(v) != 1)
        goto bad;
    json_object_foreach(v, u, m) {
        if (!json_is_integer(m) || json_integer_value(m) < 0)
            goto bad;
        for (int i = 0; i < 6; i++)
            if (!strcmp(u, units[i])) {
                uint64_t mag = (uint64_t)json_integer_value(m);
                if ((mag == 0 && !allow_zero) ||
                    dls_duration_make(d, (dls_unit)i, mag) != 0)
                    goto bad;
                return 0;
            }
    }
bad:
    err(file, key, allow_zero ? "must be a duration such as {\"ms\": 250}"
                              : "must be a positive duration such as {\"ms\": 250}");
    return DLS_ERR_CONFIG;
}

/* One media entry: "PATH", "PATH=PARTY" (paths only: a URL may hold '='
 * in its query), or {"medium": "PATH or URL", "party": "PARTY"}. */
static int get_medium(dls_config *c, json_t *e, dls_config_medium *m)
{
    const char *where = NULL, *party = NULL;
    char *split = NULL;
    if (json_is_object(e)) {
        const char *k;
        json_t *v;
        json_object_foreach(e, k, v) {
            if (!strcmp(k, "medium") && json_is_string(v))
                where = json_string_value(v);
            else if (!strcmp(k, "party") && json_is_string(v))
                party = json_string_value(v);
            else
                goto bad;
        }
    } else if (json_is_string(e)) {
        where = json_string_value(e);
        if (!is_url(where) && strrchr(where, '=')) {
            split = strdup(where);
            if (!split)
                return DLS_ERR_NOMEM;
            *strrchr(split, '=') = 0;
            party = strrchr(where, '=') + 1;
            where = split;
        }
    }
    if (!where || !*where || (party && (!*party || strlen(party) > DLS_ID_MAX))) {
        free(split);
        goto bad;
    }
    m->where = resolve(c->file, where);
    m->party = party ? strdup(party) : NULL;
    free(split);
    if (!m->where || (party && !m->party))
        return DLS_ERR_NOMEM;
    return must_exist(c->file, "media", m->where);
bad:
    err(c->file, "media", "every entry must be \"PATH\", \"PATH=PARTY\" or "
                          "{\"medium\": \"PATH or URL\", \"party\": \"PARTY\"}");
    return DLS_ERR_CONFIG;
}

static int get_media(dls_config *c, json_t *v)
{
    if (!json_is_array(v) || json_array_size(v) == 0 ||
        json_array_size(v) > DLS_CONFIG_MEDIA_MAX) {
        err(c->file, "media", "must be a list of 1 to 1024 media");
        return DLS_ERR_CONFIG;
    }
    c->media = calloc(json_array_size(v), sizeof *c->media);
    if (!c->media)
        return DLS_ERR_NOMEM;
    size_t i;
    json_t *e;
    json_array_foreach(v, i, e) {
        c->n_media++;
        int rc = get_medium(c, e, &c->media[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static int set_defaults(dls_config *c)
{
    int rc = dls_duration_make(&c->tolerance, DLS_UNIT_MS, 250);
    rc |= dls_duration_make(&c->cadence, DLS_UNIT_MS, 100);
    rc |= dls_duration_make(&c->duration, DLS_UNIT_S, 3);
    rc |= dls_duration_make(&c->min_duration, DLS_UNIT_MS, 100);
    rc |= dls_duration_make(&c->max_duration, DLS_UNIT_H, 1);
    rc |= dls_duration_make(&c->grace, DLS_UNIT_S, 2);
    c->keep_checkpoints = 2;
    c->drain_budget = 20000;
    c->drain_per_s = 1000000;
    return rc ? DLS_ERR_INVAL : 0;
}

/* "checkpoint_every": {"passes": N, "bytes": B} (either or both, > 0). */
static int get_checkpoint_every(dls_config *c, json_t *v)
{
    const char *f = c->file, *k = "checkpoint_every";
    if (!json_is_object(v) || json_object_size(v) == 0) {
        err(f, k, "must be an object with \"passes\" and/or \"bytes\"");
        return DLS_ERR_CONFIG;
    }
    const char *name;
    json_t *x;
    json_object_foreach(v, name, x) {
        bool passes = !strcmp(name, "passes");
        if (!passes && strcmp(name, "bytes")) {
            err(f, k, "takes only \"passes\" and \"bytes\"");
            return DLS_ERR_CONFIG;
        }
        if (!json_is_integer(x) || json_integer_value(x) <= 0) {
            err(f, k, "passes and bytes must be positive integers");
            return DLS_ERR_CONFIG;
        }
        *(passes ? &c->checkpoint_passes : &c->checkpoint_bytes) =
            (uint64_t)json_integer_value(x);
    }
    return 0;
}

/* "http": "ADDR:PORT" (checked when the endpoint starts), "http_public". */
static int get_http(dls_config *c, const char *k, json_t *v)
{
    if (!strcmp(k, "http_public")) {
        if (!json_is_boolean(v)) {
            err(c->file, k, "must be true or false");
            return DLS_ERR_CONFIG;
        }
        c->http_public = json_is_true(v);
        return 0;
    }
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 300 ||
        !strchr(json_string_value(v), ':')) {
        err(c->file, k, "must be \"ADDR:PORT\" (e.g. \"127.0.0.1:9464\")");
        return DLS_ERR_CONFIG;
    }
    free(c->http);
    c->http = strdup(json_string_value(v));
    return c->http ? 0 : DLS_ERR_NOMEM;
}

/* A realtime basis name (docs/config.md, ticks): 1-118 bytes of letters,
 * digits, '.', '_' and '-' ("realtime/NAME" fits a tick basis). */
static bool basis_name_ok(const char *n)
{
    size_t len = strlen(n);
    return len >= 1 && len <= 118 && strspn(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                               "0123456789._-") == len;
}

/* "streams": one or more distinct paths or URLs, resolved like media. */
static int get_tick_streams(dls_config *c, json_t *a)
{
    size_t n = json_is_array(a) ? json_array_size(a) : 0;
    if (n == 0 || n > DLS_CONFIG_TICK_STREAMS_MAX) {
        err(c->file, "ticks", "\"streams\" must be an array of 1 to 64 paths or URLs");
        return DLS_ERR_CONFIG;
    }
    c->tick_streams = calloc(n, sizeof *c->tick_streams);
    if (!c->tick_streams)
        return DLS_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(a, i);
        if (!json_is_string(e) || json_string_length(e) == 0) {
            err(c->file, "ticks", "each of \"streams\" must be a non-empty path or URL");
            return DLS_ERR_CONFIG;
        }
        char *w = resolve(c->file, json_string_value(e));
        if (!w)
            return DLS_ERR_NOMEM;
        c->tick_streams[c->n_tick_streams++] = w;
        for (size_t k = 0; k < i; k++)
            if (!strcmp(c->tick_streams[k], w)) {
                fprintf(stderr, "daolease: %s: key \"ticks\": %s is listed twice in "
                                "\"streams\"\n", c->file, w);
                return DLS_ERR_CONFIG;
            }
    }
    return 0;
}

/* "own": the stream this process appends to, one of "streams". */
static int get_tick_own(dls_config *c, json_t *v)
{
    char *own = json_is_string(v) && json_string_length(v) ? resolve(c->file, json_string_value(v))
                                                            : NULL;
    if (!own && json_is_string(v) && json_string_length(v))
        return DLS_ERR_NOMEM;
    for (size_t i = 0; own && i < c->n_tick_streams; i++)
        if (!strcmp(c->tick_streams[i], own)) {
            c->tick_own = i;
            free(own);
            return 0;
        }
    free(own);
    err(c->file, "ticks", "\"own\" must name one of \"streams\" (this machine's tick stream)");
    return DLS_ERR_CONFIG;
}

/* "ticks": "monotonic" (the default: this host's CLOCK_MONOTONIC through an
 * in-memory stream), or {"realtime": NAME, "streams": [...], "own": ONE}
 * (docs/config.md; docs/standby.md, Across machines). */
static int get_ticks(dls_config *c, json_t *v)
{
    if (json_is_string(v) && !strcmp(json_string_value(v), "monotonic"))
        return (c->ticks = strdup("monotonic")) ? 0 : DLS_ERR_NOMEM;
    json_t *name = json_object_get(v, "realtime"), *streams = json_object_get(v, "streams"),
           *own = json_object_get(v, "own");
    if (!json_is_object(v) || json_object_size(v) != 3 || !name || !streams || !own) {
        err(c->file, "ticks", "must be \"monotonic\" or {\"realtime\": NAME, \"streams\": "
                              "[PATH or URL, ...], \"own\": one of the streams}");
        return DLS_ERR_CONFIG;
    }
    if (!json_is_string(name) || !basis_name_ok(json_string_value(name))) {
        err(c->file, "ticks", "\"realtime\" must be a basis name of 1 to 118 letters, digits, "
                              "'.', '_' or '-' (e.g. the cluster's name)");
        return DLS_ERR_CONFIG;
    }
    free(c->ticks);
    c->ticks = strdup("realtime");
    c->ticks_basis = strdup(json_string_value(name));
    if (!c->ticks || !c->ticks_basis)
        return DLS_ERR_NOMEM;
    int rc = get_tick_streams(c, streams);
    return rc ? rc : get_tick_own(c, own);
}

/* "drain_budget": facts a medium a pass, 0 to 2^31 (0: no budget);
 * "drain_per_s": facts a medium a second of ticks, 0 to 10^9 (0: the fixed
 * budget). judge.md, The pass, step 2; docs/judge.md, Overload. */
static int get_drain(dls_config *c, const char *k, json_t *v)
{
    bool per_s = !strcmp(k, "drain_per_s");
    json_int_t most = per_s ? 1000000000 : 2147483647;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > most) {
        err(c->file, k, per_s ? "must be an integer from 0 to 1000000000 (facts a second)"
                              : "must be an integer from 0 to 2147483647 (facts a pass)");
        return DLS_ERR_CONFIG;
    }
    *(per_s ? &c->drain_per_s : &c->drain_budget) = (uint64_t)json_integer_value(v);
    return 0;
}

static int one_key(dls_config *c, const char *k, json_t *v)
{
    const char *f = c->file;
    if (!strcmp(k, "checkpoint_every")) return get_checkpoint_every(c, v);
    if (!strcmp(k, "checkpoints")) return get_path(f, v, k, &c->checkpoints, 0);
    if (!strcmp(k, "keep_checkpoints")) {
        if (!json_is_integer(v) || json_integer_value(v) < 2) {
            err(f, k, "must be an integer >= 2");
            return DLS_ERR_CONFIG;
        }
        c->keep_checkpoints = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (!strcmp(k, "drain_budget") || !strcmp(k, "drain_per_s")) /* docs/judge.md, Overload */
        return get_drain(c, k, v);
    if (!strcmp(k, "journal_segment_bytes")) { /* docs/checkpoints.md, Retention */
        if (!json_is_integer(v) || json_integer_value(v) < 4096) {
            err(f, k, "must be an integer >= 4096 (bytes per journal segment)");
            return DLS_ERR_CONFIG;
        }
        c->journal_segment_bytes = (uint64_t)json_integer_value(v);
        return 0;
    }
    if (!strcmp(k, "http") || !strcmp(k, "http_public")) /* docs/observe.md */
        return get_http(c, k, v);
    if (!strcmp(k, "party")) return get_name(f, v, k, &c->party);
    if (!strcmp(k, "grantor")) return get_name(f, v, k, &c->grantor);
    if (!strcmp(k, "key")) return get_path(f, v, k, &c->key, 1);
    if (!strcmp(k, "keyring")) return get_path(f, v, k, &c->keyring, 1);
    if (!strcmp(k, "journal")) return get_path(f, v, k, &c->journal, 0);
    if (!strcmp(k, "medium")) return get_path(f, v, k, &c->medium, 0);
    if (!strcmp(k, "media")) return get_media(c, v);
    if (!strcmp(k, "tolerance")) return get_duration(f, v, k, &c->tolerance, 1);
    if (!strcmp(k, "cadence")) return get_duration(f, v, k, &c->cadence, 0);
    if (!strcmp(k, "duration")) return get_duration(f, v, k, &c->duration, 0);
    if (!strcmp(k, "min_duration")) return get_duration(f, v, k, &c->min_duration, 0);
    if (!strcmp(k, "max_duration")) return get_duration(f, v, k, &c->max_duration, 0);
    if (!strcmp(k, "max")) return get_duration(f, v, k, &c->max, 0);
    if (!strcmp(k, "lock_delay")) return get_duration(f, v, k, &c->lock_delay, 1);
    if (!strcmp(k, "heartbeat")) return get_duration(f, v, k, &c->heartbeat, 1);
    if (!strcmp(k, "takeover_after")) {
        c->has_takeover_after = true;
        return get_duration(f, v, k, &c->takeover_after, 0);
    }
    if (!strcmp(k, "grace")) return get_duration(f, v, k, &c->grace, 1);
    if (!strcmp(k, "create_medium") || !strcmp(k, "create_journal")) {
        if (!json_is_boolean(v)) {
            err(f, k, "must be true or false");
            return DLS_ERR_CONFIG;
        }
        *(!strcmp(k, "create_medium") ? &c->create_medium : &c->create_journal) = json_is_true(v);
        return 0;
    }
    if (!strcmp(k, "ticks"))
        return get_ticks(c, v);
    if (!strcmp(k, "sync")) {
        static const char *const ok[] = {"none", "data", "group"};
        for (size_t i = 0; json_is_string(v) && i < 3; i++)
            if (!strcmp(json_string_value(v), ok[i]))
                return (c->sync = strdup(ok[i])) ? 0 : DLS_ERR_NOMEM;
        err(f, k, "must be \"none\", \"data\" or \"group\"");
        return DLS_ERR_CONFIG;
    }
    err(f, k, "unknown key");
    return DLS_ERR_CONFIG;
}

static int require(const dls_config *c, const char *need)
{
    struct { const char *name; const void *v; } req[] = {
        {"party", c->party}, {"key", c->key}, {"keyring", c->keyring},
        {"journal", c->journal}, {"medium", c->medium}, {"media", c->media},
        {"grantor", c->grantor},
    };
    for (size_t i = 0; i < sizeof req / sizeof req[0]; i++) {
        int core = i < 4;
        int asked = need && strstr(need, req[i].name) != NULL;
        if ((core || asked) && !req[i].v) {
            err(c->file, req[i].name, "is required");
            return DLS_ERR_CONFIG;
        }
    }
    return 0;
}

int dls_config_load(dls_config *c, const char *path, const char *need)
{
    memset(c, 0, sizeof *c);
    c->file = strdup(path);
    if (!c->file || set_defaults(c))
        return DLS_ERR_NOMEM;
    /* a file that cannot be read (missing, a folder, no permission) says
     * so in one line; a syntax error names its line and column */
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "daolease: %s: cannot read the configuration: %s\n", path,
                strerror(errno));
        return DLS_ERR_CONFIG;
    }
    json_error_t je;
    json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    int read_errno = ferror(f) ? errno : 0;
    fclose(f);
    if (!root) {
        if (read_errno)
            fprintf(stderr, "daolease: %s: cannot read the configuration: %s\n", path,
                    strerror(read_errno));
        else
            fprintf(stderr, "daolease: %s: line %d, column %d: %s\n", path, je.line,
                    je.column, je.text);
        return DLS_ERR_CONFIG;
    }
    int rc = 0;
    if (!json_is_object(root)) {
        fprintf(stderr, "daolease: %s: the configuration must be one JSON object\n", path);
        rc = DLS_ERR_CONFIG;
    }
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v) {
        if (rc)
            break;
        rc = one_key(c, k, v);
    }
    json_decref(root);
    return rc ? rc : require(c, need);
}

void dls_config_free(dls_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_media; i++) {
        free(c->media[i].where);
        free(c->media[i].party);
    }
    free(c->media);
    for (size_t i = 0; i < c->n_tick_streams; i++)
        free(c->tick_streams[i]);
    free(c->tick_streams);
    c->tick_streams = NULL;
    c->n_tick_streams = 0;
    char **s[] = {&c->file, &c->party, &c->key, &c->keyring, &c->grantor,
                  &c->journal, &c->medium, &c->ticks, &c->ticks_basis, &c->sync, &c->checkpoints, &c->http};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        free(*s[i]);
        *s[i] = NULL;
    }
}
