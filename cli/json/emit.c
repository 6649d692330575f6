/* msgpack → JSON (cli.md, "JSON mapping of facts"): a streaming emitter over
 * the walker's slices. Non-recursive; keeps map order and repeated keys;
 * integers exact. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cli/json/json.h"
#include "vocab/mp.h"

#include "vocab/where.h"

/* ---- the buffer ---------------------------------------------------------- */

void dls_jbuf_free(dls_jbuf *b)
{
    if (!b)
        return;
    free(b->p);
    *b = (dls_jbuf){0};
}

static int reserve(dls_jbuf *b, size_t k)
{
    if (k < b->cap - b->n && b->p)
        return 0;
    if (k > SIZE_MAX / 2 - b->n)
        return DLS_ERR_NOMEM;
    size_t cap = b->cap ? b->cap : 256;
    while (cap <= b->n + k)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p)
        return DLS_ERR_NOMEM;
    b->p = p;
    b->cap = cap;
    return 0;
}

int dls_jbuf_put(dls_jbuf *b, const char *s, size_t n)
{
    if (reserve(b, n))
        return DLS_ERR_NOMEM;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
    return 0;
}

int dls_jbuf_puts(dls_jbuf *b, const char *s)
{
    return dls_jbuf_put(b, s, strlen(s));
}

int dls_jbuf_uint(dls_jbuf *b, uint64_t v)
{
    char t[24];
    int k = snprintf(t, sizeof t, "%" PRIu64, v);
    return dls_jbuf_put(b, t, (size_t)k);
}

static int put_int(dls_jbuf *b, int64_t v)
{
    char t[24];
    int k = snprintf(t, sizeof t, "%" PRId64, v);
    return dls_jbuf_put(b, t, (size_t)k);
}

static int put_hex(dls_jbuf *b, const uint8_t *p, size_t n)
{
    if (reserve(b, 2 * n + 2))
        return DLS_ERR_NOMEM;
    char *o = b->p + b->n;
    *o++ = '"';
    sodium_bin2hex(o, 2 * n + 1, p, n); /* lower case; its NUL is overwritten */
    o += 2 * n;
    *o++ = '"';
    b->n = (size_t)(o - b->p);
    b->p[b->n] = 0;
    return 0;
}

/* ---- strings ------------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence at s[0..n), or 0 with *bad set to
 * the length of its maximal ill-formed subpart (Unicode 15, §3.9, U+FFFD
 * substitution of maximal subparts). */
static size_t utf8_len(const uint8_t *s, size_t n, size_t *bad)
{
    uint8_t c = s[0], lo = 0x80, hi = 0xbf;
    size_t need;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
        need = 2;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 3;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else {
        *bad = 1;
        return 0;
    }
    for (size_t i = 1; i <= need; i++) {
        if (i >= n || s[i] < (i == 1 ? lo : 0x80) || s[i] > (i == 1 ? hi : 0xbf)) {
            *bad = i;
            return 0;
        }
    }
    return need + 1;
}

int dls_jbuf_string(dls_jbuf *b, const uint8_t *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (dls_jbuf_put(b, "\"", 1))
        return DLS_ERR_NOMEM;
    size_t i = 0, run = 0; /* p[run..i) is copied as it is */
    while (i < n) {
        uint8_t c = p[i];
        size_t k = 1, bad = 0;
        if (c >= 0x20 && c != '"' && c != '\\' && (c < 0x80 || (k = utf8_len(p + i, n - i, &bad)))) {
            i += k;
            continue;
        }
        if (dls_jbuf_put(b, (const char *)p + run, i - run))
            return DLS_ERR_NOMEM;
        char esc[8] = {'\\', 0};
        size_t elen = 2;
        if (c >= 0x80) {
            memcpy(esc, "\xef\xbf\xbd", 3); /* U+FFFD */
            elen = 3;
            k = bad;
        } else if (c == '"' || c == '\\') {
            esc[1] = (char)c;
        } else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
            esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : 'f';
        } else {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            elen = 6;
        }
        if (dls_jbuf_put(b, esc, elen))
            return DLS_ERR_NOMEM;
        i += k;
        run = i;
    }
    if (dls_jbuf_put(b, (const char *)p + run, i - run) || dls_jbuf_put(b, "\"", 1))
        return DLS_ERR_NOMEM;
    return 0;
}

/* ---- values -------------------------------------------------------------- */

enum { F_ARRAY, F_MAP, F_XMAP };

typedef struct frame {
    int kind;
    uint64_t total, done; /* values in the container (2 a pair), written */
} frame;

static const char *const opens[] = {"[", "{", "{\"$map\":["};
static const char *const closes[] = {"]", "}", "]}"};

/* A map is written as {"$map": ...} when a key is not a str or starts with
 * "$". A malformed map stops the scan; the emitter then reports it. */
static bool needs_xmap(const uint8_t *p, size_t n, size_t off, uint32_t pairs)
{
    for (uint32_t i = 0; i < pairs; i++) {
        dls_mp_item k;
        if (dls_mp_read(p, n, off, &k))
            return false;
        if (k.type != DLS_MP_STR || (k.len && k.data[0] == '$'))
            return true;
        if (dls_mp_skip(p, n, k.end, DLS_MP_MAX_DEPTH, &off, NULL))
            return false;
    }
    return false;
}

static int separator(dls_jbuf *b, const frame *f)
{
    bool key = f->done % 2 == 0;
    switch (f->kind) {
    case F_ARRAY: return f->done ? dls_jbuf_put(b, ",", 1) : 0;
    case F_MAP: return key ? (f->done ? dls_jbuf_put(b, ",", 1) : 0) : dls_jbuf_put(b, ":", 1);
    default: return key ? dls_jbuf_puts(b, f->done ? ",[" : "[") : dls_jbuf_put(b, ",", 1);
    }
}

static int scalar(dls_jbuf *b, const dls_mp_item *it)
{
    char t[48];
    uint64_t bits;
    double d;
    switch (it->type) {
    case DLS_MP_NIL: return dls_jbuf_puts(b, "null");
    case DLS_MP_BOOL: return dls_jbuf_puts(b, it->v.b ? "true" : "false");
    case DLS_MP_UINT: return dls_jbuf_uint(b, it->v.u);
    case DLS_MP_INT: return put_int(b, it->v.i);
    case DLS_MP_F32:
    case DLS_MP_F64:
        d = it->type == DLS_MP_F32 ? (double)it->v.f32 : it->v.f64;
        memcpy(&bits, &d, sizeof bits);
        snprintf(t, sizeof t, "{\"$f64\":\"%016" PRIx64 "\"}", bits);
        return dls_jbuf_puts(b, t);
    case DLS_MP_STR: return dls_jbuf_string(b, it->data, it->len);
    case DLS_MP_BIN:
        return dls_jbuf_puts(b, "{\"$bin\":") || put_hex(b, it->data, it->len) ||
                       dls_jbuf_puts(b, "}")
                   ? DLS_ERR_NOMEM
                   : 0;
    default: /* EXT */
        snprintf(t, sizeof t, "{\"$ext\":[%d,", (int)it->ext_type);
        return dls_jbuf_puts(b, t) || put_hex(b, it->data, it->len) || dls_jbuf_puts(b, "]}")
                   ? DLS_ERR_NOMEM
                   : 0;
    }
}

static int fail(dls_jbuf *b, size_t start, dls_where *w, int rc, size_t off, const char *why)
{
    if (b->p) {
        b->n = start;
        b->p[start] = 0;
    }
    return dls_where_fill(w, rc, (dls_where){.offset = off, .reason = why});
}

int dls_json_emit(dls_jbuf *b, const uint8_t *p, size_t n, dls_where *w)
{
    frame st[DLS_JSON_MAX_DEPTH];
    unsigned d = 0;
    size_t off = 0, start = b->n;
    do {
        dls_mp_item it;
        if (d && separator(b, &st[d - 1]))
            return fail(b, start, w, DLS_ERR_NOMEM, off, "out of memory");
        if (!p || dls_mp_read(p, n, off, &it))
            return fail(b, start, w, DLS_ERR_MSGPACK, off, "malformed or truncated msgpack");
        off = it.end;
        if (it.type == DLS_MP_ARRAY || it.type == DLS_MP_MAP) {
            if (d == DLS_JSON_MAX_DEPTH)
                return fail(b, start, w, DLS_ERR_DEPTH, it.off, "nested deeper than 64 levels");
            int kind = it.type == DLS_MP_ARRAY ? F_ARRAY
                       : needs_xmap(p, n, it.end, it.len) ? F_XMAP : F_MAP;
            if (dls_jbuf_puts(b, opens[kind]))
                return fail(b, start, w, DLS_ERR_NOMEM, off, "out of memory");
            uint64_t total = kind == F_ARRAY ? it.len : 2 * (uint64_t)it.len;
            if (total) {
                st[d++] = (frame){kind, total, 0};
                continue;
            }
            if (dls_jbuf_puts(b, closes[kind]))
                return fail(b, start, w, DLS_ERR_NOMEM, off, "out of memory");
        } else if (scalar(b, &it)) {
            return fail(b, start, w, DLS_ERR_NOMEM, off, "out of memory");
        }
        /* A value is complete: close every container it completes. */
        while (d) {
            frame *f = &st[d - 1];
            f->done++;
            if (f->kind == F_XMAP && f->done % 2 == 0 && dls_jbuf_put(b, "]", 1))
                return fail(b, start, w, DLS_ERR_NOMEM, off, "out of memory");
            if (f->done < f->total)
                break;
            if (dls_jbuf_puts(b, closes[f->kind]))
                return fail(b, start, w, DLS_ERR_NOMEM, off, "out of memory");
            d--;
        }
    } while (d);
    if (off != n)
        return fail(b, start, w, DLS_ERR_TRAILING, off, "trailing bytes after the value");
    if (!b->p && dls_jbuf_put(b, "", 0))
        return DLS_ERR_NOMEM;
    return 0;
}

int dls_json_print(FILE *f, const uint8_t *p, size_t n, dls_where *w)
{
    dls_jbuf b = {0};
    int rc = dls_json_emit(&b, p, n, w);
    if (rc == 0 && fwrite(b.p, 1, b.n, f) != b.n)
        rc = DLS_ERR_IO;
    dls_jbuf_free(&b);
    return rc;
}
