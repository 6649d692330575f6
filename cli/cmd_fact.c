/* daolease fact — JSON Lines ↔ msgpack facts (cli.md's JSON mapping), and
 * validation against vocabulary.md's rules 1–5. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cli/cli.h"
#include "daolease/fact.h"
#include "cli/json/json.h"
#include "vocab/mp.h"

static const char usage_text[] =
    "usage: daolease fact encode [--hex] [--valid-only] < facts.jsonl\n"
    "       daolease fact decode [--hex] [--validate] < facts\n"
    "\n"
    "encode  reads one JSON value a line (cli.md's mapping: {\"$bin\": hex}, ...;\n"
    "        blank lines skipped) and writes each one's msgpack encoding in the\n"
    "        shortest form, keys in the line's order: raw bytes back to back, or\n"
    "        with --hex one lower-case hex line per value.\n"
    "        --valid-only  refuse a value that is not a valid lease fact\n"
    "                      (vocabulary.md rules 1-5)\n"
    "decode  reads msgpack values back to back (or with --hex one hex line per\n"
    "        value) and prints one JSON line per value.\n"
    "        --validate    print {\"valid\", \"rule\", \"kind\", \"offset\", \"reason\",\n"
    "                      \"fact\"} per value instead (rules 1-5; a map with\n"
    "                      neither dispatch key is valid with kind null)\n"
    "\n"
    "Errors name the input line (or byte offset) and the reason, exit 1;\n"
    "usage errors exit 2.\n";

typedef struct opts {
    bool hex, valid_only, validate;
} opts;

/* ---- hex ----------------------------------------------------------------- */

/* Decodes s[0..n) in place (byte k is written after digits 2k and 2k+1
 * are read); returns the byte count, or -1 with *bad the digit offset of
 * the first incomplete or invalid pair (an odd count: the lone last digit). */
static long unhex(char *s, size_t n, size_t *bad)
{
    size_t k;
    const char *end;
    if (sodium_hex2bin((unsigned char *)s, n / 2, s, n, NULL, &k, &end) != 0 || end != s + n) {
        *bad = (size_t)(end - s);
        return -1;
    }
    return (long)k;
}

static void put_hex(FILE *f, const uint8_t *p, size_t n)
{
    char hex[2 * 64 + 1];
    for (size_t i = 0; i < n; i += 64) {
        size_t k = n - i < 64 ? n - i : 64;
        fputs(sodium_bin2hex(hex, sizeof hex, p + i, k), f);
    }
    fputc('\n', f);
}

/* Strips a trailing newline (and CR); true when the line is blank. */
static bool trim(char *line, size_t *n)
{
    while (*n && (line[*n - 1] == '\n' || line[*n - 1] == '\r'))
        line[--*n] = 0;
    size_t i = 0;
    while (i < *n && (line[i] == ' ' || line[i] == '\t'))
        i++;
    return i == *n;
}

/* ---- encode -------------------------------------------------------------- */

static int encode(const opts *o)
{
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t got;
    int status = DLS_EXIT_OK;
    while (status == DLS_EXIT_OK && (got = getline(&line, &cap, stdin)) >= 0) {
        size_t n = (size_t)got;
        lineno++;
        if (trim(line, &n))
            continue;
        uint8_t *mp;
        size_t mlen;
        dls_json_error e;
        int rc = dls_json_to_msgpack(line, n, &mp, &mlen, &e);
        if (rc) {
            if (e.offset)
                dls_cli_error("fact encode", "stdin: line %zu: offset %llu: %s", lineno,
                              (unsigned long long)e.offset, rc == DLS_ERR_JSON ? e.text : dls_strerror(rc));
            else
                dls_cli_error("fact encode", "stdin: line %zu: %s", lineno,
                              rc == DLS_ERR_JSON ? e.text : dls_strerror(rc));
            status = DLS_EXIT_FAIL;
            break;
        }
        dls_fact f;
        dls_where w;
        if (o->valid_only && (rc = dls_fact_decode(mp, mlen, &f, &w)) != 0) {
            dls_cli_error("fact encode", "stdin: line %zu: rule %d: %s (msgpack offset %llu)",
                          lineno, w.rule, w.reason, (unsigned long long)w.offset);
            status = DLS_EXIT_FAIL;
        } else if (o->valid_only && f.kind == DLS_FACT_NONE) {
            dls_cli_error("fact encode", "stdin: line %zu: not a lease fact (no dispatch key)",
                          lineno);
            status = DLS_EXIT_FAIL;
        } else if (o->hex) {
            put_hex(stdout, mp, mlen);
        } else {
            fwrite(mp, 1, mlen, stdout);
        }
        free(mp);
    }
    free(line);
    return status;
}

/* ---- decode -------------------------------------------------------------- */

static void put_json_or_null(dls_jbuf *b, const uint8_t *p, size_t n)
{
    if (dls_json_emit(b, p, n, NULL))
        dls_jbuf_puts(b, "null");
}

/* One value p[0..n): its JSON line, or its validation line. Returns 0, or an
 * error reason (with *at) for a value that plain decoding cannot show. */
static const char *show(const opts *o, const uint8_t *p, size_t n, size_t *at)
{
    dls_jbuf b = {0};
    if (o->validate) {
        dls_fact f;
        dls_where w;
        int rc = dls_fact_decode(p, n, &f, &w);
        const char *kind = rc ? NULL : dls_fact_kind_name(f.kind);
        dls_jbuf_puts(&b, rc ? "{\"valid\":false,\"rule\":" : "{\"valid\":true,\"rule\":null");
        if (rc) {
            dls_jbuf_uint(&b, (uint64_t)w.rule);
        }
        dls_jbuf_puts(&b, ",\"kind\":");
        if (kind)
            dls_jbuf_string(&b, (const uint8_t *)kind, strlen(kind));
        else
            dls_jbuf_puts(&b, "null");
        if (rc) {
            dls_jbuf_puts(&b, ",\"offset\":");
            dls_jbuf_uint(&b, w.offset);
            dls_jbuf_puts(&b, ",\"reason\":");
            dls_jbuf_string(&b, (const uint8_t *)w.reason, strlen(w.reason));
        } else {
            dls_jbuf_puts(&b, ",\"offset\":null,\"reason\":null");
        }
        dls_jbuf_puts(&b, ",\"fact\":");
        put_json_or_null(&b, p, n);
        dls_jbuf_puts(&b, "}");
    } else {
        dls_where w;
        if (dls_json_emit(&b, p, n, &w)) {
            dls_jbuf_free(&b);
            *at = w.offset;
            return w.reason;
        }
    }
    if (!b.p) {
        dls_jbuf_free(&b);
        *at = 0;
        return "out of memory";
    }
    puts(b.p);
    dls_jbuf_free(&b);
    return NULL;
}

static int decode_hex(const opts *o)
{
    char *line = NULL;
    size_t cap = 0, lineno = 0, at;
    ssize_t got;
    int status = DLS_EXIT_OK;
    while (status == DLS_EXIT_OK && (got = getline(&line, &cap, stdin)) >= 0) {
        size_t n = (size_t)got;
        lineno++;
        if (trim(line, &n))
            continue;
        long k = unhex(line, n, &at);
        const char *why = k < 0 ? "not an even number of hex digits" : NULL;
        if (!why)
            why = show(o, (const uint8_t *)line, (size_t)k, &at);
        else
            at /= 2;
        if (why) {
            dls_cli_error("fact decode", "stdin: line %zu: offset %zu: %s", lineno, at, why);
            status = DLS_EXIT_FAIL;
        }
    }
    free(line);
    return status;
}

static uint8_t *read_all(FILE *f, size_t *n)
{
    size_t cap = 1 << 16;
    uint8_t *buf = malloc(cap);
    *n = 0;
    while (buf) {
        size_t got = fread(buf + *n, 1, cap - *n, f);
        *n += got;
        if (got == 0)
            break;
        if (*n == cap) {
            uint8_t *b = realloc(buf, cap * 2);
            if (!b)
                free(buf);
            buf = b;
            cap *= 2;
        }
    }
    return buf;
}

static int decode_raw(const opts *o)
{
    size_t n;
    uint8_t *buf = read_all(stdin, &n);
    if (!buf || ferror(stdin)) {
        dls_cli_error("fact decode", "stdin: cannot read");
        free(buf);
        return DLS_EXIT_FAIL;
    }
    int status = DLS_EXIT_OK;
    for (size_t off = 0, end; off < n; off = end) {
        int rc = dls_mp_skip(buf, n, off, DLS_MP_MAX_DEPTH, &end, NULL);
        size_t at = end;
        const char *why = rc == DLS_ERR_DEPTH ? "nested deeper than 64 levels"
                          : rc                ? "malformed or truncated msgpack"
                                              : show(o, buf + off, end - off, &at);
        if (why) {
            dls_cli_error("fact decode", "stdin: offset %zu: %s", rc ? at : off + at, why);
            status = DLS_EXIT_FAIL;
            break;
        }
    }
    free(buf);
    return status;
}

int dls_cmd_fact(int argc, char **argv)
{
    if (dls_cli_wants_help(argc, argv)) {
        fputs(usage_text, stdout);
        return DLS_EXIT_OK;
    }
    if (argc < 2 || (strcmp(argv[1], "encode") && strcmp(argv[1], "decode"))) {
        dls_cli_error("fact", "expected 'encode' or 'decode' (see 'daolease fact --help')");
        return DLS_EXIT_USAGE;
    }
    bool enc = !strcmp(argv[1], "encode");
    opts o = {0};
    static const struct option longs[] = {
        {"hex", no_argument, NULL, 'x'},
        {"valid-only", no_argument, NULL, 'v'},
        {"validate", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    opterr = 0;
    if (dls_cli_exact_options("fact", argc - 1, argv + 1, longs, 0))
        return DLS_EXIT_USAGE;
    while ((c = getopt_long(argc - 1, argv + 1, "", longs, NULL)) != -1) {
        if (c == 'x')
            o.hex = true;
        else if (c == 'v' && enc)
            o.valid_only = true;
        else if (c == 'V' && !enc)
            o.validate = true;
        else {
            dls_cli_error("fact", "%s: unknown option '%s' (see 'daolease fact --help')",
                          argv[1], argv[optind]);
            return DLS_EXIT_USAGE;
        }
    }
    if (optind < argc - 1) {
        dls_cli_error("fact", "%s: unexpected argument '%s'", argv[1], argv[optind + 1]);
        return DLS_EXIT_USAGE;
    }
    if (enc)
        return encode(&o);
    return o.hex ? decode_hex(&o) : decode_raw(&o);
}
