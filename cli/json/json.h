/* daolease — the JSON mapping of facts (spec: cli.md, "JSON mapping of
 * facts"), used by the command and the tests; not part of libdaolease.
 *
 *   msgpack            JSON
 *   map (str keys)     object, keys in the map's own order, repeats kept
 *   map with a non-str key, or a key starting with "$"
 *                      {"$map": [[k, v], ...]}
 *   array              array
 *   nil / bool         null / true, false
 *   uint / int         number, exact over the whole 64-bit ranges
 *   str                string (invalid UTF-8 shown as U+FFFD)
 *   bin                {"$bin": "<hex>"}
 *   float 32 / 64      {"$f64": "<16 hex digits of the IEEE-754 double bits>"}
 *                      (a float 32 is widened to double first)
 *   ext                {"$ext": [type, "<hex>"]}
 *
 * Out (msgpack → JSON): a streaming emitter over the bounds-checking
 * walker's slices, non-recursive, into a growable buffer.
 * In (JSON → msgpack): jansson (JSON_REJECT_DUPLICATES; objects keep their
 * order), msgpack's shortest form. Every JSON number must be an integer in
 * −2^63 … 2^64−1 (a float is written {"$f64": ...}); integers above
 * 2^63−1, beyond jansson's json_int_t, are carried exactly by a pre-scan of
 * the text. A key starting with "$" is only accepted as the single key of
 * one of the four forms above ({"$map": ...} also takes str keys, e.g. ones
 * holding U+0000, which jansson refuses in object keys).
 */
#ifndef DLS_JSON_JSON_H
#define DLS_JSON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "daolease/error.h"

/* Deepest nesting either direction accepts. */
#define DLS_JSON_MAX_DEPTH 64

/* A growable text buffer. Zero-initialise; free with dls_jbuf_free. */
typedef struct dls_jbuf {
    char *p;      /* NUL-terminated when non-NULL */
    size_t n, cap;
} dls_jbuf;

void dls_jbuf_free(dls_jbuf *b);
/* Appends raw text / n bytes. Returns 0 or DLS_ERR_NOMEM. */
int dls_jbuf_puts(dls_jbuf *b, const char *s);
int dls_jbuf_put(dls_jbuf *b, const char *s, size_t n);
/* Appends a JSON string of the bytes p[0..n): escaped, invalid UTF-8 as
 * U+FFFD (one per maximal ill-formed subsequence). */
int dls_jbuf_string(dls_jbuf *b, const uint8_t *p, size_t n);
/* Appends a decimal number. */
int dls_jbuf_uint(dls_jbuf *b, uint64_t v);

/* Appends the JSON text of the msgpack value p[0..n), which must hold
 * exactly one value. Returns 0; DLS_ERR_MSGPACK (malformed or truncated),
 * DLS_ERR_TRAILING (bytes after the value), DLS_ERR_DEPTH (deeper than
 * DLS_JSON_MAX_DEPTH) with `w` (optional) naming the byte offset and
 * reason, and b unchanged; DLS_ERR_NOMEM. The text is at most 10 bytes per
 * input byte (a map nesting maps as keys is the worst case). */
int dls_json_emit(dls_jbuf *b, const uint8_t *p, size_t n, dls_where *w);

/* dls_json_emit to a stream (no newline added). Returns as dls_json_emit,
 * or DLS_ERR_IO when the write fails. */
int dls_json_print(FILE *f, const uint8_t *p, size_t n, dls_where *w);

/* Where and why a JSON text was refused. */
typedef struct dls_json_error {
    uint64_t offset;  /* byte offset in the text (0 when not known) */
    uint64_t line;    /* 1-based line in the text (0 when not known) */
    char text[192];   /* the reason; for a value refused after parsing,
                         followed by its JSON pointer, e.g. "at /a/0" */
} dls_json_error;

/* Maps one JSON value (the whole text[0..len), surrounding whitespace
 * allowed) to msgpack. On success *out is a malloc'd buffer of *out_len
 * bytes (free it with free()). Returns 0, DLS_ERR_JSON with `e` (optional)
 * filled, or DLS_ERR_NOMEM. */
int dls_json_to_msgpack(const char *text, size_t len, uint8_t **out, size_t *out_len,
                        dls_json_error *e);

#endif
