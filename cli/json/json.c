/* JSON → msgpack (cli.md, "JSON mapping of facts"): jansson parses (with
 * JSON_REJECT_DUPLICATES; objects iterate in insertion order, which is the
 * text's order), msgpack-c packs in the shortest form.
 *
 * jansson keeps integers in a long long, so integers in 2^63 … 2^64−1
 * cannot reach it as integers. A pre-scan of the text finds every number
 * token outside strings: a non-integer (fraction or exponent) or one
 * outside −2^63 … 2^64−1 is refused there with its offset; each integer
 * above 2^63−1 is remembered in order and handed to jansson as a real
 * (".0" appended). Since the pre-scan refused every genuine non-integer,
 * the k-th real met in document order is the k-th remembered integer. */
#include <jansson.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cli/json/json.h"

#include "vocab/vec.h"

typedef struct big {
    uint64_t value;
    size_t at, end; /* the literal's span in the original text */
} big;

typedef struct conv {
    msgpack_sbuffer sb;
    msgpack_packer pk;
    const big *bigs;
    size_t nbig, next_big;
    dls_json_error *e;
    char path[96]; /* JSON pointer of the value being mapped */
    size_t plen;
    bool nomem;    /* a write failed: the output is void */
} conv;

static int sb_write(void *data, const char *buf, size_t len)
{
    conv *c = data;
    if (c->nomem || msgpack_sbuffer_write(&c->sb, buf, len)) {
        c->nomem = true;
        return -1;
    }
    return 0;
}

static int error_at(dls_json_error *e, uint64_t offset, uint64_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int error_at(dls_json_error *e, uint64_t offset, uint64_t line, const char *fmt, ...)
{
    if (e) {
        e->offset = offset;
        e->line = line;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->text, sizeof e->text, fmt, ap);
        va_end(ap);
    }
    return DLS_ERR_JSON;
}

/* ---- the pre-scan -------------------------------------------------------- */

static uint64_t line_of(const char *t, size_t at)
{
    uint64_t line = 1;
    for (size_t i = 0; i < at; i++)
        line += t[i] == '\n';
    return line;
}

static bool is_num(char c)
{
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* Checks one number token t[at..end); a big one is appended to *bigs. */
static int number(const char *t, size_t at, size_t end, dls_vec *bigs, dls_json_error *e)
{
    bool neg = t[at] == '-';
    uint64_t v = 0;
    size_t i = at + neg;
    if (i == end)
        return 0; /* a lone '-': jansson reports it */
    for (; i < end; i++) {
        if (t[i] < '0' || t[i] > '9')
            return error_at(e, at, line_of(t, at),
                            "a number that is not an integer (floats are written {\"$f64\": hex})");
        unsigned d = (unsigned)(t[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return error_at(e, at, line_of(t, at), "an integer above 2^64-1");
        v = v * 10 + d;
    }
    if (neg && v > (uint64_t)INT64_MAX + 1)
        return error_at(e, at, line_of(t, at), "an integer below -2^63");
    if (neg || v <= INT64_MAX)
        return 0;
    big *g = dls_vec_push(bigs, sizeof *g);
    if (!g)
        return DLS_ERR_NOMEM;
    *g = (big){v, at, end};
    return 0;
}

static int prescan(const char *t, size_t len, dls_vec *bigs, dls_json_error *e)
{
    for (size_t i = 0; i < len;) {
        if (t[i] == '"') {
            for (i++; i < len && t[i] != '"'; i++)
                if (t[i] == '\\')
                    i++;
            i++;
        } else if ((t[i] >= '0' && t[i] <= '9') || t[i] == '-') {
            size_t end = i;
            while (end < len && is_num(t[end]))
                end++;
            int rc = number(t, i, end, bigs, e);
            if (rc)
                return rc;
            i = end;
        } else {
            i++;
        }
    }
    return 0;
}

/* The text jansson reads: each big integer literal followed by ".0". */
static char *with_reals(const char *t, size_t len, const big *bigs, size_t nbig, size_t *out)
{
    char *c = malloc(len + 2 * nbig + 1);
    if (!c)
        return NULL;
    size_t o = 0, from = 0;
    for (size_t i = 0; i < nbig; i++) {
        memcpy(c + o, t + from, bigs[i].end - from);
        o += bigs[i].end - from;
        memcpy(c + o, ".0", 2);
        o += 2;
        from = bigs[i].end;
    }
    memcpy(c + o, t + from, len - from);
    o += len - from;
    c[o] = 0;
    *out = o;
    return c;
}

/* ---- the mapping --------------------------------------------------------- */

static int fail(conv *c, const char *why)
{
    return error_at(c->e, 0, 0, "%s at %s", why, c->plen ? c->path : "/ (the top)");
}

/* Appends a JSON pointer segment; returns the length to restore. */
static size_t push(conv *c, const char *seg, size_t n)
{
    size_t old = c->plen;
    if (c->plen + 1 + n + 4 < sizeof c->path) {
        c->path[c->plen++] = '/';
        memcpy(c->path + c->plen, seg, n);
        c->plen += n;
    } else if (c->plen + 5 < sizeof c->path) {
        memcpy(c->path + c->plen, "/...", 4);
        c->plen += 4;
    }
    c->path[c->plen] = 0;
    return old;
}

static size_t push_index(conv *c, size_t i)
{
    char t[24];
    int k = snprintf(t, sizeof t, "%zu", i);
    return push(c, t, (size_t)k);
}

static void pop(conv *c, size_t old)
{
    c->plen = old;
    c->path[old] = 0;
}

/* Decodes a hex string into a malloc'd buffer (*out NULL for empty). */
static int hex_value(conv *c, const json_t *v, uint8_t **out, size_t *n)
{
    if (!json_is_string(v))
        return fail(c, "a hex value is not a string");
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (len % 2)
        return fail(c, "an odd number of hex digits");
    *n = len / 2;
    *out = NULL;
    if (!*n)
        return 0;
    uint8_t *b = malloc(*n);
    if (!b)
        return DLS_ERR_NOMEM;
    if (sodium_hex2bin(b, *n, s, len, NULL, NULL, NULL) != 0) {
        free(b);
        return fail(c, "a hex value holds a non-hex character");
    }
    *out = b;
    return 0;
}

static int value(conv *c, const json_t *v, int depth);

static int special(conv *c, const char *key, const json_t *v, int depth)
{
    uint8_t *bytes = NULL;
    size_t n = 0;
    int rc;
    if (!strcmp(key, "$bin") || !strcmp(key, "$f64")) {
        if ((rc = hex_value(c, v, &bytes, &n)))
            return rc;
        if (key[1] == 'b') {
            msgpack_pack_bin(&c->pk, n);
            msgpack_pack_bin_body(&c->pk, bytes, n);
        } else if (n != 8) {
            rc = fail(c, "$f64 is not 16 hex digits");
        } else {
            uint8_t raw[9] = {0xcb};
            memcpy(raw + 1, bytes, 8); /* big-endian IEEE bits, as written */
            sb_write(c, (const char *)raw, sizeof raw);
        }
        free(bytes);
        return rc;
    }
    if (!strcmp(key, "$ext")) {
        const json_t *t = json_array_get(v, 0);
        if (!json_is_array(v) || json_array_size(v) != 2 || !json_is_integer(t) ||
            json_integer_value(t) < -128 || json_integer_value(t) > 127)
            return fail(c, "$ext is not [type -128..127, hex]");
        if ((rc = hex_value(c, json_array_get(v, 1), &bytes, &n)))
            return rc;
        msgpack_pack_ext(&c->pk, n, (int8_t)json_integer_value(t));
        msgpack_pack_ext_body(&c->pk, bytes, n);
        free(bytes);
        return 0;
    }
    if (!strcmp(key, "$map")) {
        if (!json_is_array(v))
            return fail(c, "$map is not an array of [key, value] pairs");
        msgpack_pack_map(&c->pk, json_array_size(v));
        for (size_t i = 0; i < json_array_size(v); i++) {
            const json_t *pair = json_array_get(v, i);
            size_t old = push_index(c, i);
            if (!json_is_array(pair) || json_array_size(pair) != 2)
                return fail(c, "a $map entry is not a [key, value] pair");
            if ((rc = value(c, json_array_get(pair, 0), depth + 1)) ||
                (rc = value(c, json_array_get(pair, 1), depth + 1)))
                return rc;
            pop(c, old);
        }
        return 0;
    }
    return fail(c, "an object key starting with $ (maps with such keys are written {\"$map\": ...})");
}

static int object(conv *c, json_t *v, int depth)
{
    void *it = json_object_iter(v);
    if (json_object_size(v) == 1 && json_object_iter_key(it)[0] == '$') {
        size_t old = push(c, json_object_iter_key(it), json_object_iter_key_len(it));
        int rc = special(c, json_object_iter_key(it), json_object_iter_value(it), depth);
        if (!rc)
            pop(c, old);
        return rc;
    }
    msgpack_pack_map(&c->pk, json_object_size(v));
    for (; it; it = json_object_iter_next(v, it)) {
        const char *k = json_object_iter_key(it);
        size_t kn = json_object_iter_key_len(it);
        size_t old = push(c, k, kn);
        if (k[0] == '$')
            return fail(c, "an object key starting with $ (maps with such keys are written {\"$map\": ...})");
        msgpack_pack_str(&c->pk, kn);
        msgpack_pack_str_body(&c->pk, k, kn);
        int rc = value(c, json_object_iter_value(it), depth + 1);
        if (rc)
            return rc;
        pop(c, old);
    }
    return 0;
}

static int value(conv *c, const json_t *v, int depth)
{
    if (depth >= DLS_JSON_MAX_DEPTH)
        return fail(c, "nested deeper than 64 levels");
    switch (json_typeof(v)) {
    case JSON_OBJECT: return object(c, (json_t *)v, depth);
    case JSON_ARRAY:
        msgpack_pack_array(&c->pk, json_array_size(v));
        for (size_t i = 0; i < json_array_size(v); i++) {
            size_t old = push_index(c, i);
            int rc = value(c, json_array_get(v, i), depth + 1);
            if (rc)
                return rc;
            pop(c, old);
        }
        return 0;
    case JSON_STRING:
        msgpack_pack_str(&c->pk, json_string_length(v));
        msgpack_pack_str_body(&c->pk, json_string_value(v), json_string_length(v));
        return 0;
    case JSON_INTEGER: {
        json_int_t i = json_integer_value(v);
        if (i < 0)
            msgpack_pack_int64(&c->pk, i);
        else
            msgpack_pack_uint64(&c->pk, (uint64_t)i);
        return 0;
    }
    case JSON_REAL:
        if (c->next_big >= c->nbig)
            return fail(c, "a number that is not an integer");
        msgpack_pack_uint64(&c->pk, c->bigs[c->next_big++].value);
        return 0;
    case JSON_TRUE: msgpack_pack_true(&c->pk); return 0;
    case JSON_FALSE: msgpack_pack_false(&c->pk); return 0;
    default: msgpack_pack_nil(&c->pk); return 0;
    }
}

int dls_json_to_msgpack(const char *text, size_t len, uint8_t **out, size_t *out_len,
                        dls_json_error *e)
{
    if (e)
        memset(e, 0, sizeof *e);
    if (!text || !out || !out_len)
        return error_at(e, 0, 0, "no input");
    *out = NULL;
    *out_len = 0;
    dls_vec big_vec = {0};
    int rc = prescan(text, len, &big_vec, e);
    if (rc) {
        dls_vec_free(&big_vec);
        return rc;
    }
    const big *bigs = big_vec.p;
    size_t nbig = big_vec.n;
    char *copy = NULL;
    size_t clen = len;
    if (nbig && !(copy = with_reals(text, len, bigs, nbig, &clen))) {
        dls_vec_free(&big_vec);
        return DLS_ERR_NOMEM;
    }
    json_error_t je;
    json_t *root = json_loadb(copy ? copy : text, clen,
                              JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (!root) {
        size_t pos = je.position > 0 ? (size_t)je.position : 0;
        for (size_t i = 0; i < nbig && bigs[i].end + 2 * (i + 1) <= pos; i++)
            pos -= 2; /* back to the original text's offsets */
        rc = error_at(e, pos, je.line > 0 ? (uint64_t)je.line : 0, "%s", je.text);
    } else {
        conv c = {.bigs = bigs, .nbig = nbig, .e = e};
        msgpack_sbuffer_init(&c.sb);
        msgpack_packer_init(&c.pk, &c, sb_write);
        rc = value(&c, root, 0);
        if (rc == 0 && (c.nomem || c.sb.size == 0))
            rc = DLS_ERR_NOMEM;
        if (rc == 0) {
            *out = (uint8_t *)c.sb.data;
            *out_len = c.sb.size;
        } else {
            msgpack_sbuffer_destroy(&c.sb);
        }
        json_decref(root);
    }
    free(copy);
    dls_vec_free(&big_vec);
    return rc;
}
