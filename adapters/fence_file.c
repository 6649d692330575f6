/* Persisting a fence guard's mark: one small file, replaced atomically
 * (temporary file, fsync, rename, directory fsync), read back with pread.
 * This is I/O at the edge; the guard itself (host/fence.c) only calls the
 * persist callback. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daolease/fact.h"
#include "daolease/host.h"

#include "vocab/where.h"

#define MARK_MAGIC "daolease-fence-mark 1 "
#define MARK_MAX_FILE 64

static int fail(dls_where *w, int code, const char *reason, int err)
{
    return dls_where_fill(w, code, (dls_where){.reason = reason, .sys_errno = err});
}

/* Writes all of buf. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, buf, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += k;
        n -= (size_t)k;
    }
    return 0;
}

/* fsyncs the directory holding `path`. */
static int sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (!slash) {
        strcpy(dir, ".");
    } else if (slash == path) {
        strcpy(dir, "/");
    } else {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir) {
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    int err = errno;
    close(fd);
    errno = err;
    return rc;
}

int dls_fence_mark_save(const char *path, uint64_t mark, dls_where *w)
{
    if (!path || !*path || mark > DLS_NS_MAX)
        return fail(w, DLS_ERR_INVAL, "bad path or mark", 0);
    size_t plen = strlen(path);
    if (plen > PATH_MAX - 16)
        return fail(w, DLS_ERR_INVAL, "path too long", ENAMETOOLONG);
    char tmp[PATH_MAX];
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0)
        return fail(w, DLS_ERR_IO, "cannot create the temporary file", errno);
    char buf[MARK_MAX_FILE];
    int n = snprintf(buf, sizeof buf, MARK_MAGIC "%llu\n", (unsigned long long)mark);
    const char *why = NULL;
    if (write_all(fd, buf, (size_t)n) != 0)
        why = "cannot write the temporary file";
    else if (fsync(fd) != 0)
        why = "cannot sync the temporary file";
    int err = errno;
    if (close(fd) != 0 && !why) {
        why = "cannot close the temporary file";
        err = errno;
    }
    if (!why && rename(tmp, path) != 0) {
        why = "cannot rename the temporary file";
        err = errno;
    }
    if (why) {
        unlink(tmp);
        return fail(w, DLS_ERR_IO, why, err);
    }
    if (sync_dir(path) != 0)
        return fail(w, DLS_ERR_IO, "cannot sync the directory", errno);
    return 0;
}

int dls_fence_mark_load(const char *path, uint64_t *mark, dls_where *w)
{
    if (!path || !*path || !mark)
        return fail(w, DLS_ERR_INVAL, "bad path or output", 0);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        if (err == ENOENT)
            return fail(w, DLS_ERR_NOTFOUND, "no mark file", err);
        return fail(w, DLS_ERR_IO, "cannot open the mark file", err);
    }
    char buf[MARK_MAX_FILE + 1];
    ssize_t k;
    do
        k = pread(fd, buf, sizeof buf, 0);
    while (k < 0 && errno == EINTR);
    int err = errno;
    close(fd);
    if (k < 0)
        return fail(w, DLS_ERR_IO, "cannot read the mark file", err);
    size_t n = (size_t)k;
    size_t m = sizeof MARK_MAGIC - 1;
    if (n > MARK_MAX_FILE)
        return fail(w, DLS_ERR_CORRUPT, "mark file too long", 0);
    if (n < m + 2 || memcmp(buf, MARK_MAGIC, m) != 0)
        return fail(w, DLS_ERR_CORRUPT, "not a fence mark file", 0);
    if (buf[n - 1] != '\n')
        return fail(w, DLS_ERR_CORRUPT, "mark file not terminated", 0);
    uint64_t v = 0;
    size_t i = m;
    if (buf[i] == '0' && i + 1 < n - 1)
        return fail(w, DLS_ERR_CORRUPT, "leading zero in the mark", 0);
    for (; i < n - 1; i++) {
        if (buf[i] < '0' || buf[i] > '9')
            return fail(w, DLS_ERR_CORRUPT, "mark is not a decimal number", 0);
        uint64_t d = (uint64_t)(buf[i] - '0');
        if (v > (DLS_NS_MAX - d) / 10)
            return fail(w, DLS_ERR_CORRUPT, "mark above 2^63-1", 0);
        v = v * 10 + d;
    }
    *mark = v;
    return 0;
}

int dls_fence_mark_persist(void *ctx, uint64_t mark)
{
    return dls_fence_mark_save((const char *)ctx, mark, NULL);
}

int dls_fence_guard_save(dls_fence_guard *g, const char *path, dls_where *w)
{
    if (!g)
        return fail(w, DLS_ERR_INVAL, "no guard", 0);
    return dls_fence_mark_save(path, dls_fence_guard_mark(g), w);
}

int dls_fence_guard_load(dls_fence_guard *g, const char *path, dls_where *w)
{
    if (!g)
        return fail(w, DLS_ERR_INVAL, "no guard", 0);
    uint64_t m;
    int rc = dls_fence_mark_load(path, &m, w);
    if (rc != 0)
        return rc;
    rc = dls_fence_guard_set_mark(g, m);
    return rc == DLS_ERR_STALE_TOKEN ? 0 : rc; /* a lower stored mark: keep ours */
}
