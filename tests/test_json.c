/* Tests for the JSON mapping of facts (cli.md, "JSON mapping of facts"):
 * the streaming emitter (msgpack → JSON) and the jansson-based reader
 * (JSON → msgpack), and the `daolease fact` command built on them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <msgpack.h>
#include <sodium.h>

#include "daolease/fact.h"
#include "cli/json/json.h"
#include "vocab/mp.h"

/* ---- helpers ------------------------------------------------------------- */

static uint8_t *unhex(const char *s, size_t *n)
{
    size_t len = strlen(s);
    uint8_t *b = malloc(len / 2 + 1);
    assert_non_null(b);
    /* whole pairs only: a trailing newline (the CLI's output) is left */
    assert_int_equal(sodium_hex2bin(b, len / 2 + 1, s, len / 2 * 2, NULL, n, NULL), 0);
    return b;
}

/* msgpack given as hex → JSON text must be exactly `json`. */
static void out_is(const char *hex, const char *json)
{
    size_t n;
    uint8_t *b = unhex(hex, &n);
    dls_jbuf j = {0};
    dls_where w;
    int rc = dls_json_emit(&j, b, n, &w);
    if (rc)
        fail_msg("emit %s: %s at %llu", hex, w.reason, (unsigned long long)w.offset);
    assert_string_equal(j.p, json);
    dls_jbuf_free(&j);
    free(b);
}

/* JSON text → msgpack must be exactly `hex`. */
static void in_is(const char *json, const char *hex)
{
    uint8_t *out;
    size_t n, en;
    dls_json_error e;
    int rc = dls_json_to_msgpack(json, strlen(json), &out, &n, &e);
    if (rc)
        fail_msg("JSON %s refused: %s", json, e.text);
    uint8_t *expect = unhex(hex, &en);
    assert_int_equal(n, en);
    assert_memory_equal(out, expect, n);
    free(out);
    free(expect);
}

/* Both directions. */
static void both(const char *hex, const char *json)
{
    out_is(hex, json);
    in_is(json, hex);
}

static int in_fails(const char *json, dls_json_error *e)
{
    uint8_t *out = (uint8_t *)"untouched";
    size_t n;
    int rc = dls_json_to_msgpack(json, strlen(json), &out, &n, e);
    if (rc == 0)
        fail_msg("JSON accepted: %s", json);
    assert_null(out);
    assert_true(e->text[0] != 0);
    return rc;
}

static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---- msgpack → JSON ---------------------------------------------------------- */

static void test_scalars(void **state)
{
    (void)state;
    both("c0", "null");
    both("c3", "true");
    both("c2", "false");
    both("00", "0");
    both("7f", "127");
    both("cfffffffffffffffff", "18446744073709551615"); /* integers exact */
    both("cf8000000000000000", "9223372036854775808");
    both("d38000000000000000", "-9223372036854775808");
    both("e0", "-32");
    both("d0df", "-33");
    both("cd0100", "256");
    /* longer integer formats come out by value (and go back shortest) */
    out_is("d30000000000000005", "5");
    out_is("cf0000000000000005", "5");
    both("c40300ff10", "{\"$bin\":\"00ff10\"}");
    both("c400", "{\"$bin\":\"\"}");
    both("cb3ff8000000000000", "{\"$f64\":\"3ff8000000000000\"}");
    out_is("ca3fc00000", "{\"$f64\":\"3ff8000000000000\"}"); /* f32 1.5 widened */
    both("cb7ff8000000000001", "{\"$f64\":\"7ff8000000000001\"}"); /* NaN bits kept */
    both("d4ff2a", "{\"$ext\":[-1,\"2a\"]}");
    both("c70305010203", "{\"$ext\":[5,\"010203\"]}");
    in_is("{\"$bin\":\"ABCD\"}", "c402abcd"); /* upper-case hex accepted */
}

static void test_strings(void **state)
{
    (void)state;
    /* JSON escaping: quote, backslash, the short escapes, other controls */
    both("a8225c0a0d09080c2f", "\"\\\"\\\\\\n\\r\\t\\b\\f/\"");
    both("a3001f7f", "\"\\u0000\\u001f\x7f\"");
    /* valid UTF-8 passes as it is: é, €, 𝄞 */
    both("a9c3a9e282acf09d849e", "\"\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\"");
    /* invalid UTF-8: one U+FFFD per maximal ill-formed subpart */
    out_is("a3616263", "\"abc\"");
    out_is("a261ff", "\"a\xef\xbf\xbd\"");                     /* 0xff: one */
    out_is("a2e080", "\"\xef\xbf\xbd\xef\xbf\xbd\"");           /* E0 80: two */
    out_is("a3f09f98", "\"\xef\xbf\xbd\"");                     /* truncated 4-byte: one */
    out_is("a3eda080", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* surrogate: three */
    out_is("a2c0af", "\"\xef\xbf\xbd\xef\xbf\xbd\"");           /* overlong: two */
    out_is("a4f4908080", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* > U+10FFFF */
    out_is("a4e282ac80", "\"\xe2\x82\xac\xef\xbf\xbd\"");       /* stray continuation */
    out_is("a441e28241", "\"A\xef\xbf\xbd" "A\"");               /* cut 3-byte, resumes */
    /* str 8 / 16 headers read back; input strings go out shortest */
    out_is("d90161", "\"a\"");
    in_is("\"a\"", "a161");
    /* jansson refuses invalid escapes in input */
    dls_json_error e;
    assert_int_equal(in_fails("\"\\ud800\"", &e), DLS_ERR_JSON);
}

static void test_maps(void **state)
{
    (void)state;
    /* key order kept */
    both("83a17a01a16102a16d82a17901a16202", "{\"z\":1,\"a\":2,\"m\":{\"y\":1,\"b\":2}}");
    both("80", "{}");
    both("90", "[]");
    both("92c0c3", "[null,true]");
    /* repeated keys are kept on output */
    out_is("82a16101a16102", "{\"a\":1,\"a\":2}");
    /* a non-str key, or a key starting with "$", gives {"$map": ...} */
    both("82a1610101a162", "{\"$map\":[[\"a\",1],[1,\"b\"]]}");
    both("81a2246103", "{\"$map\":[[\"$a\",3]]}");
    both("81c40100c0", "{\"$map\":[[{\"$bin\":\"00\"},null]]}");
    both("8190a0", "{\"$map\":[[[],\"\"]]}");
    /* "$" only at the start matters */
    both("81a2612401", "{\"a$\":1}");
    /* nested $map inside a plain map */
    both("81a178810102", "{\"x\":{\"$map\":[[1,2]]}}");
    /* $map input also takes str keys (e.g. a key holding U+0000) */
    in_is("{\"$map\":[[\"a\\u0000\",1]]}", "81a2610001");
    in_is("{\"$map\":[]}", "80");
}

static void test_depth_and_errors(void **state)
{
    (void)state;
    uint8_t buf[80];
    dls_jbuf j = {0};
    dls_where w;
    /* 64 nested arrays are shown, 65 are refused (DLS_JSON_MAX_DEPTH) */
    memset(buf, 0x91, 64);
    buf[63] = 0x90;
    assert_int_equal(dls_json_emit(&j, buf, 64, &w), 0);
    assert_int_equal(j.n, 128);
    dls_jbuf_free(&j);
    memset(buf, 0x91, 65);
    buf[64] = 0x90;
    assert_int_equal(dls_json_emit(&j, buf, 65, &w), DLS_ERR_DEPTH);
    assert_int_equal(w.offset, 64);
    /* a failed emit leaves what was in the buffer */
    assert_int_equal(dls_jbuf_puts(&j, "prefix"), 0);
    const uint8_t trunc[] = {0x82, 0xa1, 'a', 0x01, 0xa1};
    assert_int_equal(dls_json_emit(&j, trunc, sizeof trunc, &w), DLS_ERR_MSGPACK);
    assert_string_equal(j.p, "prefix");
    const uint8_t trail[] = {0x01, 0x02};
    assert_int_equal(dls_json_emit(&j, trail, 2, &w), DLS_ERR_TRAILING);
    assert_int_equal(w.offset, 1);
    const uint8_t huge[] = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x00};
    assert_int_equal(dls_json_emit(&j, huge, sizeof huge, &w), DLS_ERR_MSGPACK);
    assert_int_equal(dls_json_emit(&j, NULL, 0, &w), DLS_ERR_MSGPACK);
    const uint8_t c1[] = {0x91, 0xc1};
    assert_int_equal(dls_json_emit(&j, c1, 2, &w), DLS_ERR_MSGPACK);
    assert_int_equal(w.offset, 1);
    assert_string_equal(j.p, "prefix");
    /* every truncation of a rich value is an error, never a read past it */
    size_t n;
    uint8_t *rich = unhex("84a16192c0cb3ff8000000000000a162c403010203a163c70305010203a16481c0d4ff2a", &n);
    for (size_t k = 0; k < n; k++)
        assert_int_equal(dls_json_emit(&j, rich, k, &w), DLS_ERR_MSGPACK);
    assert_int_equal(dls_json_emit(&j, rich, n, &w), 0);
    free(rich);
    dls_jbuf_free(&j);

    /* the worst growth: maps as keys of maps, {"$map":[[{"$map":[[...,null]]},null]]} */
    uint8_t nest[130];
    memset(nest, 0x81, 63);
    memset(nest + 63, 0xc0, 64);
    assert_int_equal(dls_json_emit(&j, nest, 127, &w), 0);
    assert_true(j.n <= 10 * 127);
    dls_jbuf_free(&j);

    /* JSON input 64 deep is fine, 65 refused */
    char deep[200];
    memset(deep, '[', 64);
    memset(deep + 64, ']', 64);
    deep[128] = 0;
    uint8_t *out;
    dls_json_error e;
    assert_int_equal(dls_json_to_msgpack(deep, 128, &out, &n, &e), 0);
    free(out);
    memset(deep, '[', 65);
    memset(deep + 65, ']', 65);
    deep[130] = 0;
    assert_int_equal(in_fails(deep, &e), DLS_ERR_JSON);
}

/* JSON input refused: repeated keys, non-integers, out-of-range integers,
 * misused "$" forms, syntax errors — each with a position or a path. */
static void test_input_refused(void **state)
{
    (void)state;
    dls_json_error e;
    in_fails("{\"a\":1,\"b\":{\"c\":2,\"c\":3}}", &e);
    assert_non_null(strstr(e.text, "duplicate"));
    assert_true(e.offset >= 18 && e.line == 1);
    in_fails("{\"a\":1.0}", &e);
    assert_int_equal(e.offset, 5);
    assert_non_null(strstr(e.text, "not an integer"));
    in_fails("[1e3]", &e);
    assert_int_equal(e.offset, 1);
    in_fails("[\n-0.5]", &e);
    assert_int_equal(e.line, 2);
    in_fails("18446744073709551616", &e);
    assert_non_null(strstr(e.text, "2^64-1"));
    in_fails("-9223372036854775809", &e);
    assert_non_null(strstr(e.text, "-2^63"));
    /* numbers inside strings are not numbers */
    in_is("\"1.5e3 and 18446744073709551616\"", "be312e35653320616e64203138343436373434303733373039353531363136");
    /* big integers anywhere, in order, exact */
    in_is("[18446744073709551615,{\"k\":9223372036854775808},\"x\",9223372036854775807,[18446744073709551614]]",
          "95cfffffffffffffffff81a16bcf8000000000000000a178cf7fffffffffffffff91cffffffffffffffffe");
    /* a syntax error after a big integer names the original offset */
    in_fails("[18446744073709551615,]", &e);
    assert_int_equal(e.offset, 23);
    const char *bad[] = {
        "{\"$foo\":1}", "{\"a\":1,\"$b\":2}", "{\"$bin\":\"abc\"}", "{\"$bin\":\"zz\"}",
        "{\"$bin\":12}", "{\"$f64\":\"00\"}", "{\"$ext\":[200,\"\"]}", "{\"$ext\":[1]}",
        "{\"$ext\":[1.5,\"\"]}", "{\"$ext\":[\"1\",\"\"]}", "{\"$map\":[[1]]}", "{\"$map\":{}}",
        "{\"$map\":[1]}", "", "   ", "{", "nul", "[1,]", "{\"a\":1}x", "{'a':1}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(in_fails(bad[i], &e), DLS_ERR_JSON);
    in_fails("{\"a\":[{\"$bin\":\"0\"}]}", &e);
    assert_non_null(strstr(e.text, "at /a/0/$bin"));
    assert_int_equal(dls_json_to_msgpack(NULL, 0, &(uint8_t *){NULL}, &(size_t){0}, &e), DLS_ERR_JSON);
    /* surrounding whitespace and a trailing newline are fine */
    in_is("  {\"a\" : [ 1 , 2 ] }\n", "81a161920102");
}

/* Random msgpack values go to JSON and back to the same bytes (shortest
 * form, valid UTF-8 strings, keys not repeated and free of U+0000). */
static void rand_value(uint64_t *s, msgpack_packer *pk, int depth)
{
    static const char *const pieces[] = {"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9d\x84\x9e", "\"",
                                         "\\", "\n", "\x01", "$", "/", " ", "\x7f"};
    switch (rng(s) % (depth >= 5 ? 9 : 12)) {
    case 0: msgpack_pack_nil(pk); break;
    case 1: msgpack_pack_true(pk); break;
    case 2: msgpack_pack_uint64(pk, rng(s) >> (rng(s) % 64)); break;
    case 3: msgpack_pack_int64(pk, -1 - (int64_t)(rng(s) >> (1 + rng(s) % 63))); break;
    case 4: {
        uint64_t bits = rng(s);
        double d;
        memcpy(&d, &bits, 8);
        msgpack_pack_double(pk, d);
        break;
    }
    case 5: msgpack_pack_bin_with_body(pk, "\x00\xff\x10", rng(s) % 4); break;
    case 6: msgpack_pack_ext_with_body(pk, "\x01\x02\x03\x04", 1 + rng(s) % 4, (int8_t)rng(s)); break;
    case 7: case 8: {
        char t[64];
        size_t n = 0, k = rng(s) % 8;
        for (size_t i = 0; i < k; i++) {
            const char *p = pieces[rng(s) % 12];
            memcpy(t + n, p, strlen(p));
            n += strlen(p);
        }
        msgpack_pack_str_with_body(pk, t, n);
        break;
    }
    case 9: case 10: {
        size_t n = rng(s) % 4;
        msgpack_pack_array(pk, n);
        for (size_t i = 0; i < n; i++)
            rand_value(s, pk, depth + 1);
        break;
    }
    default: {
        size_t n = rng(s) % 4;
        msgpack_pack_map(pk, n);
        for (size_t i = 0; i < n; i++) {
            if (rng(s) % 4 == 0)
                msgpack_pack_uint64(pk, i); /* a non-str key: {"$map": ...} */
            else {
                char k[3] = {(char)(rng(s) % 3 ? 'k' : '$'), (char)('0' + i), 0};
                msgpack_pack_str_with_body(pk, k, 2);
            }
            rand_value(s, pk, depth + 1);
        }
    }
    }
}

static void test_random_roundtrip(void **state)
{
    (void)state;
    const char *env = getenv("DLS_SEED");
    uint64_t seed;
    if (env)
        seed = strtoull(env, NULL, 0);
    else {
        assert_true(sodium_init() >= 0);
        randombytes_buf(&seed, sizeof seed);
    }
    printf("json random_roundtrip: seed %llu (replay with DLS_SEED=%llu)\n",
           (unsigned long long)seed, (unsigned long long)seed);
    uint64_t s = seed;
    for (int i = 0; i < 5000; i++) {
        msgpack_sbuffer sb;
        msgpack_packer pk;
        msgpack_sbuffer_init(&sb);
        msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
        rand_value(&s, &pk, 0);
        dls_jbuf j = {0};
        assert_int_equal(dls_json_emit(&j, (const uint8_t *)sb.data, sb.size, NULL), 0);
        assert_true(j.n <= 10 * sb.size); /* output bounded by the input */
        uint8_t *back;
        size_t n;
        dls_json_error e;
        int rc = dls_json_to_msgpack(j.p, j.n, &back, &n, &e);
        if (rc)
            fail_msg("%s: %s", j.p, e.text);
        assert_int_equal(n, sb.size);
        assert_memory_equal(back, sb.data, n);
        dls_jbuf again = {0};
        assert_int_equal(dls_json_emit(&again, back, n, NULL), 0);
        assert_string_equal(again.p, j.p); /* and the text is a fixed point */
        free(back);
        dls_jbuf_free(&again);
        dls_jbuf_free(&j);
        msgpack_sbuffer_destroy(&sb);
    }
}

/* ---- the `daolease fact` command -------------------------------------------------- */

static const char *bin_path(void)
{
    const char *b = getenv("DAOLEASE_BIN");
    return b ? b : "daolease";
}

/* Runs `daolease ARGS` with `in` on stdin; returns the exit status and
 * the first `cap` bytes of stdout and stderr. */
static int run(const char *args, const char *in, size_t in_len, char *out, size_t cap, char *err)
{
    char tin[] = "/tmp/dls-json-in-XXXXXX", tout[] = "/tmp/dls-json-out-XXXXXX",
         terr[] = "/tmp/dls-json-err-XXXXXX";
    int fi = mkstemp(tin), fo = mkstemp(tout), fe = mkstemp(terr);
    assert_true(fi >= 0 && fo >= 0 && fe >= 0);
    assert_int_equal(write(fi, in, in_len), (ssize_t)in_len);
    close(fi);
    close(fo);
    close(fe);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s < %s > %s 2> %s", bin_path(), args, tin, tout, terr);
    int st = system(cmd);
    FILE *f = fopen(tout, "rbe");
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = 0;
    fclose(f);
    f = fopen(terr, "rbe");
    n = fread(err, 1, 1023, f);
    err[n] = 0;
    fclose(f);
    unlink(tin);
    unlink(tout);
    unlink(terr);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli_fact(void **state)
{
    (void)state;
    static char out[1 << 16], err[1024];
    const char *grant = "{\"dao.lease/status\":\"accepted\",\"dao.lease/lease\":17,"
                        "\"dao.lease/subject\":\"job/42\",\"dao.lease/holder\":\"agent-3\","
                        "\"dao.lease/duration\":{\"ms\":3000},"
                        "\"dao.lease/medium\":{\"$bin\":\"000102030405060708090a0b0c0d0e0f\"}}\n";
    /* encode --hex, then decode --hex gives the same JSON back */
    assert_int_equal(run("fact encode --hex", grant, strlen(grant), out, sizeof out, err), 0);
    static char hex[sizeof out];
    memcpy(hex, out, sizeof hex);
    size_t n;
    uint8_t *b = unhex(hex, &n);
    dls_fact f;
    assert_int_equal(dls_fact_decode(b, n, &f, NULL), 0);
    assert_int_equal(f.kind, DLS_FACT_GRANT);
    assert_true(f.lease == 17);
    assert_int_equal(run("fact decode --hex", hex, strlen(hex), out, sizeof out, err), 0);
    assert_string_equal(out, grant);
    /* raw bytes, two facts back to back */
    char two[8192];
    memcpy(two, grant, strlen(grant));
    memcpy(two + strlen(grant), grant, strlen(grant));
    assert_int_equal(run("fact encode", two, 2 * strlen(grant), out, sizeof out, err), 0);
    char raw[4096];
    memcpy(raw, out, 2 * n);
    assert_memory_equal(raw, b, n);
    assert_memory_equal(raw + n, b, n);
    assert_int_equal(run("fact decode", raw, 2 * n, out, sizeof out, err), 0);
    assert_int_equal(strlen(out), 2 * strlen(grant));
    /* --validate: one line per fact with its rule */
    assert_int_equal(run("fact decode --validate", raw, n, out, sizeof out, err), 0);
    assert_non_null(strstr(out, "{\"valid\":true,\"rule\":null,\"kind\":\"grant\",\"offset\":null,\"reason\":null,\"fact\":{"));
    const char *lease0 = "82b064616f2e6c656173652f737461747573a872656c6561736564af64616f2e6c656173652f6c6561736500\n";
    assert_int_equal(run("fact decode --hex --validate", lease0, strlen(lease0), out, sizeof out, err), 0);
    assert_string_equal(out, "{\"valid\":false,\"rule\":3,\"kind\":null,\"offset\":43,\"reason\":\"lease is not an integer in 1..2^63-1\",\"fact\":{\"dao.lease/status\":\"released\",\"dao.lease/lease\":0}}\n");
    /* errors name the line and exit 1 */
    const char *bad = "{\"a\":1}\n\n{\"a\":1.5}\n";
    assert_int_equal(run("fact encode --hex", bad, strlen(bad), out, sizeof out, err), 1);
    assert_non_null(strstr(err, "line 3"));
    assert_int_equal(run("fact encode --valid-only", "{\"a\":1}\n", 8, out, sizeof out, err), 1);
    assert_non_null(strstr(err, "not a lease fact"));
    assert_int_equal(run("fact encode --valid-only", "{\"dao.lease/event\":\"tick\"}\n", 27, out, sizeof out, err), 1);
    assert_non_null(strstr(err, "rule 3"));
    assert_int_equal(run("fact decode --hex", "8\n", 2, out, sizeof out, err), 1);
    assert_non_null(strstr(err, "line 1"));
    assert_int_equal(run("fact decode --hex", "0102\n", 5, out, sizeof out, err), 1);
    assert_non_null(strstr(err, "trailing"));
    assert_int_equal(run("fact decode", "\x82\xa1", 2, out, sizeof out, err), 1);
    assert_non_null(strstr(err, "offset 0"));
    /* usage */
    assert_int_equal(run("fact", "", 0, out, sizeof out, err), 2);
    assert_int_equal(run("fact encode --validate", "", 0, out, sizeof out, err), 2);
    assert_int_equal(run("fact decode extra", "", 0, out, sizeof out, err), 2);
    assert_int_equal(run("fact --help", "", 0, out, sizeof out, err), 0);
    assert_non_null(strstr(out, "usage: daolease fact encode"));
    free(b);
}

/* The conformance vectors through the command: every fact's validity
 * (rules 1-5: a fact breaking rule 6 or 7 is valid alone), and every
 * shortest `json` encoded to its exact bytes. */
static void test_cli_vectors(void **state)
{
    (void)state;
    const char *v = getenv("DLS_VECTORS");
    char path[4096];
    snprintf(path, sizeof path, "%s/vocabulary.jsonl", v ? v : DLS_TEST_SRCDIR "/vectors");
    FILE *fp = fopen(path, "re");
    assert_non_null(fp);
    static char hexes[1 << 17], jsons[1 << 17], expect[1 << 17], out[1 << 18], err[1024];
    size_t hn = 0, jn = 0, en = 0;
    unsigned facts = 0, shortest = 0;
    bool valid[64];
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, fp) > 0) {
        uint8_t *L;
        size_t ln;
        dls_json_error e;
        assert_int_equal(dls_json_to_msgpack(line, strlen(line), &L, &ln, &e), 0);
        dls_mp_item it, k, val, hex = {0};
        assert_int_equal(dls_mp_read(L, ln, 0, &it), 0);
        size_t off = it.end, jfrom = 0, jto = 0;
        bool is_short = false, ok = false, late_rule = false;
        for (uint32_t i = 0; i < it.len; i++) {
            size_t end;
            assert_int_equal(dls_mp_read(L, ln, off, &k), 0);
            assert_int_equal(dls_mp_read(L, ln, k.end, &val), 0);
            assert_int_equal(dls_mp_skip(L, ln, k.end, 64, &end, NULL), 0);
#define IS(name) (k.len == strlen(name) && !memcmp(k.data, name, k.len))
            if (IS("msgpack_hex"))
                hex = val;
            else if (IS("json")) {
                jfrom = k.end;
                jto = end;
            } else if (IS("shortest"))
                is_short = val.type == DLS_MP_BOOL && val.v.b;
            else if (IS("valid"))
                ok = val.v.b;
            else if (IS("rule"))
                late_rule = val.type == DLS_MP_UINT && val.v.u >= 6;
#undef IS
            off = end;
        }
        valid[facts++] = ok || late_rule;
        assert_int_equal(hex.type, DLS_MP_STR);
        const char *hx = hex.data ? (const char *)hex.data : "";
        hn += (size_t)snprintf(hexes + hn, sizeof hexes - hn, "%.*s\n", (int)hex.len, hx);
        if (is_short) {
            dls_jbuf j = {0};
            assert_int_equal(dls_json_emit(&j, L + jfrom, jto - jfrom, NULL), 0);
            jn += (size_t)snprintf(jsons + jn, sizeof jsons - jn, "%s\n", j.p);
            en += (size_t)snprintf(expect + en, sizeof expect - en, "%.*s\n", (int)hex.len, hx);
            dls_jbuf_free(&j);
            shortest++;
        }
        free(L);
    }
    free(line);
    fclose(fp);
    assert_int_equal(facts, 39);
    assert_int_equal(shortest, 37);
    assert_int_equal(run("fact encode --hex", jsons, jn, out, sizeof out, err), 0);
    assert_string_equal(out, expect);
    assert_int_equal(run("fact decode --hex --validate", hexes, hn, out, sizeof out, err), 0);
    char *p = out;
    for (unsigned i = 0; i < facts; i++) {
        char *nl = strchr(p, '\n');
        assert_non_null(nl);
        *nl = 0;
        const char *expect_start = valid[i] ? "{\"valid\":true," : "{\"valid\":false,";
        assert_int_equal(strncmp(p, expect_start, strlen(expect_start)), 0);
        p = nl + 1;
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_maps),
        cmocka_unit_test(test_depth_and_errors),
        cmocka_unit_test(test_input_refused),
        cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_cli_fact),
        cmocka_unit_test(test_cli_vectors),
    };
    return cmocka_run_group_tests_name("json", tests, NULL, NULL);
}
