/* Atomic creation of files (stream-format.md, Writers): a temporary name in
 * the same directory, written and fsynced, then link()ed to its final name
 * — which fails rather than replace an existing file — and the directory
 * fsynced. Where the file system has no hard links, renameat2 with
 * RENAME_NOREPLACE gives the same no-clobber guarantee. */
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stream/internal.h"

int dls_st_random_id(uint8_t id[DLS_MEDIUM_ID_LEN])
{
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    randombytes_buf(id, DLS_MEDIUM_ID_LEN);
    return 0;
}

int dls_st_random_hex(char out[17])
{
    uint8_t b[8];
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    randombytes_buf(b, sizeof b);
    sodium_bin2hex(out, 17, b, sizeof b);
    return 0;
}

int dls_st_fsync_dir(int dirfd, const char *path, dls_where *w)
{
    int fd;
    if (path) {
        const char *slash = strrchr(path, '/');
        char *dir;
        if (!slash)
            dir = strdup(".");
        else if (slash == path)
            dir = strdup("/");
        else
            dir = strndup(path, (size_t)(slash - path));
        if (!dir)
            return dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
        fd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        free(dir);
        if (fd < 0)
            return dls_st_fail(w, DLS_ERR_IO, 0, "cannot open the directory to fsync it", errno);
    } else {
        fd = dirfd;
    }
    int rc = 0;
    if (fsync(fd) < 0 && errno != EINVAL && errno != EROFS)
        rc = dls_st_fail(w, DLS_ERR_IO, 0, "cannot fsync the directory", errno);
    if (path)
        close(fd);
    return rc;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = pwrite(fd, p + done, n - done, (off_t)done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        done += (size_t)k;
    }
    return 0;
}

int dls_st_create_file_at(int dirfd, const char *path, const uint8_t *data, size_t len,
                          int *fd_out, dls_where *w)
{
    char suffix[17];
    if (dls_st_random_hex(suffix))
        return dls_st_fail(w, DLS_ERR_SODIUM, 0, "libsodium failed to initialise", 0);
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (!tmp)
        return dls_st_fail(w, DLS_ERR_NOMEM, 0, "out of memory", 0);
    snprintf(tmp, n, "%s.tmp-%s", path, suffix);
    int fd = openat(dirfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        free(tmp);
        return dls_st_fail(w, e == ENOENT ? DLS_ERR_NOTFOUND : DLS_ERR_IO, 0,
                           "cannot create a temporary file beside the medium", e);
    }
    int rc = 0;
    if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
        rc = dls_st_fail(w, DLS_ERR_IO, 0, "cannot write the new file", errno);
        goto fail;
    }
    if (linkat(dirfd, tmp, dirfd, path, 0) == 0) {
        unlinkat(dirfd, tmp, 0);
    } else if (errno == EEXIST) {
        rc = dls_st_fail(w, DLS_ERR_EXISTS, 0, "the path exists already", EEXIST);
        goto fail;
    } else if (renameat2(dirfd, tmp, dirfd, path, RENAME_NOREPLACE) < 0) {
        int e = errno;
        rc = dls_st_fail(w, e == EEXIST ? DLS_ERR_EXISTS : DLS_ERR_IO, 0,
                         e == EEXIST ? "the path exists already"
                                     : "cannot give the new file its name",
                         e);
        goto fail;
    }
    free(tmp);
    rc = dirfd == AT_FDCWD ? dls_st_fsync_dir(AT_FDCWD, path, w) : dls_st_fsync_dir(dirfd, NULL, w);
    if (rc) {
        close(fd);
        return rc;
    }
    if (fd_out)
        *fd_out = fd;
    else
        close(fd);
    return 0;
fail:
    unlinkat(dirfd, tmp, 0);
    free(tmp);
    close(fd);
    return rc;
}

int dls_st_open_regular(int dirfd, const char *name, int flags)
{
    int fd = openat(dirfd, name, flags | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int e = 0;
    if (fstat(fd, &st) < 0)
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = EINVAL;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}
