/* Stream file format (stream-format.md): the 48-byte header, records of
 * L (4, LE) + CRC-32 (4, LE) + payload, and the pread reader all media of
 * files share. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libdeflate.h>

#include "stream/internal.h"
#include "vocab/where.h"

void dls_st_put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void dls_st_put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

uint32_t dls_st_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

uint64_t dls_st_le64(const uint8_t *p)
{
    return (uint64_t)dls_st_le32(p) | (uint64_t)dls_st_le32(p + 4) << 32;
}

uint32_t dls_stream_crc32(const uint8_t *p, size_t n)
{
    /* The IEEE CRC-32 of zlib's crc32(), computed by libdeflate (carry-less
     * multiplication where the CPU has it: 6-8x zlib's on 100-byte to
     * 64 KiB payloads here; docs/streams.md, Performance). */
    return libdeflate_crc32(0, p, n);
}

bool dls_record_is_seal(const uint8_t *p, size_t n)
{
    return p && n == DLS_SEAL_RECORD_LEN && !memcmp(p, DLS_SEAL_RECORD, DLS_SEAL_RECORD_LEN);
}

int dls_st_fail(dls_where *w, int code, uint64_t offset, const char *reason, int err)
{
    /* Say what happened: a refused permission is not an
     * input/output error. errno stays in w->sys_errno for every code, so
     * that EMFILE, ENOSPC, … are named by the message (strerror). */
    if (code == DLS_ERR_IO && (err == EACCES || err == EPERM))
        code = DLS_ERR_PERM;
    return dls_where_fill(w, code, (dls_where){.offset = offset, .reason = reason, .sys_errno = err});
}

void dls_st_header_encode(uint8_t out[DLS_STREAM_HEADER_LEN], const uint8_t *id,
                          uint64_t base)
{
    memset(out, 0, DLS_STREAM_HEADER_LEN);
    memcpy(out, DLS_STREAM_MAGIC, 8);
    out[8] = DLS_STREAM_VERSION;
    out[12] = DLS_STREAM_HEADER_LEN;
    memcpy(out + 16, id, DLS_MEDIUM_ID_LEN);
    dls_st_put_le64(out + 32, base);
}

int dls_st_header_decode(const uint8_t p[DLS_STREAM_HEADER_LEN], dls_st_header *h,
                         dls_where *w)
{
    if (memcmp(p, DLS_STREAM_MAGIC, 8))
        return dls_st_fail(w, DLS_ERR_HEADER, 0, "not a stream file (magic is not DAOLSTRM)", 0);
    if (p[8] != DLS_STREAM_VERSION || p[9] != 0)
        return dls_st_fail(w, DLS_ERR_HEADER, 8,
                           "stream file version is not 1 (a newer format?)", 0);
    if (p[10] || p[11])
        return dls_st_fail(w, DLS_ERR_HEADER, 10, "stream header flags are not 0", 0);
    if (dls_st_le32(p + 12) != DLS_STREAM_HEADER_LEN)
        return dls_st_fail(w, DLS_ERR_HEADER, 12, "stream header length is not 48", 0);
    for (int i = 40; i < 48; i++)
        if (p[i])
            return dls_st_fail(w, DLS_ERR_HEADER, 40,
                               "stream header reserved bytes are not 0", 0);
    /* Decision (the spec is silent): positions must not overflow, so a
     * base index of 2^63 or more — more records than any medium can hold —
     * is refused. */
    if (dls_st_le64(p + 32) > DLS_STREAM_BASE_MAX)
        return dls_st_fail(w, DLS_ERR_HEADER, 32, "stream base index is above 2^63 - 1", 0);
    if (h) {
        memcpy(h->id, p + 16, DLS_MEDIUM_ID_LEN);
        h->base = dls_st_le64(p + 32);
    }
    return 0;
}

void dls_st_record_header(uint8_t out[DLS_RECORD_HEADER_LEN], const uint8_t *p, size_t n)
{
    dls_st_put_le32(out, (uint32_t)n);
    dls_st_put_le32(out + 4, dls_stream_crc32(p, n));
}

static ssize_t pread_full(int fd, uint8_t *buf, size_t want, uint64_t off)
{
    size_t got = 0;
    while (got < want) {
        ssize_t k = pread(fd, buf + got, want - got, (off_t)(off + got));
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

int dls_st_read_header(int fd, dls_st_header *h, bool *have, dls_where *w)
{
    uint8_t b[DLS_STREAM_HEADER_LEN];
    ssize_t k = pread_full(fd, b, sizeof b, 0);
    if (k < 0)
        return dls_st_fail(w, DLS_ERR_IO, 0, "cannot read the stream header", errno);
    if ((size_t)k < sizeof b) {
        *have = false;
        return 0;
    }
    *have = true;
    return dls_st_header_decode(b, h, w);
}

int dls_st_reader_init(dls_st_reader *r, int fd, size_t cap)
{
    memset(r, 0, sizeof *r);
    r->fd = fd;
    if (cap < DLS_RECORD_MAX + DLS_RECORD_HEADER_LEN)
        cap = DLS_RECORD_MAX + DLS_RECORD_HEADER_LEN;
    r->buf = malloc(cap);
    if (!r->buf)
        return DLS_ERR_NOMEM;
    r->cap = cap;
    r->off = DLS_STREAM_HEADER_LEN;
    return 0;
}

void dls_st_reader_fini(dls_st_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->cap = 0;
}

void dls_st_reader_drop(dls_st_reader *r)
{
    r->buf_len = 0;
    r->buf_eof = false;
}

void dls_st_reader_seek(dls_st_reader *r, uint64_t off, uint64_t pos)
{
    r->off = off;
    r->pos = pos;
    dls_st_reader_drop(r);
}

/* Makes buf hold at least `need` bytes from r->off when the file has them:
 * answers how many bytes from r->off are held (may be fewer at the end). */
static ssize_t fill(dls_st_reader *r, size_t need, uint64_t limit)
{
    if (r->buf_len && r->off >= r->buf_off && r->off <= r->buf_off + r->buf_len) {
        size_t held = (size_t)(r->buf_off + r->buf_len - r->off);
        if (held >= need)
            return (ssize_t)held;
        /* Too few bytes held: read afresh, the file may have grown. */
    }
    size_t want = r->cap;
    if (limit) {
        uint64_t left = limit > r->off ? limit - r->off : 0;
        if (left < want)
            want = (size_t)left;
    }
    ssize_t k = want ? pread_full(r->fd, r->buf, want, r->off) : 0;
    if (k < 0) {
        dls_st_reader_drop(r);
        return -1;
    }
    r->buf_off = r->off;
    r->buf_len = (size_t)k;
    r->buf_eof = (size_t)k < r->cap; /* a short read met the end (or the limit) */
    return k;
}

static dls_st_rd bad(dls_st_reader *r, uint64_t limit, uint64_t *eof, const char *why,
                     dls_where *w)
{
    uint64_t size;
    if (limit) {
        size = limit;
    } else if (r->buf_eof) {
        size = r->buf_off + r->buf_len;
    } else {
        struct stat st;
        if (fstat(r->fd, &st) < 0) {
            dls_st_reader_drop(r);
            dls_st_fail(w, DLS_ERR_IO, r->off, "cannot stat the stream file", errno);
            return DLS_ST_RD_IO;
        }
        size = (uint64_t)st.st_size;
    }
    dls_st_reader_drop(r);
    if (eof)
        *eof = size < r->off ? r->off : size;
    dls_st_fail(w, DLS_ERR_CORRUPT, r->off, why, 0);
    return DLS_ST_RD_BAD;
}

dls_st_rd dls_st_reader_next(dls_st_reader *r, uint64_t limit, const uint8_t **p,
                             size_t *n, uint64_t *eof, dls_where *w)
{
    if (dls_st_reader_buffered(r, p, n))
        return DLS_ST_RD_OK;
    ssize_t held = fill(r, DLS_RECORD_HEADER_LEN, limit);
    if (held < 0) {
        dls_st_fail(w, DLS_ERR_IO, r->off, "cannot read the stream file", errno);
        return DLS_ST_RD_IO;
    }
    if (held == 0) {
        /* Nothing at the offset: the end, or a file that shrank below it. */
        uint64_t size = limit;
        if (!limit) {
            struct stat st;
            if (fstat(r->fd, &st) < 0) {
                dls_st_fail(w, DLS_ERR_IO, r->off, "cannot stat the stream file", errno);
                return DLS_ST_RD_IO;
            }
            size = (uint64_t)st.st_size;
        }
        dls_st_reader_drop(r);
        if (eof)
            *eof = size;
        if (size < r->off) {
            dls_st_fail(w, DLS_ERR_TRANSPORT, r->off,
                        "the medium now ends before a position already read", 0);
            return DLS_ST_RD_SHRUNK;
        }
        return DLS_ST_RD_EOF;
    }
    if ((size_t)held < DLS_RECORD_HEADER_LEN)
        return bad(r, limit, eof, "incomplete record header", w);
    const uint8_t *h = r->buf + (r->off - r->buf_off);
    uint32_t len = dls_st_le32(h);
    if (len == 0 || len > DLS_RECORD_MAX)
        return bad(r, limit, eof, "record length out of range (0 or above 65536)", w);
    size_t total = DLS_RECORD_HEADER_LEN + (size_t)len;
    held = fill(r, total, limit);
    if (held < 0) {
        dls_st_fail(w, DLS_ERR_IO, r->off, "cannot read the stream file", errno);
        return DLS_ST_RD_IO;
    }
    if ((size_t)held < total)
        return bad(r, limit, eof, "incomplete record", w);
    h = r->buf + (r->off - r->buf_off);
    if (dls_stream_crc32(h + DLS_RECORD_HEADER_LEN, len) != dls_st_le32(h + 4))
        return bad(r, limit, eof, "record CRC-32 mismatch", w);
    *p = h + DLS_RECORD_HEADER_LEN;
    *n = len;
    r->off += total;
    r->pos++;
    return DLS_ST_RD_OK;
}
