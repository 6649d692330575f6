/* Torn tails keep their bytes (stream-format.md rev 4): before a writer
 * truncates a torn tail it saves the cut bytes durably to a sidecar
 * `<file>.torn-<offset>` beside the file, never replacing one, and reports
 * the offset, the byte count and how many CRC-valid records those bytes
 * held — more than zero means the cut may have removed acknowledged
 * records (a flipped bit, not a crash). Also finds the sidecars beside a
 * medium, for `dump` and `audit` to warn about. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daolease/jetstream.h"
#include "stream/internal.h"
#include "stream/segment.h"

#define TORN_TAG ".torn-"
/* CRC work allowed to the byte-by-byte search: a few times R, so that a
 * hostile tail cannot make opening a medium quadratic. */
#define COUNT_BUDGET (4ull * DLS_TORN_TAIL_MAX)

/* A whole, CRC-valid record at p[0..n)? Its size in *len. */
static bool good_at(const uint8_t *p, size_t n, size_t *len, uint64_t *work)
{
    if (n < DLS_RECORD_HEADER_LEN)
        return false;
    uint32_t l = dls_st_le32(p);
    if (l == 0 || l > DLS_RECORD_MAX || l > n - DLS_RECORD_HEADER_LEN)
        return false;
    *work += l;
    if (dls_stream_crc32(p + DLS_RECORD_HEADER_LEN, l) != dls_st_le32(p + 4))
        return false;
    *len = DLS_RECORD_HEADER_LEN + l;
    return true;
}

uint64_t dls_st_count_valid(const uint8_t *p, size_t n, uint64_t budget, bool *capped)
{
    uint64_t count = 0, work = 0;
    size_t len;
    *capped = false;
    if (n == 0)
        return 0;
    /* The common damage, a flipped bit in a payload or a CRC, keeps the
     * framing: resume after the bad record's declared length. */
    size_t i = 1;
    if (n >= DLS_RECORD_HEADER_LEN) {
        uint32_t l = dls_st_le32(p);
        size_t skip = DLS_RECORD_HEADER_LEN + (size_t)l;
        if (l >= 1 && l <= DLS_RECORD_MAX && skip < n && good_at(p + skip, n - skip, &len, &work))
            i = skip;
    }
    while (i < n) {
        if (good_at(p + i, n - i, &len, &work)) {
            count++;
            i += len;
            continue;
        }
        if (work > budget) {
            *capped = true;
            break;
        }
        i++;
    }
    return count;
}

static int read_all_at(int fd, uint8_t *p, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = pread(fd, p + done, n - done, (off_t)(off + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        if (k == 0) {
            errno = EIO;
            return -1;
        }
        done += (size_t)k;
    }
    return 0;
}

/* Reads [b, size) (≤ R bytes: the caller applied the R rule) into a new
 * buffer and counts its CRC-valid records. */
static int read_tail(dls_st_tail *t, uint64_t b, uint64_t size, uint8_t **out,
                     uint64_t *valid, bool *capped, dls_where *w)
{
    size_t n = (size_t)(size - b);
    uint8_t *p = malloc(n);
    if (!p)
        return dls_st_fail(w, DLS_ERR_NOMEM, b, "out of memory", 0);
    if (read_all_at(t->fd, p, n, b) < 0) {
        int e = errno;
        free(p);
        return dls_st_fail(w, DLS_ERR_IO, b, "cannot read a torn tail", e);
    }
    *valid = dls_st_count_valid(p, n, COUNT_BUDGET, capped);
    *out = p;
    return 0;
}

int dls_st_torn_keep(dls_st_tail *t, uint64_t b, uint64_t size, dls_where *w)
{
    if (size <= b)
        return 0;
    uint8_t *p = NULL;
    uint64_t valid = 0;
    bool capped = false;
    int rc = read_tail(t, b, size, &p, &valid, &capped, w);
    free(p);
    if (rc || valid == 0)
        return rc;
    rc = dls_st_fail(w, DLS_ERR_VALID_TAIL, b,
                     "a bad record is followed by CRC-valid records, which a journal never cuts", 0);
    if (w)
        w->count = valid;
    return rc;
}

/* Writes the sidecar under the first free name; *out its malloc'd name. */
static int save_sidecar(const dls_st_tail *t, uint64_t b, const uint8_t *p, size_t n,
                        char **out, dls_where *w)
{
    size_t cap = strlen(t->name) + sizeof TORN_TAG + 48;
    char *name = malloc(cap);
    if (!name)
        return dls_st_fail(w, DLS_ERR_NOMEM, b, "out of memory", 0);
    int rc = DLS_ERR_EXISTS;
    for (unsigned k = 1; k <= 10000 && rc == DLS_ERR_EXISTS; k++) {
        if (k == 1)
            snprintf(name, cap, "%s" TORN_TAG "%" PRIu64, t->name, b);
        else
            snprintf(name, cap, "%s" TORN_TAG "%" PRIu64 "-%u", t->name, b, k);
        rc = dls_st_create_file_at(t->dirfd, name, p, n, NULL, w);
    }
    if (rc) {
        free(name);
        if (w)
            w->offset = b;
        return rc;
    }
    *out = name;
    return 0;
}

int dls_st_torn_cut(dls_st_tail *t, uint64_t b, uint64_t size, dls_where *w)
{
    if (size <= b)
        return 0;
    if (!t->name)
        return dls_st_fail(w, DLS_ERR_STATE, b, "no file name to save a torn tail beside", 0);
    size_t n = (size_t)(size - b); /* ≤ R: the caller applied the R rule */
    uint8_t *p = NULL;
    bool capped = false;
    uint64_t valid = 0;
    int rc0 = read_tail(t, b, size, &p, &valid, &capped, w);
    if (rc0)
        return rc0;
    char *sidecar = NULL;
    int rc = save_sidecar(t, b, p, n, &sidecar, w);
    free(p);
    if (rc)
        return rc;
    /* Saved durably: only now cut, and make the cut durable too. */
    if (t->io->ftruncate(t->fd, (off_t)b) < 0) {
        int e = errno;
        free(sidecar);
        return dls_st_fail(w, DLS_ERR_IO, b, "cannot truncate the torn tail", e);
    }
    if (t->io->fdatasync(t->fd) < 0) {
        int e = errno;
        free(sidecar);
        return dls_st_fail(w, DLS_ERR_IO, b, "cannot fdatasync the truncated file", e);
    }
    if (t->dirname) {
        /* report the path, not the name relative to the directory */
        size_t cap = strlen(t->dirname) + strlen(sidecar) + 2;
        char *full = malloc(cap);
        if (full) {
            snprintf(full, cap, "%s/%s", t->dirname, sidecar);
            free(sidecar);
            sidecar = full;
        }
    }
    free((char *)t->cut.sidecar);
    t->cut.offset = b;
    t->cut.bytes = n;
    t->cut.valid_records = valid;
    t->cut.capped = capped;
    t->cut.cuts++;
    t->cut.sidecar = sidecar;
    return 0;
}

/* ---- the operator's repair ---------------------------------------------- */

int dls_medium_repair(const char *path, const dls_medium_settings *s, dls_torn_cut *out,
                      char **sidecar, dls_where *w)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (sidecar)
        *sidecar = NULL;
    if (!path || dls_jetstream_is_url(path) || !strncmp(path, "redis://", 8))
        return dls_st_fail(w, DLS_ERR_INVAL, 0, "repair takes the path of a file or "
                                                "segmented medium", 0);
    dls_medium_settings set;
    if (s)
        set = *s;
    else
        dls_medium_settings_default(&set);
    set.exclusive = false; /* a shared writer cuts (stream-format.md rev 4) */
    dls_medium *m = NULL;
    int rc = dls_medium_open(&m, path, DLS_OPEN_APPEND, &set, w);
    if (rc)
        return rc;
    dls_torn_cut cut;
    if (dls_medium_last_cut(m, &cut)) {
        if (sidecar && cut.sidecar && !(*sidecar = strdup(cut.sidecar)))
            rc = dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
        cut.sidecar = NULL;
        if (out)
            *out = cut;
    }
    dls_medium_del(m);
    return rc;
}

/* ---- a reader's check of the end ------------------------------------------ */

static int check_fd(int fd, dls_torn_cut *out, dls_where *w)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return dls_st_fail(w, DLS_ERR_IO, 0, "cannot stat the stream file", errno);
    uint64_t size = (uint64_t)st.st_size;
    if (size < DLS_STREAM_HEADER_LEN)
        return dls_st_fail(w, DLS_ERR_HEADER, size,
                           "the file is shorter than its 48-byte header", 0);
    dls_st_header h;
    bool have = false;
    int rc = dls_st_read_header(fd, &h, &have, w);
    if (rc)
        return rc;
    dls_st_reader r;
    if (dls_st_reader_init(&r, fd, DLS_ST_READ_BUF))
        return dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
    dls_st_reader_seek(&r, DLS_STREAM_HEADER_LEN, h.base);
    for (;;) {
        const uint8_t *p;
        size_t n;
        uint64_t eof = size;
        dls_st_rd rd = dls_st_reader_next(&r, size, &p, &n, &eof, w);
        if (rd == DLS_ST_RD_OK && dls_record_is_seal(p, n))
            break; /* the first seal ends the medium, whatever follows */
        if (rd == DLS_ST_RD_OK)
            continue;
        if (rd == DLS_ST_RD_EOF)
            break;
        if (rd != DLS_ST_RD_BAD) {
            dls_st_reader_fini(&r);
            return DLS_ERR_IO;
        }
        uint64_t b = r.off;
        dls_st_reader_fini(&r);
        if (size - b > DLS_TORN_TAIL_MAX)
            return dls_st_fail(w, DLS_ERR_CORRUPT, b,
                               w && w->reason ? w->reason : "bad record", 0);
        size_t len = (size_t)(size - b);
        uint8_t *buf = malloc(len);
        if (!buf)
            return dls_st_fail(w, DLS_ERR_NOMEM, b, "out of memory", 0);
        if (read_all_at(fd, buf, len, b) < 0) {
            int e = errno;
            free(buf);
            return dls_st_fail(w, DLS_ERR_IO, b, "cannot read the stream file", e);
        }
        out->offset = b;
        out->bytes = len;
        out->valid_records = dls_st_count_valid(buf, len, COUNT_BUDGET, &out->capped);
        free(buf);
        return 0;
    }
    dls_st_reader_fini(&r);
    return 0;
}

int dls_medium_check_tail(const char *path, dls_torn_cut *out, dls_where *w)
{
    if (!path || !out)
        return dls_st_fail(w, DLS_ERR_INVAL, 0, "no path or no output", 0);
    memset(out, 0, sizeof *out);
    if (dls_jetstream_is_url(path) || !strncmp(path, "redis://", 8))
        return dls_st_fail(w, DLS_ERR_INVAL, 0, "a remote medium has no tail to check", 0);
    struct stat st;
    if (stat(path, &st) < 0)
        return dls_st_fail(w, errno == ENOENT ? DLS_ERR_NOTFOUND : DLS_ERR_IO, 0,
                           "cannot stat the medium", errno);
    int dirfd = AT_FDCWD;
    const char *name = path;
    char seg[SEG_NAME_LEN + 1];
    if (S_ISDIR(st.st_mode)) {
        dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
            return dls_st_fail(w, DLS_ERR_IO, 0, "cannot open the segment directory", errno);
        seg_ent *v = NULL;
        size_t n = 0;
        int rc = dls_st_seg_list(dirfd, false, &v, &n, w);
        if (!rc && n == 0)
            rc = 1; /* no segment yet: nothing to check */
        if (!rc)
            dls_st_seg_name(seg, v[n - 1].base);
        free(v);
        if (rc) {
            close(dirfd);
            return rc < 0 ? rc : 0;
        }
        name = seg;
    }
    int fd = dls_st_open_regular(dirfd, name, O_RDONLY);
    int rc;
    if (fd < 0)
        rc = dls_st_fail(w, errno == EINVAL ? DLS_ERR_INVAL : DLS_ERR_IO, 0,
                         "cannot open the stream file", errno);
    else
        rc = check_fd(fd, out, w);
    if (fd >= 0)
        close(fd);
    if (dirfd != AT_FDCWD)
        close(dirfd);
    return rc;
}

/* ---- finding sidecars ---------------------------------------------------- */

static bool is_sidecar_of(const char *entry, const char *base, size_t blen)
{
    if (base)
        return !strncmp(entry, base, blen) && !strncmp(entry + blen, TORN_TAG, strlen(TORN_TAG));
    /* inside a segmented directory: "<20 digits>.seg.torn-…" */
    const char *t = strstr(entry, ".seg" TORN_TAG);
    return t && t - entry == 20;
}

int dls_medium_sidecars(const char *path, size_t *count, char **first, dls_where *w)
{
    if (!path || !count)
        return dls_st_fail(w, DLS_ERR_INVAL, 0, "no path or no count", 0);
    *count = 0;
    if (first)
        *first = NULL;
    struct stat st;
    if (stat(path, &st) < 0)
        return dls_st_fail(w, errno == ENOENT ? DLS_ERR_NOTFOUND : DLS_ERR_IO, 0,
                           "cannot stat the medium", errno);
    bool dir = S_ISDIR(st.st_mode);
    char *dname, *base = NULL;
    if (dir) {
        dname = strdup(path);
    } else {
        const char *slash = strrchr(path, '/');
        dname = !slash ? strdup(".") : slash == path ? strdup("/")
                                                     : strndup(path, (size_t)(slash - path));
        base = strdup(slash ? slash + 1 : path);
        if (!base) {
            free(dname);
            return dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
        }
    }
    if (!dname) {
        free(base);
        return dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
    }
    DIR *d = opendir(dname);
    if (!d) {
        int e = errno;
        free(dname);
        free(base);
        return dls_st_fail(w, DLS_ERR_IO, 0, "cannot list the medium's directory", e);
    }
    size_t blen = base ? strlen(base) : 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_sidecar_of(e->d_name, base, blen))
            continue;
        ++*count;
        if (first && !*first) {
            size_t cap = strlen(dname) + strlen(e->d_name) + 2;
            *first = malloc(cap);
            if (!*first) {
                rc = dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
                break;
            }
            snprintf(*first, cap, "%s/%s", dname, e->d_name);
        }
    }
    closedir(d);
    free(dname);
    free(base);
    return rc;
}
