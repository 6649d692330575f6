/* Fuzz target for opening a segmented medium (stream-format.md, segmented;
 * revision 4: holes, bad records in older segments, torn-tail sidecars):
 * the input describes a directory — `medium.id`, `medium.bounds` and
 * segment files, well-formed or not — which is built in a scratch
 * directory (on /dev/shm when there is one, so syncs cost nothing), then
 *
 *   1. opened read-only and drained from 0, from a position taken from the
 *      input, and resumed (dls_cursor_resume) there: answers must follow
 *      the cursor rules — ok positions consecutive, a gap moving forward,
 *      the cursor never moving on blocked or transport-error, end retiring
 *      it;
 *   2. opened for append: refused, or one append lands at a position a
 *      fresh cursor reads back with the same bytes (or is refused: sealed,
 *      corrupt, …), and the directory still drains by the rules;
 *   3. its sidecars listed.
 *
 * Input: byte 0 flags (bit 0: write a good medium.id, bit 1: a good
 * medium.bounds with 200-byte segments), byte 1 a cursor position, then
 * entries, each one kind byte:
 *   kind % 4 == 0  a segment with a good header: base (1 byte), n (1 byte,
 *                  % 8) records each of len (1 byte, 1 … 64) payload bytes
 *                  framed with a good CRC, then a raw tail: len (1 byte)
 *                  and bytes, written as they are;
 *   kind % 4 == 1  a segment of raw bytes: base (1 byte), len (2 bytes LE);
 *   kind % 4 == 2  medium.id, raw: len (1 byte) and bytes;
 *   kind % 4 == 3  medium.bounds, raw: len (1 byte) and bytes.
 * Never crash, never hang, never violate the cursor rules: abort(). */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daolease/stream.h"

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (!(c)) {                                                                \
            fprintf(stderr, "fuzz_segdir: %s:%d: %s\n", __FILE__, __LINE__, #c);    \
            abort();                                                               \
        }                                                                          \
    } while (0)

static const uint8_t ID[16] = {0xd0, 0x1e, 0x45, 0xe0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

typedef struct in {
    const uint8_t *p;
    size_t n, at;
} in;

static bool take(in *s, size_t k, const uint8_t **out)
{
    if (s->n - s->at < k)
        return false;
    *out = s->p + s->at;
    s->at += k;
    return true;
}

static int byte(in *s)
{
    const uint8_t *b;
    return take(s, 1, &b) ? b[0] : -1;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void write_file(const char *dir, const char *name, const uint8_t *p, size_t n)
{
    char path[400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (n && write(fd, p, n) != (ssize_t)n) {
        /* a scratch file: a short write just makes another input */
    }
    close(fd);
}

static void seg_name(char *out, size_t cap, uint64_t base)
{
    snprintf(out, cap, "%020" PRIu64 ".seg", base);
}

/* Builds the directory; false when the input is exhausted before byte 1. */
static void build(const char *dir, in *s, int flags)
{
    if (flags & 1) {
        char t[33];
        for (int i = 0; i < 16; i++)
            snprintf(t + 2 * i, 3, "%02x", ID[i]);
        t[32] = '\n';
        write_file(dir, "medium.id", (const uint8_t *)t, 33);
    }
    if (flags & 2) {
        static const char b[] = "segment_bytes 200\nretain_segments 0\nretain_bytes 0\n";
        write_file(dir, "medium.bounds", (const uint8_t *)b, sizeof b - 1);
    }
    static uint8_t buf[48 + 8 * 72 + 256 + 65536];
    for (int entries = 0; entries < 16; entries++) {
        int kind = byte(s);
        if (kind < 0)
            return;
        const uint8_t *b;
        char name[32];
        int base, len;
        switch (kind % 4) {
        case 0: {
            if ((base = byte(s)) < 0)
                return;
            int nrec = byte(s);
            if (nrec < 0)
                return;
            size_t off = 48;
            memset(buf, 0, 48);
            memcpy(buf, "DAOLSTRM", 8);
            buf[8] = 1;
            buf[12] = 48;
            memcpy(buf + 16, ID, 16);
            buf[32] = (uint8_t)base;
            for (int r = 0; r < nrec % 8; r++) {
                if ((len = byte(s)) < 0)
                    break;
                len = len % 64 + 1;
                if (!take(s, (size_t)len, &b))
                    break;
                put_le32(buf + off, (uint32_t)len);
                put_le32(buf + off + 4, dls_stream_crc32(b, (size_t)len));
                memcpy(buf + off + 8, b, (size_t)len);
                off += 8 + (size_t)len;
            }
            if ((len = byte(s)) > 0 && take(s, (size_t)len, &b)) {
                memcpy(buf + off, b, (size_t)len);
                off += (size_t)len;
            }
            seg_name(name, sizeof name, (uint64_t)base);
            write_file(dir, name, buf, off);
            break;
        }
        case 1: {
            if ((base = byte(s)) < 0 || !take(s, 2, &b))
                return;
            size_t n = (size_t)b[0] | (size_t)b[1] << 8;
            if (n > s->n - s->at)
                n = s->n - s->at;
            take(s, n, &b);
            seg_name(name, sizeof name, (uint64_t)base);
            write_file(dir, name, b, n);
            break;
        }
        default:
            if ((len = byte(s)) < 0 || !take(s, (size_t)len, &b))
                return;
            write_file(dir, kind % 4 == 2 ? "medium.id" : "medium.bounds", b, (size_t)len);
            break;
        }
    }
}

/* Drains a cursor by the rules; the final answer. */
static dls_next drain(dls_cursor *c, uint64_t from)
{
    dls_record r;
    dls_where w;
    dls_next a = DLS_NEXT_BLOCKED;
    uint64_t expect = from;
    for (int i = 0; i < 100000; i++) {
        memset(&w, 0, sizeof w);
        a = dls_cursor_next(c, &r, &w);
        if (a == DLS_NEXT_OK) {
            CHECK(r.position == expect);
            CHECK(r.n >= 1 && r.n <= DLS_RECORD_MAX && r.p);
            CHECK(!dls_record_is_seal(r.p, r.n));
            CHECK(r.gap_from == 0);
            expect++;
            CHECK(dls_cursor_position(c) == expect);
            continue;
        }
        if (a == DLS_NEXT_GAP) {
            CHECK(r.gap_from == expect && r.position > expect);
            expect = r.position;
            CHECK(dls_cursor_position(c) == expect);
            continue;
        }
        if (a == DLS_NEXT_END) {
            CHECK(dls_cursor_next(c, &r, NULL) == DLS_NEXT_END);
            break;
        }
        CHECK(a == DLS_NEXT_BLOCKED || a == DLS_NEXT_ERROR);
        CHECK(r.position == expect && dls_cursor_position(c) == expect);
        CHECK(r.p == NULL && r.n == 0);
        /* gap_from is 0, or at a hole the first position after it: past
         * the cursor's position, or at it when a resumed cursor's check of
         * position from - 1 (dls_cursor_resume) found that position inside
         * a hole that ends exactly where the cursor resumes */
        CHECK(r.gap_from == 0 || (a == DLS_NEXT_ERROR && r.gap_from >= r.position));
        if (a == DLS_NEXT_ERROR) {
            CHECK(w.reason != NULL);
            /* transport-error is stable: the cursor did not move */
            dls_next again = dls_cursor_next(c, &r, NULL);
            CHECK(again == DLS_NEXT_ERROR || again == DLS_NEXT_BLOCKED ||
                  again == DLS_NEXT_OK || again == DLS_NEXT_GAP);
            CHECK(again != DLS_NEXT_OK || r.position == expect);
        }
        break;
    }
    return a;
}

static void read_checks(const char *dir, uint64_t pos)
{
    dls_medium *m = NULL;
    dls_where w = {0};
    if (dls_medium_open(&m, dir, DLS_OPEN_READ, NULL, &w))
        return;
    dls_cursor *c;
    CHECK(dls_cursor_new(&c, m, 0) == 0);
    drain(c, 0);
    dls_cursor_del(c);
    CHECK(dls_cursor_new(&c, m, pos) == 0);
    drain(c, pos);
    dls_cursor_del(c);
    CHECK(dls_cursor_resume(&c, m, pos) == 0);
    drain(c, pos);
    dls_cursor_del(c);
    dls_medium_del(m);
}

static void append_checks(const char *dir, in *s)
{
    dls_medium_settings st;
    dls_medium_settings_default(&st);
    st.sync = DLS_SYNC_NONE;
    st.lock_timeout_ms = 10;
    st.segment_bytes = 200;
    dls_medium *m = NULL;
    dls_where w = {0};
    if (dls_medium_open(&m, dir, DLS_OPEN_APPEND, &st, &w))
        return;
    dls_torn_cut cut;
    if (dls_medium_last_cut(m, &cut))
        CHECK(cut.bytes > 0 && cut.bytes <= DLS_TORN_TAIL_MAX && cut.sidecar);
    uint8_t rec[40];
    size_t n = 1 + (s->at < s->n ? s->p[s->at] % 39 : 7);
    for (size_t i = 0; i < n; i++)
        rec[i] = (uint8_t)(0x80 + i);
    uint64_t pos = 0;
    int rc = dls_medium_append(m, rec, n, &pos, &w);
    if (rc == 0) {
        dls_medium *r = NULL;
        CHECK(dls_medium_open(&r, dir, DLS_OPEN_READ, NULL, &w) == 0);
        dls_cursor *c;
        CHECK(dls_cursor_new(&c, r, pos) == 0);
        dls_record got;
        CHECK(dls_cursor_next(c, &got, NULL) == DLS_NEXT_OK);
        CHECK(got.position == pos && got.n == n && !memcmp(got.p, rec, n));
        dls_cursor_del(c);
        dls_medium_del(r);
    }
    dls_medium_del(m);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            unlinkat(dirfd(d), e->d_name, 0);
        }
        closedir(d);
    }
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    static char root[256];
    if (!root[0]) {
        struct stat st;
        const char *t = getenv("TMPDIR");
        snprintf(root, sizeof root, "%s",
                 stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm"
                 : t && *t                                          ? t
                                                                    : "/tmp");
    }
    char dir[300];
    snprintf(dir, sizeof dir, "%s/fuzz-segdir-XXXXXX", root);
    if (!mkdtemp(dir))
        return 0;
    in s = {data, size, 2};
    build(dir, &s, data[0]);
    read_checks(dir, data[1]);
    append_checks(dir, &s);
    read_checks(dir, data[1]);
    size_t count = 0;
    char *first = NULL;
    CHECK(dls_medium_sidecars(dir, &count, &first, NULL) == 0);
    CHECK((count == 0) == (first == NULL));
    free(first);
    remove_dir(dir);
    return 0;
}
