/* Fuzz target: keyring text and secret key file text through their parsers.
 * Never crashes; a failure names a line >= 1, a column >= 1 and a reason; a
 * success holds every name its lines list, with their keys. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daolease/attrib.h"
#include "resolver/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_success(const dls_keyring *kr, const uint8_t *data, size_t size)
{
    size_t pos = 0, len, names = 0;
    const uint8_t *line;
    uint64_t lineno = 0;
    uint8_t key[64];
    dls_key_line kl;
    while (dls_text_next_line(data, size, &pos, &line, &len)) {
        int rc = dls_key_line_parse(line, len, ++lineno, DLS_LINE_PUBLIC, &kl, key, NULL);
        if (rc < 0)
            abort(); /* the keyring parsed, so every line must */
        if (rc == 0)
            continue;
        names++;
        dls_key_kind kind;
        const uint8_t *k;
        if (dls_keyring_lookup(kr, kl.name, kl.name_len, &kind, &k) || kind != kl.kind ||
            memcmp(k, key, 32) || !dls_name_valid(kl.name, kl.name_len))
            abort();
    }
    if (names != dls_keyring_count(kr))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dls_keyring *kr = NULL;
    dls_where w = {0};
    int rc = dls_keyring_parse(&kr, (const char *)data, size, &w);
    if (rc == 0) {
        check_success(kr, data, size);
        dls_keyring_del(kr);
    } else {
        if (kr || (rc != DLS_ERR_KEYRING && rc != DLS_ERR_DUPLICATE))
            abort();
        if (w.line < 1 || w.offset < 1 || w.offset > DLS_KEYRING_LINE_MAX + 1 || !w.reason)
            abort();
    }
    dls_secret *s = NULL;
    memset(&w, 0, sizeof w);
    rc = dls_secret_parse(&s, data, size, &w);
    if (rc == 0) {
        if (!dls_name_valid((const uint8_t *)dls_secret_name(s), strlen(dls_secret_name(s))))
            abort();
        char line[DLS_NAME_MAX + 96];
        if (dls_secret_keyring_line(s, line, sizeof line))
            abort();
        dls_keyring *one;
        if (dls_keyring_parse(&one, line, strlen(line), NULL) || dls_keyring_count(one) != 1)
            abort();
        dls_keyring_del(one);
        dls_secret_del(s);
    } else if (s || rc != DLS_ERR_KEYRING || !w.reason || w.line < 1) {
        abort();
    }
    return 0;
}
