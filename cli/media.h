/* daolease command — opening media by path or URL, and the tick plumbing
 * shared by `judge`, `run` and `demo`. */
#ifndef DLS_CLI_MEDIA_H
#define DLS_CLI_MEDIA_H

#include <stdbool.h>

#include "daolease/attrib.h"
#include "daolease/holder.h"
#include "daolease/judge.h"
#include "daolease/stream.h"
#include "daolease/tick.h"

/* Splits a `--media` argument "PATH=PARTY" in place: *path is arg, *party
 * the text after the last '=' or NULL (a path that exists as given, or a
 * redis:// or nats:// URL with a query string, names no party). */
void dls_cli_split_media(char *arg, const char **path, const char **party);

/* Warns on stderr when torn-tail sidecars lie beside the medium at `where`
 * (a path; URLs have none). */
void dls_cli_warn_sidecars(const char *sub, const char *where);

/* The judge's default checkpoint folder, "<journal>.ckpt" beside a local
 * journal (docs/checkpoints.md), into *out (malloc'd); *out NULL for a
 * redis:// or nats:// journal, which has no default. 0 or DLS_ERR_NOMEM. */
int dls_cli_ckpt_folder(const char *journal, char **out);

/* Opens `where` (a path, or a redis:// or nats:// URL) in `mode`; with `create`, a
 * missing medium is created first (a file, or a Redis key). On error prints
 * one line "daolease SUB: WHERE: position P: REASON" and returns the code. */
/* `where` as messages show it: a redis:// URL without its user and password
 * (docs/redis.md), written into buf when it must be cut; else `where`. */
const char *dls_cli_shown(const char *where, char *buf, size_t n);

int dls_cli_open(dls_medium **out, const char *sub, const char *where,
                 dls_open_mode mode, bool create, dls_sync sync);

/* Parses "none" | "data" | "group" (NULL: data). */
dls_sync dls_cli_sync(const char *name);

/* A reader stopped (blocked) on a local stream file: is that the end of
 * what was written, a write in progress, or damage (dls_medium_check_tail)?
 * 0 when the file ends on a whole record or on a plain torn write; else
 * one line naming the file, the byte offset and the reason (a bad record
 * followed by CRC-valid ones; a file shorter than its header; corruption)
 * and non-zero. Remote media answer 0. */
int dls_cli_check_end(const char *sub, const char *where);

/* Host-clock ticks for one process: an in-memory ring, the tick adapter
 * writing bare tick facts to it, a medium resolver naming the tick party,
 * and (for a holder) a cursor on it. */
typedef struct dls_cli_ticks {
    dls_medium *ring;
    dls_tick *adapter;
    dls_resolver *resolver;
    dls_cursor *cursor;
} dls_cli_ticks;

#define DLS_CLI_TICK_PARTY "ticks"

int dls_cli_ticks_new(dls_cli_ticks *t, const char *sub, bool cursor);
void dls_cli_ticks_del(dls_cli_ticks *t);

/* Loads a party's secret key file and the keyring; on error prints one line
 * naming the file (and line) and returns the code. */
int dls_cli_load_keys(const char *sub, const char *key, const char *keyring,
                      dls_secret **secret, dls_keyring **kr);

/* Fills judge settings with their defaults and one host-clock tick source
 * (ts, borrowed by s) over t, the grantor, the journal and the media. */
void dls_cli_judge_settings(dls_judge_settings *s, dls_judge_tick_source *ts,
                            const dls_cli_ticks *t, const dls_secret *grantor,
                            dls_medium *journal, const dls_judge_medium *media, size_t n);

/* A holder with default settings over its parts and host-clock ticks t; on
 * error prints one line naming `where` and the holder's reason. */
int dls_cli_holder_new(dls_holder **out, const char *sub, const char *where,
                       const dls_holder_parts *parts_without_ticks, dls_cli_ticks *t);

/* Parses a duration written "250ms", "3s", "2min", "1h", "500us", "10ns"
 * (or a JSON map {"ms":250}). 0 or DLS_ERR_INVAL. */
int dls_cli_duration(const char *text, dls_duration *d);

/* Encodes a str subject as msgpack (shortest form) into out[cap]. */
int dls_cli_subject(const char *s, uint8_t *out, size_t cap, size_t *len);

#endif
