/* daolease command — the read-only HTTP endpoint (docs/observe.md): the
 * page, /status.json, /metrics and /healthz, served by libmicrohttpd's own
 * threads from the snapshot a publisher holds. Only the CLI uses it; the
 * library's judge knows nothing of it. */
#ifndef DLS_CLI_OBSERVE_HTTP_H
#define DLS_CLI_OBSERVE_HTTP_H

#include <stdbool.h>

#include "cli/observe/snap.h"

typedef struct obs_http obs_http;

/* Bounds (docs/observe.md, Security). */
#define OBS_HTTP_CONNECTIONS 256u   /* open connections at once */
#define OBS_HTTP_TIMEOUT_S 10u      /* idle seconds before a connection is dropped */
#define OBS_HTTP_MEMORY (32u * 1024u) /* per connection: request line and headers */
#define OBS_HTTP_RENDERS 8u         /* answers built at once; more: 503 */

/* True when the endpoint was built (meson -Dhttp). */
bool obs_http_available(void);

/* Starts serving `pub` on `addr_port` ("127.0.0.1:9464", "[::1]:0",
 * "localhost:9464"; port 0: any free port). A non-loopback address is
 * refused unless allow_public (then a warning is printed). Prints one line
 * naming `sub` and the reason on failure and returns a negative code; on
 * success prints "<sub>: serving http://ADDR:PORT/" on stderr. */
int obs_http_start(obs_http **out, const char *sub, const char *addr_port, bool allow_public,
                   obs_pub *pub);
/* The port bound (useful with port 0). */
unsigned obs_http_port(const obs_http *h);
/* Stops the threads and closes every connection. NULL is a no-op. */
void obs_http_stop(obs_http *h);

#endif
