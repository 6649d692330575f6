/* Tests for append-only media (stream-format.md): the file format and its
 * header validation, the five cursor answers in every state, torn tails
 * and the R rule, the vectors, several writers (threads and processes),
 * sync policies and group commit, crash recovery under SIGKILL, the
 * segmented and ring media, and interoperability with an independent
 * Python reader/writer. Each test names the rule it checks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sodium.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "support.h"
#include "daolease/medium_impl.h"
#include "daolease/stream.h"
#include "stream/internal.h"
#include "vocab/mp.h"

#ifndef DLS_TEST_SRCDIR
#define DLS_TEST_SRCDIR "tests"
#endif

#define R DLS_TORN_TAIL_MAX

/* ---- helpers ------------------------------------------------------------ */

static char g_dir[PATH_MAX];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

static int setup_dir(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/dls-stream-XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    nftw(g_dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static const char *tpath(const char *name)
{
    static char buf[4][2 * PATH_MAX];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

static uint64_t file_size(const char *p)
{
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    return (uint64_t)st.st_size;
}

static void write_bytes(const char *p, const void *b, size_t n, bool append)
{
    int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
    assert_true(fd >= 0);
    const uint8_t *q = b;
    while (n) {
        ssize_t k = write(fd, q, n);
        assert_true(k > 0);
        q += k;
        n -= (size_t)k;
    }
    close(fd);
}

static uint8_t *read_all(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rbe");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)sz + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    *n = (size_t)sz;
    return b;
}

static void copy_file(const char *from, const char *to)
{
    size_t n;
    uint8_t *b = read_all(from, &n);
    write_bytes(to, b, n, false);
    free(b);
}

/* An independent encoder of the format (zlib's crc32 directly). */
static size_t raw_header(uint8_t *out, const uint8_t id[16], uint64_t base)
{
    memset(out, 0, 48);
    memcpy(out, "DAOLSTRM", 8);
    out[8] = 1;
    out[12] = 48;
    memcpy(out + 16, id, 16);
    for (int i = 0; i < 8; i++)
        out[32 + i] = (uint8_t)(base >> (8 * i));
    return 48;
}

static size_t raw_record(uint8_t *out, const uint8_t *p, size_t n)
{
    uint32_t c = (uint32_t)crc32(0, p, (uInt)n);
    for (int i = 0; i < 4; i++) {
        out[i] = (uint8_t)(n >> (8 * i));
        out[4 + i] = (uint8_t)(c >> (8 * i));
    }
    memcpy(out + 8, p, n);
    return 8 + n;
}

/* Payloads: the msgpack map {"w": writer, "i": seq, "p": bin(pad)} with
 * pad[k] = seq*31 + k*7 + writer; 26 + pad bytes. */
static size_t make_payload(uint8_t *o, uint32_t writer, uint64_t seq, size_t pad)
{
    size_t n = 0;
    o[n++] = 0x83;
    o[n++] = 0xa1, o[n++] = 'w', o[n++] = 0xce;
    for (int i = 3; i >= 0; i--)
        o[n++] = (uint8_t)(writer >> (8 * i));
    o[n++] = 0xa1, o[n++] = 'i', o[n++] = 0xcf;
    for (int i = 7; i >= 0; i--)
        o[n++] = (uint8_t)(seq >> (8 * i));
    o[n++] = 0xa1, o[n++] = 'p', o[n++] = 0xc6;
    for (int i = 3; i >= 0; i--)
        o[n++] = (uint8_t)(pad >> (8 * i));
    for (size_t k = 0; k < pad; k++)
        o[n++] = (uint8_t)(seq * 31 + k * 7 + writer);
    return n;
}

/* Checks a payload made by make_payload or by the Python writer (any
 * integer width, any key order), with the project's msgpack walker. */
static bool check_payload(const uint8_t *p, size_t n, uint32_t *writer, uint64_t *seq)
{
    dls_mp_item it;
    size_t off = 0;
    if (dls_mp_read(p, n, off, &it) || it.type != DLS_MP_MAP || it.len != 3)
        return false;
    off = it.end;
    bool hw = false, hi = false, hp = false;
    uint64_t w = 0, s = 0;
    const uint8_t *pad = NULL;
    uint32_t padlen = 0;
    for (int k = 0; k < 3; k++) {
        dls_mp_item key, val;
        if (dls_mp_read(p, n, off, &key) || key.type != DLS_MP_STR || key.len != 1)
            return false;
        off = key.end;
        if (dls_mp_read(p, n, off, &val))
            return false;
        off = val.end;
        if (key.data[0] == 'w' && val.type == DLS_MP_UINT)
            hw = true, w = val.v.u;
        else if (key.data[0] == 'i' && val.type == DLS_MP_UINT)
            hi = true, s = val.v.u;
        else if (key.data[0] == 'p' && val.type == DLS_MP_BIN)
            hp = true, pad = val.data, padlen = val.len;
        else
            return false;
    }
    if (!hw || !hi || !hp || off != n)
        return false;
    for (uint32_t k = 0; k < padlen; k++)
        if (pad[k] != (uint8_t)(s * 31 + k * 7 + w))
            return false;
    if (writer)
        *writer = (uint32_t)w;
    if (seq)
        *seq = s;
    return true;
}

static dls_medium_settings settings(dls_sync sync)
{
    dls_medium_settings s;
    dls_medium_settings_default(&s);
    s.sync = sync;
    return s;
}

static dls_medium *create_file(const char *name, dls_sync sync)
{
    dls_medium_settings s = settings(sync);
    dls_medium *m = NULL;
    dls_where w = {0};
    assert_int_equal(dls_medium_create(&m, DLS_MEDIUM_FILE, tpath(name), &s, &w), 0);
    return m;
}

static dls_medium *open_path(const char *path, dls_open_mode mode, int expect)
{
    dls_medium_settings s = settings(DLS_SYNC_NONE);
    dls_medium *m = NULL;
    dls_where w = {0};
    int rc = dls_medium_open(&m, path, mode, &s, &w);
    assert_int_equal(rc, expect);
    if (expect)
        assert_non_null(w.reason);
    return m;
}

static uint64_t append_seq(dls_medium *m, uint32_t writer, uint64_t seq, size_t pad)
{
    uint8_t b[DLS_RECORD_MAX];
    size_t n = make_payload(b, writer, seq, pad);
    uint64_t pos = UINT64_MAX;
    dls_where w = {0};
    assert_int_equal(dls_medium_append(m, b, n, &pos, &w), 0);
    return pos;
}

/* Drains a cursor expecting records of writer 1 with seq == position,
 * returns the final non-ok answer. */
static dls_next drain(dls_cursor *c, uint64_t *count, dls_record *last)
{
    dls_record r;
    dls_next a;
    uint64_t k = 0;
    while ((a = dls_cursor_next(c, &r, NULL)) == DLS_NEXT_OK) {
        uint64_t seq;
        assert_true(check_payload(r.p, r.n, NULL, &seq));
        assert_true(seq == r.position);
        k++;
    }
    if (count)
        *count = k;
    if (last)
        *last = r;
    return a;
}

static uint64_t seed_from_env(const char *test)
{
    uint64_t seed;
    const char *e = getenv("DLS_SEED");
    if (e && *e) {
        seed = strtoull(e, NULL, 0);
    } else {
        assert_true(sodium_init() >= 0);
        randombytes_buf(&seed, sizeof seed);
    }
    printf("%s: seed=%" PRIu64 " (DLS_SEED replays)\n", test, seed);
    return seed;
}

static uint64_t rnd(uint64_t *s)
{
    /* splitmix64: replayable from the printed seed */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---- header validation (stream-format.md, File format) ----------------- */

static void header_case(uint8_t *h, int which)
{
    static const uint8_t id[16] = {1, 2, 3};
    raw_header(h, id, 0);
    switch (which) {
    case 0: h[8] = 2; break;            /* version 2 */
    case 1: h[10] = 1; break;           /* flags */
    case 2: h[12] = 64; break;          /* header length 64 */
    case 3: h[47] = 1; break;           /* reserved */
    case 4: h[0] = 'X'; break;          /* magic */
    case 5: h[9] = 1; break;            /* version 257 */
    case 6: h[39] = 0x80; break;        /* base index 2^63: positions would overflow */
    }
}

static void test_header_refused(void **state)
{
    (void)state;
    for (int which = 0; which < 7; which++) {
        uint8_t file[48 + 8 + 30];
        header_case(file, which);
        uint8_t pl[30];
        size_t n = make_payload(pl, 1, 0, 4);
        size_t len = 48 + raw_record(file + 48, pl, n);
        write_bytes(tpath("h.dls"), file, len, false);
        /* Both modes refuse with DLS_ERR_HEADER and a reason. */
        open_path(tpath("h.dls"), DLS_OPEN_READ, DLS_ERR_HEADER);
        open_path(tpath("h.dls"), DLS_OPEN_APPEND, DLS_ERR_HEADER);
        /* The file is untouched. */
        assert_true(file_size(tpath("h.dls")) == len);
    }
}

static void test_header_short(void **state)
{
    (void)state;
    /* A header shorter than 48 bytes: readers answer blocked; opening for
     * append is refused. Once complete, the reader proceeds. */
    static const uint8_t id[16] = {9, 9, 9};
    uint8_t h[48];
    raw_header(h, id, 0);
    write_bytes(tpath("s.dls"), h, 20, false);
    open_path(tpath("s.dls"), DLS_OPEN_APPEND, DLS_ERR_HEADER);
    dls_medium *m = open_path(tpath("s.dls"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    dls_record r;
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    assert_true(r.position == 0);
    write_bytes(tpath("s.dls"), h + 20, 28, true);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    assert_memory_equal(dls_medium_id(m), id, 16);
    uint8_t rec[64], pl[40];
    size_t n = make_payload(pl, 1, 0, 3);
    write_bytes(tpath("s.dls"), rec, raw_record(rec, pl, n), true);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 0 && r.n == n);
    dls_cursor_del(c);
    dls_medium_del(m);
    /* An empty file too. */
    write_bytes(tpath("e.dls"), "", 0, false);
    m = open_path(tpath("e.dls"), DLS_OPEN_READ, 0);
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    dls_cursor_del(c);
    dls_medium_del(m);
    /* A header that later turns out invalid: transport-error. */
    uint8_t bad[48];
    header_case(bad, 0);
    write_bytes(tpath("b.dls"), bad, 30, false);
    m = open_path(tpath("b.dls"), DLS_OPEN_READ, 0);
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    write_bytes(tpath("b.dls"), bad + 30, 18, true);
    dls_where w = {0};
    assert_int_equal(dls_cursor_next(c, &r, &w), DLS_NEXT_ERROR);
    assert_non_null(w.reason);
    dls_cursor_del(c);
    dls_medium_del(m);
}

static void test_create_layout(void **state)
{
    (void)state;
    /* create: exactly the 48-byte header, random id, base 0; never over
     * an existing path; no temporary left behind. */
    dls_medium *m = create_file("c.dls", DLS_SYNC_DATA);
    size_t n;
    uint8_t *b = read_all(tpath("c.dls"), &n);
    assert_int_equal(n, 48);
    assert_memory_equal(b, "DAOLSTRM\1\0\0\0\x30\0\0\0", 16);
    assert_memory_equal(b + 16, dls_medium_id(m), 16);
    static const uint8_t zero[16];
    assert_memory_equal(b + 32, zero, 16);
    assert_memory_not_equal(dls_medium_id(m), zero, 16);
    free(b);
    assert_int_equal(dls_medium_kind_of(m), DLS_MEDIUM_FILE);
    assert_int_equal(dls_medium_retention(m), DLS_RETAIN_ALL);
    assert_int_equal(dls_medium_sync(m), DLS_SYNC_DATA);
    dls_medium_del(m);
    dls_medium *m2 = NULL;
    dls_where w = {0};
    write_bytes(tpath("x.dls"), "keep", 4, false);
    assert_int_equal(dls_medium_create(&m2, DLS_MEDIUM_FILE, tpath("x.dls"), NULL, &w),
                     DLS_ERR_EXISTS);
    assert_null(m2);
    assert_true(file_size(tpath("x.dls")) == 4);
    assert_int_equal(dls_medium_create(&m2, DLS_MEDIUM_FILE, tpath("c.dls"), NULL, &w),
                     DLS_ERR_EXISTS);
    DIR *d = opendir(g_dir);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            files++, assert_null(strstr(e->d_name, ".tmp"));
    closedir(d);
    assert_int_equal(files, 2);
    /* A given id is used as is. */
    dls_medium_settings s = settings(DLS_SYNC_NONE);
    uint8_t id[16] = {0xaa, 0xbb};
    s.id = id;
    assert_int_equal(dls_medium_create(&m2, DLS_MEDIUM_FILE, tpath("i.dls"), &s, &w), 0);
    assert_memory_equal(dls_medium_id(m2), id, 16);
    dls_medium_del(m2);
    /* Ring and unknown kinds are not created from a path. */
    assert_int_equal(dls_medium_create(&m2, DLS_MEDIUM_RING, tpath("r"), NULL, &w),
                     DLS_ERR_INVAL);
    assert_int_equal(dls_medium_open(&m2, tpath("nothere"), DLS_OPEN_READ, NULL, &w),
                     DLS_ERR_NOTFOUND);
}

/* ---- cursor answers in every state (stream-format.md, Cursor results) -- */

static void test_empty_and_roundtrip(void **state)
{
    (void)state;
    dls_medium *m = create_file("r.dls", DLS_SYNC_NONE);
    dls_cursor *c;
    dls_record r;
    /* empty: blocked at 0, position unchanged */
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    assert_true(r.position == 0 && r.p == NULL && dls_cursor_position(c) == 0);
    assert_ptr_equal(dls_cursor_medium(c), m);
    /* records of every size class, 1 byte and 65536 included */
    static const size_t pads[] = {0, 1, 100, 4000, 65510};
    for (uint64_t i = 0; i < 5; i++)
        assert_true(append_seq(m, 1, i, pads[i]) == i);
    uint8_t one = 0x80; /* an empty map: 1 byte */
    uint64_t pos;
    assert_int_equal(dls_medium_append(m, &one, 1, &pos, NULL), 0);
    assert_true(pos == 5);
    uint64_t count;
    /* a reader follows a growing file: blocked, then more */
    for (uint64_t i = 0; i < 5; i++) {
        assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
        uint64_t seq;
        assert_true(check_payload(r.p, r.n, NULL, &seq));
        assert_true(seq == i && r.position == i);
        assert_true(r.n == 26 + pads[i]);
        assert_true(dls_cursor_position(c) == i + 1);
    }
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.n == 1 && r.p[0] == 0x80 && r.position == 5);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    assert_true(dls_cursor_position(c) == 6);
    assert_true(append_seq(m, 1, 6, 7) == 6);
    (void)count;
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 6);
    dls_cursor_del(c);
    /* a cursor from the middle */
    assert_int_equal(dls_cursor_new(&c, m, 3), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 3);
    dls_cursor_del(c);
    /* beyond the end: blocked until it exists */
    assert_int_equal(dls_cursor_new(&c, m, 9), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    assert_true(r.position == 9);
    append_seq(m, 1, 7, 0);
    append_seq(m, 1, 8, 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    append_seq(m, 1, 9, 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 9);
    dls_cursor_del(c);
    /* lengths out of range are refused before anything is written */
    uint64_t before = file_size(tpath("r.dls"));
    static uint8_t big[DLS_RECORD_MAX + 1];
    dls_where w = {0};
    assert_int_equal(dls_medium_append(m, big, 0, &pos, &w), DLS_ERR_RECORD);
    assert_int_equal(dls_medium_append(m, big, DLS_RECORD_MAX + 1, &pos, &w), DLS_ERR_RECORD);
    assert_true(file_size(tpath("r.dls")) == before);
    dls_medium_del(m);
    /* a reader opened for reading: same answers; appends refused */
    m = open_path(tpath("r.dls"), DLS_OPEN_READ, 0);
    assert_int_equal(dls_medium_append(m, &one, 1, &pos, &w), DLS_ERR_STATE);
    assert_int_equal(dls_medium_seal(m, &w), DLS_ERR_STATE);
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    for (uint64_t i = 0; i < 10; i++)
        assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    dls_cursor_del(c);
    dls_medium_del(m);
    /* reopened for append: positions continue */
    m = open_path(tpath("r.dls"), DLS_OPEN_APPEND, 0);
    assert_true(append_seq(m, 1, 10, 3) == 10);
    dls_medium_del(m);
}

static void test_half_written_blocked(void **state)
{
    (void)state;
    /* A record still being written answers blocked, the cursor does not
     * move, and the completed record is then ok (Cursor results). */
    dls_medium *m = create_file("h.dls", DLS_SYNC_NONE);
    append_seq(m, 1, 0, 10);
    uint8_t pl[300], rec[320];
    size_t n = make_payload(pl, 1, 1, 250);
    size_t rl = raw_record(rec, pl, n);
    dls_cursor *c;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    size_t cuts[] = {3, 8, 100, rl - 1};
    size_t done = 0;
    for (size_t k = 0; k < 4; k++) {
        write_bytes(tpath("h.dls"), rec + done, cuts[k] - done, true);
        done = cuts[k];
        assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
        assert_true(r.position == 1 && dls_cursor_position(c) == 1);
    }
    write_bytes(tpath("h.dls"), rec + done, rl - done, true);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 1 && r.n == n);
    assert_memory_equal(r.p, pl, n);
    dls_cursor_del(c);
    /* The writer handle counts the record someone else completed. */
    assert_true(append_seq(m, 1, 2, 0) == 2);
    dls_medium_del(m);
}

static void test_zero_tail_blocked(void **state)
{
    (void)state;
    /* Zero-filled blocks left by a crash: L = 0 is a bad record; within R
     * of EOF it is a torn tail: blocked; open-for-append truncates. */
    dls_medium *m = create_file("z.dls", DLS_SYNC_NONE);
    append_seq(m, 1, 0, 10);
    uint64_t good = file_size(tpath("z.dls"));
    dls_medium_del(m);
    static uint8_t zeros[8192];
    write_bytes(tpath("z.dls"), zeros, sizeof zeros, true);
    m = open_path(tpath("z.dls"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
    assert_true(count == 1 && r.position == 1);
    dls_cursor_del(c);
    dls_medium_del(m);
    m = open_path(tpath("z.dls"), DLS_OPEN_APPEND, 0);
    assert_true(file_size(tpath("z.dls")) == good);
    assert_true(append_seq(m, 1, 1, 0) == 1);
    dls_medium_del(m);
}

static void test_sealed_end(void **state)
{
    (void)state;
    /* The seal occupies a position, is never ok; cursors answer end (and
     * keep answering it), appends are refused (Cursor results, File
     * format). */
    dls_medium *m = create_file("s.dls", DLS_SYNC_DATA);
    append_seq(m, 1, 0, 0);
    append_seq(m, 1, 1, 0);
    dls_where w = {0};
    assert_int_equal(dls_medium_seal(m, &w), 0);
    uint64_t pos;
    assert_int_equal(dls_medium_append(m, (const uint8_t *)"\x80", 1, &pos, &w), DLS_ERR_SEALED);
    assert_int_equal(dls_medium_seal(m, &w), DLS_ERR_SEALED);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_END);
    assert_true(count == 2 && r.position == 2 && dls_cursor_position(c) == 2);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_END);
    assert_true(r.position == 2);
    dls_cursor_del(c);
    /* a cursor created beyond the seal: end at the seal */
    assert_int_equal(dls_cursor_new(&c, m, 7), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_END);
    assert_true(r.position == 2);
    dls_cursor_del(c);
    dls_medium_del(m);
    /* Bytes after the seal (a foreign writer) change nothing. */
    uint8_t rec[64], pl[40];
    write_bytes(tpath("s.dls"), rec, raw_record(rec, pl, make_payload(pl, 1, 3, 0)), true);
    m = open_path(tpath("s.dls"), DLS_OPEN_APPEND, 0);
    assert_int_equal(dls_medium_append(m, pl, 26, &pos, &w), DLS_ERR_SEALED);
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_END);
    assert_true(r.position == 2);
    dls_cursor_del(c);
    dls_medium_del(m);
    /* Appending the seal's bytes seals; a batch with records after its
     * seal is refused whole. */
    m = create_file("t.dls", DLS_SYNC_NONE);
    const uint8_t *recs[3] = {(const uint8_t *)"\x80", (const uint8_t *)DLS_SEAL_RECORD,
                              (const uint8_t *)"\x80"};
    size_t lens[3] = {1, DLS_SEAL_RECORD_LEN, 1};
    assert_int_equal(dls_medium_append_batch(m, recs, lens, 3, &pos, &w), DLS_ERR_SEALED);
    assert_true(file_size(tpath("t.dls")) == 48);
    assert_int_equal(dls_medium_append_batch(m, recs, lens, 2, &pos, &w), 0);
    assert_true(pos == 0);
    assert_int_equal(dls_medium_append(m, recs[0], 1, &pos, &w), DLS_ERR_SEALED);
    assert_true(dls_record_is_seal(recs[1], lens[1]));
    assert_false(dls_record_is_seal(recs[0], lens[0]));
    dls_medium_del(m);
}

static dls_medium *create_seg(const char *name, uint64_t seg_bytes, uint64_t keep,
                              uint64_t keep_bytes, dls_sync sync);

/* stream-format.md, Sealing: nothing follows a seal. A batch holding a record
 * after its seal is refused whole (DLS_ERR_SEALED, nothing written) by the
 * one check in dls_medium_append_batch, on every backend alike; a batch
 * ending with its seal is accepted and seals. */
static void test_batch_seal_inside_every_backend(void **state)
{
    (void)state;
    dls_medium *ms[3];
    ms[0] = create_file("bs.dls", DLS_SYNC_NONE);
    ms[1] = create_seg("bs.seg", 4096, 0, 0, DLS_SYNC_NONE);
    dls_medium_settings rs = settings(DLS_SYNC_NONE);
    rs.ring_capacity = 16;
    assert_int_equal(dls_ring_new(&ms[2], &rs), 0);
    const uint8_t *recs[3] = {(const uint8_t *)"\x80", (const uint8_t *)DLS_SEAL_RECORD,
                              (const uint8_t *)"\x81"};
    size_t lens[3] = {1, DLS_SEAL_RECORD_LEN, 1};
    for (int k = 0; k < 3; k++) {
        dls_medium *m = ms[k];
        uint64_t pos = 99;
        dls_where w = {0};
        assert_int_equal(dls_medium_append_batch(m, recs, lens, 3, &pos, &w), DLS_ERR_SEALED);
        assert_non_null(w.reason);
        assert_true(pos == 99);
        dls_cursor *c;
        dls_record r;
        assert_int_equal(dls_cursor_new(&c, m, 0), 0);
        assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED); /* nothing written */
        assert_int_equal(dls_medium_append_batch(m, recs, lens, 2, &pos, &w), 0);
        assert_true(pos == 0);
        assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
        assert_true(r.position == 0 && r.n == 1 && r.p[0] == 0x80);
        assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_END);
        dls_cursor_del(c);
        assert_int_equal(dls_medium_append(m, recs[2], 1, &pos, &w), DLS_ERR_SEALED);
        dls_medium_del(m);
    }
}

static void test_torn_every_length(void **state)
{
    (void)state;
    /* Torn tails of every length from 1 byte to one less than a record:
     * readers answer blocked at the torn record; opening for append
     * truncates to the last good record and appends go on there. */
    uint8_t pl[200], rec[220];
    size_t n = make_payload(pl, 1, 2, 150);
    size_t rl = raw_record(rec, pl, n);
    dls_medium *m = create_file("base.dls", DLS_SYNC_NONE);
    append_seq(m, 1, 0, 5);
    append_seq(m, 1, 1, 9);
    dls_medium_del(m);
    uint64_t good = file_size(tpath("base.dls"));
    size_t gn;
    uint8_t *gb = read_all(tpath("base.dls"), &gn);
    for (size_t k = 1; k < rl; k++) {
        write_bytes(tpath("t.dls"), gb, gn, false);
        write_bytes(tpath("t.dls"), rec, k, true);
        m = open_path(tpath("t.dls"), DLS_OPEN_READ, 0);
        dls_cursor *c;
        dls_record r;
        uint64_t count;
        assert_int_equal(dls_cursor_new(&c, m, 0), 0);
        assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
        assert_true(count == 2 && r.position == 2);
        dls_cursor_del(c);
        dls_medium_del(m);
        m = open_path(tpath("t.dls"), DLS_OPEN_APPEND, 0);
        assert_true(file_size(tpath("t.dls")) == good);
        assert_true(append_seq(m, 1, 2, 150) == 2);
        assert_true(file_size(tpath("t.dls")) == good + rl);
        dls_medium_del(m);
    }
    free(gb);
}

/* Builds: two good records, then a bad record at b (CRC flipped), then
 * valid records so that EOF − b == tail. Returns b. */
static uint64_t build_r_file(const char *path, uint64_t tail)
{
    dls_medium *m = NULL;
    dls_medium_settings s = settings(DLS_SYNC_NONE);
    unlink(path);
    assert_int_equal(dls_medium_create(&m, DLS_MEDIUM_FILE, path, &s, NULL), 0);
    append_seq(m, 1, 0, 0);
    append_seq(m, 1, 1, 0);
    dls_medium_del(m);
    uint64_t b = file_size(path);
    uint8_t *buf = malloc(tail + 16);
    assert_non_null(buf);
    uint8_t pl[DLS_RECORD_MAX];
    size_t n = make_payload(pl, 1, 2, 74); /* 100 bytes */
    size_t off = raw_record(buf, pl, n);
    buf[8 + 50] ^= 0x01; /* a flipped byte mid-record */
    uint64_t seq = 3;
    while (off < tail) {
        uint64_t left = tail - off;
        size_t pad;
        if (left >= 65544 + 34)
            pad = 65510;
        else
            pad = (size_t)(left - 34); /* the last record fills it exactly */
        size_t k = make_payload(pl, 1, seq++, pad);
        off += raw_record(buf + off, pl, k);
    }
    assert_true(off == tail);
    write_bytes(path, buf, (size_t)tail, true);
    free(buf);
    return b;
}

static void test_r_rule_boundary(void **state)
{
    (void)state;
    /* EOF − b == R: a torn tail (blocked; open-for-append truncates at b).
     * EOF − b == R + 1: corruption (transport-error exactly at b's
     * position, not later; open-for-append refused). The rule is O(1): the
     * valid records after b do not change the answer. */
    const char *p = tpath("r.dls");
    uint64_t b = build_r_file(p, R);
    dls_medium *m = open_path(p, DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    dls_where w = {0};
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
    assert_true(count == 2 && r.position == 2);
    dls_cursor_del(c);
    dls_medium_del(m);
    m = open_path(p, DLS_OPEN_APPEND, 0);
    assert_true(file_size(p) == b);
    dls_medium_del(m);

    b = build_r_file(p, (uint64_t)R + 1);
    uint64_t size = file_size(p);
    m = open_path(p, DLS_OPEN_READ, 0);
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(dls_cursor_next(c, &r, &w), DLS_NEXT_OK);
    assert_int_equal(dls_cursor_next(c, &r, &w), DLS_NEXT_OK);
    assert_int_equal(dls_cursor_next(c, &r, &w), DLS_NEXT_ERROR);
    assert_true(r.position == 2 && w.offset == b && dls_cursor_position(c) == 2);
    assert_non_null(w.reason);
    /* still at the same place: transport-error again, cursor unchanged */
    assert_int_equal(dls_cursor_next(c, &r, &w), DLS_NEXT_ERROR);
    assert_true(r.position == 2);
    dls_cursor_del(c);
    /* a cursor starting beyond b must not skip the corruption either */
    assert_int_equal(dls_cursor_new(&c, m, 5), 0);
    assert_int_equal(dls_cursor_next(c, &r, &w), DLS_NEXT_ERROR);
    assert_true(w.offset == b);
    dls_cursor_del(c);
    dls_medium_del(m);
    m = NULL;
    dls_medium_settings s = settings(DLS_SYNC_NONE);
    assert_int_equal(dls_medium_open(&m, p, DLS_OPEN_APPEND, &s, &w), DLS_ERR_CORRUPT);
    assert_true(w.offset == b);
    assert_null(m);
    assert_true(file_size(p) == size); /* refused: nothing truncated */
}

static void test_flipped_byte_far(void **state)
{
    (void)state;
    /* A flipped byte mid-file followed by much more than R bytes of valid
     * records: transport-error exactly at that record, on every path to it. */
    const char *p = tpath("f.dls");
    uint64_t b = build_r_file(p, (uint64_t)R + 300000);
    dls_medium *m = open_path(p, DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    dls_where w = {0};
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_ERROR);
    assert_true(count == 2 && r.position == 2);
    assert_int_equal(dls_cursor_next(c, &r, &w), DLS_NEXT_ERROR);
    assert_true(w.offset == b);
    dls_cursor_del(c);
    dls_medium_del(m);
    open_path(p, DLS_OPEN_APPEND, DLS_ERR_CORRUPT);
}

static void test_shrunk_medium(void **state)
{
    (void)state;
    /* A medium that now ends before a position already drained answers
     * transport-error (Readers). */
    dls_medium *m = create_file("s.dls", DLS_SYNC_NONE);
    for (uint64_t i = 0; i < 5; i++)
        append_seq(m, 1, i, 3);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
    assert_true(count == 5);
    assert_int_equal(truncate(tpath("s.dls"), 48 + 2 * 37), 0);
    dls_where w = {0};
    assert_int_equal(dls_cursor_next(c, &r, &w), DLS_NEXT_ERROR);
    assert_true(r.position == 5);
    assert_non_null(w.reason);
    dls_cursor_del(c);
    dls_medium_del(m);
}

/* ---- the vectors ---------------------------------------------------------- */

static const char *vec(const char *name)
{
    static char b[2][PATH_MAX];
    static int k;
    k ^= 1;
    const char *v = getenv("DLS_VECTORS");
    snprintf(b[k], sizeof b[k], "%s/stream/%s", v ? v : DLS_TEST_SRCDIR "/vectors", name);
    return b[k];
}

static void test_vector_three(void **state)
{
    (void)state;
    /* vectors/README.md: ok at 0 and 1, the seal at 2 is end, an append is
     * refused. */
    copy_file(vec("three.dls"), tpath("three.dls"));
    dls_medium *m = open_path(tpath("three.dls"), DLS_OPEN_READ, 0);
    size_t n;
    uint8_t *raw = read_all(tpath("three.dls"), &n);
    assert_memory_equal(dls_medium_id(m), raw + 16, 16);
    dls_cursor *c;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 0 && r.n == 0x31);
    assert_memory_equal(r.p, raw + 56, r.n);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 1);
    assert_int_equal(r.p[0] & 0xf0, 0x80); /* a map */
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_END);
    assert_true(r.position == 2);
    dls_cursor_del(c);
    dls_medium_del(m);
    m = open_path(tpath("three.dls"), DLS_OPEN_APPEND, 0);
    uint64_t pos;
    dls_where w = {0};
    assert_int_equal(dls_medium_append(m, (const uint8_t *)"\x80", 1, &pos, &w), DLS_ERR_SEALED);
    dls_medium_del(m);
    size_t n2;
    uint8_t *after = read_all(tpath("three.dls"), &n2);
    assert_true(n2 == n && !memcmp(raw, after, n));
    free(raw);
    free(after);
}

static void test_vector_torn(void **state)
{
    (void)state;
    /* torn.expect.json: ok at 0, blocked at 1 (offset 234); open for append
     * truncates to 234; appending payload_hex gives position 1 and the file
     * of the given size and SHA-256. Worked on a copy. */
    json_error_t je;
    json_t *x = json_load_file(vec("torn.expect.json"), 0, &je);
    assert_non_null(x);
    copy_file(vec("torn.dls"), tpath("torn.dls"));
    assert_true(file_size(tpath("torn.dls")) ==
                (uint64_t)json_integer_value(json_object_get(x, "file_bytes")));
    dls_medium *m = open_path(tpath("torn.dls"), DLS_OPEN_READ, 0);
    uint8_t want[DLS_RECORD_MAX];
    uint8_t id[16];
    test_unhex(json_string_value(json_object_get(x, "medium_id_hex")), id, 16);
    assert_memory_equal(dls_medium_id(m), id, 16);
    json_t *reads = json_object_get(x, "reads");
    dls_cursor *c;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    for (size_t i = 0; i < json_array_size(reads); i++) {
        json_t *e = json_array_get(reads, i);
        const char *ans = json_string_value(json_object_get(e, "answer"));
        dls_next got = dls_cursor_next(c, &r, NULL);
        assert_string_equal(dls_next_name(got), ans);
        assert_true(r.position == (uint64_t)json_integer_value(json_object_get(e, "position")));
        if (got == DLS_NEXT_OK) {
            size_t wn = test_unhex(json_string_value(json_object_get(e, "payload_hex")), want,
                              sizeof want);
            assert_true(r.n == wn);
            assert_memory_equal(r.p, want, wn);
        } else {
            /* blocked, again and again, without moving */
            assert_int_equal(dls_cursor_next(c, &r, NULL), got);
            assert_true(dls_cursor_position(c) == r.position);
        }
    }
    dls_cursor_del(c);
    dls_medium_del(m);
    json_t *ap = json_object_get(x, "append");
    m = open_path(tpath("torn.dls"), DLS_OPEN_APPEND, 0);
    assert_true(file_size(tpath("torn.dls")) ==
                (uint64_t)json_integer_value(json_object_get(ap, "truncate_to")));
    size_t wn = test_unhex(json_string_value(json_object_get(ap, "payload_hex")), want, sizeof want);
    uint64_t pos;
    assert_int_equal(dls_medium_append(m, want, wn, &pos, NULL), 0);
    assert_true(pos == (uint64_t)json_integer_value(json_object_get(ap, "position")));
    dls_medium_del(m);
    size_t n;
    uint8_t *b = read_all(tpath("torn.dls"), &n);
    assert_true(n == (uint64_t)json_integer_value(json_object_get(ap, "file_bytes_after")));
    uint8_t h[32], hw[32];
    crypto_hash_sha256(h, b, n);
    test_unhex(json_string_value(json_object_get(ap, "file_sha256_after")), hw, 32);
    assert_memory_equal(h, hw, 32);
    free(b);
    json_decref(x);
}

/* ---- several writers ---------------------------------------------------- */

static void test_two_handles_one_process(void **state)
{
    (void)state;
    /* OFD locks: two handles of one process exclude each other like two
     * processes; each re-checks the tail under the lock and computes
     * positions from what the other appended (Writers). */
    dls_medium *a = create_file("two.dls", DLS_SYNC_NONE);
    dls_medium *b = open_path(tpath("two.dls"), DLS_OPEN_APPEND, 0);
    uint64_t seq = 0;
    for (int i = 0; i < 50; i++) {
        assert_true(append_seq(i % 3 ? a : b, 1, seq, (size_t)i) == seq);
        seq++;
    }
    /* A torn tail left by "another writer" is truncated under the lock. */
    uint8_t junk[50];
    memset(junk, 0x7f, sizeof junk);
    write_bytes(tpath("two.dls"), junk, sizeof junk, true);
    assert_true(append_seq(b, 1, seq, 3) == seq);
    seq++;
    assert_true(append_seq(a, 1, seq, 3) == seq);
    seq++;
    /* A batch from one, a seal from the other. */
    uint8_t p1[64], p2[64];
    const uint8_t *recs[2] = {p1, p2};
    size_t lens[2] = {make_payload(p1, 1, seq, 1), make_payload(p2, 1, seq + 1, 2)};
    uint64_t first;
    assert_int_equal(dls_medium_append_batch(b, recs, lens, 2, &first, NULL), 0);
    assert_true(first == seq);
    seq += 2;
    assert_int_equal(dls_medium_seal(a, NULL), 0);
    dls_where w = {0};
    assert_int_equal(dls_medium_append(b, p1, lens[0], &first, &w), DLS_ERR_SEALED);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, b, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_END);
    assert_true(count == seq && r.position == seq);
    dls_cursor_del(c);
    dls_medium_del(a);
    dls_medium_del(b);
}

static void test_lock_bounded(void **state)
{
    (void)state;
    /* Lock waits are bounded: a writer holding the lock (exclusive mode
     * keeps it) makes others answer DLS_ERR_LOCKED, not hang. */
    dls_medium_settings s = settings(DLS_SYNC_NONE);
    s.exclusive = true;
    dls_medium *a = NULL, *b = NULL;
    dls_where w = {0};
    assert_int_equal(dls_medium_create(&a, DLS_MEDIUM_FILE, tpath("l.dls"), &s, &w), 0);
    assert_true(append_seq(a, 1, 0, 0) == 0);
    s.exclusive = false;
    s.lock_timeout_ms = 30;
    assert_int_equal(dls_medium_open(&b, tpath("l.dls"), DLS_OPEN_APPEND, &s, &w),
                     DLS_ERR_LOCKED);
    assert_null(b);
    /* readers take no lock */
    b = open_path(tpath("l.dls"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c, b, 0), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    dls_cursor_del(c);
    dls_medium_del(b);
    /* an ordinary holder released by del lets the next one in */
    assert_true(append_seq(a, 1, 1, 0) == 1);
    dls_medium_del(a);
    assert_int_equal(dls_medium_open(&b, tpath("l.dls"), DLS_OPEN_APPEND, &s, &w), 0);
    assert_true(append_seq(b, 1, 2, 0) == 2);
    /* and a non-exclusive handle blocks others only per append */
    dls_medium *a2 = NULL;
    assert_int_equal(dls_medium_open(&a2, tpath("l.dls"), DLS_OPEN_APPEND, &s, &w), 0);
    assert_true(append_seq(a2, 1, 3, 0) == 3);
    dls_medium_del(a2);
    dls_medium_del(b);
}

/* judge.md "Failure of the journal" (revision 5), library side: an
 * exclusive writer (a journal) refuses a torn tail that holds CRC-valid
 * records with DLS_ERR_VALID_TAIL, w.offset = the bad record, w.count =
 * the valid records, and cuts nothing; dls_medium_repair moves it to the
 * sidecar and says what it moved; a plain torn write is still cut by an
 * exclusive writer. Then: an exclusive writer whose file was cut back
 * under it answers DLS_ERR_SHRUNK and writes nothing (no hole), and a
 * reader that had read past the cut answers transport-error. */
static void test_exclusive_keeps_valid_records(void **state)
{
    (void)state;
    dls_medium *m = create_file("k.dls", DLS_SYNC_NONE);
    uint64_t ends[6];
    for (uint64_t i = 0; i < 6; i++) {
        append_seq(m, 1, i, 10);
        ends[i] = file_size(tpath("k.dls"));
    }
    dls_medium_del(m);
    /* flip a payload byte of record 2: records 3, 4, 5 stay CRC-valid */
    int fd = open(tpath("k.dls"), O_RDWR);
    assert_true(fd >= 0);
    uint8_t c;
    assert_int_equal(pread(fd, &c, 1, (off_t)ends[1] + 10), 1);
    c ^= 1;
    assert_int_equal(pwrite(fd, &c, 1, (off_t)ends[1] + 10), 1);
    close(fd);
    dls_medium_settings s = settings(DLS_SYNC_NONE);
    s.exclusive = true;
    dls_where w = {0};
    m = NULL;
    assert_int_equal(dls_medium_open(&m, tpath("k.dls"), DLS_OPEN_APPEND, &s, &w),
                     DLS_ERR_VALID_TAIL);
    assert_null(m);
    assert_true(w.offset == ends[1] && w.count == 3);
    assert_true(file_size(tpath("k.dls")) == ends[5]);
    dls_torn_cut cut;
    char *side = NULL;
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_medium_repair(tpath("k.dls"), NULL, &cut, &side, &w), 0);
    assert_true(cut.cuts == 1 && cut.offset == ends[1] && cut.bytes == ends[5] - ends[1] &&
                cut.valid_records == 3 && cut.sidecar == NULL);
    assert_non_null(side);
    assert_true(file_size(side) == ends[5] - ends[1]);
    free(side);
    assert_true(file_size(tpath("k.dls")) == ends[1]);
    /* nothing left to repair */
    assert_int_equal(dls_medium_repair(tpath("k.dls"), NULL, &cut, NULL, &w), 0);
    assert_true(cut.cuts == 0);
    /* a plain torn write (no CRC-valid record after it) is cut as before */
    fd = open(tpath("k.dls"), O_WRONLY | O_APPEND);
    assert_int_equal(write(fd, "\x05\x00\x00", 3), 3);
    close(fd);
    assert_int_equal(dls_medium_open(&m, tpath("k.dls"), DLS_OPEN_APPEND, &s, &w), 0);
    assert_true(file_size(tpath("k.dls")) == ends[1]);
    /* cut back under the exclusive writer: refused, nothing written */
    dls_medium *r = open_path(tpath("k.dls"), DLS_OPEN_READ, 0);
    dls_cursor *cur;
    dls_record rec;
    assert_int_equal(dls_cursor_new(&cur, r, 0), 0);
    assert_int_equal(dls_cursor_next(cur, &rec, NULL), DLS_NEXT_OK);
    assert_int_equal(dls_cursor_next(cur, &rec, NULL), DLS_NEXT_OK);
    assert_int_equal(dls_cursor_next(cur, &rec, NULL), DLS_NEXT_BLOCKED);
    assert_int_equal(truncate(tpath("k.dls"), (off_t)ends[0]), 0);
    uint8_t b[64];
    size_t n = make_payload(b, 1, 9, 0);
    uint64_t pos;
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_medium_append(m, b, n, &pos, &w), DLS_ERR_SHRUNK);
    assert_true(w.offset == ends[0] && w.reason != NULL);
    assert_int_equal(dls_medium_append(m, b, n, &pos, &w), DLS_ERR_SHRUNK); /* for good */
    assert_true(file_size(tpath("k.dls")) == ends[0]);
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_cursor_next(cur, &rec, &w), DLS_NEXT_ERROR);
    dls_cursor_del(cur);
    dls_medium_del(r);
    dls_medium_del(m);
}

static void test_cloexec(void **state)
{
    (void)state;
    /* Every descriptor is opened close-on-exec (Writers). */
    dls_medium *m = create_file("x.dls", DLS_SYNC_NONE);
    dls_medium_settings s = settings(DLS_SYNC_NONE);
    dls_medium *g = NULL;
    assert_int_equal(dls_medium_create(&g, DLS_MEDIUM_SEGMENTED, tpath("seg"), &s, NULL), 0);
    dls_medium *rd = open_path(tpath("x.dls"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, g, 0), 0);
    dls_record r;
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    int checked = 0;
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        char link[PATH_MAX], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k <= 0)
            continue;
        target[k] = 0;
        if (strncmp(target, g_dir, strlen(g_dir)))
            continue;
        int fl = fcntl(atoi(e->d_name), F_GETFD);
        assert_true(fl >= 0 && (fl & FD_CLOEXEC));
        checked++;
    }
    closedir(d);
    assert_true(checked >= 5); /* file, reader, dir, medium.id, segment, cursor's segment */
    dls_cursor_del(c);
    dls_medium_del(rd);
    dls_medium_del(g);
    dls_medium_del(m);
}

#define PROC_RECORDS 10000

static void proc_writer(const char *path, uint32_t writer)
{
    dls_medium *m = NULL;
    dls_medium_settings s = settings(DLS_SYNC_NONE);
    s.lock_timeout_ms = 60000;
    if (dls_medium_open(&m, path, DLS_OPEN_APPEND, &s, NULL))
        _exit(10);
    uint8_t b[256];
    for (uint64_t i = 0; i < PROC_RECORDS; i++) {
        size_t n = make_payload(b, writer, i, (size_t)(i % 97));
        if (dls_medium_append(m, b, n, NULL, NULL))
            _exit(11);
    }
    dls_medium_del(m);
    _exit(0);
}

static void test_two_processes(void **state)
{
    (void)state;
    /* Two processes appending 10,000 records each at once: 20,000 intact
     * records, each writer's in its own order (Writers: OFD lock, tail
     * re-checked under the lock). */
    dls_medium *m = create_file("p.dls", DLS_SYNC_NONE);
    dls_medium_del(m);
    pid_t pids[2];
    for (uint32_t k = 0; k < 2; k++) {
        pids[k] = fork();
        assert_true(pids[k] >= 0);
        if (pids[k] == 0)
            proc_writer(tpath("p.dls"), k + 1);
    }
    for (int k = 0; k < 2; k++) {
        int st;
        assert_int_equal(waitpid(pids[k], &st, 0), pids[k]);
        assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    m = open_path(tpath("p.dls"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    uint64_t next[3] = {0, 0, 0}, total = 0;
    dls_next a;
    while ((a = dls_cursor_next(c, &r, NULL)) == DLS_NEXT_OK) {
        uint32_t wr;
        uint64_t seq;
        assert_true(check_payload(r.p, r.n, &wr, &seq));
        assert_true(wr == 1 || wr == 2);
        assert_true(seq == next[wr]);
        assert_true(r.position == total);
        next[wr]++;
        total++;
    }
    assert_int_equal(a, DLS_NEXT_BLOCKED);
    assert_true(total == 2 * PROC_RECORDS && next[1] == PROC_RECORDS && next[2] == PROC_RECORDS);
    dls_cursor_del(c);
    dls_medium_del(m);
    /* the writer side agrees */
    m = open_path(tpath("p.dls"), DLS_OPEN_APPEND, 0);
    assert_true(append_seq(m, 1, 0, 0) == 2 * PROC_RECORDS);
    dls_medium_del(m);
}

/* ---- crash recovery: the kill test -------------------------------------- */

struct ack {
    uint64_t pos;
    uint32_t iter;
    uint32_t pad;
    uint64_t seq;
};

static void kill_child(const char *path, int wfd, uint32_t iter)
{
    dls_medium *m = NULL;
    dls_medium_settings s = settings(DLS_SYNC_DATA);
    s.lock_timeout_ms = 60000;
    if (dls_medium_open(&m, path, DLS_OPEN_APPEND, &s, NULL))
        _exit(10);
    uint8_t b[1024];
    for (uint64_t k = 0;; k++) {
        size_t n = make_payload(b, iter, k, (size_t)((k * 37 + iter) % 400));
        uint64_t pos;
        if (dls_medium_append(m, b, n, &pos, NULL))
            _exit(11);
        /* only now acknowledged: report it */
        struct ack a = {pos, iter, 0, k};
        if (write(wfd, &a, sizeof a) != (ssize_t)sizeof a)
            _exit(12);
    }
}

static void test_kill_recovery(void **state)
{
    (void)state;
    /* A writer with `data` sync is SIGKILLed at >= 200 random moments.
     * After each kill: a reader never returns anything torn (every ok
     * record is intact and every acknowledged one is what was written);
     * reopening for append recovers, and every acknowledged record is
     * present and intact (Writers: an acknowledged append is never lost;
     * torn tails). */
    uint64_t seed = seed_from_env("kill_recovery");
    const char *path = tpath("k.dls");
    dls_medium *m = create_file("k.dls", DLS_SYNC_DATA);
    dls_medium_del(m);
    size_t cap = 1 << 16;
    struct ack *acked = calloc(cap, sizeof *acked);
    bool *have = calloc(cap, sizeof *have);
    assert_non_null(acked);
    assert_non_null(have);
    uint64_t nacked = 0, maxpos = 0;
    const int iters = 200;
    for (int it = 1; it <= iters; it++) {
        int pfd[2];
        assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            close(pfd[0]);
            kill_child(path, pfd[1], (uint32_t)it);
        }
        close(pfd[1]);
        struct timespec ts = {0, (long)(rnd(&seed) % 2001) * 1000};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFSIGNALED(st) || (WIFEXITED(st) && WEXITSTATUS(st) == 0));
        struct ack a;
        ssize_t k;
        while ((k = read(pfd[0], &a, sizeof a)) == (ssize_t)sizeof a) {
            assert_true(a.pos < cap);
            assert_false(have[a.pos]); /* a position is never handed out twice */
            have[a.pos] = true;
            acked[a.pos] = a;
            nacked++;
            if (a.pos > maxpos)
                maxpos = a.pos;
        }
        assert_true(k == 0);
        close(pfd[0]);
        /* A reader before recovery: nothing torn, acknowledged records
         * intact; it ends blocked (a torn tail), never in error. */
        m = open_path(path, DLS_OPEN_READ, 0);
        dls_cursor *c;
        dls_record r;
        assert_int_equal(dls_cursor_new(&c, m, 0), 0);
        dls_next ans;
        uint64_t seen = 0;
        while ((ans = dls_cursor_next(c, &r, NULL)) == DLS_NEXT_OK) {
            uint32_t wr;
            uint64_t seq;
            assert_true(check_payload(r.p, r.n, &wr, &seq));
            if (r.position < cap && have[r.position])
                assert_true(acked[r.position].iter == wr && acked[r.position].seq == seq);
            seen++;
        }
        assert_int_equal(ans, DLS_NEXT_BLOCKED);
        if (nacked)
            assert_true(seen > maxpos);
        dls_cursor_del(c);
        dls_medium_del(m);
    }
    /* Recovery by opening for append, then every acknowledged record. */
    m = open_path(path, DLS_OPEN_APPEND, 0);
    dls_cursor *c;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    uint64_t found = 0;
    while (dls_cursor_next(c, &r, NULL) == DLS_NEXT_OK) {
        uint32_t wr;
        uint64_t seq;
        assert_true(check_payload(r.p, r.n, &wr, &seq));
        if (r.position < cap && have[r.position]) {
            assert_true(acked[r.position].iter == wr && acked[r.position].seq == seq);
            found++;
        }
    }
    assert_true(found == nacked);
    printf("kill_recovery: %d kills, %" PRIu64 " acknowledged records, all present\n", iters,
           nacked);
    dls_cursor_del(c);
    dls_medium_del(m);
    free(acked);
    free(have);
}

/* ---- sync policies and group commit ------------------------------------- */

/* Fault and observation hooks (dls_st_io): test-only state. */
static pthread_mutex_t h_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t h_cv = PTHREAD_COND_INITIALIZER;
static uint64_t h_writes;        /* pwritev calls that wrote */
static uint64_t h_durable;       /* writes covered by a completed sync */
static uint64_t h_wait_for;      /* a sync waits until this many appends were written */
static dls_medium *h_medium;     /* ... on this medium */
static int h_fail_sync;          /* the next syncs fail with EIO */
static int h_short_write;        /* the next write writes half then fails */
static int h_short_skip;         /* ... after this many good writes */

static ssize_t hook_pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    pthread_mutex_lock(&h_mu);
    int sh = h_short_write && !h_short_skip;
    if (sh)
        h_short_write--;
    else if (h_short_skip)
        h_short_skip--;
    pthread_mutex_unlock(&h_mu);
    if (sh) {
        size_t half = iov[0].iov_len / 2 + 1;
        if (pwrite(fd, iov[0].iov_base, half, off) < 0)
            return -1;
        errno = ENOSPC;
        return -1;
    }
    ssize_t k = pwritev(fd, iov, cnt, off);
    pthread_mutex_lock(&h_mu);
    if (k > 0)
        h_writes++;
    pthread_cond_broadcast(&h_cv);
    pthread_mutex_unlock(&h_mu);
    return k;
}

static int hook_fdatasync(int fd)
{
    pthread_mutex_lock(&h_mu);
    uint64_t covered = h_writes;
    int fail = h_fail_sync;
    uint64_t wait_for = h_wait_for;
    pthread_mutex_unlock(&h_mu);
    /* Holds this sync until the other appenders have written (and
     * registered) their records. */
    while (wait_for && dls_st_written_count(h_medium) < wait_for) {
        struct timespec ts = {0, 20000};
        nanosleep(&ts, NULL);
    }
    int rc = fail ? (errno = EIO, -1) : fdatasync(fd);
    pthread_mutex_lock(&h_mu);
    if (rc == 0 && covered > h_durable)
        h_durable = covered;
    pthread_mutex_unlock(&h_mu);
    return rc;
}

static const dls_st_io hooks = {hook_pwritev, hook_fdatasync, ftruncate};

static void hooks_reset(void)
{
    h_writes = h_durable = h_wait_for = 0;
    h_fail_sync = h_short_write = h_short_skip = 0;
    h_medium = NULL;
}

struct gthread {
    dls_medium *m;
    uint32_t writer;
    int count;
    int failures;
    uint64_t positions[256];
};

static void *group_writer(void *arg)
{
    struct gthread *g = arg;
    uint8_t b[256];
    for (int i = 0; i < g->count; i++) {
        size_t n = make_payload(b, g->writer, (uint64_t)i, (size_t)(i % 50));
        uint64_t pos;
        if (dls_medium_append(g->m, b, n, &pos, NULL)) {
            g->failures++;
            continue;
        }
        g->positions[i] = pos;
        /* answered ok only after a sync covering this record: records are
         * written one per pwritev, in position order */
        pthread_mutex_lock(&h_mu);
        if (h_durable < pos + 1)
            g->failures += 1000;
        pthread_mutex_unlock(&h_mu);
    }
    return NULL;
}

static void test_group_commit(void **state)
{
    (void)state;
    /* group: concurrent appenders share one fdatasync; each is answered
     * only after the sync covering its record (Writers). */
    hooks_reset();
    dls_medium *m = create_file("g.dls", DLS_SYNC_GROUP);
    dls_st_set_io(m, &hooks);
    enum { T = 8, N = 200 };
    /* First round, deterministic: the first leader's sync is held until
     * all eight threads have written; the next leader's one sync then
     * answers all the others: eight appends, at most two syncs. */
    h_medium = m;
    h_wait_for = T;
    struct gthread g[T];
    pthread_t th[T];
    for (int k = 0; k < T; k++) {
        g[k] = (struct gthread){.m = m, .writer = (uint32_t)k + 1, .count = 1};
        assert_int_equal(pthread_create(&th[k], NULL, group_writer, &g[k]), 0);
    }
    for (int k = 0; k < T; k++)
        pthread_join(th[k], NULL);
    for (int k = 0; k < T; k++)
        assert_int_equal(g[k].failures, 0);
    /* (one sync when all eight happened to be written before the first
     * leader took its turn) */
    assert_true(dls_st_sync_count(m) >= 1 && dls_st_sync_count(m) <= 2);
    /* Then many appends from eight threads. */
    h_wait_for = 0;
    for (int k = 0; k < T; k++) {
        g[k] = (struct gthread){.m = m, .writer = (uint32_t)k + 1, .count = N};
        assert_int_equal(pthread_create(&th[k], NULL, group_writer, &g[k]), 0);
    }
    for (int k = 0; k < T; k++)
        pthread_join(th[k], NULL);
    bool *seen = calloc(T * N + T, 1);
    for (int k = 0; k < T; k++) {
        assert_int_equal(g[k].failures, 0);
        for (int i = 0; i < N; i++) {
            assert_true(g[k].positions[i] < T * N + T);
            assert_false(seen[g[k].positions[i]]);
            seen[g[k].positions[i]] = true;
        }
    }
    free(seen);
    assert_true(dls_st_sync_count(m) <= T * N + 1);
    /* every record is there, each thread's in its order */
    dls_cursor *c;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c, m, T), 0);
    uint64_t next[T + 1] = {0};
    uint64_t total = 0;
    while (dls_cursor_next(c, &r, NULL) == DLS_NEXT_OK) {
        uint32_t wr;
        uint64_t seq;
        assert_true(check_payload(r.p, r.n, &wr, &seq));
        assert_true(wr >= 1 && wr <= T && seq == next[wr]);
        next[wr]++;
        total++;
    }
    assert_true(total == T * N);
    dls_cursor_del(c);
    /* a batch under group: one lock, one write, one sync */
    uint64_t syncs = dls_st_sync_count(m), writes = h_writes;
    uint8_t bufs[64][64];
    const uint8_t *recs[64];
    size_t lens[64];
    for (int i = 0; i < 64; i++) {
        lens[i] = make_payload(bufs[i], 99, (uint64_t)i, 5);
        recs[i] = bufs[i];
    }
    uint64_t first;
    assert_int_equal(dls_medium_append_batch(m, recs, lens, 64, &first, NULL), 0);
    assert_true(first == T + T * N);
    assert_true(dls_st_sync_count(m) == syncs + 1);
    assert_true(h_writes == writes + 1);
    dls_medium_del(m);
    hooks_reset();
}

static void test_sync_failures(void **state)
{
    (void)state;
    /* A failed sync answers an error, never ok, and poisons the handle; a
     * short write is undone (truncated back) and answered as an error
     * (Writers). For every policy. */
    static const dls_sync pol[3] = {DLS_SYNC_NONE, DLS_SYNC_DATA, DLS_SYNC_GROUP};
    for (int k = 0; k < 3; k++) {
        hooks_reset();
        char name[32];
        snprintf(name, sizeof name, "f%d.dls", k);
        dls_medium *m = create_file(name, pol[k]);
        dls_st_set_io(m, &hooks);
        assert_true(append_seq(m, 1, 0, 3) == 0);
        uint64_t size = file_size(tpath(name));
        /* short write: undone, error, then the next append takes its place */
        h_short_write = 1;
        uint8_t b[128];
        size_t n = make_payload(b, 1, 1, 40);
        uint64_t pos;
        dls_where w = {0};
        assert_int_equal(dls_medium_append(m, b, n, &pos, &w), DLS_ERR_IO);
        assert_int_equal(w.sys_errno, ENOSPC);
        assert_true(file_size(tpath(name)) == size);
        assert_true(append_seq(m, 1, 1, 40) == 1);
        /* a batch whose write fails: nothing of it stays */
        size = file_size(tpath(name));
        const uint8_t *recs[2] = {b, b};
        size_t lens[2] = {n, n};
        h_short_write = 1;
        assert_int_equal(dls_medium_append_batch(m, recs, lens, 2, &pos, &w), DLS_ERR_IO);
        assert_true(file_size(tpath(name)) == size);
        if (pol[k] != DLS_SYNC_NONE) {
            h_fail_sync = 1;
            n = make_payload(b, 1, 2, 40);
            assert_int_equal(dls_medium_append(m, b, n, &pos, &w), DLS_ERR_IO);
            h_fail_sync = 0;
            /* poisoned: refused from now on */
            assert_int_equal(dls_medium_append(m, b, n, &pos, &w), DLS_ERR_IO);
            assert_non_null(w.reason);
        }
        dls_medium_del(m);
        /* a fresh handle works */
        m = open_path(tpath(name), DLS_OPEN_APPEND, 0);
        dls_cursor *c;
        dls_record r;
        uint64_t count;
        assert_int_equal(dls_cursor_new(&c, m, 0), 0);
        assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
        /* data cuts the record whose sync failed back; group cannot (others
         * may have written behind it): there it stays, never acknowledged */
        assert_true(count == (pol[k] == DLS_SYNC_GROUP ? 3u : 2u));
        dls_cursor_del(c);
        dls_medium_del(m);
    }
    hooks_reset();
}

static void test_short_write_rlimit(void **state)
{
    (void)state;
    /* A real short write (RLIMIT_FSIZE mid-record, in a child process): the
     * append answers an error and the file is cut back to where it was. */
    dls_medium *m = create_file("q.dls", DLS_SYNC_DATA);
    append_seq(m, 1, 0, 10);
    dls_medium_del(m);
    uint64_t size = file_size(tpath("q.dls"));
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        dls_medium *cm = NULL;
        if (dls_medium_open(&cm, tpath("q.dls"), DLS_OPEN_APPEND, NULL, NULL))
            _exit(10);
        struct rlimit rl = {size + 20, size + 20};
        if (setrlimit(RLIMIT_FSIZE, &rl))
            _exit(11);
        uint8_t b[256];
        size_t n = make_payload(b, 1, 1, 100);
        uint64_t pos;
        int rc = dls_medium_append(cm, b, n, &pos, NULL);
        dls_medium_del(cm);
        _exit(rc == DLS_ERR_IO ? 0 : 12);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_true(file_size(tpath("q.dls")) == size);
    m = open_path(tpath("q.dls"), DLS_OPEN_APPEND, 0);
    assert_true(append_seq(m, 1, 1, 100) == 1);
    dls_medium_del(m);
}

static void test_big_batch_chunks(void **state)
{
    (void)state;
    /* A batch over R bytes with data sync is written in chunks of at most
     * R bytes, each synced, and acknowledged as a whole. */
    hooks_reset();
    dls_medium *m = create_file("big.dls", DLS_SYNC_DATA);
    dls_st_set_io(m, &hooks);
    enum { K = 80 };
    uint8_t *bufs = malloc((size_t)K * DLS_RECORD_MAX);
    const uint8_t *recs[K];
    size_t lens[K];
    for (int i = 0; i < K; i++) {
        lens[i] = make_payload(bufs + (size_t)i * DLS_RECORD_MAX, 1, (uint64_t)i, 65510);
        recs[i] = bufs + (size_t)i * DLS_RECORD_MAX;
    }
    uint64_t first, s0 = dls_st_sync_count(m);
    assert_int_equal(dls_medium_append_batch(m, recs, lens, K, &first, NULL), 0);
    assert_true(first == 0);
    assert_true(dls_st_sync_count(m) - s0 == 2); /* 80 × 65544 bytes > R: two chunks */
    assert_true(h_writes == 2);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
    assert_true(count == K);
    dls_cursor_del(c);
    /* the second chunk fails: the first (written and synced) is cut back
     * too, and no position is consumed */
    uint64_t size = file_size(tpath("big.dls"));
    h_short_skip = 1;
    h_short_write = 1;
    dls_where w = {0};
    assert_int_equal(dls_medium_append_batch(m, recs, lens, K, &first, &w), DLS_ERR_IO);
    assert_true(file_size(tpath("big.dls")) == size);
    assert_true(append_seq(m, 1, K, 0) == K);
    dls_medium_del(m);
    free(bufs);
    hooks_reset();
}

/* ---- segmented medium ------------------------------------------------------ */

static dls_medium *create_seg(const char *name, uint64_t seg_bytes, uint64_t keep,
                              uint64_t keep_bytes, dls_sync sync)
{
    dls_medium_settings s = settings(sync);
    s.segment_bytes = seg_bytes;
    s.retain_segments = keep;
    s.retain_bytes = keep_bytes;
    dls_medium *m = NULL;
    dls_where w = {0};
    assert_int_equal(dls_medium_create(&m, DLS_MEDIUM_SEGMENTED, tpath(name), &s, &w), 0);
    return m;
}

static int count_segments(const char *dir, uint64_t *oldest)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    uint64_t lo = UINT64_MAX;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l == 24 && !strcmp(e->d_name + 20, ".seg")) {
            n++;
            uint64_t b = strtoull(e->d_name, NULL, 10);
            if (b < lo)
                lo = b;
        }
    }
    closedir(d);
    if (oldest)
        *oldest = lo;
    return n;
}

static void test_segmented_layout(void **state)
{
    (void)state;
    /* medium.id is the id as 32 lower-case hex and a newline; segments are
     * named by their base index in 20 digits and carry the shared id and
     * their base; the writer rolls before an append that would pass the
     * size, an empty segment never rolls (File format, segmented). */
    dls_medium *m = create_seg("seg", 300, 0, 0, DLS_SYNC_NONE);
    assert_int_equal(dls_medium_kind_of(m), DLS_MEDIUM_SEGMENTED);
    assert_int_equal(dls_medium_retention(m), DLS_RETAIN_EVICT_OLDEST);
    size_t n;
    char idtext[40];
    uint8_t *idf = read_all(tpath("seg/medium.id"), &n);
    assert_int_equal(n, 33);
    sodium_bin2hex(idtext, sizeof idtext, dls_medium_id(m), 16);
    assert_memory_equal(idf, idtext, 32);
    assert_int_equal(idf[32], '\n');
    free(idf);
    /* 26 + 8 + 50 = 84-byte records: 3 fit in 300 - 48 = 252 bytes */
    for (uint64_t i = 0; i < 10; i++)
        assert_true(append_seq(m, 1, i, 50) == i);
    assert_int_equal(count_segments(tpath("seg"), NULL), 4);
    static const uint64_t bases[4] = {0, 3, 6, 9};
    for (int k = 0; k < 4; k++) {
        char name[64];
        snprintf(name, sizeof name, "seg/%020" PRIu64 ".seg", bases[k]);
        uint8_t *b = read_all(tpath(name), &n);
        assert_true(n == 48 + (k < 3 ? 3 : 1) * 84);
        assert_memory_equal(b + 16, dls_medium_id(m), 16);
        assert_true(dls_st_le64(b + 32) == bases[k]);
        free(b);
    }
    /* a record larger than a segment goes into its own (an empty segment
     * never rolls) */
    assert_true(append_seq(m, 1, 10, 1000) == 10); /* rolls: segment 10 */
    assert_true(append_seq(m, 1, 11, 0) == 11);    /* rolls again: segment 11 */
    assert_int_equal(count_segments(tpath("seg"), NULL), 6);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
    assert_true(count == 12 && r.position == 12);
    /* the cursor follows appends into new segments */
    assert_true(append_seq(m, 1, 12, 50) == 12);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 12);
    dls_cursor_del(c);
    /* from the middle */
    assert_int_equal(dls_cursor_new(&c, m, 7), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 7);
    dls_cursor_del(c);
    dls_medium_del(m);
    /* reopened: positions continue; the recorded bounds apply */
    m = open_path(tpath("seg"), DLS_OPEN_APPEND, 0);
    assert_true(append_seq(m, 1, 13, 50) == 13);
    assert_true(append_seq(m, 1, 14, 50) == 14);
    assert_true(append_seq(m, 1, 15, 50) == 15); /* 3 × 84 > 252 − 84: rolls */
    assert_int_equal(count_segments(tpath("seg"), NULL), 7);
    dls_medium_del(m);
    /* existing path refused */
    dls_medium *m2 = NULL;
    assert_int_equal(dls_medium_create(&m2, DLS_MEDIUM_SEGMENTED, tpath("seg"), NULL, NULL),
                     DLS_ERR_EXISTS);
}

static void test_segmented_gap(void **state)
{
    (void)state;
    /* Retention by segment count: the oldest segments are deleted; a cursor
     * before the oldest retained answers gap (gap_from = its position,
     * position = the oldest retained), then reads on (Cursor results). */
    dls_medium *m = create_seg("g", 300, 2, 0, DLS_SYNC_DATA);
    dls_cursor *early;
    assert_int_equal(dls_cursor_new(&early, m, 0), 0);
    for (uint64_t i = 0; i < 10; i++)
        append_seq(m, 1, i, 50);
    uint64_t oldest;
    assert_int_equal(count_segments(tpath("g"), &oldest), 2);
    assert_true(oldest == 6);
    dls_record r;
    assert_int_equal(dls_cursor_next(early, &r, NULL), DLS_NEXT_GAP);
    assert_true(r.gap_from == 0 && r.position == 6 && dls_cursor_position(early) == 6);
    uint64_t count;
    assert_int_equal(drain(early, &count, &r), DLS_NEXT_BLOCKED);
    assert_true(count == 4);
    dls_cursor_del(early);
    /* a cursor that read some, then its segment and the next were deleted
     * while it held the first open */
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 6), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 6);
    for (uint64_t i = 10; i < 20; i++)
        append_seq(m, 1, i, 50);
    assert_int_equal(count_segments(tpath("g"), &oldest), 2);
    assert_true(oldest == 15);
    /* it still reads what its open segment holds, then gap */
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 8);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_GAP);
    assert_true(r.gap_from == 9 && r.position == 15);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 15);
    dls_cursor_del(c);
    /* a segment deleted between listing and opening: gap after a fresh
     * listing (the cursor lists on its first next) */
    assert_int_equal(dls_cursor_new(&c, m, 15), 0);
    char name[64];
    snprintf(name, sizeof name, "g/%020d.seg", 15);
    assert_int_equal(unlink(tpath(name)), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_GAP);
    assert_true(r.gap_from == 15 && r.position == 18);
    dls_cursor_del(c);
    dls_medium_del(m);
}

static void test_segmented_retain_bytes(void **state)
{
    (void)state;
    /* Retention by bytes: the sum of the retained segments stays within
     * the bound (the last segment is never deleted). */
    dls_medium *m = create_seg("b", 400, 0, 1000, DLS_SYNC_NONE);
    for (uint64_t i = 0; i < 60; i++)
        append_seq(m, 1, i, 50);
    DIR *d = opendir(tpath("b"));
    struct dirent *e;
    uint64_t total = 0;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".seg")) {
            char p[300];
            snprintf(p, sizeof p, "b/%s", e->d_name);
            total += file_size(tpath(p));
        }
    closedir(d);
    assert_true(total <= 1000);
    uint64_t oldest;
    assert_true(count_segments(tpath("b"), &oldest) >= 2);
    dls_cursor *c;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_GAP);
    assert_true(r.position == oldest);
    uint64_t count;
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
    assert_true(oldest + count == 60);
    dls_cursor_del(c);
    dls_medium_del(m);
}

static void test_segmented_seal_and_torn(void **state)
{
    (void)state;
    /* The first seal ends the medium; a torn tail of the last segment is
     * blocked for readers and recovered by the next writer. */
    dls_medium *m = create_seg("s", 300, 0, 0, DLS_SYNC_NONE);
    for (uint64_t i = 0; i < 5; i++)
        append_seq(m, 1, i, 50);
    dls_medium_del(m);
    /* torn tail in the last segment (base 3) */
    char name[64];
    snprintf(name, sizeof name, "s/%020d.seg", 3);
    uint64_t size = file_size(tpath(name));
    uint8_t junk[30] = {0x40, 0, 0, 0};
    write_bytes(tpath(name), junk, sizeof junk, true);
    m = open_path(tpath("s"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
    assert_true(count == 5 && r.position == 5);
    dls_medium *w = open_path(tpath("s"), DLS_OPEN_APPEND, 0);
    assert_true(file_size(tpath(name)) == size);
    assert_true(append_seq(w, 1, 5, 50) == 5);
    assert_int_equal(dls_medium_seal(w, NULL), 0);
    dls_where wh = {0};
    uint64_t pos;
    assert_int_equal(dls_medium_append(w, junk, 1, &pos, &wh), DLS_ERR_SEALED);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_END);
    assert_true(count == 1 && r.position == 6);
    dls_medium_del(w);
    dls_cursor_del(c);
    /* the seal survives reopening */
    w = open_path(tpath("s"), DLS_OPEN_APPEND, 0);
    assert_int_equal(dls_medium_append(w, junk, 1, &pos, &wh), DLS_ERR_SEALED);
    dls_medium_del(w);
    dls_medium_del(m);
}

static void test_segmented_two_writers(void **state)
{
    (void)state;
    /* Two writer handles (OFD locks: like two processes) on one segmented
     * medium: rolls and deletions by one are seen by the other, positions
     * stay dense and each handle's appends land after the other's. */
    dls_medium *a = create_seg("w", 300, 3, 0, DLS_SYNC_NONE);
    dls_medium *b = open_path(tpath("w"), DLS_OPEN_APPEND, 0);
    for (uint64_t i = 0; i < 40; i++)
        assert_true(append_seq((i / 5) % 2 ? b : a, 1, i, 50) == i);
    assert_int_equal(count_segments(tpath("w"), NULL), 3);
    dls_cursor *c;
    dls_record r;
    uint64_t count, oldest;
    count_segments(tpath("w"), &oldest);
    assert_int_equal(dls_cursor_new(&c, a, oldest), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
    assert_true(oldest + count == 40);
    dls_cursor_del(c);
    dls_medium_del(a);
    dls_medium_del(b);
    /* a header naming another medium is refused (streams.md, segment
       header: bytes 16..31 are the medium id); the id is random, so the
       byte is flipped rather than overwritten with a value it may hold */
    char name[64];
    snprintf(name, sizeof name, "w/%020" PRIu64 ".seg", oldest);
    int fd = open(tpath(name), O_RDWR | O_CLOEXEC);
    assert_true(fd >= 0);
    unsigned char id0;
    assert_int_equal(pread(fd, &id0, 1, 16), 1);
    id0 ^= 0xff;
    assert_int_equal(pwrite(fd, &id0, 1, 16), 1);
    close(fd);
    dls_medium *rd = open_path(tpath("w"), DLS_OPEN_READ, 0);
    assert_int_equal(dls_cursor_new(&c, rd, oldest), 0);
    dls_where w = {0};
    assert_int_equal(dls_cursor_next(c, &r, &w), DLS_NEXT_ERROR);
    assert_non_null(w.reason);
    dls_cursor_del(c);
    dls_medium_del(rd);
}

/* ---- ring medium ------------------------------------------------------------ */

static void test_ring(void **state)
{
    (void)state;
    /* Evict-oldest at the capacity, gap semantics identical, the seal
     * ends it (stream-format.md, memory ring). */
    dls_medium_settings s = settings(DLS_SYNC_DATA);
    s.ring_capacity = 4;
    dls_medium *m = NULL;
    assert_int_equal(dls_ring_new(&m, &s), 0);
    assert_int_equal(dls_medium_kind_of(m), DLS_MEDIUM_RING);
    assert_int_equal(dls_medium_retention(m), DLS_RETAIN_EVICT_OLDEST);
    dls_cursor *c, *late;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    for (uint64_t i = 0; i < 3; i++)
        assert_true(append_seq(m, 1, i, i * 10) == i);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_true(r.position == 0);
    for (uint64_t i = 3; i < 10; i++)
        append_seq(m, 1, i, 100);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_GAP);
    assert_true(r.gap_from == 1 && r.position == 6 && dls_cursor_position(c) == 6);
    uint64_t count;
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
    assert_true(count == 4 && r.position == 10);
    assert_int_equal(dls_cursor_new(&late, m, 20), 0);
    assert_int_equal(dls_cursor_next(late, &r, NULL), DLS_NEXT_BLOCKED);
    /* batch, then seal */
    uint8_t b1[64], b2[64];
    const uint8_t *recs[2] = {b1, b2};
    size_t lens[2] = {make_payload(b1, 1, 10, 1), make_payload(b2, 1, 11, 1)};
    uint64_t first;
    assert_int_equal(dls_medium_append_batch(m, recs, lens, 2, &first, NULL), 0);
    assert_true(first == 10);
    assert_int_equal(dls_medium_seal(m, NULL), 0);
    dls_where w = {0};
    assert_int_equal(dls_medium_append(m, b1, lens[0], &first, &w), DLS_ERR_SEALED);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_END);
    assert_true(count == 2 && r.position == 12);
    assert_int_equal(dls_cursor_next(late, &r, NULL), DLS_NEXT_END);
    assert_true(r.position == 12);
    dls_cursor_del(late);
    dls_cursor_del(c);
    dls_medium_del(m);
    s.ring_capacity = 0;
    assert_int_equal(dls_ring_new(&m, &s), DLS_ERR_INVAL);
}

struct ring_arg {
    dls_medium *m;
    int n;
};

static void *ring_writer(void *p)
{
    struct ring_arg *a = p;
    for (int i = 0; i < a->n; i++) {
        uint8_t b[128];
        size_t n = make_payload(b, 1, (uint64_t)i, 40);
        if (dls_medium_append(a->m, b, n, NULL, NULL))
            return (void *)1;
    }
    dls_medium_seal(a->m, NULL);
    return NULL;
}

static void test_ring_threads(void **state)
{
    (void)state;
    /* A ring is thread-safe: a reader on another thread sees ok records
     * (intact, in order) and gaps, never torn bytes, until the end. */
    dls_medium_settings s = settings(DLS_SYNC_NONE);
    s.ring_capacity = 16;
    dls_medium *m = NULL;
    assert_int_equal(dls_ring_new(&m, &s), 0);
    struct ring_arg a = {m, 20000};
    pthread_t th;
    dls_cursor *c;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(pthread_create(&th, NULL, ring_writer, &a), 0);
    dls_record r;
    dls_next x;
    uint64_t expect = 0;
    while ((x = dls_cursor_next(c, &r, NULL)) != DLS_NEXT_END) {
        if (x == DLS_NEXT_OK) {
            uint64_t seq;
            assert_true(check_payload(r.p, r.n, NULL, &seq));
            assert_true(seq == r.position && r.position == expect);
            expect++;
        } else if (x == DLS_NEXT_GAP) {
            assert_true(r.gap_from == expect && r.position > expect);
            expect = r.position;
        } else {
            assert_int_equal(x, DLS_NEXT_BLOCKED);
        }
    }
    assert_true(r.position == 20000);
    void *ret;
    pthread_join(th, &ret);
    assert_null(ret);
    dls_cursor_del(c);
    dls_medium_del(m);
}

/* ---- the backend interface ------------------------------------------------ */

static int fake_batch(void *impl, const uint8_t *const *recs, const size_t *lens, size_t count,
                      uint64_t *first, dls_where *w)
{
    (void)recs;
    (void)lens;
    (void)w;
    uint64_t *n = impl;
    *first = *n;
    *n += count;
    return 0;
}

static int fake_cnew(void *impl, uint64_t from, void **c)
{
    (void)impl;
    uint64_t *p = malloc(sizeof *p);
    if (!p)
        return DLS_ERR_NOMEM;
    *p = from;
    *c = p;
    return 0;
}

static dls_next fake_next(void *c, dls_record *rec, dls_where *w)
{
    (void)w;
    uint64_t *p = c;
    rec->position = (*p)++;
    if (rec->position == 2) {
        rec->p = (const uint8_t *)DLS_SEAL_RECORD;
        rec->n = DLS_SEAL_RECORD_LEN;
    } else {
        rec->p = (const uint8_t *)"\x80";
        rec->n = 1;
    }
    return DLS_NEXT_OK;
}

static void fake_cdel(void *c)
{
    free(c);
}

static void fake_del(void *impl)
{
    free(impl);
}

static const dls_medium_ops fake_ops = {.kind_name = "fake",
                                        .append_batch = fake_batch,
                                        .cursor_new = fake_cnew,
                                        .cursor_next = fake_next,
                                        .cursor_del = fake_cdel,
                                        .del = fake_del};

static void test_medium_impl(void **state)
{
    (void)state;
    /* A backend plugs in through medium_impl.h: the dispatcher checks
     * records, turns a seal into end and keeps positions. */
    uint64_t *n = calloc(1, sizeof *n);
    dls_medium_info info = {.kind = DLS_MEDIUM_REDIS, .retention = DLS_RETAIN_EVICT_OLDEST,
                            .sync = DLS_SYNC_NONE, .mode = DLS_OPEN_APPEND, .name = "fake://x"};
    dls_medium *m = NULL;
    assert_int_equal(dls_medium_wrap(&m, &fake_ops, n, &info), 0);
    assert_ptr_equal(dls_medium_impl(m, &fake_ops), n);
    assert_null(dls_medium_impl(m, &dls_st_file_ops));
    assert_string_equal(dls_medium_name(m), "fake://x");
    uint64_t pos;
    assert_int_equal(dls_medium_append(m, (const uint8_t *)"\x80", 1, &pos, NULL), 0);
    assert_true(pos == 0);
    assert_int_equal(dls_medium_append(m, (const uint8_t *)"\x80", 0, &pos, NULL), DLS_ERR_RECORD);
    assert_int_equal(dls_medium_seal(m, NULL), 0);
    assert_true(*n == 2);
    dls_cursor *c;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_END);
    assert_true(r.position == 2 && r.p == NULL);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_END);
    assert_true(dls_cursor_position(c) == 2);
    dls_cursor_del(c);
    dls_medium_del(m);
    static const dls_medium_ops incomplete = {.kind_name = "x"};
    assert_int_equal(dls_medium_wrap(&m, &incomplete, NULL, &info), DLS_ERR_INVAL);
    assert_string_equal(dls_next_name(DLS_NEXT_ERROR), "transport-error");
    dls_sync sy;
    assert_int_equal(dls_sync_parse("group", &sy), 0);
    assert_int_equal(sy, DLS_SYNC_GROUP);
    assert_int_equal(dls_sync_parse("fast", &sy), DLS_ERR_INVAL);
    assert_true(dls_stream_crc32((const uint8_t *)"123456789", 9) == 0xcbf43926u);
}

/* ---- interoperability with an independent Python implementation -------- */

static int run_python(const char *args, char *out, size_t cap)
{
    const char *py = getenv("DLS_PYTHON");
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof cmd, "%s %s/python/stream_interop.py %s", py && *py ? py : "/usr/bin/python3",
             DLS_TEST_SRCDIR, args);
    FILE *f = popen(cmd, "re");
    assert_non_null(f);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = 0;
    return pclose(f);
}

static void test_python_interop(void **state)
{
    (void)state;
    /* The byte format is an interoperability contract: a file this library
     * writes is read by an independent Python reader (zlib.crc32, struct,
     * msgpack), and files Python writes — and appends under the same OFD
     * lock — are read by this library. */
    char out[4096], args[PATH_MAX * 2];
    dls_medium *m = create_file("c.dls", DLS_SYNC_DATA);
    for (uint64_t i = 0; i < 100; i++)
        append_seq(m, 1, i, (size_t)(i * 13 % 700));
    dls_medium_del(m);
    /* Python appends 50 records (writer 2) taking the lock, then C seals */
    snprintf(args, sizeof args, "append %s 2 50", tpath("c.dls"));
    assert_int_equal(run_python(args, out, sizeof out), 0);
    m = open_path(tpath("c.dls"), DLS_OPEN_APPEND, 0);
    assert_int_equal(dls_medium_seal(m, NULL), 0);
    dls_medium_del(m);
    snprintf(args, sizeof args, "check %s", tpath("c.dls"));
    assert_int_equal(run_python(args, out, sizeof out), 0);
    json_error_t je;
    json_t *x = json_loads(out, 0, &je);
    assert_non_null(x);
    assert_int_equal(json_integer_value(json_object_get(x, "records")), 150);
    assert_true(json_is_true(json_object_get(x, "sealed")));
    assert_int_equal(json_integer_value(json_object_get(x, "seal_position")), 150);
    assert_string_equal(json_string_value(json_object_get(x, "tail")), "clean");
    json_decref(x);

    /* Python writes a file with a torn tail; C reads it and recovers it. */
    snprintf(args, sizeof args, "write %s 3 40 torn", tpath("p.dls"));
    assert_int_equal(run_python(args, out, sizeof out), 0);
    m = open_path(tpath("p.dls"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    assert_int_equal(dls_cursor_new(&c, m, 0), 0);
    uint64_t k = 0;
    dls_next a;
    while ((a = dls_cursor_next(c, &r, NULL)) == DLS_NEXT_OK) {
        uint32_t wr;
        uint64_t seq;
        assert_true(check_payload(r.p, r.n, &wr, &seq));
        assert_true(wr == 3 && seq == k && r.position == k);
        k++;
    }
    assert_int_equal(a, DLS_NEXT_BLOCKED);
    assert_true(k == 40);
    dls_cursor_del(c);
    dls_medium_del(m);
    m = open_path(tpath("p.dls"), DLS_OPEN_APPEND, 0);
    assert_true(append_seq(m, 3, 40, 5) == 40);
    dls_medium_del(m);
    snprintf(args, sizeof args, "check %s", tpath("p.dls"));
    assert_int_equal(run_python(args, out, sizeof out), 0);
    x = json_loads(out, 0, &je);
    assert_non_null(x);
    assert_int_equal(json_integer_value(json_object_get(x, "records")), 41);
    assert_string_equal(json_string_value(json_object_get(x, "tail")), "clean");
    json_decref(x);

    /* A segmented medium read by Python segment by segment. */
    m = create_seg("seg", 500, 0, 0, DLS_SYNC_NONE);
    for (uint64_t i = 0; i < 30; i++)
        append_seq(m, 1, i, 60);
    dls_medium_del(m);
    snprintf(args, sizeof args, "check-dir %s", tpath("seg"));
    assert_int_equal(run_python(args, out, sizeof out), 0);
    x = json_loads(out, 0, &je);
    assert_non_null(x);
    assert_int_equal(json_integer_value(json_object_get(x, "records")), 30);
    assert_true(json_integer_value(json_object_get(x, "segments")) > 1);
    json_decref(x);
}

/* ---- the command ---------------------------------------------------------- */

static int run_cli(const char *args, char *out, size_t cap)
{
    const char *bin = getenv("DAOLEASE_BIN");
    if (!bin)
        return -1;
    char cmd[PATH_MAX * 3];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", bin, args);
    FILE *f = popen(cmd, "re");
    assert_non_null(f);
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = 0;
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli(void **state)
{
    (void)state;
    /* cli.md: stream create prints the id (32 hex); seal; --help; errors
     * are one line naming the file, exit 2 for usage and 1 otherwise. */
    if (!getenv("DAOLEASE_BIN"))
        skip();
    char out[2048], args[PATH_MAX * 2];
    snprintf(args, sizeof args, "stream create %s", tpath("c.dls"));
    assert_int_equal(run_cli(args, out, sizeof out), 0);
    assert_int_equal(strlen(out), 33);
    dls_medium *m = open_path(tpath("c.dls"), DLS_OPEN_READ, 0);
    char hex[33];
    sodium_bin2hex(hex, sizeof hex, dls_medium_id(m), 16);
    assert_memory_equal(out, hex, 32);
    dls_medium_del(m);
    assert_int_equal(run_cli(args, out, sizeof out), 1);
    assert_non_null(strstr(out, tpath("c.dls")));
    assert_non_null(strchr(out, '\n'));
    assert_true(strchr(out, '\n')[1] == 0); /* one line */
    snprintf(args, sizeof args, "stream seal %s", tpath("c.dls"));
    assert_int_equal(run_cli(args, out, sizeof out), 0);
    assert_int_equal(run_cli(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "position 0"));
    snprintf(args, sizeof args, "stream create %s --segmented --segment-bytes 1k --retain 3",
             tpath("seg"));
    assert_int_equal(run_cli(args, out, sizeof out), 0);
    size_t n;
    uint8_t *b = read_all(tpath("seg/medium.id"), &n);
    assert_int_equal(n, 33);
    assert_memory_equal(b, out, 33);
    free(b);
    assert_int_equal(run_cli("stream create", out, sizeof out), 2);
    assert_int_equal(run_cli("stream frob x", out, sizeof out), 2);
    assert_int_equal(run_cli("stream create x --retain 3", out, sizeof out), 2);
    assert_int_equal(run_cli("stream create x --segmented --segment-bytes -1", out, sizeof out), 2);
    assert_int_equal(run_cli("stream --help", out, sizeof out), 0);
    assert_non_null(strstr(out, "stream create PATH"));
    snprintf(args, sizeof args, "stream seal %s", vec("torn.expect.json"));
    assert_int_equal(run_cli(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "byte 0"));
}

/* ---- revision 4: holes, bad records in older segments ------------------ */

static void seg_path(char *out, size_t cap, const char *dir, uint64_t base)
{
    snprintf(out, cap, "%s/%020" PRIu64 ".seg", dir, base);
}

static void test_segmented_hole(void **state)
{
    (void)state;
    /* stream-format.md rev 4, Writers: "a segment missing between the
     * oldest and the newest ... is corruption (readers: transport-error at
     * it; appends: refused), never a silent end"; issue 12 item 1. */
    dls_medium *m = create_seg("h", 300, 0, 0, DLS_SYNC_NONE);
    for (uint64_t i = 0; i < 10; i++)
        append_seq(m, 1, i, 50); /* segments 0, 3, 6, 9 */
    char name[PATH_MAX];
    seg_path(name, sizeof name, "h", 3);
    assert_int_equal(unlink(tpath(name)), 0);
    /* a reader reads segment 0, then answers transport-error at position 3
     * naming the end of the hole (gap_from = 6), every time */
    dls_medium *rd = open_path(tpath("h"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    dls_where w = {0};
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, rd, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_ERROR);
    assert_int_equal(count, 3);
    assert_int_equal(r.position, 3);
    assert_int_equal(dls_cursor_next(c, &r, &w), DLS_NEXT_ERROR);
    assert_int_equal(r.position, 3);
    assert_int_equal(r.gap_from, 6);
    assert_non_null(w.reason);
    assert_non_null(strstr(w.reason, "missing"));
    dls_cursor_del(c);
    /* a cursor created inside the hole answers the same */
    assert_int_equal(dls_cursor_new(&c, rd, 4), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_ERROR);
    assert_int_equal(r.position, 4);
    dls_cursor_del(c);
    /* beyond the hole reads on */
    assert_int_equal(dls_cursor_new(&c, rd, 6), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_int_equal(r.position, 6);
    dls_cursor_del(c);
    dls_medium_del(rd);
    /* a new writer is refused, w->offset = the first missing position */
    dls_medium_settings st = settings(DLS_SYNC_NONE);
    dls_medium *w2 = NULL;
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_medium_open(&w2, tpath("h"), DLS_OPEN_APPEND, &st, &w), DLS_ERR_CORRUPT);
    assert_null(w2);
    assert_int_equal(w.offset, 3);
    /* the writer that was open before the deletion refuses its next roll */
    uint8_t b[DLS_RECORD_MAX];
    size_t n = make_payload(b, 1, 10, 50);
    uint64_t pos;
    assert_int_equal(dls_medium_append(m, b, n, &pos, NULL), 0); /* fits segment 9 */
    assert_int_equal(pos, 10);
    assert_int_equal(dls_medium_append(m, b, n, &pos, NULL), 0);
    memset(&w, 0, sizeof w);
    assert_int_equal(dls_medium_append(m, b, n, &pos, &w), DLS_ERR_CORRUPT); /* would roll */
    assert_int_equal(w.offset, 3);
    dls_medium_del(m);
    /* evicting the oldest is not a hole: delete segment 0 as retention would */
    m = create_seg("h2", 300, 0, 0, DLS_SYNC_NONE);
    for (uint64_t i = 0; i < 10; i++)
        append_seq(m, 1, i, 50);
    dls_medium_del(m);
    seg_path(name, sizeof name, "h2", 0);
    assert_int_equal(unlink(tpath(name)), 0);
    m = open_path(tpath("h2"), DLS_OPEN_APPEND, 0);
    assert_true(append_seq(m, 1, 10, 50) == 10);
    dls_medium_del(m);
}

static void test_segmented_bad_older_refuses_append(void **state)
{
    (void)state;
    /* stream-format.md rev 4, Writers: "a bad record in a segment that is
     * not the newest is corruption (... appends: refused)"; issue 12 item
     * 1: readers reported it, appends went on at positions no reader
     * reaches. Also a seal in an older segment ends the medium. */
    dls_medium *m = create_seg("bo", 300, 0, 0, DLS_SYNC_NONE);
    for (uint64_t i = 0; i < 10; i++)
        append_seq(m, 1, i, 50);
    dls_medium_del(m);
    char name[PATH_MAX];
    seg_path(name, sizeof name, "bo", 3);
    /* flip a payload byte of the second record of segment 3 (position 4) */
    int fd = open(tpath(name), O_RDWR | O_CLOEXEC);
    assert_true(fd >= 0);
    uint8_t x;
    off_t at = 48 + 84 + 8 + 20;
    assert_int_equal(pread(fd, &x, 1, at), 1);
    x ^= 0x01;
    assert_int_equal(pwrite(fd, &x, 1, at), 1);
    close(fd);
    dls_medium_settings st = settings(DLS_SYNC_NONE);
    dls_medium *w2 = NULL;
    dls_where w = {0};
    assert_int_equal(dls_medium_open(&w2, tpath("bo"), DLS_OPEN_APPEND, &st, &w), DLS_ERR_CORRUPT);
    assert_int_equal(w.offset, 48 + 84);
    /* readers: transport-error at position 4 */
    dls_medium *rd = open_path(tpath("bo"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, rd, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_ERROR);
    assert_int_equal(r.position, 4);
    dls_cursor_del(c);
    dls_medium_del(rd);
}

/* Lists the segment bases of a directory into out (sorted); returns count. */
static size_t seg_bases(const char *dir, uint64_t *out, size_t cap)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(d)))
        if (strlen(e->d_name) == 24 && !strcmp(e->d_name + 20, ".seg") && n < cap)
            out[n++] = strtoull(e->d_name, NULL, 10);
    closedir(d);
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && out[b - 1] > out[b]; b--) {
            uint64_t t = out[b];
            out[b] = out[b - 1];
            out[b - 1] = t;
        }
    return n;
}

static void test_segment_bound_per_record(void **state)
{
    (void)state;
    /* stream-format.md, segmented: "the writer rolls to a new segment
     * before an append that would take the current one past the declared
     * size" — per record, so 400 records on a 4 KiB-segment medium land in
     * the same segments whether appended one by one, as one batch or in
     * batches of any size (issue 12 item 3: the layout depended on how
     * stdin happened to be chunked). */
    static uint8_t bufs[400][128];
    const uint8_t *recs[400];
    size_t lens[400];
    for (int i = 0; i < 400; i++) {
        lens[i] = make_payload(bufs[i], 1, (uint64_t)i, 40 + (size_t)(i % 7) * 5);
        recs[i] = bufs[i];
    }
    uint64_t ref[64], got[64];
    size_t nref = 0;
    static const size_t chunks[] = {1, 400, 37, 3};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        char name[32];
        snprintf(name, sizeof name, "pr%zu", k);
        dls_medium *m = create_seg(name, 4096, 0, 0, k % 2 ? DLS_SYNC_DATA : DLS_SYNC_NONE);
        for (size_t i = 0; i < 400; i += chunks[k]) {
            size_t c = 400 - i < chunks[k] ? 400 - i : chunks[k];
            uint64_t first;
            assert_int_equal(dls_medium_append_batch(m, recs + i, lens + i, c, &first, NULL), 0);
            assert_int_equal(first, i);
        }
        dls_medium_del(m);
        size_t n = seg_bases(tpath(name), got, 64);
        assert_true(n > 4);
        for (size_t j = 0; j < n; j++) {
            char p[64];
            snprintf(p, sizeof p, "%s/%020" PRIu64 ".seg", name, got[j]);
            assert_true(file_size(tpath(p)) <= 4096); /* the bound holds per segment */
        }
        if (k == 0) {
            nref = n;
            memcpy(ref, got, n * sizeof *ref);
        } else {
            assert_int_equal(n, nref);
            assert_memory_equal(got, ref, n * sizeof *ref);
        }
        /* and every record reads back in order */
        dls_medium *rd = open_path(tpath(name), DLS_OPEN_READ, 0);
        dls_cursor *c;
        dls_record r;
        uint64_t count;
        assert_int_equal(dls_cursor_new(&c, rd, 0), 0);
        assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
        assert_int_equal(count, 400);
        dls_cursor_del(c);
        dls_medium_del(rd);
    }
}

static void test_cli_hole(void **state)
{
    (void)state;
    /* stream-format.md rev 4 (holes are corruption) and issue 12 items 1
     * and 13: `dump` exits non-zero naming the missing range, `append` is
     * refused. */
    if (!getenv("DAOLEASE_BIN"))
        skip();
    dls_medium *m = create_seg("ch", 300, 0, 0, DLS_SYNC_NONE);
    for (uint64_t i = 0; i < 10; i++)
        append_seq(m, 1, i, 50);
    dls_medium_del(m);
    char name[PATH_MAX];
    seg_path(name, sizeof name, "ch", 3);
    assert_int_equal(unlink(tpath(name)), 0);
    char out[4096], args[PATH_MAX * 2];
    snprintf(args, sizeof args, "dump %s", tpath("ch"));
    assert_int_equal(run_cli(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "positions 3-5 are missing"));
    snprintf(args, sizeof args, "append %s --bare --no-validate </dev/null", tpath("ch"));
    assert_int_equal(run_cli(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "position 3"));
    /* corruption (a bad record followed by more than R bytes): dump exits
     * non-zero naming the position and byte (issue 12 item 13) */
    uint64_t b = build_r_file(tpath("cc.dls"), (uint64_t)R + 1000);
    snprintf(args, sizeof args, "dump %s --from 2", tpath("cc.dls"));
    assert_int_equal(run_cli(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "position 2"));
    char byte[64];
    snprintf(byte, sizeof byte, "byte %" PRIu64, b);
    assert_non_null(strstr(out, byte));
}

/* ---- revision 4: torn tails keep their bytes ---------------------------- */

static void test_torn_sidecar(void **state)
{
    (void)state;
    /* stream-format.md rev 4, Writers: "the bytes from b to EOF are first
     * copied to a sidecar file beside the medium ... <file>.torn-<offset>
     * without replacing anything (a second tear at the same offset gets
     * -2, -3, …) ... The opener reports what it cut: the offset, the byte
     * count, and how many CRC-valid records those bytes still held";
     * issue 12 item 2 (a flipped bit silently removed acknowledged
     * records). */
    const char *p = tpath("t.dls");
    dls_medium *m = create_file("t.dls", DLS_SYNC_NONE);
    uint64_t offs[11];
    for (uint64_t i = 0; i < 10; i++) {
        offs[i] = file_size(p);
        append_seq(m, 1, i, 92); /* 100-byte payloads */
    }
    offs[10] = file_size(p);
    dls_medium_del(m);
    size_t before_n;
    uint8_t *before = read_all(p, &before_n);
    /* a flipped bit in the payload of position 3 */
    int fd = open(p, O_RDWR | O_CLOEXEC);
    uint8_t x;
    assert_int_equal(pread(fd, &x, 1, (off_t)offs[3] + 8 + 60), 1);
    x ^= 0x10;
    assert_int_equal(pwrite(fd, &x, 1, (off_t)offs[3] + 8 + 60), 1);
    close(fd);
    m = open_path(p, DLS_OPEN_APPEND, 0);
    dls_torn_cut cut;
    assert_true(dls_medium_last_cut(m, &cut));
    assert_int_equal(cut.offset, offs[3]);
    assert_int_equal(cut.bytes, offs[10] - offs[3]);
    assert_int_equal(cut.valid_records, 6); /* positions 4 … 9 were whole */
    assert_false(cut.capped);
    assert_int_equal(cut.cuts, 1);
    char want[PATH_MAX];
    snprintf(want, sizeof want, "%s.torn-%" PRIu64, p, offs[3]);
    assert_string_equal(cut.sidecar, want);
    assert_int_equal(file_size(p), offs[3]);
    /* the sidecar holds exactly the cut bytes (the flipped bit included) */
    size_t sn;
    uint8_t *side = read_all(want, &sn);
    assert_int_equal(sn, offs[10] - offs[3]);
    before[offs[3] + 8 + 60] ^= 0x10;
    assert_memory_equal(side, before + offs[3], sn);
    free(side);
    free(before);
    dls_medium_del(m);
    /* a second tear at the same offset (a crash: half a record) never
     * replaces the first sidecar: -2, holding no valid record */
    uint8_t half[40] = {100, 0, 0, 0, 1, 2, 3, 4};
    write_bytes(p, half, sizeof half, true);
    m = open_path(p, DLS_OPEN_APPEND, 0);
    assert_true(dls_medium_last_cut(m, &cut));
    assert_int_equal(cut.offset, offs[3]);
    assert_int_equal(cut.bytes, sizeof half);
    assert_int_equal(cut.valid_records, 0);
    snprintf(want, sizeof want, "%s.torn-%" PRIu64 "-2", p, offs[3]);
    assert_string_equal(cut.sidecar, want);
    assert_int_equal(file_size(want), sizeof half);
    /* a clean medium cuts nothing */
    dls_medium_del(m);
    m = open_path(p, DLS_OPEN_APPEND, 0);
    assert_false(dls_medium_last_cut(m, NULL));
    dls_medium_del(m);
    /* the sidecars are found beside the medium (dump and audit warn) */
    size_t n = 0;
    char *first = NULL;
    assert_int_equal(dls_medium_sidecars(p, &n, &first, NULL), 0);
    assert_int_equal(n, 2);
    assert_non_null(first);
    assert_non_null(strstr(first, "t.dls.torn-"));
    free(first);
    /* a reader cuts nothing and reports nothing */
    m = open_path(p, DLS_OPEN_READ, 0);
    assert_false(dls_medium_last_cut(m, NULL));
    dls_medium_del(m);
}

static void test_torn_sidecar_segmented(void **state)
{
    (void)state;
    /* stream-format.md rev 4: the same for the last segment of a segmented
     * medium; the sidecar goes inside the directory and is never taken for
     * a segment (segment files are exactly [0-9]{20}\.seg). */
    dls_medium *m = create_seg("ts", 300, 0, 0, DLS_SYNC_NONE);
    for (uint64_t i = 0; i < 5; i++)
        append_seq(m, 1, i, 50);
    dls_medium_del(m);
    char name[PATH_MAX];
    seg_path(name, sizeof name, "ts", 3);
    uint64_t size = file_size(tpath(name));
    uint8_t junk[30] = {0x40, 0, 0, 0};
    write_bytes(tpath(name), junk, sizeof junk, true);
    m = open_path(tpath("ts"), DLS_OPEN_APPEND, 0);
    dls_torn_cut cut;
    assert_true(dls_medium_last_cut(m, &cut));
    assert_int_equal(cut.offset, size);
    assert_int_equal(cut.bytes, sizeof junk);
    char want[PATH_MAX];
    snprintf(want, sizeof want, "%s/%020d.seg.torn-%" PRIu64, tpath("ts"), 3, size);
    assert_string_equal(cut.sidecar, want);
    assert_int_equal(file_size(want), sizeof junk);
    assert_true(append_seq(m, 1, 5, 50) == 5);
    dls_medium_del(m);
    size_t n = 0;
    assert_int_equal(dls_medium_sidecars(tpath("ts"), &n, NULL, NULL), 0);
    assert_int_equal(n, 1);
    /* readers still read every record */
    dls_medium *rd = open_path(tpath("ts"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, rd, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
    assert_int_equal(count, 6);
    dls_cursor_del(c);
    dls_medium_del(rd);
}

static void test_torn_count_bounded(void **state)
{
    (void)state;
    /* stream-format.md rev 4: counting the valid records of a cut "reads
     * at most R bytes"; a hostile tail whose every offset announces a
     * plausible length must not make it quadratic: the search stops at its
     * work bound and says so. */
    size_t n = 1u << 20;
    uint8_t *p = malloc(n);
    assert_non_null(p);
    for (size_t i = 0; i < n; i += 4) {
        p[i] = 0xff;
        p[i + 1] = 0xff;
        p[i + 2] = 0;
        p[i + 3] = 0;
    }
    bool capped = false;
    assert_int_equal(dls_st_count_valid(p, n, 4ull * R, &capped), 0);
    assert_true(capped);
    /* zeros (a crash's zero-filled blocks) count nothing, uncapped */
    memset(p, 0, n);
    assert_int_equal(dls_st_count_valid(p, n, 4ull * R, &capped), 0);
    assert_false(capped);
    free(p);
}

static void test_cli_torn_warning(void **state)
{
    (void)state;
    /* stream-format.md rev 4: "More than zero CRC-valid records after b ...
     * the CLI says so on stderr, and dump / audit warn about any sidecar
     * they find"; issue 12 item 2 (a plain `append` with empty input cut
     * acknowledged records silently). */
    if (!getenv("DAOLEASE_BIN"))
        skip();
    const char *p = tpath("cw.dls");
    dls_medium *m = create_file("cw.dls", DLS_SYNC_NONE);
    uint64_t off2 = 0;
    for (uint64_t i = 0; i < 5; i++) {
        if (i == 2)
            off2 = file_size(p);
        append_seq(m, 1, i, 20);
    }
    dls_medium_del(m);
    int fd = open(p, O_RDWR | O_CLOEXEC);
    uint8_t x = 0;
    assert_int_equal(pwrite(fd, &x, 1, (off_t)off2 + 4), 1); /* the CRC of position 2 */
    close(fd);
    char out[4096], args[PATH_MAX * 2];
    snprintf(args, sizeof args, "append %s --bare --no-validate </dev/null", p);
    assert_int_equal(run_cli(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "warning"));
    assert_non_null(strstr(out, "2 CRC-valid records"));
    assert_non_null(strstr(out, ".torn-"));
    snprintf(args, sizeof args, "dump %s", p);
    assert_int_equal(run_cli(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "sidecar"));
    /* and audit, reading the medium as a journal (its verdict on this
     * unsigned file does not matter here: the warning does) */
    snprintf(args, sizeof args, "audit --journal %s --grantor g --keyring %s --media %s", p,
             vec("keyring"), vec("three.dls"));
    (void)run_cli(args, out, sizeof out);
    assert_non_null(strstr(out, "torn-tail sidecar"));
    /* stream seal says so too */
    copy_file(vec("three.dls"), tpath("s3.dls"));
    fd = open(tpath("s3.dls"), O_RDWR | O_CLOEXEC);
    assert_int_equal(pread(fd, &x, 1, 48 + 4), 1);
    x ^= 1;
    assert_int_equal(pwrite(fd, &x, 1, 48 + 4), 1);
    close(fd);
    snprintf(args, sizeof args, "stream seal %s", tpath("s3.dls"));
    assert_int_equal(run_cli(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "2 CRC-valid records"));
}

/* ---- a restarted reader detects a medium that now ends before it ------- */

static void test_cursor_resume_shrunk(void **state)
{
    (void)state;
    /* stream-format.md, Readers: "A medium that now ends before a position
     * already drained ... answers transport-error"; issue 12 item 3: a
     * restarted judge (a new cursor at its recorded position) saw only
     * blocked. dls_cursor_resume checks the position before it. */
    const char *p = tpath("rs.dls");
    dls_medium *m = create_file("rs.dls", DLS_SYNC_NONE);
    uint64_t off3 = 0;
    for (uint64_t i = 0; i < 5; i++) {
        if (i == 3)
            off3 = file_size(p);
        append_seq(m, 1, i, 10);
    }
    dls_medium_del(m);
    dls_medium *rd = open_path(p, DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    dls_where w = {0};
    /* intact: the resumed cursor is blocked at 5, then reads on */
    assert_int_equal(dls_cursor_resume(&c, rd, 5), 0);
    assert_int_equal(dls_cursor_position(c), 5);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_BLOCKED);
    assert_int_equal(r.position, 5);
    dls_cursor_del(c);
    /* from 3: the first answer is position 3 itself */
    assert_int_equal(dls_cursor_resume(&c, rd, 3), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_int_equal(r.position, 3);
    dls_cursor_del(c);
    dls_medium_del(rd);
    /* the file rewound to 3 records (a power loss on a none medium) */
    assert_int_equal(truncate(p, (off_t)off3), 0);
    rd = open_path(p, DLS_OPEN_READ, 0);
    dls_cursor *plain;
    assert_int_equal(dls_cursor_new(&plain, rd, 5), 0);
    assert_int_equal(dls_cursor_next(plain, &r, NULL), DLS_NEXT_BLOCKED); /* cannot tell */
    dls_cursor_del(plain);
    assert_int_equal(dls_cursor_resume(&c, rd, 5), 0);
    assert_int_equal(dls_cursor_next(c, &r, &w), DLS_NEXT_ERROR);
    assert_int_equal(r.position, 5);
    assert_non_null(w.reason);
    assert_non_null(strstr(w.reason, "ends before"));
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_ERROR); /* every time */
    dls_cursor_del(c);
    dls_medium_del(rd);
    /* a seal at the last position read ends it as usual */
    m = open_path(p, DLS_OPEN_APPEND, 0);
    assert_int_equal(dls_medium_seal(m, NULL), 0); /* position 3 */
    dls_medium_del(m);
    rd = open_path(p, DLS_OPEN_READ, 0);
    assert_int_equal(dls_cursor_resume(&c, rd, 4), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_END);
    assert_int_equal(r.position, 3);
    dls_cursor_del(c);
    /* a seal before it: the medium ends before a position read */
    assert_int_equal(dls_cursor_resume(&c, rd, 6), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_ERROR);
    dls_cursor_del(c);
    dls_medium_del(rd);
    /* evicted is not shrunk: a resumed cursor before the oldest retained
     * answers gap from its position */
    m = create_seg("rsg", 300, 2, 0, DLS_SYNC_NONE);
    for (uint64_t i = 0; i < 10; i++)
        append_seq(m, 1, i, 50); /* segments 6 and 9 retained */
    assert_int_equal(dls_cursor_resume(&c, m, 2), 0);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_GAP);
    assert_int_equal(r.gap_from, 2);
    assert_int_equal(r.position, 6);
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_int_equal(r.position, 6);
    dls_cursor_del(c);
    assert_int_equal(dls_cursor_resume(&c, m, 7), 0); /* 6 retained: no gap */
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_OK);
    assert_int_equal(r.position, 7);
    dls_cursor_del(c);
    assert_int_equal(dls_cursor_resume(&c, m, 11), 0); /* beyond the end (10) */
    assert_int_equal(dls_cursor_next(c, &r, NULL), DLS_NEXT_ERROR);
    dls_cursor_del(c);
    dls_medium_del(m);
}

/* ---- non-regular files are refused at once ------------------------------ */

static void test_fifo_refused(void **state)
{
    (void)state;
    /* issue 12 item 11: a FIFO (or any non-regular file) given as a medium
     * is refused at once, not opened in a way that blocks forever. An
     * alarm turns a hang into a failure. */
    alarm(20);
    const char *f = tpath("fifo");
    assert_int_equal(mkfifo(f, 0600), 0);
    dls_medium_settings st = settings(DLS_SYNC_NONE);
    dls_medium *m = NULL;
    dls_where w = {0};
    assert_int_equal(dls_medium_open(&m, f, DLS_OPEN_READ, &st, &w), DLS_ERR_INVAL);
    assert_non_null(strstr(w.reason, "not a regular file"));
    assert_int_equal(dls_medium_open(&m, f, DLS_OPEN_APPEND, &st, &w), DLS_ERR_INVAL);
    assert_int_equal(dls_medium_create(&m, DLS_MEDIUM_FILE, f, &st, &w), DLS_ERR_EXISTS);
    /* a device too */
    assert_int_equal(dls_medium_open(&m, "/dev/null", DLS_OPEN_READ, &st, &w), DLS_ERR_INVAL);
    /* inside a segmented medium: a FIFO as medium.bounds, as medium.id and
     * as a segment */
    dls_medium *sm = create_seg("fs", 300, 0, 0, DLS_SYNC_NONE);
    for (uint64_t i = 0; i < 4; i++)
        append_seq(sm, 1, i, 50); /* segments 0 and 3 */
    dls_medium_del(sm);
    char name[PATH_MAX];
    seg_path(name, sizeof name, "fs", 3);
    assert_int_equal(unlink(tpath(name)), 0);
    assert_int_equal(mkfifo(tpath(name), 0600), 0);
    assert_int_equal(dls_medium_open(&m, tpath("fs"), DLS_OPEN_APPEND, &st, &w), DLS_ERR_INVAL);
    dls_medium *rd = open_path(tpath("fs"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, rd, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_ERROR);
    assert_int_equal(count, 3);
    dls_cursor_del(c);
    dls_medium_del(rd);
    assert_int_equal(unlink(tpath("fs/medium.bounds")), 0);
    assert_int_equal(mkfifo(tpath("fs/medium.bounds"), 0600), 0);
    assert_int_equal(dls_medium_open(&m, tpath("fs"), DLS_OPEN_APPEND, &st, &w), DLS_ERR_INVAL);
    assert_int_equal(unlink(tpath("fs/medium.id")), 0);
    assert_int_equal(mkfifo(tpath("fs/medium.id"), 0600), 0);
    assert_int_equal(dls_medium_open(&m, tpath("fs"), DLS_OPEN_READ, &st, &w), DLS_ERR_INVAL);
    /* the CLI names the path */
    if (getenv("DAOLEASE_BIN")) {
        char out[4096], args[PATH_MAX * 2];
        snprintf(args, sizeof args, "dump %s", f);
        assert_int_equal(run_cli(args, out, sizeof out), 1);
        assert_non_null(strstr(out, f));
        assert_non_null(strstr(out, "not a regular file"));
        snprintf(args, sizeof args, "append %s --bare --no-validate </dev/null", f);
        assert_int_equal(run_cli(args, out, sizeof out), 1);
        assert_non_null(strstr(out, "not a regular file"));
    }
    alarm(0);
}

/* ---- errors say what happened ------------------------------------------ */

static void test_errno_named(void **state)
{
    (void)state;
    /* issue 12 item 13: EACCES, EMFILE, ENOSPC are named as such, not as
     * "input/output error": a refused permission answers DLS_ERR_PERM, and
     * every system error keeps its errno in w->sys_errno for the message. */
    dls_medium *m = create_file("e.dls", DLS_SYNC_NONE);
    dls_medium_del(m);
    assert_int_equal(chmod(tpath("e.dls"), 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* EACCES: another user (as root, drop to nobody first) */
        if (getuid() == 0 && (setgid(65534) || setuid(65534)))
            _exit(10);
        dls_medium *cm = NULL;
        dls_where w = {0};
        int rc = dls_medium_open(&cm, tpath("e.dls"), DLS_OPEN_READ, NULL, &w);
        _exit(rc == DLS_ERR_PERM && w.sys_errno == EACCES ? 0 : 11);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* EMFILE: no descriptor left */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl))
            _exit(10);
        int hi = open("/dev/null", O_RDONLY | O_CLOEXEC);
        rl.rlim_cur = (rlim_t)hi; /* the next open fails */
        if (setrlimit(RLIMIT_NOFILE, &rl))
            _exit(10);
        close(hi);
        while (open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0) {
        }
        dls_medium *cm = NULL;
        dls_where w = {0};
        int rc = dls_medium_open(&cm, tpath("e.dls"), DLS_OPEN_READ, NULL, &w);
        _exit(rc == DLS_ERR_IO && w.sys_errno == EMFILE && w.reason ? 0 : 11);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    /* ENOSPC on append (a write that makes no progress): errno kept */
    hooks_reset();
    m = open_path(tpath("e.dls"), DLS_OPEN_APPEND, 0);
    dls_st_set_io(m, &hooks);
    h_short_write = 1;
    uint8_t b[128];
    size_t n = make_payload(b, 1, 0, 10);
    uint64_t pos;
    dls_where w = {0};
    assert_int_equal(dls_medium_append(m, b, n, &pos, &w), DLS_ERR_IO);
    assert_int_equal(w.sys_errno, ENOSPC);
    dls_medium_del(m);
    hooks_reset();
    /* the CLI prints strerror, not "input/output error" */
    if (getenv("DAOLEASE_BIN") && getuid() == 0 && system("command -v setpriv >/dev/null") == 0) {
        char out[4096], args[PATH_MAX * 2];
        snprintf(args, sizeof args,
                 "dump %s", tpath("e.dls"));
        char cmd[PATH_MAX * 3];
        snprintf(cmd, sizeof cmd,
                 "setpriv --reuid=65534 --regid=65534 --clear-groups %s %s 2>&1",
                 getenv("DAOLEASE_BIN"), args);
        FILE *f = popen(cmd, "re");
        assert_non_null(f);
        size_t k = fread(out, 1, sizeof out - 1, f);
        out[k] = 0;
        int ps = pclose(f);
        assert_true(WIFEXITED(ps) && WEXITSTATUS(ps) == 1);
        assert_non_null(strstr(out, strerror(EACCES)));
        assert_null(strstr(out, "input/output error"));
    }
}

static void test_segment_batch_all_or_nothing(void **state)
{
    (void)state;
    /* dls_medium_append_batch is all or nothing; with the bound per record
     * a batch spans segments, so a failure in a later segment deletes the
     * segments the batch created and cuts the first back (docs/streams.md;
     * issue 12 item 3). And stream-format.md rev 4: "rolling to a new
     * segment first fdatasyncs the old one whatever the sync policy". */
    hooks_reset();
    dls_medium *m = create_seg("ba", 300, 0, 0, DLS_SYNC_NONE);
    dls_st_set_io(m, &hooks);
    assert_true(append_seq(m, 1, 0, 50) == 0); /* 84 bytes in segment 0 */
    uint64_t syncs0 = dls_st_sync_count(m);
    char name[PATH_MAX];
    seg_path(name, sizeof name, "ba", 0);
    uint64_t size0 = file_size(tpath(name));
    static uint8_t bufs[5][128];
    const uint8_t *recs[5];
    size_t lens[5];
    for (int k = 0; k < 5; k++) {
        lens[k] = make_payload(bufs[k], 1, 1 + (uint64_t)k, 50);
        recs[k] = bufs[k];
    }
    h_short_skip = 1; /* the first write (2 records, segment 0) succeeds */
    h_short_write = 1; /* the second (segment 3) fails */
    uint64_t first;
    dls_where w = {0};
    assert_int_equal(dls_medium_append_batch(m, recs, lens, 5, &first, &w), DLS_ERR_IO);
    assert_int_equal(file_size(tpath(name)), size0);
    uint64_t bases[8];
    assert_int_equal(seg_bases(tpath("ba"), bases, 8), 1);
    /* the roll synced segment 0 although the policy is none */
    assert_true(dls_st_sync_count(m) >= syncs0 + 1);
    /* the next append takes position 1, in segment 0 */
    hooks_reset();
    assert_int_equal(dls_medium_append_batch(m, recs, lens, 5, &first, NULL), 0);
    assert_int_equal(first, 1);
    assert_int_equal(seg_bases(tpath("ba"), bases, 8), 2);
    assert_int_equal(bases[1], 3);
    dls_medium_del(m);
    dls_medium *rd = open_path(tpath("ba"), DLS_OPEN_READ, 0);
    dls_cursor *c;
    dls_record r;
    uint64_t count;
    assert_int_equal(dls_cursor_new(&c, rd, 0), 0);
    assert_int_equal(drain(c, &count, &r), DLS_NEXT_BLOCKED);
    assert_int_equal(count, 6);
    dls_cursor_del(c);
    dls_medium_del(rd);
    hooks_reset();
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup_dir, teardown_dir)
    const struct CMUnitTest tests[] = {
        T(test_header_refused),
        T(test_header_short),
        T(test_create_layout),
        T(test_empty_and_roundtrip),
        T(test_half_written_blocked),
        T(test_zero_tail_blocked),
        T(test_sealed_end),
        T(test_batch_seal_inside_every_backend),
        T(test_torn_every_length),
        T(test_r_rule_boundary),
        T(test_flipped_byte_far),
        T(test_shrunk_medium),
        T(test_vector_three),
        T(test_vector_torn),
        T(test_two_handles_one_process),
        T(test_lock_bounded),
        T(test_exclusive_keeps_valid_records),
        T(test_cloexec),
        T(test_two_processes),
        T(test_kill_recovery),
        T(test_group_commit),
        T(test_sync_failures),
        T(test_short_write_rlimit),
        T(test_big_batch_chunks),
        T(test_segmented_layout),
        T(test_segmented_gap),
        T(test_segmented_retain_bytes),
        T(test_segmented_seal_and_torn),
        T(test_segmented_two_writers),
        T(test_ring),
        T(test_ring_threads),
        T(test_medium_impl),
        T(test_python_interop),
        T(test_cli),
        T(test_segmented_hole),
        T(test_segmented_bad_older_refuses_append),
        T(test_segment_bound_per_record),
        T(test_cli_hole),
        T(test_torn_sidecar),
        T(test_torn_sidecar_segmented),
        T(test_torn_count_bounded),
        T(test_cli_torn_warning),
        T(test_cursor_resume_shrunk),
        T(test_fifo_refused),
        T(test_errno_named),
        T(test_segment_batch_all_or_nothing),
    };
#undef T
    return cmocka_run_group_tests_name("stream", tests, NULL, NULL);
}
