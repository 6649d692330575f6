/* Fuzz target for the JSON mapping (cli.md). The input is read twice:
 *  - as JSON text: JSON → msgpack → JSON → msgpack must not crash, and when
 *    the second reading succeeds it gives the same bytes (it fails only for
 *    a {"$map": ...} repeating a str key, which a JSON object cannot hold);
 *  - as msgpack: the emitter never crashes, and what it emits reads back. */
#include <stdlib.h>
#include <string.h>

#include "cli/json/json.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *mp = NULL, *mp2 = NULL;
    size_t n, n2;
    dls_json_error e;
    if (dls_json_to_msgpack((const char *)data, size, &mp, &n, &e) == 0) {
        dls_jbuf j = {0};
        CHECK(dls_json_emit(&j, mp, n, NULL) == 0);
        if (dls_json_to_msgpack(j.p, j.n, &mp2, &n2, &e) == 0) {
            CHECK(n == n2 && !memcmp(mp, mp2, n));
            free(mp2);
        }
        dls_jbuf_free(&j);
        free(mp);
    }
    dls_jbuf j = {0};
    dls_where w;
    int rc = dls_json_emit(&j, data, size, &w);
    if (rc == 0) {
        if (dls_json_to_msgpack(j.p, j.n, &mp, &n, &e) == 0)
            free(mp);
    } else {
        CHECK(w.reason && w.offset <= size);
    }
    dls_jbuf_free(&j);
    return 0;
}
