/* The keyring line grammar (attribution.md, "Keyrings and keys"), shared by
 * keyring files and secret key files, and the reader of small secret files. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "resolver/internal.h"

bool dls_name_valid(const uint8_t *name, size_t n)
{
    if (!name || n < 1 || n > DLS_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 0x21 && name[i] <= 0x7e) || name[i] >= 0x80))
            return false;
    return true;
}

int dls_text_next_line(const uint8_t *text, size_t n, size_t *pos,
                       const uint8_t **line, size_t *len)
{
    size_t at = *pos;
    if (at >= n)
        return 0;
    const uint8_t *lf = memchr(text + at, '\n', n - at);
    size_t end = lf ? (size_t)(lf - text) : n;
    size_t l = end - at;
    if (lf && l > 0 && text[end - 1] == '\r')
        l--; /* CRLF */
    *line = text + at;
    *len = l;
    *pos = lf ? end + 1 : n;
    return 1;
}

static bool blank(uint8_t c)
{
    return c == ' ' || c == '\t';
}

/* The index of the first byte of p[0..n) that is not a hex digit (either
 * case), or n, through libsodium's decoder. n is at most
 * a keyring line. sodium_hex2bin stops at the first invalid byte, but backs
 * off one digit when it stops after an odd count: then p[k] is a digit and
 * the byte after it is the culprit (or the end). */
static size_t hex_prefix(const uint8_t *p, size_t n)
{
    uint8_t scratch[DLS_KEYRING_LINE_MAX / 2 + 1];
    const char *end = (const char *)p;
    size_t bin_len;
    sodium_hex2bin(scratch, sizeof scratch, (const char *)p, n, NULL, &bin_len, &end);
    sodium_memzero(scratch, sizeof scratch); /* key material */
    size_t k = (size_t)(end - (const char *)p);
    if (k < n) {
        const char two[2] = {(char)p[k], (char)p[k]};
        uint8_t one;
        if (sodium_hex2bin(&one, 1, two, 2, NULL, NULL, NULL) == 0)
            k++; /* p[k] is a digit: the one after it is not (or the end) */
    }
    return k;
}

typedef struct field {
    const uint8_t *p;
    size_t n;
    size_t col; /* 1-based */
} field;

/* Splits into at most 4 fields (a 4th is an error for the caller); `#`
 * where a field would start ends the line. */
static unsigned split(const uint8_t *line, size_t len, field f[4])
{
    unsigned nf = 0;
    size_t i = 0;
    while (nf < 4) {
        while (i < len && blank(line[i]))
            i++;
        if (i >= len || line[i] == '#')
            break;
        size_t s = i;
        while (i < len && !blank(line[i]))
            i++;
        f[nf].p = line + s;
        f[nf].n = i - s;
        f[nf].col = s + 1;
        nf++;
    }
    return nf;
}

static bool field_is(const field *f, const char *word)
{
    size_t n = strlen(word);
    return f->n == n && memcmp(f->p, word, n) == 0;
}

static int bad(dls_where *w, uint64_t line, size_t col, const char *reason)
{
    return dls_where_fill(w, DLS_ERR_KEYRING,
                          (dls_where){.line = line, .offset = col, .reason = reason});
}

int dls_key_line_parse(const uint8_t *line, size_t len, uint64_t lineno,
                       dls_line_kind lk, dls_key_line *kl, uint8_t *key_out,
                       dls_where *w)
{
    if (len > DLS_KEYRING_LINE_MAX)
        return bad(w, lineno, DLS_KEYRING_LINE_MAX + 1, "line longer than 1024 bytes");
    field f[4];
    unsigned nf = split(line, len, f);
    if (nf == 0)
        return 0;
    /* name */
    if (f[0].n > DLS_NAME_MAX)
        return bad(w, lineno, f[0].col + DLS_NAME_MAX, "name longer than 64 bytes");
    for (size_t i = 0; i < f[0].n; i++)
        if (!dls_name_valid(f[0].p + i, 1))
            return bad(w, lineno, f[0].col + i,
                       "invalid byte in name (allowed: 0x21-0x7E, 0x80-0xFF)");
    if (nf < 2)
        return bad(w, lineno, len + 1, "missing key kind after the name");
    /* kind */
    size_t hexlen;
    if (lk == DLS_LINE_PUBLIC) {
        if (field_is(&f[1], "ed25519"))
            kl->kind = DLS_KEY_ED25519;
        else if (field_is(&f[1], "mac"))
            kl->kind = DLS_KEY_MAC;
        else
            return bad(w, lineno, f[1].col, "unknown key kind (expected ed25519 or mac)");
        hexlen = 2 * DLS_KEY_LEN;
    } else {
        if (field_is(&f[1], "ed25519-secret")) {
            kl->kind = DLS_KEY_ED25519;
            hexlen = 2 * DLS_SECRET_KEY_LEN;
        } else if (field_is(&f[1], "mac-secret")) {
            kl->kind = DLS_KEY_MAC;
            hexlen = 2 * DLS_KEY_LEN;
        } else {
            return bad(w, lineno, f[1].col,
                       "unknown key kind (expected ed25519-secret or mac-secret)");
        }
    }
    if (nf < 3)
        return bad(w, lineno, len + 1, "missing key after the key kind");
    /* key: report the first bad digit before a wrong length */
    size_t good = hex_prefix(f[2].p, f[2].n);
    if (good < f[2].n)
        return bad(w, lineno, f[2].col + good, "invalid hex digit in key");
    if (f[2].n != hexlen)
        return bad(w, lineno, f[2].col,
                   hexlen == 128 ? "secret key must be 128 hex digits"
                                 : "key must be 64 hex digits");
    if (nf > 3)
        return bad(w, lineno, f[3].col, "unexpected field after the key");
    size_t key_len;
    if (sodium_hex2bin(key_out, hexlen / 2, (const char *)f[2].p, f[2].n, NULL, &key_len,
                       NULL) != 0 ||
        key_len != hexlen / 2)
        return bad(w, lineno, f[2].col, "invalid hex digit in key"); /* checked above */
    kl->name = f[0].p;
    kl->name_len = f[0].n;
    kl->name_col = f[0].col;
    kl->key_len = hexlen / 2;
    return 1;
}

int dls_read_secret_file(const char *path, size_t max, uint8_t **buf, size_t *n,
                         unsigned *mode_out, dls_where *w)
{
    *buf = NULL;
    *n = 0;
    /* O_NONBLOCK: opening a FIFO for reading must not wait for a writer;
     * the file is refused below unless regular, and
     * O_NONBLOCK does not change reads of a regular file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return dls_where_fill(w, DLS_ERR_IO,
                              (dls_where){.reason = "cannot open the file", .sys_errno = errno});
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return dls_where_fill(w, DLS_ERR_IO,
                              (dls_where){.reason = "cannot stat the file", .sys_errno = e});
    }
    if (!S_ISREG(st.st_mode)) { /* no OS error: the reason says it all */
        close(fd);
        return dls_where_fill(
            w, DLS_ERR_IO,
            (dls_where){.reason = "not a regular file (a FIFO, device or directory is refused)"});
    }
    if (mode_out)
        *mode_out = (unsigned)st.st_mode;
    if ((uint64_t)st.st_size > max) {
        close(fd);
        return dls_where_fill(w, DLS_ERR_TOOBIG, (dls_where){.reason = "file too large"});
    }
    size_t want = (size_t)st.st_size;
    uint8_t *b = sodium_malloc(want + 1);
    if (!b) {
        close(fd);
        return DLS_ERR_NOMEM;
    }
    size_t got = 0;
    /* Read up to one byte beyond the announced size: a file that grew
     * between fstat and read is refused rather than cut. */
    while (got < want + 1) {
        ssize_t r = pread(fd, b + got, want + 1 - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            sodium_free(b);
            return dls_where_fill(w, DLS_ERR_IO,
                                  (dls_where){.reason = "cannot read the file", .sys_errno = e});
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got > want) {
        sodium_free(b);
        return dls_where_fill(w, DLS_ERR_IO,
                              (dls_where){.reason = "the file changed while being read"});
    }
    *buf = b;
    *n = got;
    return 0;
}
