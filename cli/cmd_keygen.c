/* daolease keygen NAME [--mac] [--dir D] — makes a key, writes D/NAME.secret
 * (mode 0600, never overwriting) and prints the keyring line (cli.md,
 * attribution.md "Keyrings and keys"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "daolease/attrib.h"

static void keygen_usage(FILE *to)
{
    fprintf(to,
            "usage: daolease keygen NAME [--mac] [--dir D]\n\n"
            "Makes a key for the party NAME, writes it to D/NAME.secret (mode 0600;\n"
            "an existing file is never overwritten) and prints the line to add to\n"
            "every keyring that must recognise NAME.\n\n"
            "  NAME      1-64 bytes, each in 0x21-0x7E or 0x80-0xFF, no '/'\n"
            "  --mac     a 32-byte HMAC-SHA-512-256 key (shared: the keyring line\n"
            "            holds the secret itself); default: an Ed25519 key pair\n"
            "  --dir D   the directory for NAME.secret (default: .)\n");
}

int dls_cmd_keygen(int argc, char **argv)
{
    if (dls_cli_wants_help(argc, argv)) {
        keygen_usage(stdout);
        return DLS_EXIT_OK;
    }
    const char *name = NULL, *dir = ".";
    dls_key_kind kind = DLS_KEY_ED25519;
    for (int i = 1; i < argc; i++) {
        const char *v;
        int bad = 0;
        if (!strcmp(argv[i], "--mac")) {
            kind = DLS_KEY_MAC;
        } else if ((v = dls_cli_opt_value("keygen", argc, argv, &i, "--dir", &bad))) {
            dir = v;
        } else if (bad) {
            return DLS_EXIT_USAGE;
        } else if (!strncmp(argv[i], "--", 2)) {
            dls_cli_error("keygen", "unknown option %.*s (see 'daolease keygen --help')",
                          (int)strcspn(argv[i], "="), argv[i]);
            return DLS_EXIT_USAGE;
        } else if (!name) {
            name = argv[i];
        } else {
            dls_cli_error("keygen", "unexpected argument %s (see 'daolease keygen --help')",
                          argv[i]);
            return DLS_EXIT_USAGE;
        }
    }
    if (!name)
        return dls_cli_usage("keygen", "a party NAME is required");
    if (!dls_name_valid((const uint8_t *)name, strlen(name))) {
        dls_cli_error("keygen", "invalid name: 1-64 bytes, each in 0x21-0x7E or 0x80-0xFF");
        return DLS_EXIT_USAGE;
    }
    if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
        dls_cli_error("keygen", "invalid name %s: it names the file NAME.secret, so no '/'",
                      name);
        return DLS_EXIT_USAGE;
    }

    size_t plen = strlen(dir) + 1 + strlen(name) + sizeof ".secret";
    char *path = malloc(plen);
    if (!path) {
        dls_cli_error("keygen", "out of memory");
        return DLS_EXIT_FAIL;
    }
    snprintf(path, plen, "%s/%s.secret", dir, name);

    dls_secret *s = NULL;
    dls_where w = {0};
    int rc = dls_secret_generate(&s, name, kind);
    if (rc) {
        dls_cli_error("keygen", "%s", dls_strerror(rc));
        free(path);
        return DLS_EXIT_FAIL;
    }
    rc = dls_secret_save(s, path, &w);
    if (rc) {
        if (rc == DLS_ERR_IO && w.sys_errno)
            dls_cli_error("keygen", "%s: %s: %s", path, w.reason ? w.reason : dls_strerror(rc),
                          strerror(w.sys_errno));
        else
            dls_cli_error("keygen", "%s: %s", path, w.reason ? w.reason : dls_strerror(rc));
        dls_secret_del(s);
        free(path);
        return DLS_EXIT_FAIL;
    }
    char line[DLS_NAME_MAX + 96];
    rc = dls_secret_keyring_line(s, line, sizeof line);
    dls_secret_del(s);
    if (rc) {
        dls_cli_error("keygen", "%s", dls_strerror(rc));
        free(path);
        return DLS_EXIT_FAIL;
    }
    printf("%s\n", line);
    fflush(stdout);
    free(path);
    return DLS_EXIT_OK;
}
