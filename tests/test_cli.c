/* The `daolease` command, black-box: golden transcripts of `dump` and
 * `append` (spec: cli.md; vectors: tests/vectors/stream, README.md), the
 * other subcommands' --help, exit statuses and one smoke check each.
 *
 * The binary is $DAOLEASE_BIN, the vectors are under $DLS_VECTORS, golden
 * inputs and expected outputs under tests/cli/. Every test runs the binary
 * in a fresh temporary directory. JSON output is compared as parsed values
 * with key order (tests/vectors/README.md: "compare JSON as parsed values,
 * key order included"; jansson ≥ 2.8 iterates objects in insertion order). */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include <sodium.h>

#include "daolease/attrib.h"
#include "daolease/stream.h"

#ifndef DLS_TEST_SRCDIR
#define DLS_TEST_SRCDIR "tests"
#endif

/* ---- helpers -------------------------------------------------------------- */

typedef struct result {
    int status;  /* exit status, or 128 + signal */
    char *out;   /* stdout, NUL-terminated */
    size_t out_n;
    char *err;   /* stderr, NUL-terminated */
    size_t err_n;
} result;

typedef struct fixture {
    char dir[64];
} fixture;

static const char *bin(void)
{
    const char *b = getenv("DAOLEASE_BIN");
    assert_non_null(b);
    return b;
}

/* A path under the vectors, in a static ring of buffers. */
static const char *vec(const char *rel)
{
    static char bufs[8][1024];
    static int k;
    const char *root = getenv("DLS_VECTORS");
    assert_non_null(root);
    char *b = bufs[k++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", root, rel);
    return b;
}

/* A path under tests/cli/. */
static const char *golden(const char *rel)
{
    static char bufs[8][1024];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, sizeof bufs[0], "%s/cli/%s", DLS_TEST_SRCDIR, rel);
    return b;
}

/* A path in the fixture's directory. */
static const char *tmp(const fixture *f, const char *rel)
{
    static char bufs[8][1024];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, sizeof bufs[0], "%s/%s", f->dir, rel);
    return b;
}

static char *read_file(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap + 1);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, fp)) > 0) {
        len += got;
        if (len == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(fp);
    if (buf)
        buf[len] = 0;
    if (n)
        *n = len;
    return buf;
}

static void write_file(const char *path, const void *p, size_t n, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, p, n), (ssize_t)n);
    assert_int_equal(close(fd), 0);
}

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof *r);
}

/* Starts the binary with args (NULL-terminated, the binary excluded) in
 * `cwd`, stdin from `in` (NULL: empty), stdout and stderr to files of the
 * fixture. Returns the child's pid. */
static pid_t start(const fixture *f, const char *cwd, const char *in, size_t in_n,
                   const char *const *args)
{
    char inpath[1024], outpath[1024], errpath[1024];
    snprintf(inpath, sizeof inpath, "%s/.stdin", f->dir);
    snprintf(outpath, sizeof outpath, "%s/.stdout", f->dir);
    snprintf(errpath, sizeof errpath, "%s/.stderr", f->dir);
    write_file(inpath, in ? in : "", in ? in_n : 0, 0600);
    write_file(outpath, "", 0, 0600); /* no stale output seen by a waiting test */
    write_file(errpath, "", 0, 0600);
    const char *argv[64];
    size_t k = 0;
    argv[k++] = bin();
    for (size_t i = 0; args[i]; i++) {
        assert_true(k < 63);
        argv[k++] = args[i];
    }
    argv[k] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int i = open(inpath, O_RDONLY);
        int o = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (i < 0 || o < 0 || e < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
            (cwd && chdir(cwd)))
            _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static void finish(const fixture *f, pid_t pid, result *r)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        assert_int_equal(errno, EINTR);
    memset(r, 0, sizeof *r);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    char path[1024];
    snprintf(path, sizeof path, "%s/.stdout", f->dir);
    r->out = read_file(path, &r->out_n);
    snprintf(path, sizeof path, "%s/.stderr", f->dir);
    r->err = read_file(path, &r->err_n);
    assert_non_null(r->out);
    assert_non_null(r->err);
}

/* Runs the binary to completion. */
static void run_in(const fixture *f, result *r, const char *cwd, const char *in,
                   const char *const *args)
{
    pid_t pid = start(f, cwd, in, in ? strlen(in) : 0, args);
    finish(f, pid, r);
}

#define RUN(f, r, cwd, in, ...)                                                          \
    do {                                                                                 \
        const char *args_[] = {__VA_ARGS__, NULL};                                       \
        run_in((f), (r), (cwd), (in), args_);                                            \
    } while (0)

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The i-th line (0-based) of s, malloc'd, without its newline; NULL past
 * the end. */
static char *nth_line(const char *s, size_t i)
{
    for (; i && s; i--) {
        s = strchr(s, '\n');
        if (s)
            s++;
    }
    if (!s || !*s)
        return NULL;
    const char *e = strchr(s, '\n');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    char *l = malloc(n + 1);
    memcpy(l, s, n);
    l[n] = 0;
    return l;
}

/* Equality of parsed JSON values, object key order included. */
static int ordered_equal(json_t *a, json_t *b)
{
    if (json_typeof(a) != json_typeof(b))
        return 0;
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return 0;
        void *ia = json_object_iter(a), *ib = json_object_iter(b);
        for (; ia && ib; ia = json_object_iter_next(a, ia), ib = json_object_iter_next(b, ib))
            if (strcmp(json_object_iter_key(ia), json_object_iter_key(ib)) ||
                !ordered_equal(json_object_iter_value(ia), json_object_iter_value(ib)))
                return 0;
        return !ia && !ib;
    }
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!ordered_equal(json_array_get(a, i), json_array_get(b, i)))
                return 0;
        return 1;
    }
    return json_equal(a, b);
}

/* Parses one JSON text; integers beyond jansson's range make it fall back
 * to reals (still compared by value). Fails the test when not JSON. */
static json_t *parse(const char *text)
{
    json_error_t e;
    const size_t flags = JSON_REJECT_DUPLICATES | JSON_DECODE_ANY;
    json_t *j = json_loads(text, flags, &e);
    if (!j)
        j = json_loads(text, flags | JSON_DECODE_INT_AS_REAL, &e);
    if (!j)
        fail_msg("not JSON (%s): %s", e.text, text);
    return j;
}

static void assert_json_line(const char *got, json_t *want)
{
    json_t *g = parse(got);
    if (!ordered_equal(g, want)) {
        char *w = json_dumps(want, JSON_COMPACT);
        fail_msg("JSON differs (key order included)\n got: %s\nwant: %s", got, w);
    }
    json_decref(g);
}

/* Every line of `got` equals the matching line of `want_text` as parsed
 * JSON with key order, and there are as many. */
static void assert_jsonl_equal(const char *got, const char *want_text)
{
    size_t n = count_lines(want_text);
    assert_int_equal(count_lines(got), n);
    for (size_t i = 0; i < n; i++) {
        char *g = nth_line(got, i), *w = nth_line(want_text, i);
        json_t *wj = parse(w);
        assert_json_line(g, wj);
        json_decref(wj);
        free(g);
        free(w);
    }
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!hay || !strstr(hay, needle))
        fail_msg("expected \"%s\" in: %s", needle, hay ? hay : "(nothing)");
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    const char *t = getenv("TMPDIR");
    snprintf(f->dir, sizeof f->dir, "%s/dls-cli-XXXXXX", t && strlen(t) < 40 ? t : "/tmp");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(f);
    return 0;
}

/* Makes a key pair for `name` in the fixture (keygen), appends its line to
 * the fixture's `keyring`. */
static void make_key(const fixture *f, const char *name)
{
    result r;
    RUN(f, &r, f->dir, NULL, "keygen", name);
    assert_int_equal(r.status, 0);
    size_t n;
    char *old = read_file(tmp(f, "keyring"), &n);
    size_t on = old ? n : 0;
    char *all = malloc(on + r.out_n + 1);
    if (old)
        memcpy(all, old, on);
    memcpy(all + on, r.out, r.out_n);
    write_file(tmp(f, "keyring"), all, on + r.out_n, 0644);
    free(all);
    free(old);
    result_free(&r);
}

static void create_medium(const fixture *f, const char *name)
{
    result r;
    RUN(f, &r, f->dir, NULL, "stream", "create", name);
    assert_int_equal(r.status, 0);
    result_free(&r);
}

/* ---- dump on the vectors -------------------------------------------------- */

/* cli.md "JSON output shapes" + vectors README stream/: `daolease dump
 * three.dls --keyring keyring --json` prints exactly three.expect.jsonl
 * (bare fact: why bare-fact; verified envelope; the seal at position 2). */
static void dump_three_golden(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, vec("stream"), NULL, "dump", "three.dls", "--keyring", "keyring", "--json");
    assert_int_equal(r.status, 0);
    assert_int_equal(r.err_n, 0);
    char *want = read_file(vec("stream/three.expect.jsonl"), NULL);
    assert_non_null(want);
    assert_jsonl_equal(r.out, want);
    free(want);
    result_free(&r);
}

/* cli.md: "Machine output is JSON Lines; human output is the default on a
 * terminal" — Decision: off a terminal (a pipe, a file) the default is
 * JSON Lines, the same as --json. */
static void dump_default_off_terminal_is_json(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, vec("stream"), NULL, "dump", "three.dls", "--keyring", "keyring");
    assert_int_equal(r.status, 0);
    char *want = read_file(vec("stream/three.expect.jsonl"), NULL);
    assert_jsonl_equal(r.out, want);
    free(want);
    result_free(&r);
}

/* STYLE "golden transcripts": the human form of three.dls, one line a
 * record, compared byte for byte with tests/cli/three.human.txt. */
static void dump_three_human_golden(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, vec("stream"), NULL, "dump", "three.dls", "--keyring", "keyring", "--human");
    assert_int_equal(r.status, 0);
    char *want = read_file(golden("three.human.txt"), NULL);
    assert_non_null(want);
    assert_string_equal(r.out, want);
    free(want);
    result_free(&r);
}

/* cli.md: why "unknown-author" — also when no keyring was given. */
static void dump_without_keyring_unknown_author(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, vec("stream"), NULL, "dump", "three.dls", "--json");
    assert_int_equal(r.status, 0);
    char *want = read_file(vec("stream/three.expect.jsonl"), NULL);
    assert_int_equal(count_lines(r.out), 3);
    char *w1 = nth_line(want, 1), *g1 = nth_line(r.out, 1);
    json_t *j = parse(w1);
    json_object_set_new(j, "verified", json_false());
    json_object_set_new(j, "why", json_string("unknown-author"));
    assert_json_line(g1, j); /* json_object_set_new keeps the key's place */
    json_decref(j);
    free(w1);
    free(g1);
    free(want);
    result_free(&r);
}

/* vectors README torn.dls + stream-format.md R rule: a torn tail reads as
 * blocked, so dump prints one line ("dump") and exits 0 ("dump_exit"); a
 * reader never truncates (the file keeps its 331 bytes). */
static void dump_torn(void **state)
{
    fixture *f = *state;
    json_error_t e;
    json_t *expect = json_load_file(vec("stream/torn.expect.json"), 0, &e);
    assert_non_null(expect);
    json_t *rows = json_object_get(expect, "dump");
    assert_int_equal(json_array_size(rows), 1);
    result r;
    RUN(f, &r, vec("stream"), NULL, "dump", "torn.dls", "--keyring", "keyring", "--json");
    assert_int_equal(r.status, json_integer_value(json_object_get(expect, "dump_exit")));
    assert_int_equal(count_lines(r.out), 1);
    char *l = nth_line(r.out, 0);
    assert_json_line(l, json_array_get(rows, 0));
    free(l);
    struct stat st;
    assert_int_equal(stat(vec("stream/torn.dls"), &st), 0);
    assert_int_equal(st.st_size, json_integer_value(json_object_get(expect, "file_bytes")));
    json_decref(expect);
    result_free(&r);
}

/* cli.md `dump --from POS`: rows start at POS; the seal still shows at its
 * own position; a --from past the seal shows nothing and exits 0. */
static void dump_from(void **state)
{
    fixture *f = *state;
    char *want = read_file(vec("stream/three.expect.jsonl"), NULL);
    result r;
    RUN(f, &r, vec("stream"), NULL, "dump", "three.dls", "--keyring", "keyring", "--json",
        "--from", "1");
    assert_int_equal(r.status, 0);
    assert_jsonl_equal(r.out, strchr(want, '\n') + 1);
    result_free(&r);
    RUN(f, &r, vec("stream"), NULL, "dump", "three.dls", "--json", "--from", "2");
    assert_int_equal(r.status, 0);
    assert_jsonl_equal(r.out, strchr(strchr(want, '\n') + 1, '\n') + 1);
    result_free(&r);
    RUN(f, &r, vec("stream"), NULL, "dump", "three.dls", "--json", "--from", "9");
    assert_int_equal(r.status, 0);
    assert_int_equal(r.out_n, 0);
    result_free(&r);
    free(want);
}

/* cli.md: errors are one line naming the file, position and reason, exit
 * 1; stream-format.md: a bad record followed by more than R = 4 MiB is
 * corruption, readers answer transport-error there. Record 1 of a copy of
 * three.dls gets a flipped payload byte and 4 MiB + 1 bytes follow. */
static void dump_corrupt_exits_1_naming_position(void **state)
{
    fixture *f = *state;
    size_t n;
    uint8_t *b = (uint8_t *)read_file(vec("stream/three.dls"), &n);
    assert_non_null(b);
    uint32_t l0 = (uint32_t)b[48] | (uint32_t)b[49] << 8 | (uint32_t)b[50] << 16 |
                  (uint32_t)b[51] << 24;
    size_t rec1 = 48 + 8 + l0;
    assert_true(rec1 + 8 + 1 < n);
    b[rec1 + 8] ^= 0x01; /* the CRC no longer matches */
    size_t pad = DLS_TORN_TAIL_MAX + 1;
    uint8_t *big = calloc(1, n + pad);
    memcpy(big, b, n);
    write_file(tmp(f, "bad.dls"), big, n + pad, 0644);
    free(big);
    free(b);
    result r;
    RUN(f, &r, f->dir, NULL, "dump", "bad.dls", "--json");
    assert_int_equal(r.status, 1);
    assert_int_equal(count_lines(r.out), 1); /* position 0 still shown */
    assert_int_equal(count_lines(r.err), 1);
    assert_contains(r.err, "bad.dls");
    assert_contains(r.err, "position 1");
    char at[32];
    snprintf(at, sizeof at, "byte %zu", rec1);
    assert_contains(r.err, at);
    result_free(&r);
}

/* cli.md "JSON output shapes": a payload that is not a msgpack map is kind
 * "malformed" (author and fact null, why "malformed"); an envelope whose
 * signature fails shows its claimed author, verified false, why
 * "signature" and its fact; one by a name not in the keyring why
 * "unknown-author". Records written with the library. */
static void dump_malformed_and_forged(void **state)
{
    fixture *f = *state;
    dls_medium *m;
    assert_int_equal(dls_medium_create(&m, DLS_MEDIUM_FILE, tmp(f, "x.dls"), NULL, NULL), 0);
    uint8_t seed[32] = {7};
    dls_secret *alice, *carol;
    assert_int_equal(dls_secret_from_seed(&alice, "alice", DLS_KEY_ED25519, seed), 0);
    seed[0] = 8;
    assert_int_equal(dls_secret_from_seed(&carol, "carol", DLS_KEY_ED25519, seed), 0);
    char line[DLS_NAME_MAX + 96];
    assert_int_equal(dls_secret_keyring_line(alice, line, sizeof line - 1), 0);
    strcat(line, "\n");
    write_file(tmp(f, "keyring"), line, strlen(line), 0644);
    static const uint8_t notmap[] = {0x92, 0x01, 0x02};      /* [1, 2] */
    static const uint8_t fact[] = {0x81, 0xa1, 'x', 0x01};  /* {"x": 1} */
    uint8_t env[256];
    size_t n;
    uint64_t pos;
    dls_where w;
    int rc = dls_medium_append(m, notmap, sizeof notmap, &pos, &w);
    assert_int_equal(rc, 0);
    assert_int_equal(dls_envelope_seal(alice, dls_medium_id(m), fact, sizeof fact, env,
                                       sizeof env, &n), 0);
    env[n - 1] ^= 0x01; /* the signature's last byte */
    assert_int_equal(dls_medium_append(m, env, n, &pos, NULL), 0);
    assert_int_equal(dls_envelope_seal(carol, dls_medium_id(m), fact, sizeof fact, env,
                                       sizeof env, &n), 0);
    assert_int_equal(dls_medium_append(m, env, n, &pos, NULL), 0);
    dls_medium_del(m);
    dls_secret_del(alice);
    dls_secret_del(carol);
    result r;
    RUN(f, &r, f->dir, NULL, "dump", "x.dls", "--keyring", "keyring", "--json");
    assert_int_equal(r.status, 0);
    assert_jsonl_equal(r.out,
        "{\"position\":0,\"kind\":\"malformed\",\"author\":null,\"verified\":false,"
        "\"why\":\"malformed\",\"fact\":null}\n"
        "{\"position\":1,\"kind\":\"envelope\",\"author\":\"alice\",\"verified\":false,"
        "\"why\":\"signature\",\"fact\":{\"x\":1}}\n"
        "{\"position\":2,\"kind\":\"envelope\",\"author\":\"carol\",\"verified\":false,"
        "\"why\":\"unknown-author\",\"fact\":{\"x\":1}}\n");
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "dump", "x.dls", "--keyring", "keyring", "--human");
    assert_int_equal(r.status, 0);
    char *l0 = nth_line(r.out, 0), *l1 = nth_line(r.out, 1);
    assert_contains(l0, "malformed");
    assert_contains(l0, "3 bytes: 920102");
    assert_contains(l1, "alice");
    assert_contains(l1, "signature");
    free(l0);
    free(l1);
    result_free(&r);
}

/* cli.md: a missing file is an error line naming it, exit 1. */
static void dump_missing_file(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, f->dir, NULL, "dump", "no-such.dls");
    assert_int_equal(r.status, 1);
    assert_int_equal(r.out_n, 0);
    assert_int_equal(count_lines(r.err), 1);
    assert_contains(r.err, "no-such.dls");
    /* cli.md, errors: one reason, said once (not "no such file or
       directory (No such file or directory)") */
    assert_string_equal(r.err, "daolease dump: no-such.dls: no such file or directory\n");
    result_free(&r);
}

/* attribution.md keyrings: a malformed keyring is refused with its line;
 * cli.md exit 1. */
static void dump_bad_keyring(void **state)
{
    fixture *f = *state;
    write_file(tmp(f, "kr"), "ok ed25519 00\n", 14, 0644);
    result r;
    RUN(f, &r, f->dir, NULL, "dump", vec("stream/three.dls"), "--keyring", "kr");
    assert_int_equal(r.status, 1);
    assert_int_equal(r.out_n, 0);
    assert_contains(r.err, "kr: line 1");
    result_free(&r);
}

/* cli.md: usage errors exit 2. */
static void dump_usage_errors(void **state)
{
    fixture *f = *state;
    static const char *const cases[][4] = {
        {"dump", NULL},
        {"dump", "a.dls", "--bogus", NULL},
        {"dump", "a.dls", "--from", "x"},
        {"dump", "a.dls", "--from", NULL},
        {"dump", "a.dls", "b.dls", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r;
        run_in(f, &r, f->dir, NULL, cases[i]);
        assert_int_equal(r.status, 2);
        assert_int_equal(count_lines(r.err), 1);
        result_free(&r);
    }
}

/* stream-format.md gap: records evicted unread are noted (stderr, naming the
 * evicted span) and the dump goes on from the oldest retained record. A
 * segmented medium keeping 2 segments of one record each. */
static void dump_gap_noted_and_continues(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, f->dir, NULL, "stream", "create", "seg", "--segmented", "--segment-bytes", "120",
        "--retain", "2");
    assert_int_equal(r.status, 0);
    result_free(&r);
    for (int i = 0; i < 5; i++) {
        char line[128];
        snprintf(line, sizeof line, "{\"app/n\": %d, \"app/pad\": \"%060d\"}\n", i, 0);
        RUN(f, &r, f->dir, line, "append", "seg", "--bare");
        assert_int_equal(r.status, 0);
        result_free(&r);
    }
    RUN(f, &r, f->dir, NULL, "dump", "seg", "--json");
    assert_int_equal(r.status, 0);
    assert_contains(r.err, "gap");
    assert_contains(r.err, "positions 0-2");
    assert_int_equal(count_lines(r.out), 2);
    char *l = nth_line(r.out, 0);
    json_t *j = parse(l);
    assert_int_equal(json_integer_value(json_object_get(j, "position")), 3);
    json_decref(j);
    free(l);
    result_free(&r);
}

/* cli.md `dump --follow` + stream-format.md "a reader can follow a growing
 * file": a record appended later is printed; the seal ends the follow
 * (exit 0, the seal row last); SIGINT ends a follow with exit 0. */
static void wait_for_lines(const fixture *f, size_t want)
{
    struct timespec ts = {0, (long)(10 * DLS_NS_PER_MS)};
    for (int i = 0; i < 2000; i++) { /* a bound against hanging, not a timing check */
        char *s = read_file(tmp(f, ".stdout"), NULL);
        size_t n = s ? count_lines(s) : 0;
        free(s);
        if (n >= want)
            return;
        nanosleep(&ts, NULL);
    }
    fail_msg("dump --follow never printed %zu lines", want);
}

static void dump_follow(void **state)
{
    fixture *f = *state;
    create_medium(f, "f.dls");
    /* append through the library so the runner's stdout files stay the
     * follower's */
    dls_medium *m;
    assert_int_equal(dls_medium_open(&m, tmp(f, "f.dls"), DLS_OPEN_APPEND, NULL, NULL), 0);
    const char *const args[] = {"dump", "f.dls", "--follow", "--json", NULL};
    pid_t pid = start(f, f->dir, NULL, 0, args);
    static const uint8_t rec[] = {0x81, 0xa1, 'x', 0x01}; /* {"x": 1} */
    uint64_t pos;
    assert_int_equal(dls_medium_append(m, rec, sizeof rec, &pos, NULL), 0);
    wait_for_lines(f, 1);
    assert_int_equal(dls_medium_seal(m, NULL), 0);
    result r;
    finish(f, pid, &r);
    assert_int_equal(r.status, 0);
    assert_jsonl_equal(r.out, "{\"position\":0,\"kind\":\"fact\",\"author\":null,\"verified\":false,"
                              "\"why\":\"bare-fact\",\"fact\":{\"x\":1}}\n"
                              "{\"position\":1,\"kind\":\"seal\",\"author\":null,\"verified\":false,"
                              "\"why\":null,\"fact\":null}\n");
    result_free(&r);
    dls_medium_del(m);

    create_medium(f, "g.dls");
    const char *const args2[] = {"dump", "g.dls", "--follow", "--json", NULL};
    assert_int_equal(dls_medium_open(&m, tmp(f, "g.dls"), DLS_OPEN_APPEND, NULL, NULL), 0);
    assert_int_equal(dls_medium_append(m, rec, sizeof rec, &pos, NULL), 0);
    pid = start(f, f->dir, NULL, 0, args2);
    wait_for_lines(f, 1);
    assert_int_equal(kill(pid, SIGINT), 0);
    finish(f, pid, &r);
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 1);
    result_free(&r);
    dls_medium_del(m);
}

/* ---- append ---------------------------------------------------------------- */

/* cli.md `append` + attribution.md: facts read as JSON Lines are signed for
 * the medium and appended, one position printed a line; dump with the
 * keyring shows them verified, author alice, facts as written (golden
 * tests/cli/roundtrip.expect.jsonl). Blank lines are skipped. */
static void append_dump_round_trip(void **state)
{
    fixture *f = *state;
    make_key(f, "alice");
    create_medium(f, "m.dls");
    char *in = read_file(golden("facts.jsonl"), NULL);
    assert_non_null(in);
    result r;
    RUN(f, &r, f->dir, in, "append", "m.dls", "--as", "alice", "--key", "alice.secret");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "0\n1\n2\n3\n");
    assert_int_equal(r.err_n, 0);
    result_free(&r);
    free(in);
    RUN(f, &r, f->dir, NULL, "dump", "m.dls", "--keyring", "keyring", "--json");
    assert_int_equal(r.status, 0);
    char *want = read_file(golden("roundtrip.expect.jsonl"), NULL);
    assert_jsonl_equal(r.out, want);
    free(want);
    result_free(&r);
    /* attribution.md: the signature binds the author's key: a keyring that
     * gives alice another key answers why "signature" */
    make_key(f, "bob");
    char *kr = read_file(tmp(f, "keyring"), NULL);
    char *bobline = strstr(kr, "bob ed25519 ");
    assert_non_null(bobline);
    char fake[256];
    snprintf(fake, sizeof fake, "alice%s", bobline + 3);
    write_file(tmp(f, "fake-keyring"), fake, strlen(fake), 0644);
    free(kr);
    RUN(f, &r, f->dir, NULL, "dump", "m.dls", "--keyring", "fake-keyring", "--json", "--from",
        "3");
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 1);
    assert_contains(r.out, "\"verified\":false");
    assert_contains(r.out, "\"why\":\"signature\"");
    result_free(&r);
}

/* cli.md `append` + vocabulary vectors: for every valid vector fact whose
 * JSON encodes in the shortest form, `append --bare` writes exactly
 * msgpack_hex ("an append of that JSON must write those bytes"); every
 * vector fact defective by rules 1-5 that JSON can express is refused,
 * naming line 1 and its rule. (Rules 6 and 7 need earlier facts: a single
 * fact breaking them is valid on its own.) */
static char *json_member_text(const char *line)
{
    /* The generator writes {"json": <value>, "msgpack_hex": ...}. */
    const char *a = strstr(line, "{\"json\": ");
    const char *b = strstr(line, ", \"msgpack_hex\": ");
    if (!a || !b || b < a)
        return NULL;
    a += 9;
    char *s = malloc((size_t)(b - a) + 2);
    memcpy(s, a, (size_t)(b - a));
    s[b - a] = '\n';
    s[b - a + 1] = 0;
    return s;
}

static void append_vocabulary_vectors(void **state)
{
    fixture *f = *state;
    create_medium(f, "v.dls");
    char *all = read_file(vec("vocabulary.jsonl"), NULL);
    assert_non_null(all);
    size_t lines = count_lines(all), good = 0, refused = 0;
    char *batch = calloc(1, strlen(all) + 1);
    char **hex = calloc(lines, sizeof *hex);
    for (size_t i = 0; i < lines; i++) {
        char *l = nth_line(all, i);
        json_error_t e;
        json_t *v = json_loads(l, JSON_DECODE_INT_AS_REAL, &e);
        assert_non_null(v);
        char *text = json_member_text(l);
        json_t *rule = json_object_get(v, "rule");
        bool valid = json_is_true(json_object_get(v, "valid"));
        bool shortest = json_is_true(json_object_get(v, "shortest"));
        if (text && !strncmp(text, "null", 4)) {
            free(text);
            text = NULL;
        }
        if (valid && shortest && text) {
            strcat(batch, text);
            hex[good++] = strdup(json_string_value(json_object_get(v, "msgpack_hex")));
        } else if (!valid && text && json_number_value(rule) <= 5) {
            result r;
            RUN(f, &r, f->dir, text, "append", "v.dls", "--bare");
            assert_int_equal(r.status, 1);
            assert_int_equal(r.out_n, 0);
            char want[32];
            snprintf(want, sizeof want, "rule %d", (int)json_number_value(rule));
            assert_contains(r.err, "line 1: ");
            assert_contains(r.err, want);
            result_free(&r);
            refused++;
        }
        free(text);
        json_decref(v);
        free(l);
    }
    assert_true(good >= 12);
    assert_true(refused >= 15);
    result r;
    RUN(f, &r, f->dir, batch, "append", "v.dls", "--bare");
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), good);
    result_free(&r);
    /* read the records back with the library and compare the bytes */
    dls_medium *m;
    dls_cursor *c;
    assert_int_equal(dls_medium_open(&m, tmp(f, "v.dls"), DLS_OPEN_READ, NULL, NULL), 0);
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    for (size_t i = 0; i < good; i++) {
        dls_record rec;
        assert_int_equal(dls_cursor_next(c, &rec, NULL), DLS_NEXT_OK);
        char got[2 * DLS_RECORD_MAX + 1];
        sodium_bin2hex(got, sizeof got, rec.p, rec.n);
        assert_string_equal(got, hex[i]);
        free(hex[i]);
    }
    assert_int_equal(dls_cursor_next(c, NULL, NULL), DLS_NEXT_BLOCKED);
    dls_cursor_del(c);
    dls_medium_del(m);
    free(hex);
    free(batch);
    free(all);
}

/* Decision (docs/cli.md): a defective lease fact is refused with one error
 * line naming the input line, the position it would have taken and the
 * rule (cli.md: one line naming the file, position and reason; exit 1);
 * the lines before it stay appended, nothing after it is read. */
static void append_refuses_defective_fact_naming_line(void **state)
{
    fixture *f = *state;
    make_key(f, "alice");
    create_medium(f, "m.dls");
    char *in = read_file(golden("defective.jsonl"), NULL);
    result r;
    RUN(f, &r, f->dir, in, "append", "m.dls", "--as", "alice", "--key", "alice.secret");
    free(in);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "0\n");
    assert_int_equal(count_lines(r.err), 1);
    assert_contains(r.err, "daolease append: m.dls: line 3: position 1: ");
    assert_contains(r.err, "rule 3");
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "dump", "m.dls", "--json");
    assert_int_equal(count_lines(r.out), 1); /* line 4 was never appended */
    result_free(&r);
    /* invalid JSON and a repeated key (cli.md: an error) name their line */
    RUN(f, &r, f->dir, "{\"a\": 1}\n{\"a\": 1, \"a\": 2}\n", "append", "m.dls", "--bare");
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "1\n");
    assert_contains(r.err, "line 2: position 2: ");
    result_free(&r);
    RUN(f, &r, f->dir, "{\"a\": 1.5}\n", "append", "m.dls", "--bare");
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "line 1: position 2: ");
    result_free(&r);
}

/* Decision: --no-validate accepts any JSON object (any msgpack map) but
 * still no non-map (stream-format.md: a payload is one msgpack map) and no
 * record over 65536 bytes. */
static void append_no_validate(void **state)
{
    fixture *f = *state;
    create_medium(f, "m.dls");
    const char *renewal = "{\"dao.lease/event\": \"renewal\"}\n";
    result r;
    RUN(f, &r, f->dir, renewal, "append", "m.dls", "--bare");
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "rule 3");
    result_free(&r);
    RUN(f, &r, f->dir, renewal, "append", "m.dls", "--bare", "--no-validate");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "0\n");
    result_free(&r);
    RUN(f, &r, f->dir, "[1, 2]\n", "append", "m.dls", "--bare", "--no-validate");
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "not a JSON object");
    result_free(&r);
    /* a 70000-byte bin */
    size_t hn = 70000 * 2;
    char *big = malloc(hn + 64);
    int k = snprintf(big, 64, "{\"b\": {\"$bin\": \"");
    memset(big + k, 'a', hn);
    strcpy(big + k + hn, "\"}}\n");
    RUN(f, &r, f->dir, big, "append", "m.dls", "--bare", "--no-validate");
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "65536");
    result_free(&r);
    free(big);
}

/* Decision: a bare append of the seal record is refused (sealing is
 * `stream seal`'s job); an append to a sealed medium names the seal's
 * position (stream-format.md: after the seal appends are refused). */
static void append_and_seal(void **state)
{
    fixture *f = *state;
    create_medium(f, "m.dls");
    result r;
    RUN(f, &r, f->dir, "{\"dao.stream/sealed\": true}\n", "append", "m.dls", "--bare");
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "stream seal");
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "stream", "seal", "m.dls");
    assert_int_equal(r.status, 0);
    result_free(&r);
    RUN(f, &r, f->dir, "{\"a\": 1}\n", "append", "m.dls", "--bare");
    assert_int_equal(r.status, 1);
    assert_int_equal(r.out_n, 0);
    assert_contains(r.err, "m.dls: line 1: position 0 (the seal)");
    result_free(&r);
}

/* cli.md usage (exit 2) and Decisions: signed needs both --as and --key,
 * unsigned needs --bare; --key must hold --as's key (exit 1); a secret key
 * readable by others is refused (attribution.md); append never creates a
 * medium. */
static void append_arguments(void **state)
{
    fixture *f = *state;
    make_key(f, "alice");
    create_medium(f, "m.dls");
    static const char *const usage[][7] = {
        {"append", "m.dls", NULL},
        {"append", "m.dls", "--as", "alice", NULL},
        {"append", "m.dls", "--key", "alice.secret", NULL},
        {"append", "m.dls", "--bare", "--as", "alice", NULL},
        {"append", "m.dls", "--bare", "--sync", "sometimes", NULL},
        {"append", "--bare", NULL},
        {"append", "m.dls", "--bare", "--what", NULL},
    };
    result r;
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        run_in(f, &r, f->dir, "{\"a\": 1}\n", usage[i]);
        assert_int_equal(r.status, 2);
        assert_int_equal(r.out_n, 0);
        assert_int_equal(count_lines(r.err), 1);
        result_free(&r);
    }
    RUN(f, &r, f->dir, "{\"a\": 1}\n", "append", "m.dls", "--as", "bob", "--key",
        "alice.secret");
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "alice");
    result_free(&r);
    assert_int_equal(chmod(tmp(f, "alice.secret"), 0644), 0);
    RUN(f, &r, f->dir, "{\"a\": 1}\n", "append", "m.dls", "--as", "alice", "--key",
        "alice.secret");
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "chmod");
    result_free(&r);
    RUN(f, &r, f->dir, "{\"a\": 1}\n", "append", "nope.dls", "--bare");
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "nope.dls");
    struct stat st;
    assert_int_not_equal(stat(tmp(f, "nope.dls"), &st), 0);
    result_free(&r);
    for (int i = 0; i < 3; i++) {
        static const char *const sync[] = {"none", "data", "group"};
        RUN(f, &r, f->dir, "{\"a\": 1}\n", "append", "m.dls", "--bare", "--sync", sync[i]);
        assert_int_equal(r.status, 0);
        result_free(&r);
    }
}

/* cli.md `append` prints positions: many lines (batched inside) are each
 * acknowledged in order; a bad line deep in the input leaves exactly the
 * lines before it appended. */
static void append_many_lines(void **state)
{
    fixture *f = *state;
    make_key(f, "alice");
    create_medium(f, "m.dls");
    enum { N = 3000, BAD = 2500 };
    size_t cap = (size_t)N * 80;
    char *in = malloc(cap), *want = malloc((size_t)N * 8);
    size_t at = 0, wat = 0;
    for (int i = 1; i <= N; i++) {
        if (i == BAD)
            at += (size_t)snprintf(in + at, cap - at, "{\"dao.lease/event\": \"renewal\"}\n");
        else
            at += (size_t)snprintf(in + at, cap - at,
                                   "{\"dao.lease/event\": \"renewal\", \"dao.lease/lease\": 9, "
                                   "\"dao.lease/seq\": %d}\n",
                                   i);
        if (i < BAD)
            wat += (size_t)sprintf(want + wat, "%d\n", i - 1);
    }
    result r;
    RUN(f, &r, f->dir, in, "append", "m.dls", "--as", "alice", "--key", "alice.secret",
        "--sync", "none");
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, want);
    char line[64];
    snprintf(line, sizeof line, "line %d: position %d: ", BAD, BAD - 1);
    assert_contains(r.err, line);
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "dump", "m.dls", "--keyring", "keyring", "--json", "--from",
        "2498");
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 1);
    assert_contains(r.out, "\"dao.lease/seq\":2499");
    assert_contains(r.out, "\"verified\":true");
    result_free(&r);
    free(in);
    free(want);
}

/* ---- the other subcommands, black-box -------------------------------------- */

/* cli.md: "Every subcommand has --help" (exit 0, a usage text on stdout). */
static void help_of_every_subcommand(void **state)
{
    fixture *f = *state;
    static const char *const subs[] = {"fact", "keygen", "stream", "append", "dump",
                                       "judge", "run", "audit", "demo", "bench"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        result r;
        RUN(f, &r, f->dir, NULL, subs[i], "--help");
        if (r.status != 0)
            fail_msg("daolease %s --help exited %d: %s", subs[i], r.status, r.err);
        assert_contains(r.out, "usage");
        result_free(&r);
    }
    result r;
    RUN(f, &r, f->dir, NULL, "--help");
    assert_int_equal(r.status, 0);
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        assert_contains(r.out, subs[i]);
    result_free(&r);
}

/* cli.md: usage errors exit 2 — an unknown subcommand, or none. */
static void unknown_subcommand_exits_2(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, f->dir, NULL, "frobnicate");
    assert_int_equal(r.status, 2);
    assert_contains(r.err, "frobnicate");
    assert_int_equal(count_lines(r.err), 1);
    result_free(&r);
    const char *const none[] = {NULL};
    run_in(f, &r, f->dir, NULL, none);
    assert_int_equal(r.status, 2);
    result_free(&r);
}

/* cli.md "JSON mapping of facts": `fact encode --hex` of tests/cli/fact.jsonl
 * gives tests/cli/fact.expect.hex (produced by an independent msgpack
 * implementation: shortest form, key order kept, $bin/$f64/$ext/$map), and
 * `fact decode --hex` gives the JSON back. Plus the vocabulary vectors:
 * every `shortest` JSON encodes to its msgpack_hex. */
static void fact_encode_decode_golden(void **state)
{
    fixture *f = *state;
    char *in = read_file(golden("fact.jsonl"), NULL);
    char *hex = read_file(golden("fact.expect.hex"), NULL);
    assert_non_null(in);
    assert_non_null(hex);
    result r;
    RUN(f, &r, f->dir, in, "fact", "encode", "--hex");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, hex);
    result_free(&r);
    RUN(f, &r, f->dir, hex, "fact", "decode", "--hex");
    assert_int_equal(r.status, 0);
    assert_jsonl_equal(r.out, in);
    result_free(&r);
    free(in);
    free(hex);

    char *all = read_file(vec("vocabulary.jsonl"), NULL);
    size_t lines = count_lines(all);
    char *texts = calloc(1, strlen(all) + 1), *want = calloc(1, strlen(all) + 1);
    for (size_t i = 0; i < lines; i++) {
        char *l = nth_line(all, i);
        json_t *v = json_loads(l, JSON_DECODE_INT_AS_REAL, NULL);
        char *text = json_member_text(l);
        if (json_is_true(json_object_get(v, "shortest")) && text) {
            strcat(texts, text);
            strcat(want, json_string_value(json_object_get(v, "msgpack_hex")));
            strcat(want, "\n");
        }
        free(text);
        json_decref(v);
        free(l);
    }
    RUN(f, &r, f->dir, texts, "fact", "encode", "--hex");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, want);
    result_free(&r);
    free(texts);
    free(want);
    free(all);
}

/* cli.md `stream create` prints the id (32 hex chars), never over an
 * existing path; `stream seal` appends the seal (dump shows it at position
 * 0), a second seal is an error. */
static void stream_create_and_seal(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, f->dir, NULL, "stream", "create", "s.dls");
    assert_int_equal(r.status, 0);
    assert_int_equal(r.out_n, 33);
    for (int i = 0; i < 32; i++)
        assert_non_null(strchr("0123456789abcdef", r.out[i]));
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "stream", "create", "s.dls");
    assert_int_equal(r.status, 1);
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "stream", "seal", "s.dls");
    assert_int_equal(r.status, 0);
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "stream", "seal", "s.dls");
    assert_int_equal(r.status, 1);
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "dump", "s.dls", "--json");
    assert_int_equal(r.status, 0);
    assert_jsonl_equal(r.out, "{\"position\": 0, \"kind\": \"seal\", \"author\": null, "
                              "\"verified\": false, \"why\": null, \"fact\": null}\n");
    result_free(&r);
}

/* cli.md `keygen NAME [--mac]`: writes NAME.secret with mode 0600, prints
 * the keyring line; never overwrites (attribution.md keys). */
static void keygen_black_box(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, f->dir, NULL, "keygen", "bob", "--dir", f->dir);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.out_n, strlen("bob ed25519 ") + 64 + 1);
    assert_memory_equal(r.out, "bob ed25519 ", 12);
    struct stat st;
    assert_int_equal(stat(tmp(f, "bob.secret"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    size_t n1;
    char *before = read_file(tmp(f, "bob.secret"), &n1);
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "keygen", "bob", "--dir", f->dir);
    assert_int_equal(r.status, 1);
    size_t n2;
    char *after = read_file(tmp(f, "bob.secret"), &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(before, after, n1);
    free(before);
    free(after);
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "keygen", "probe", "--mac");
    assert_int_equal(r.status, 0);
    assert_memory_equal(r.out, "probe mac ", 10);
    result_free(&r);
}

/* cli.md `audit` exit 0 clean; vectors README run/: the clean run audits
 * with exit 0 (the audit's own golden lines are checked by test_audit). */
static void audit_vector_run_exits_0(void **state)
{
    fixture *f = *state;
    json_t *args = json_load_file(vec("run/args.json"), 0, NULL);
    assert_non_null(args);
    const char *argv[32];
    size_t k = 0;
    argv[k++] = "audit";
    for (size_t i = 0; i < json_array_size(args) && k < 30; i++)
        argv[k++] = json_string_value(json_array_get(args, i));
    argv[k++] = "--json";
    argv[k] = NULL;
    result r;
    run_in(f, &r, vec("run"), NULL, argv);
    if (r.status != 0)
        fail_msg("audit exited %d: %s", r.status, r.err);
    assert_true(count_lines(r.out) >= 2);
    result_free(&r);
    json_decref(args);
}

/* ---- one option dialect ------------------------------------------------------ */

/* cli.md rev 5, One option dialect: every subcommand takes a long option's
 * value as "--opt value" and "--opt=value" alike (the same exit status and
 * the same stderr), refuses an abbreviation as an unknown option, and answers
 * an unknown option or a missing value with one line naming the option and
 * where help is, exit 2. Each row: the subcommand's words before the option,
 * one option with a value, the arguments after it (chosen so the command
 * fails the same way whatever the form: a missing file), and an abbreviation
 * of the option. */
static void option_dialect_table(void **state)
{
    fixture *f = *state;
    static const struct row {
        const char *pre[3], *opt, *val, *post[6], *abbrev;
    } rows[] = {
        {{"dump"}, "--from", "5", {"missing.dls"}, "--fro"},
        {{"append"}, "--sync", "data", {"missing.dls"}, "--syn"},
        {{"keygen"}, "--dir", "missing-dir", {"x"}, "--di"},
        {{"stream", "create"}, "--segment-bytes", "4096", {"seg.dls"}, "--segment"},
        {{"audit"}, "--journal", "missing.dls", {"--grantor", "a", "--keyring", "kr", "--media",
                                                 "m.dls"}, "--jour"},
        {{"status"}, "--journal", "missing.dls", {"--media", "m.dls"}, "--jour"},
        {{"watch"}, "--journal", "missing.dls", {"--no-follow"}, "--jour"},
        {{"judge"}, "--config", "missing.json", {"--passes", "1"}, "--conf"},
        {{"run"}, "--config", "missing.json", {"--subject", "s", "--", "true"}, "--conf"},
        {{"serve"}, "--journal", "missing.dls", {"--http", "127.0.0.1:0"}, "--jour"},
        {{"demo"}, "--agents", "100", {NULL}, "--agent"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *w = &rows[i];
        const char *sub = w->pre[0];
        result r[5];
        char joined[160], help[64];
        snprintf(joined, sizeof joined, "%s=%s", w->opt, w->val);
        snprintf(help, sizeof help, "(see 'daolease %s --help')", sub);
        for (int form = 0; form < 5; form++) {
            const char *args[16];
            size_t n = 0;
            for (size_t k = 0; k < 3 && w->pre[k]; k++)
                args[n++] = w->pre[k];
            if (form == 4) { /* the value missing: the option last */
                args[n++] = w->opt;
                args[n] = NULL;
                run_in(f, &r[form], f->dir, NULL, args);
                continue;
            }
            if (form == 0) {
                args[n++] = w->opt;
                args[n++] = w->val;
            } else if (form == 1) {
                args[n++] = joined;
            } else {
                args[n++] = form == 2 ? w->abbrev : "--bogus";
                args[n++] = w->val;
            }
            for (size_t k = 0; k < 6 && w->post[k]; k++)
                args[n++] = w->post[k];
            args[n] = NULL;
            run_in(f, &r[form], f->dir, "", args);
        }
        if (r[0].status != r[1].status || strcmp(r[0].err, r[1].err) || r[0].status == 0)
            fail_msg("%s: '%s %s' (exit %d: %s) and '%s' (exit %d: %s) differ", sub, w->opt,
                     w->val, r[0].status, r[0].err, joined, r[1].status, r[1].err);
        static const char *const form_name[] = {NULL, NULL, "abbreviation", "unknown option",
                                                "missing value"};
        for (int form = 2; form < 5; form++) {
            const char *want = form == 4 ? "needs a value" : "unknown option";
            if (r[form].status != 2 || count_lines(r[form].err) != 1 ||
                !strstr(r[form].err, want) || !strstr(r[form].err, help) ||
                (form == 2 && !strstr(r[form].err, w->abbrev)))
                fail_msg("%s, %s: exit %d, stderr: %s", sub, form_name[form], r[form].status,
                         r[form].err);
        }
        for (int form = 0; form < 5; form++)
            result_free(&r[form]);
    }
    /* an unknown option is named without its value, which may hold a
       password (docs/redis.md: the password never appears in messages) */
    static const char *const subs[] = {"status", "dump", "audit", "watch", "stream"};
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        result r;
        if (!strcmp(subs[i], "stream"))
            RUN(f, &r, f->dir, NULL, "stream", "create", "--bogus=redis://u:s3cret@127.0.0.1:1/k");
        else
            RUN(f, &r, f->dir, NULL, subs[i], "--jour=redis://u:s3cret@127.0.0.1:1/k");
        if (r.status != 2 || strstr(r.err, "s3cret") || !strstr(r.err, "unknown option --"))
            fail_msg("%s: exit %d, stderr: %s", subs[i], r.status, r.err);
        result_free(&r);
    }
}

/* ---- the configuration of judge and run ------------------------------------ */

/* cli.md "Configuration": unknown keys and missing files are clear errors,
 * naming the file and the key (docs/config.md); `judge` exits 78
 * (EX_CONFIG: its unit does not restart it, docs/service.md). */
static void config_errors_name_file_and_key(void **state)
{
    fixture *f = *state;
    make_key(f, "arbiter");
    create_medium(f, "a1.dls");
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": \"keyring\", "
         "\"journal\": \"j.dls\", \"media\": [\"a1.dls\"], \"tolernace\": {\"ms\": 5}}",
         "key \"tolernace\": unknown key"},
        {"{\"party\": \"arbiter\", \"key\": \"nope.secret\", \"keyring\": \"keyring\", "
         "\"journal\": \"j.dls\", \"media\": [\"a1.dls\"]}",
         "key \"key\""},
        {"{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": \"keyring\", "
         "\"journal\": \"j.dls\", \"media\": [\"missing.dls\"]}",
         "missing.dls"},
        {"{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": \"keyring\", "
         "\"journal\": \"j.dls\", \"media\": [{\"medium\": \"a1.dls\", \"colour\": 1}]}",
         "key \"media\""},
        {"{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": \"keyring\", "
         "\"journal\": \"j.dls\", \"media\": [\"a1.dls\"], \"cadence\": {\"sec\": 1}}",
         "key \"cadence\""},
        {"{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": \"keyring\", "
         "\"journal\": \"j.dls\"}",
         "key \"media\": is required"},
        {"{\"party\": \"arbiter\", \"party\": \"x\"}", "duplicate"},
        /* docs/config.md, ticks: realtime tick streams need a basis name,
         * distinct streams and an own stream among them */
        {"{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": \"keyring\", "
         "\"journal\": \"j.dls\", \"media\": [\"a1.dls\"], \"ticks\": \"realtime\"}",
         "key \"ticks\": must be \"monotonic\" or"},
        {"{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": \"keyring\", "
         "\"journal\": \"j.dls\", \"media\": [\"a1.dls\"], \"ticks\": {\"realtime\": \"a b\", "
         "\"streams\": [\"t1\"], \"own\": \"t1\"}}",
         "\"realtime\" must be a basis name"},
        {"{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": \"keyring\", "
         "\"journal\": \"j.dls\", \"media\": [\"a1.dls\"], \"ticks\": {\"realtime\": \"c1\", "
         "\"streams\": [\"t1\", \"t2\"], \"own\": \"t3\"}}",
         "\"own\" must name one of \"streams\""},
        {"{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": \"keyring\", "
         "\"journal\": \"j.dls\", \"media\": [\"a1.dls\"], \"ticks\": {\"realtime\": \"c1\", "
         "\"streams\": [\"t1\", \"t1\"], \"own\": \"t1\"}}",
         "is listed twice"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file(tmp(f, "judge.json"), cases[i].json, strlen(cases[i].json), 0644);
        result r;
        RUN(f, &r, f->dir, NULL, "judge", "--config", "judge.json", "--passes", "1");
        if (r.status != 78 || !strstr(r.err, cases[i].want) || !strstr(r.err, "judge.json"))
            fail_msg("case %zu: exit %d, stderr: %s", i, r.status, r.err);
        result_free(&r);
    }
}

/* docs/config.md: media as "PATH=PARTY" and as {"medium", "party"} objects
 * assemble a judge that runs its passes (exit 0). */
static void config_media_forms_accepted(void **state)
{
    fixture *f = *state;
    make_key(f, "arbiter");
    create_medium(f, "a1.dls");
    create_medium(f, "a2.dls");
    create_medium(f, "a3.dls");
    const char *json = "{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", "
                       "\"keyring\": \"keyring\", \"journal\": \"j.dls\", \"media\": "
                       "[\"a1.dls\", \"a2.dls=sensor-9\", {\"medium\": \"a3.dls\", "
                       "\"party\": \"probe\"}], \"cadence\": {\"ms\": 10}}";
    write_file(tmp(f, "judge.json"), json, strlen(json), 0644);
    result r;
    RUN(f, &r, f->dir, NULL, "judge", "--config", "judge.json", "--passes", "3", "--create");
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    assert_contains(r.out, "\"status\": true");
    result_free(&r);
}

/* judge.md, The pass, step 2 (a per-pass drain budget; a medium with
 * records left counts as failing, "behind"); docs/config.md drain_budget,
 * drain_per_s: the keys reach the judge. A budget of 1 with drain_per_s 0
 * drains one record a pass and shows the medium behind; the defaults
 * (20000 a pass, 10^6 a second) drain all four records at once. Bad values are
 * refused with exit 78, naming the file and the key. */
static void config_drain_budget(void **state)
{
    fixture *f = *state;
    make_key(f, "arbiter");
    make_key(f, "alice");
    create_medium(f, "a1.dls");
    const char *in =
        "{\"dao.lease/status\": \"proposed\", \"dao.lease/proposal\": \"p-1\", "
        "\"dao.lease/subject\": \"queue/a\", \"dao.lease/seq\": 1}\n"
        "{\"app/note\": \"not a lease fact\"}\n"
        "{\"dao.lease/status\": \"proposed\", \"dao.lease/proposal\": \"p-2\", "
        "\"dao.lease/subject\": \"queue/b\", \"dao.lease/seq\": 2}\n"
        "{\"app/note\": \"nor this\"}\n";
    result r;
    RUN(f, &r, f->dir, in, "append", "a1.dls", "--as", "alice", "--key", "alice.secret");
    assert_int_equal(r.status, 0);
    result_free(&r);
    static const struct {
        const char *extra, *want;
    } cases[] = {
        {", \"drain_budget\": 1, \"drain_per_s\": 0", "\"drained\": 1, "},
        {"", "\"drained\": 4, "},
    };
    for (size_t i = 0; i < 2; i++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": "
                 "\"keyring\", \"journal\": \"j%zu.dls\", \"media\": [\"a1.dls\"]%s}", i,
                 cases[i].extra);
        write_file(tmp(f, "judge.json"), json, strlen(json), 0644);
        RUN(f, &r, f->dir, NULL, "judge", "--config", "judge.json", "--passes", "1",
            "--create");
        if (r.status != 0 || !strstr(r.out, cases[i].want) ||
            !strstr(r.out, i == 0 ? "\"behind\": 1}" : "\"behind\": 0}"))
            fail_msg("case %zu: exit %d, out: %s, err: %s", i, r.status, r.out, r.err);
        result_free(&r);
    }
    static const char *const bad[] = {"\"drain_per_s\": 1000000001", "\"drain_budget\": -1",
                                      "\"drain_per_s\": \"fast\""};
    for (size_t i = 0; i < 3; i++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", \"keyring\": "
                 "\"keyring\", \"journal\": \"j.dls\", \"media\": [\"a1.dls\"], %s}", bad[i]);
        write_file(tmp(f, "judge.json"), json, strlen(json), 0644);
        RUN(f, &r, f->dir, NULL, "judge", "--config", "judge.json", "--passes", "1");
        if (r.status != 78 || !strstr(r.err, "judge.json") || !strstr(r.err, "key \"drain_"))
            fail_msg("bad %zu: exit %d, stderr: %s", i, r.status, r.err);
        result_free(&r);
    }
}

/* docs/config.md, ticks; judge.md, Assembly: a judge on realtime tick
 * streams appends its ticks to its own stream only, creates a missing one,
 * and writes its marks on the basis "realtime/<name>". */
static void config_realtime_ticks(void **state)
{
    fixture *f = *state;
    make_key(f, "arbiter");
    create_medium(f, "a1.dls");
    const char *json = "{\"party\": \"arbiter\", \"key\": \"arbiter.secret\", "
                       "\"keyring\": \"keyring\", \"journal\": \"j.dls\", \"media\": "
                       "[\"a1.dls\"], \"cadence\": {\"ms\": 10}, \"ticks\": {\"realtime\": "
                       "\"cluster-7\", \"streams\": [\"m1.ticks\", \"m2.ticks\"], "
                       "\"own\": \"m2.ticks\"}}";
    write_file(tmp(f, "judge.json"), json, strlen(json), 0644);
    result r;
    RUN(f, &r, f->dir, NULL, "judge", "--config", "judge.json", "--passes", "3", "--create");
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "dump", "m2.ticks", "--keyring", "keyring", "--json");
    assert_int_equal(r.status, 0);
    assert_true(count_lines(r.out) >= 3);
    assert_contains(r.out, "\"author\":\"arbiter\",\"verified\":true");
    assert_contains(r.out, "\"dao.lease/event\":\"tick\"");
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "dump", "m1.ticks", "--json");
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 0); /* created, never written by this machine */
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "dump", "j.dls", "--json");
    assert_contains(r.out, "\"dao.judge/basis\":\"realtime/cluster-7\"");
    result_free(&r);
    /* vocabulary.md rule 7 across runs: the own stream's last tick is ahead
     * of the wall clock (a clock stepped back between two runs). The judge
     * starts at each stream's last record, so that reading is its now at
     * once, and its adapter appends nothing older: it says so once and
     * runs its passes on that now. */
    const char *future = "{\"dao.lease/event\": \"tick\", \"dao.lease/reading\": "
                         "{\"ns\": 4000000000000000000}}\n";
    RUN(f, &r, f->dir, future, "append", "m2.ticks", "--as", "arbiter", "--key",
        "arbiter.secret");
    assert_int_equal(r.status, 0);
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "judge", "--config", "judge.json", "--passes", "3");
    if (r.status != 0)
        fail_msg("exit %d: %s", r.status, r.err);
    assert_contains(r.err, "the wall clock is behind the last reading appended");
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "dump", "m2.ticks", "--json");
    const char *lastline = strrchr(r.out, '{');
    assert_non_null(strstr(r.out, "4000000000000000000"));
    while (lastline > r.out && lastline[-1] != '\n')
        lastline--;
    assert_non_null(strstr(lastline, "4000000000000000000")); /* nothing older after it */
    result_free(&r);
    RUN(f, &r, f->dir, NULL, "dump", "j.dls", "--json");
    assert_contains(r.out, "\"dao.judge/now\":{\"s\":4000000000}"); /* 4e18 ns */
    result_free(&r);
}

/* ---- batch envelopes in dump (cli.md rev 4; issue 13 item 1) -------------- */

/* cli.md rev 4 + vectors README stream/: `daolease dump batch.dls --keyring
 * keyring --json` prints exactly batch.expect.jsonl — 13 lines for 8
 * records: one per fact of a batch (kind "batch", "index" after
 * "position"), a malformed batch as one "envelope" line, the seal. */
static void dump_batch_golden(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, vec("stream"), NULL, "dump", "batch.dls", "--keyring", "keyring", "--json");
    assert_int_equal(r.status, 0);
    assert_int_equal(r.err_n, 0);
    char *want = read_file(vec("stream/batch.expect.jsonl"), NULL);
    assert_non_null(want);
    assert_int_equal(count_lines(want), 13);
    assert_jsonl_equal(r.out, want);
    free(want);
    result_free(&r);
}

/* cli.md rev 4: without a keyring every fact of a well-formed batch shows
 * why "unknown-author", verified false, and its fact as carried; the
 * malformed batch stays one "malformed" line; --from 2 starts at the MAC
 * batch (positions count records, not facts). */
static void dump_batch_without_keyring_and_from(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, vec("stream"), NULL, "dump", "batch.dls", "--json");
    assert_int_equal(r.status, 0);
    char *want = read_file(vec("stream/batch.expect.jsonl"), NULL);
    size_t n = count_lines(want);
    assert_int_equal(count_lines(r.out), n);
    for (size_t i = 0; i < n; i++) {
        char *w = nth_line(want, i), *g = nth_line(r.out, i);
        json_t *j = parse(w);
        const char *kind = json_string_value(json_object_get(j, "kind"));
        if (!strcmp(kind, "batch") || (!strcmp(kind, "envelope") &&
                                       json_is_null(json_object_get(j, "why")))) {
            json_object_set_new(j, "verified", json_false());
            json_object_set_new(j, "why", json_string("unknown-author"));
        }
        assert_json_line(g, j);
        json_decref(j);
        free(w);
        free(g);
    }
    result_free(&r);
    RUN(f, &r, vec("stream"), NULL, "dump", "batch.dls", "--keyring", "keyring", "--json",
        "--from", "2");
    assert_int_equal(r.status, 0);
    char *first = nth_line(r.out, 0);
    json_t *j = parse(first);
    assert_int_equal(json_integer_value(json_object_get(j, "position")), 2);
    assert_int_equal(json_integer_value(json_object_get(j, "index")), 0);
    assert_int_equal(count_lines(r.out), 13 - 4); /* positions 0 and 1 held 4 lines */
    json_decref(j);
    free(first);
    free(want);
    result_free(&r);
}

/* The human form of batch.dls: POS.INDEX for a batch's facts. */
static void dump_batch_human(void **state)
{
    fixture *f = *state;
    result r;
    RUN(f, &r, vec("stream"), NULL, "dump", "batch.dls", "--keyring", "keyring", "--human");
    assert_int_equal(r.status, 0);
    assert_int_equal(count_lines(r.out), 13);
    assert_contains(r.out, "     1.2  batch     worker-east  verified");
    assert_contains(r.out, "     4  envelope  worker-east  malformed");
    assert_contains(r.out, "     6.1  batch     probe-5      wrong-key-kind");
    result_free(&r);
}

/* Runs args to completion within 5 s (else kills it and fails the test);
 * answers the exit status, stderr in *err (malloc'd). */
static int run_within_5s(const fixture *f, const char *const *args, char **err)
{
    pid_t pid = start(f, f->dir, NULL, 0, args);
    int st = 0;
    pid_t got = 0;
    for (int i = 0; i < 500 && got == 0; i++) {
        got = waitpid(pid, &st, WNOHANG);
        if (got == 0)
            usleep(10000);
    }
    if (got == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
        fail_msg("%s blocked for 5 s", args[0]);
    }
    assert_true(WIFEXITED(st));
    *err = read_file(tmp(f, ".stderr"), NULL);
    return WEXITSTATUS(st);
}

/* Issue 12 item 11: a FIFO given as the keyring (dump) or as the key
 * (append) is refused at once — never blocks waiting for a writer —, exit
 * 1, one line naming the path and the problem. */
static void dump_fifo_keyring_refused(void **state)
{
    fixture *f = *state;
    assert_int_equal(mkfifo(tmp(f, "kr.fifo"), 0600), 0);
    const char *dump[] = {"dump", vec("stream/three.dls"), "--keyring", "kr.fifo", NULL};
    char *err;
    assert_int_equal(run_within_5s(f, dump, &err), 1);
    assert_int_equal(count_lines(err), 1);
    assert_contains(err, "kr.fifo: not a regular file");
    free(err);
    create_medium(f, "m.dls");
    const char *append[] = {"append", "m.dls", "--as", "alice", "--key", "kr.fifo", NULL};
    assert_int_equal(run_within_5s(f, append, &err), 1);
    assert_int_equal(count_lines(err), 1);
    assert_contains(err, "kr.fifo: not a regular file");
    free(err);
}

/* vectors README run-batch/ (attribution.md rev 4): the audit of a clean
 * batch run exits 0 and prints audit.expect.jsonl's lease lines exactly;
 * on the summary line summary, failures and exit (issue 13 item 1, audit
 * side: each fact of a batch counts as if alone). */
static void audit_vector_run_batch(void **state)
{
    fixture *f = *state;
    json_t *args = json_load_file(vec("run-batch/args.json"), 0, NULL);
    assert_non_null(args);
    const char *argv[32];
    size_t k = 0;
    argv[k++] = "audit";
    for (size_t i = 0; i < json_array_size(args) && k < 30; i++)
        argv[k++] = json_string_value(json_array_get(args, i));
    argv[k++] = "--json";
    argv[k] = NULL;
    result r;
    run_in(f, &r, vec("run-batch"), NULL, argv);
    json_decref(args);
    size_t n = count_lines(r.out);
    char *last = n ? nth_line(r.out, n - 1) : NULL;
    json_t *sum = last ? parse(last) : NULL;
    assert_non_null(sum);
    if (r.status != 0)
        fail_msg("audit exited %d: %s\n%s", r.status, r.err, r.out);
    char *want = read_file(vec("run-batch/audit.expect.jsonl"), NULL);
    size_t wn = count_lines(want);
    assert_int_equal(n, wn);
    for (size_t i = 0; i + 1 < wn; i++) {
        char *g = nth_line(r.out, i), *w = nth_line(want, i);
        json_t *wj = parse(w);
        assert_json_line(g, wj);
        json_decref(wj);
        free(g);
        free(w);
    }
    char *wl = nth_line(want, wn - 1);
    json_t *ws = parse(wl);
    const char *keys[] = {"summary", "failures", "exit"};
    for (int i = 0; i < 3; i++)
        assert_true(ordered_equal(json_object_get(sum, keys[i]), json_object_get(ws, keys[i])));
    json_decref(ws);
    json_decref(sum);
    free(wl);
    free(last);
    free(want);
    result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(dump_three_golden, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_default_off_terminal_is_json, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_three_human_golden, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_without_keyring_unknown_author, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_torn, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_from, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_corrupt_exits_1_naming_position, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_malformed_and_forged, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_missing_file, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_bad_keyring, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_usage_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_gap_noted_and_continues, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_follow, setup, teardown),
        cmocka_unit_test_setup_teardown(append_dump_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(append_vocabulary_vectors, setup, teardown),
        cmocka_unit_test_setup_teardown(append_refuses_defective_fact_naming_line, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(append_no_validate, setup, teardown),
        cmocka_unit_test_setup_teardown(append_and_seal, setup, teardown),
        cmocka_unit_test_setup_teardown(append_arguments, setup, teardown),
        cmocka_unit_test_setup_teardown(append_many_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(help_of_every_subcommand, setup, teardown),
        cmocka_unit_test_setup_teardown(unknown_subcommand_exits_2, setup, teardown),
        cmocka_unit_test_setup_teardown(fact_encode_decode_golden, setup, teardown),
        cmocka_unit_test_setup_teardown(stream_create_and_seal, setup, teardown),
        cmocka_unit_test_setup_teardown(keygen_black_box, setup, teardown),
        cmocka_unit_test_setup_teardown(audit_vector_run_exits_0, setup, teardown),
        cmocka_unit_test_setup_teardown(config_errors_name_file_and_key, setup, teardown),
        cmocka_unit_test_setup_teardown(config_media_forms_accepted, setup, teardown),
        cmocka_unit_test_setup_teardown(config_realtime_ticks, setup, teardown),
        cmocka_unit_test_setup_teardown(config_drain_budget, setup, teardown),
        cmocka_unit_test_setup_teardown(option_dialect_table, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_batch_golden, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_batch_without_keyring_and_from, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_batch_human, setup, teardown),
        cmocka_unit_test_setup_teardown(dump_fifo_keyring_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(audit_vector_run_batch, setup, teardown),
    };
    return cmocka_run_group_tests_name("cli", tests, NULL, NULL);
}
