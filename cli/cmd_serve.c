/* daolease serve — the live page, /status.json and /metrics of a judge
 * that has no endpoint (another process, or a finished run), from its files
 * alone (docs/observe.md, serve). Read-only: the journal and media are read
 * as `status` reads them (no lock, nothing written), again at most every
 * --interval while someone is reading. */
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/config.h"
#include "cli/media.h"
#include "cli/observe/files.h"
#include "cli/observe/http.h"
#include "cli/proc.h"

static const char usage_text[] =
    "usage: daolease serve --http ADDR:PORT (--config FILE | --manifest FILE |\n"
    "                      --journal J --media M...) [--grantor NAME --keyring K]\n"
    "                      [--checkpoints DIR] [--interval D]\n\n"
    "Serves the live page (/), /status.json and /metrics of a judge from its\n"
    "journal and media, read-only, until SIGINT or SIGTERM (docs/observe.md).\n\n"
    "  --http ADDR:PORT  where to listen (loopback only unless the config sets\n"
    "                    \"http_public\": true); with --config, its \"http\" key\n"
    "  --config FILE     a judge's configuration: journal, media, keyring, party\n"
    "  --manifest FILE   a demo run's manifest.json\n"
    "  --journal J, --media M..., --grantor NAME, --keyring K, --checkpoints DIR\n"
    "                    as `daolease status`\n"
    "  --interval D      read the files again at most this often (default 1s)\n";

struct serve_opts {
    dls_status_args a;
    const char *http, *config, *manifest;
    bool public_ok;
    uint64_t interval_ns;
    dls_config cfg;
    char *owned[2 + DLS_CONFIG_MEDIA_MAX]; /* strings made for a manifest */
    size_t nowned;
};

static char *own(struct serve_opts *o, char *s)
{
    if (s && o->nowned < sizeof o->owned / sizeof o->owned[0])
        o->owned[o->nowned++] = s;
    return s;
}

/* A manifest's path, relative to its folder unless absolute or a URL. */
static char *resolve(struct serve_opts *o, const char *dir, const char *p)
{
    if (p[0] == '/' || strstr(p, "://"))
        return own(o, strdup(p));
    size_t n = strlen(dir) + strlen(p) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s/%s", dir, p);
    return own(o, s);
}

static int load_manifest(struct serve_opts *o)
{
    json_error_t je;
    json_t *m = json_load_file(o->manifest, JSON_REJECT_DUPLICATES, &je);
    if (!m) {
        dls_cli_error("serve", "%s: line %d: %s", o->manifest, je.line, je.text);
        return -1;
    }
    char *copy = strdup(o->manifest);
    const char *dir = copy ? dirname(copy) : ".";
    json_t *j = json_object_get(m, "journal"), *g = json_object_get(m, "grantor"),
           *k = json_object_get(m, "keyring"), *md = json_object_get(m, "media");
    int rc = 0;
    if (!json_is_string(j) || !json_is_array(md) || json_array_size(md) > DLS_CONFIG_MEDIA_MAX ||
        (g && !json_is_string(g)) || (k && !json_is_string(k))) {
        dls_cli_error("serve", "%s: expected {\"journal\": \"...\", \"media\": [...], "
                               "\"grantor\": \"...\", \"keyring\": \"...\"}", o->manifest);
        rc = -1;
    }
    if (!rc) {
        o->a.journal = resolve(o, dir, json_string_value(j));
        o->a.grantor = g ? own(o, strdup(json_string_value(g))) : NULL;
        o->a.keyring = k && g ? resolve(o, dir, json_string_value(k)) : NULL;
        o->a.media = calloc(json_array_size(md) + 1, sizeof *o->a.media);
        own(o, (char *)o->a.media);
        for (size_t i = 0; o->a.media && i < json_array_size(md); i++) {
            json_t *e = json_array_get(md, i);
            if (!json_is_string(e)) {
                dls_cli_error("serve", "%s: media[%zu] must be a string", o->manifest, i);
                rc = -1;
                break;
            }
            o->a.media[o->a.nmedia++] = resolve(o, dir, json_string_value(e));
        }
    }
    free(copy);
    json_decref(m);
    return rc;
}

static int load_config(struct serve_opts *o)
{
    if (dls_config_load(&o->cfg, o->config, "media"))
        return -1;
    o->a.journal = o->cfg.journal;
    o->a.grantor = o->cfg.party;
    o->a.keyring = o->cfg.keyring;
    o->a.checkpoints = o->a.checkpoints ? o->a.checkpoints : o->cfg.checkpoints;
    o->a.media = calloc(o->cfg.n_media + 1, sizeof *o->a.media);
    own(o, (char *)o->a.media);
    for (size_t i = 0; o->a.media && i < o->cfg.n_media; i++) {
        const dls_config_medium *cm = &o->cfg.media[i];
        if (cm->party) {
            size_t n = strlen(cm->where) + strlen(cm->party) + 2;
            char *s = own(o, malloc(n));
            if (s)
                snprintf(s, n, "%s=%s", cm->where, cm->party);
            o->a.media[o->a.nmedia++] = s;
        } else {
            o->a.media[o->a.nmedia++] = cm->where;
        }
    }
    if (!o->http)
        o->http = o->cfg.http;
    o->public_ok = o->cfg.http_public;
    return o->a.media ? 0 : -1;
}

static int publish(struct serve_opts *o, obs_pub *pub)
{
    obs_snap *s = NULL;
    int code = obs_files_snapshot(&o->a, &s);
    if (code == DLS_EXIT_OK)
        obs_pub_put(pub, s);
    return code;
}

static int serve(struct serve_opts *o)
{
    obs_pub pub;
    if (obs_pub_init(&pub))
        return DLS_EXIT_FAIL;
    int code = publish(o, &pub); /* the files must be readable at the start */
    obs_http *h = NULL;
    if (code == DLS_EXIT_OK && obs_http_start(&h, "serve", o->http, o->public_ok, &pub))
        code = DLS_EXIT_FAIL;
    dls_cli_catch_stop();
    uint64_t since = 0;
    while (code == DLS_EXIT_OK && !dls_cli_stop_requested()) {
        dls_cli_sleep(50 * 1000 * 1000);
        since += 50 * 1000 * 1000;
        if (since >= o->interval_ns && obs_pub_take_wanted(&pub)) {
            since = 0;
            publish(o, &pub); /* a failed read keeps the last snapshot (said on stderr) */
        }
    }
    obs_http_stop(h);
    obs_pub_fini(&pub);
    return code;
}

int dls_cmd_serve(int argc, char **argv)
{
    static const struct option opts[] = {
        {"http", required_argument, 0, 'H'},     {"config", required_argument, 0, 'c'},
        {"manifest", required_argument, 0, 'M'}, {"journal", required_argument, 0, 'j'},
        {"media", required_argument, 0, 'm'},    {"grantor", required_argument, 0, 'g'},
        {"keyring", required_argument, 0, 'k'},  {"checkpoints", required_argument, 0, 'C'},
        {"interval", required_argument, 0, 'i'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    struct serve_opts o;
    memset(&o, 0, sizeof o);
    o.a.sub = "serve";
    o.interval_ns = DLS_NS_PER_S;
    if (dls_cli_exact_options("serve", argc, argv, opts, 0))
        return DLS_EXIT_USAGE;
    char **media = calloc((size_t)argc + 1, sizeof *media);
    if (!media)
        return DLS_EXIT_FAIL;
    int c, code = DLS_EXIT_FAIL;
    optind = 1;
    opterr = 0;
    char problem[256] = "";
    while (!problem[0] && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'H': o.http = optarg; break;
        case 'c': o.config = optarg; break;
        case 'M': o.manifest = optarg; break;
        case 'j': o.a.journal = optarg; break;
        case 'm':
            media[o.a.nmedia++] = optarg;
            while (optind < argc && argv[optind][0] != '-')
                media[o.a.nmedia++] = argv[optind++];
            break;
        case 'g': o.a.grantor = optarg; break;
        case 'k': o.a.keyring = optarg; break;
        case 'C': o.a.checkpoints = optarg; break;
        case 'i': {
            dls_duration d;
            if (dls_cli_duration(optarg, &d) || d.ns < DLS_NS_PER_MS * 100)
                snprintf(problem, sizeof problem, "--interval wants a duration >= 100ms, "
                                                  "not \"%.100s\"", optarg);
            else
                o.interval_ns = d.ns;
            break;
        }
        case 'h': fputs(usage_text, stdout); free(media); return DLS_EXIT_OK;
        default:
            free(media);
            return dls_cli_bad_option("serve", c, argv);
        }
    }
    int sources = (o.config != NULL) + (o.manifest != NULL) + (o.a.journal != NULL);
    if (!problem[0] && optind != argc)
        snprintf(problem, sizeof problem, "unexpected argument %.200s", argv[optind]);
    else if (!problem[0] && sources != 1)
        snprintf(problem, sizeof problem, "name the files once: --config, --manifest or "
                                          "--journal");
    else if (!problem[0] && o.a.keyring && !o.a.grantor)
        snprintf(problem, sizeof problem, "--keyring needs --grantor");
    if (problem[0]) {
        free(media);
        return dls_cli_usage("serve", problem);
    }
    o.a.media = media;
    if ((o.config && load_config(&o)) || (o.manifest && load_manifest(&o)))
        goto out;
    if (!o.http) {
        code = dls_cli_usage("serve", "--http ADDR:PORT is required (or \"http\" in the "
                                      "configuration)");
        goto out;
    }
    code = serve(&o);
out:
    for (size_t i = 0; i < o.nowned; i++)
        free(o.owned[i]);
    dls_config_free(&o.cfg);
    free(media);
    return code;
}
