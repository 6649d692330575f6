/* Fuzz target for the stream reader and the writer's open-time recovery
 * (stream-format.md): arbitrary bytes as a stream file.
 *
 *   1. written to a memfd, opened read-only, a cursor drained (and a second
 *      cursor from a position taken from the input): answers must follow
 *      the cursor rules — ok positions consecutive, the cursor never moving
 *      on blocked or transport-error, end retiring it;
 *   2. a copy (in a scratch directory, where the sidecar of a cut torn
 *      tail goes) opened for append: either refused (header) or recovered, and
 *      then the file must read cleanly to its end, and an append must land
 *      at the position after the last record (or be refused as sealed);
 *      before that, dls_medium_check_tail's verdict must be what an
 *      exclusive writer (a journal) answers: DLS_ERR_VALID_TAIL at the
 *      same offset and count when CRC-valid records follow the bad one.
 *
 * Never crash, never read out of bounds (pread into a bounded buffer),
 * never allocate beyond the fixed buffers. Violations abort(). */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "daolease/stream.h"

#define CHECK(c)                                                                   \
    do {                                                                           \
        if (!(c)) {                                                                \
            fprintf(stderr, "fuzz_stream: %s:%d: %s\n", __FILE__, __LINE__, #c);    \
            abort();                                                               \
        }                                                                          \
    } while (0)

static int make_file(const uint8_t *data, size_t size, char *path, size_t cap)
{
    int fd = memfd_create("fuzz_stream", MFD_CLOEXEC);
    if (fd < 0) {
        char tmpl[] = "/tmp/fuzz_stream-XXXXXX";
        fd = mkostemp(tmpl, O_CLOEXEC);
        if (fd < 0)
            return -1;
        unlink(tmpl);
    }
    size_t done = 0;
    while (done < size) {
        ssize_t k = write(fd, data + done, size - done);
        if (k <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)k;
    }
    snprintf(path, cap, "/proc/self/fd/%d", fd);
    return fd;
}

/* A file holding data in a fresh scratch directory; its descriptor. */
static int make_dir_file(const uint8_t *data, size_t size, char *dir, size_t dcap, char *path,
                         size_t pcap)
{
    struct stat st;
    const char *t = getenv("TMPDIR");
    snprintf(dir, dcap, "%s/fuzz-stream-XXXXXX",
             stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm"
             : t && *t                                          ? t
                                                                : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, pcap, "%s/m.dls", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t k = write(fd, data + done, size - done);
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    return fd;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    rmdir(dir);
}

/* Drains a cursor; returns the final answer, *records the ok count and
 * *end_pos the seal's position (end) or where the cursor stopped (blocked). */
static dls_next drain(dls_medium *m, uint64_t from, uint64_t *records, uint64_t *end_pos)
{
    dls_cursor *c = NULL;
    CHECK(dls_cursor_new(&c, m, from) == 0);
    dls_record r;
    dls_where w;
    dls_next a;
    uint64_t n = 0, expect = from;
    for (;;) {
        memset(&w, 0, sizeof w);
        a = dls_cursor_next(c, &r, &w);
        if (a == DLS_NEXT_OK) {
            CHECK(r.position == expect);
            CHECK(r.n >= 1 && r.n <= DLS_RECORD_MAX && r.p);
            CHECK(!dls_record_is_seal(r.p, r.n));
            expect++;
            n++;
            CHECK(dls_cursor_position(c) == expect);
            continue;
        }
        if (a == DLS_NEXT_GAP) {
            CHECK(r.gap_from == expect && r.position > expect);
            expect = r.position;
            continue;
        }
        break;
    }
    if (a == DLS_NEXT_BLOCKED || a == DLS_NEXT_ERROR) {
        CHECK(r.position == expect && dls_cursor_position(c) == expect);
        if (a == DLS_NEXT_ERROR)
            CHECK(w.reason != NULL);
        /* asking again gives the same answer, without moving */
        CHECK(dls_cursor_next(c, &r, NULL) == a);
        CHECK(dls_cursor_position(c) == expect);
    } else {
        CHECK(a == DLS_NEXT_END);
        CHECK(dls_cursor_next(c, &r, NULL) == DLS_NEXT_END);
        if (end_pos)
            *end_pos = r.position;
    }
    dls_cursor_del(c);
    if (records)
        *records = n;
    if (a == DLS_NEXT_BLOCKED && end_pos)
        *end_pos = expect;
    return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = make_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    dls_medium_settings s;
    dls_medium_settings_default(&s);
    s.sync = DLS_SYNC_NONE;
    s.lock_timeout_ms = 0;

    /* 1. read-only */
    dls_medium *m = NULL;
    dls_where w;
    memset(&w, 0, sizeof w);
    int rc = dls_medium_open(&m, path, DLS_OPEN_READ, &s, &w);
    if (rc == 0) {
        uint64_t n = 0, seal_at = 0;
        dls_next a = drain(m, 0, &n, &seal_at);
        uint64_t from = size ? data[size - 1] % 8 : 0;
        drain(m, from, NULL, NULL);
        (void)a;
        dls_medium_del(m);
    } else {
        CHECK(rc == DLS_ERR_HEADER && w.reason);
    }

    /* 2. a copy opened for append: recovery. It lives in a scratch
     * directory (on /dev/shm when there is one): cutting a torn tail first
     * saves it to a sidecar beside the file (stream-format.md rev 4). */
    char path2[400];
    char dir[300];
    int fd2 = make_dir_file(data, size, dir, sizeof dir, path2, sizeof path2);
    if (fd2 >= 0) {
        /* 3. judge.md "Failure of the journal" (rev 5): what
         * dls_medium_check_tail reports is what an exclusive writer refuses
         * — CRC-valid records after the bad one: DLS_ERR_VALID_TAIL at the
         * same offset with the same count, nothing cut; none: it opens */
        dls_torn_cut t;
        dls_where cw;
        memset(&cw, 0, sizeof cw);
        int crc = dls_medium_check_tail(path2, &t, &cw);
        CHECK(crc == 0 || crc == DLS_ERR_HEADER);
        if (crc == 0) {
            s.exclusive = true;
            m = NULL;
            memset(&w, 0, sizeof w);
            rc = dls_medium_open(&m, path2, DLS_OPEN_APPEND, &s, &w);
            s.exclusive = false;
            if (t.bytes && t.valid_records)
                CHECK(rc == DLS_ERR_VALID_TAIL && w.offset == t.offset &&
                      w.count == t.valid_records && m == NULL);
            else
                CHECK(rc == 0);
            dls_medium_del(m);
        }
        m = NULL;
        memset(&w, 0, sizeof w);
        rc = dls_medium_open(&m, path2, DLS_OPEN_APPEND, &s, &w);
        if (rc == 0) {
            uint64_t n = 0, seal_at = 0;
            dls_next a = drain(m, 0, &n, &seal_at);
            /* recovered: nothing bad is left within the file */
            CHECK(a == DLS_NEXT_BLOCKED || a == DLS_NEXT_END || a == DLS_NEXT_GAP);
            uint64_t pos = 0;
            rc = dls_medium_append(m, (const uint8_t *)"\x80", 1, &pos, &w);
            if (a == DLS_NEXT_END) {
                CHECK(rc == DLS_ERR_SEALED);
            } else {
                /* the append lands right after the last record read */
                CHECK(rc == 0 && a == DLS_NEXT_BLOCKED && pos == seal_at);
                uint64_t n2 = 0, at2 = 0;
                CHECK(drain(m, pos, &n2, &at2) == DLS_NEXT_BLOCKED && n2 == 1);
            }
            dls_medium_del(m);
        } else {
            /* inputs below 4 MiB never hold corruption: a bad record is
             * within R of the end */
            CHECK(rc == DLS_ERR_HEADER || (rc == DLS_ERR_CORRUPT && size > DLS_TORN_TAIL_MAX));
        }
        close(fd2);
        remove_dir(dir);
    }
    close(fd);
    return 0;
}
