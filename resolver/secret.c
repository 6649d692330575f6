/* Secret keys (attribution.md, "Keyrings and keys"): one sodium_malloc
 * block per secret, read-only after construction, wiped on free; secret key
 * files refused when readable by group or others, written 0600 atomically. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "resolver/internal.h"

#define SECRET_FILE_MAX (DLS_KEYRING_LINE_MAX + 2)

struct dls_secret {
    dls_key_kind kind;
    size_t name_len;
    uint8_t pub[DLS_KEY_LEN];        /* Ed25519 public key, or the MAC key */
    uint8_t sk[DLS_SECRET_KEY_LEN];  /* Ed25519 seed || public key, or MAC key */
    char name[DLS_NAME_MAX + 1];
};

/* A writable secret block for `name` (validated), or an error. */
static int secret_alloc(dls_secret **out, const uint8_t *name, size_t n,
                        dls_key_kind kind)
{
    *out = NULL;
    if (!dls_name_valid(name, n) || (kind != DLS_KEY_ED25519 && kind != DLS_KEY_MAC))
        return DLS_ERR_INVAL;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    dls_secret *s = sodium_malloc(sizeof *s);
    if (!s)
        return DLS_ERR_NOMEM;
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->name_len = n;
    memcpy(s->name, name, n);
    *out = s;
    return 0;
}

static int secret_seal(dls_secret *s, dls_secret **out)
{
    sodium_mprotect_readonly(s);
    *out = s;
    return 0;
}

int dls_secret_generate(dls_secret **out, const char *name, dls_key_kind kind)
{
    if (!out || !name)
        return DLS_ERR_INVAL;
    dls_secret *s;
    int rc = secret_alloc(&s, (const uint8_t *)name, strlen(name), kind);
    if (rc) {
        *out = NULL;
        return rc;
    }
    if (kind == DLS_KEY_ED25519) {
        if (crypto_sign_keypair(s->pub, s->sk) != 0) {
            sodium_free(s);
            *out = NULL;
            return DLS_ERR_SODIUM;
        }
    } else {
        crypto_auth_keygen(s->sk);
        memcpy(s->pub, s->sk, DLS_KEY_LEN);
    }
    return secret_seal(s, out);
}

int dls_secret_from_seed(dls_secret **out, const char *name, dls_key_kind kind,
                         const uint8_t seed[32])
{
    if (!out || !name || !seed)
        return DLS_ERR_INVAL;
    dls_secret *s;
    int rc = secret_alloc(&s, (const uint8_t *)name, strlen(name), kind);
    if (rc) {
        *out = NULL;
        return rc;
    }
    if (kind == DLS_KEY_ED25519) {
        if (crypto_sign_seed_keypair(s->pub, s->sk, seed) != 0) {
            sodium_free(s);
            *out = NULL;
            return DLS_ERR_SODIUM;
        }
    } else {
        memcpy(s->sk, seed, DLS_KEY_LEN);
        memcpy(s->pub, seed, DLS_KEY_LEN);
    }
    return secret_seal(s, out);
}

int dls_secret_parse(dls_secret **out, const uint8_t *text, size_t n, dls_where *w)
{
    if (!out || (!text && n))
        return DLS_ERR_INVAL;
    *out = NULL;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    size_t pos = 0;
    const uint8_t *line;
    size_t len;
    if (!dls_text_next_line(text, n, &pos, &line, &len))
        return dls_where_fill(w, DLS_ERR_KEYRING,
                              (dls_where){.line = 1,
                                          .offset = 1,
                                          .reason = "empty secret key file"});
    if (pos < n)
        return dls_where_fill(w, DLS_ERR_KEYRING,
                              (dls_where){.line = 2,
                                          .offset = 1,
                                          .reason = "a secret key file holds exactly one line"});
    /* The key is decoded straight into the secret's own block. */
    dls_secret *s = sodium_malloc(sizeof *s);
    if (!s)
        return DLS_ERR_NOMEM;
    memset(s, 0, sizeof *s);
    dls_key_line kl;
    int rc = dls_key_line_parse(line, len, 1, DLS_LINE_SECRET, &kl, s->sk, w);
    if (rc == 0)
        rc = dls_where_fill(w, DLS_ERR_KEYRING,
                            (dls_where){.line = 1,
                                        .offset = 1,
                                        .reason = "no key line in the secret key file"});
    if (rc < 0) {
        sodium_free(s);
        return rc;
    }
    s->kind = kl.kind;
    s->name_len = kl.name_len;
    memcpy(s->name, kl.name, kl.name_len);
    if (kl.kind == DLS_KEY_ED25519) {
        /* The public half must be the one its seed derives. */
        uint8_t sk2[DLS_SECRET_KEY_LEN];
        crypto_sign_seed_keypair(s->pub, sk2, s->sk);
        sodium_memzero(sk2, sizeof sk2);
        if (sodium_memcmp(s->pub, s->sk + 32, DLS_KEY_LEN) != 0) {
            sodium_free(s);
            return dls_where_fill(
                w, DLS_ERR_KEYRING,
                (dls_where){.line = 1,
                            .offset = kl.name_col,
                            .reason = "the secret key's public half does not match its seed"});
        }
    } else {
        memcpy(s->pub, s->sk, DLS_KEY_LEN);
    }
    return secret_seal(s, out);
}

int dls_secret_load(dls_secret **out, const char *path, dls_where *w)
{
    if (!out || !path)
        return DLS_ERR_INVAL;
    *out = NULL;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    uint8_t *buf;
    size_t n;
    unsigned mode = 0;
    int rc = dls_read_secret_file(path, SECRET_FILE_MAX, &buf, &n, &mode, w);
    if (rc == DLS_ERR_TOOBIG)
        return dls_where_fill(w, DLS_ERR_KEYRING,
                              (dls_where){.line = 2,
                                          .offset = 1,
                                          .reason = "a secret key file holds exactly one line"});
    if (rc)
        return rc;
    if (mode & 077) {
        sodium_free(buf);
        return dls_where_fill(w, DLS_ERR_PERM,
                              (dls_where){.reason =
                                              "secret key file is accessible by group or others "
                                              "(mode & 077); run `chmod 600 FILE`"});
    }
    rc = dls_secret_parse(out, buf, n, w);
    sodium_free(buf);
    return rc;
}

int dls_secret_keyring_line(const dls_secret *s, char *buf, size_t cap)
{
    if (!s || !buf)
        return DLS_ERR_INVAL;
    char hex[2 * DLS_KEY_LEN + 1];
    sodium_bin2hex(hex, sizeof hex, s->pub, DLS_KEY_LEN); /* lower case */
    int k = snprintf(buf, cap, "%s %s %s", s->name,
                     s->kind == DLS_KEY_ED25519 ? "ed25519" : "mac", hex);
    sodium_memzero(hex, sizeof hex); /* a MAC key is a secret too */
    if (k < 0 || (size_t)k >= cap) {
        if (cap)
            sodium_memzero(buf, cap);
        return DLS_ERR_TOOBIG;
    }
    return 0;
}

static int io_fail(dls_where *w, const char *reason)
{
    return dls_where_fill(w, DLS_ERR_IO, (dls_where){.reason = reason, .sys_errno = errno});
}

/* fsync of the directory holding `path`, so that the new name is durable. */
static void sync_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) {
        strcpy(dir, ".");
    } else {
        size_t k = (size_t)(slash - path);
        if (k == 0)
            k = 1;
        if (k >= sizeof dir)
            return;
        memcpy(dir, path, k);
        dir[k] = '\0';
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int dls_secret_save(const dls_secret *s, const char *path, dls_where *w)
{
    if (!s || !path || !*path)
        return DLS_ERR_INVAL;
    if (sodium_init() < 0)
        return DLS_ERR_SODIUM;
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 32);
    if (!tmp)
        return DLS_ERR_NOMEM;
    uint8_t rnd[8];
    char rhex[17];
    randombytes_buf(rnd, sizeof rnd);
    sodium_bin2hex(rhex, sizeof rhex, rnd, sizeof rnd);
    snprintf(tmp, plen + 32, "%s.tmp-%s", path, rhex);

    /* "NAME ed25519-secret HEX128\n" at most 64 + 16 + 128 + 3 bytes. */
    size_t cap = DLS_NAME_MAX + 160;
    char *text = sodium_malloc(cap);
    if (!text) {
        free(tmp);
        return DLS_ERR_NOMEM;
    }
    size_t klen = s->kind == DLS_KEY_ED25519 ? DLS_SECRET_KEY_LEN : DLS_KEY_LEN;
    int k = snprintf(text, cap, "%s %s ", s->name,
                     s->kind == DLS_KEY_ED25519 ? "ed25519-secret" : "mac-secret");
    sodium_bin2hex(text + k, cap - (size_t)k, s->sk, klen); /* fits: cap holds 2*64+1 */
    size_t len = (size_t)k + 2 * klen;
    text[len++] = '\n';

    int rc = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        rc = io_fail(w, "cannot create the temporary key file");
        goto out;
    }
    if (fchmod(fd, 0600) != 0) {
        rc = io_fail(w, "cannot set mode 0600");
        goto out_unlink;
    }
    for (size_t done = 0; done < len;) {
        ssize_t r = write(fd, text + done, len - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = io_fail(w, "cannot write the key file");
            goto out_unlink;
        }
        done += (size_t)r;
    }
    if (fsync(fd) != 0) {
        rc = io_fail(w, "cannot sync the key file");
        goto out_unlink;
    }
    close(fd);
    fd = -1;
    /* link() never replaces an existing file. */
    if (link(tmp, path) != 0) {
        if (errno == EEXIST) {
            dls_where_fill(w, DLS_ERR_EXISTS,
                           (dls_where){.reason = "the key file exists already; not overwritten"});
            rc = DLS_ERR_EXISTS;
        } else {
            rc = io_fail(w, "cannot create the key file");
        }
        goto out_unlink;
    }
    unlink(tmp);
    sync_dir_of(path);
    goto out;
out_unlink:
    if (fd >= 0)
        close(fd);
    unlink(tmp);
out:
    sodium_free(text);
    free(tmp);
    return rc;
}

const char *dls_secret_name(const dls_secret *s)
{
    return s ? s->name : NULL;
}

size_t dls_secret_name_len(const dls_secret *s)
{
    return s ? s->name_len : 0;
}

dls_key_kind dls_secret_kind(const dls_secret *s)
{
    return s ? s->kind : DLS_KEY_ED25519;
}

const uint8_t *dls_secret_public(const dls_secret *s)
{
    return s ? s->pub : NULL;
}

const uint8_t *dls_secret_key(const dls_secret *s)
{
    return s ? s->sk : NULL;
}

void dls_secret_del(dls_secret *s)
{
    if (s)
        sodium_free(s);
}
