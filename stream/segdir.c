/* The layout of a segmented medium (stream-format.md): a directory holding
 * `medium.id` (32 lower-case hex digits and a newline), `medium.bounds`
 * (the declared bounds, docs/streams.md) and segment files named `<base
 * index as 20 decimal digits>.seg`, each a stream file with the shared id
 * and its own base index. This file names, lists and opens them, and calls
 * nothing else of the segmented medium; the writer and the creation of a
 * new directory are in segmented.c, the cursors in segcursor.c. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sodium.h>
#include <unistd.h>

#include "stream/segment.h"
#include "vocab/vec.h"

void dls_st_seg_name(char out[SEG_NAME_LEN + 1], uint64_t base)
{
    snprintf(out, SEG_NAME_LEN + 1, "%020" PRIu64 ".seg", base);
}

/* Parses a segment file name; false for anything else (temporaries too). */
static bool parse_seg_name(const char *s, uint64_t *base)
{
    if (strlen(s) != SEG_NAME_LEN || strcmp(s + 20, ".seg"))
        return false;
    uint64_t v = 0;
    for (int i = 0; i < 20; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *base = v;
    return true;
}

static int cmp_ent(const void *a, const void *b)
{
    uint64_t x = ((const seg_ent *)a)->base, y = ((const seg_ent *)b)->base;
    return x < y ? -1 : x > y;
}

/* Lists the segments (sorted by base; sizes when asked). The caller frees
 * *out. 0, DLS_ERR_IO or DLS_ERR_NOMEM. */
int dls_st_seg_list(int dirfd, bool sizes, seg_ent **out, size_t *count, dls_where *w)
{
    *out = NULL;
    *count = 0;
    int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return dls_st_fail(w, DLS_ERR_IO, 0, "cannot list the segment directory", errno);
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return dls_st_fail(w, DLS_ERR_IO, 0, "cannot list the segment directory", e);
    }
    dls_vec v = {0};
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        uint64_t base;
        if (!parse_seg_name(e->d_name, &base))
            continue;
        uint64_t bytes = 0;
        if (sizes) {
            struct stat st;
            if (fstatat(dirfd, e->d_name, &st, 0) < 0)
                continue; /* deleted meanwhile */
            bytes = (uint64_t)st.st_size;
        }
        seg_ent *slot = dls_vec_push(&v, sizeof *slot);
        if (!slot) {
            rc = dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
            break;
        }
        *slot = (seg_ent){base, bytes};
    }
    closedir(d);
    if (rc) {
        dls_vec_free(&v);
        return rc;
    }
    if (v.n)
        qsort(v.p, v.n, sizeof(seg_ent), cmp_ent);
    *out = v.p;
    *count = v.n;
    return 0;
}

/* Opens the segment with this base and checks its header. 0 with *fd; or
 * DLS_ERR_NOTFOUND (no such segment, or a header not complete yet),
 * DLS_ERR_MEDIUM_ID, DLS_ERR_HEADER, DLS_ERR_IO. */
int dls_st_seg_open_file(const st_seg *m, uint64_t base, bool rw, int *fd, dls_where *w)
{
    char name[SEG_NAME_LEN + 1];
    dls_st_seg_name(name, base);
    int f = dls_st_open_regular(m->dirfd, name, rw ? O_RDWR : O_RDONLY);
    if (f < 0) {
        if (errno == EINVAL)
            return dls_st_fail(w, DLS_ERR_INVAL, 0, DLS_ST_NOT_REGULAR, 0);
        return dls_st_fail(w, errno == ENOENT ? DLS_ERR_NOTFOUND : DLS_ERR_IO, 0,
                           "cannot open a segment", errno);
    }
    dls_st_header h;
    bool have = false;
    int rc = dls_st_read_header(f, &h, &have, w);
    if (!rc && !have)
        rc = dls_st_fail(w, DLS_ERR_NOTFOUND, 0, "a segment shorter than its header", 0);
    if (!rc && memcmp(h.id, m->id, DLS_MEDIUM_ID_LEN))
        rc = dls_st_fail(w, DLS_ERR_MEDIUM_ID, 16,
                         "a segment's header names another medium than medium.id", 0);
    if (!rc && h.base != base)
        rc = dls_st_fail(w, DLS_ERR_HEADER, 32,
                         "a segment's base index differs from its file name", 0);
    if (rc) {
        close(f);
        return rc;
    }
    *fd = f;
    return 0;
}

int dls_st_seg_read_id(int dirfd, uint8_t id[DLS_MEDIUM_ID_LEN], dls_where *w)
{
    int fd = dls_st_open_regular(dirfd, ID_FILE, O_RDONLY);
    if (fd < 0 && errno == EINVAL)
        return dls_st_fail(w, DLS_ERR_INVAL, 0, DLS_ST_NOT_REGULAR, 0);
    if (fd < 0)
        return dls_st_fail(w, errno == ENOENT ? DLS_ERR_HEADER : DLS_ERR_IO, 0,
                           errno == ENOENT ? "not a segmented medium (no medium.id)"
                                           : "cannot open medium.id",
                           errno);
    char b[40];
    ssize_t k = pread(fd, b, sizeof b, 0);
    int e = errno;
    close(fd);
    if (k < 0)
        return dls_st_fail(w, DLS_ERR_IO, 0, "cannot read medium.id", e);
    if (k != 2 * DLS_MEDIUM_ID_LEN + 1 || b[2 * DLS_MEDIUM_ID_LEN] != '\n')
        goto bad;
    /* lower case only (sodium_hex2bin also takes A-F); b[32] is '\n' */
    size_t len;
    if (strspn(b, "0123456789abcdef") != 2 * DLS_MEDIUM_ID_LEN ||
        sodium_hex2bin(id, DLS_MEDIUM_ID_LEN, b, 2 * DLS_MEDIUM_ID_LEN, NULL, &len, NULL) != 0 ||
        len != DLS_MEDIUM_ID_LEN)
        goto bad;
    return 0;
bad:
    return dls_st_fail(w, DLS_ERR_HEADER, 0,
                       "medium.id is not 32 lower-case hex digits and a newline", 0);
}

/* medium.bounds: the bounds declared at creation, one "key value" line
 * each (segment_bytes, retain_segments, retain_bytes); unknown keys are
 * ignored, so later versions may add some. Absent: 0 with *found false. */
int dls_st_seg_read_bounds(st_seg *m, bool *found, dls_where *w)
{
    *found = false;
    int fd = dls_st_open_regular(m->dirfd, BOUNDS_FILE, O_RDONLY);
    if (fd < 0 && errno == EINVAL)
        return dls_st_fail(w, DLS_ERR_INVAL, 0, DLS_ST_NOT_REGULAR, 0);
    if (fd < 0)
        return errno == ENOENT ? 0
                               : dls_st_fail(w, DLS_ERR_IO, 0, "cannot open medium.bounds", errno);
    char b[512];
    ssize_t k = pread(fd, b, sizeof b - 1, 0);
    int e = errno;
    close(fd);
    if (k < 0)
        return dls_st_fail(w, DLS_ERR_IO, 0, "cannot read medium.bounds", e);
    b[k] = 0;
    uint64_t vals[3] = {m->segment_bytes, m->retain_segments, m->retain_bytes};
    static const char *const keys[3] = {"segment_bytes", "retain_segments", "retain_bytes"};
    char *save = NULL;
    for (char *line = strtok_r(b, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char key[32];
        char num[32];
        char extra;
        if (sscanf(line, "%31s %31s %c", key, num, &extra) != 2)
            goto bad;
        uint64_t v = 0;
        for (const char *q = num; *q; q++) {
            if (*q < '0' || *q > '9' || v > (UINT64_MAX - 9) / 10)
                goto bad;
            v = v * 10 + (uint64_t)(*q - '0');
        }
        for (int i = 0; i < 3; i++)
            if (!strcmp(key, keys[i]))
                vals[i] = v;
    }
    if (vals[0] < DLS_STREAM_HEADER_LEN)
        goto bad;
    m->segment_bytes = vals[0];
    m->retain_segments = vals[1];
    m->retain_bytes = vals[2];
    *found = true;
    return 0;
bad:
    return dls_st_fail(w, DLS_ERR_HEADER, 0, "medium.bounds is malformed", 0);
}

/* Walks one segment that is not the newest to its end. 0 with *count its
 * records (up to and including a first seal, *sealed then) and *end the
 * byte offset after the last; DLS_ERR_CORRUPT at a bad record; or what
 * opening it answers. */
static int walk_segment(const st_seg *m, uint64_t base, dls_st_reader *r, uint64_t *count,
                        bool *sealed, dls_where *w)
{
    int fd;
    int rc = dls_st_seg_open_file(m, base, false, &fd, w);
    if (rc)
        return rc;
    r->fd = fd;
    dls_st_reader_seek(r, DLS_STREAM_HEADER_LEN, base);
    *count = 0;
    *sealed = false;
    for (;;) {
        const uint8_t *p;
        size_t n;
        uint64_t eof = 0, at = r->off;
        dls_st_rd rd = dls_st_reader_buffered(r, &p, &n)
                           ? DLS_ST_RD_OK
                           : dls_st_reader_next(r, 0, &p, &n, &eof, w);
        if (rd == DLS_ST_RD_OK) {
            ++*count;
            if (dls_record_is_seal(p, n)) {
                *sealed = true;
                break;
            }
            continue;
        }
        if (rd == DLS_ST_RD_EOF)
            break;
        if (rd == DLS_ST_RD_BAD)
            rc = dls_st_fail(w, DLS_ERR_CORRUPT, at,
                             "a bad record in a segment that is not the newest", 0);
        else
            rc = DLS_ERR_IO; /* w filled by the reader */
        break;
    }
    dls_st_reader_drop(r);
    r->fd = -1;
    close(fd);
    return rc;
}

int dls_st_seg_check(const st_seg *m, const seg_ent *v, size_t n, uint64_t from,
                     bool *sealed, dls_where *w)
{
    *sealed = false;
    if (n < 2)
        return 0;
    dls_st_reader r;
    if (dls_st_reader_init(&r, -1, DLS_ST_READ_BUF))
        return dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
    int rc = 0;
    for (size_t i = 0; i + 1 < n && !rc; i++) {
        if (v[i].base < from)
            continue;
        uint64_t count = 0;
        rc = walk_segment(m, v[i].base, &r, &count, sealed, w);
        if (rc == DLS_ERR_NOTFOUND && i == 0) {
            rc = 0; /* the oldest was evicted meanwhile: not a hole */
            continue;
        }
        if (rc == DLS_ERR_NOTFOUND)
            rc = dls_st_fail(w, DLS_ERR_CORRUPT, v[i].base,
                             "a segment between the oldest and the newest is missing", ENOENT);
        if (rc || *sealed)
            break;
        uint64_t want = v[i + 1].base - v[i].base;
        if (count < want)
            rc = dls_st_fail(w, DLS_ERR_CORRUPT, v[i].base + count,
                             "a segment between the oldest and the newest is missing "
                             "(positions from here to the next segment's base)",
                             0);
        else if (count > want)
            rc = dls_st_fail(w, DLS_ERR_CORRUPT, v[i + 1].base,
                             "two segments overlap (a segment's records run past the "
                             "next segment's base)",
                             0);
    }
    dls_st_reader_fini(&r);
    return rc;
}
