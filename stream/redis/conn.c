/* daolease — a minimal blocking Redis connection with a deadline per call
 * (see conn.h for why the socket is not hiredis's). */
#include "stream/redis/conn.h"

#include "daolease/fact.h"
#include "vocab/where.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- output buffer ------------------------------------------------------ */

void rds_buf_reset(rds_buf *b)
{
    b->n = 0;
    b->failed = 0;
}

void rds_buf_free(rds_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    b->failed = 0;
}

static int buf_reserve(rds_buf *b, size_t more)
{
    if (b->failed)
        return -1;
    if (more > SIZE_MAX - b->n) {
        b->failed = 1;
        return -1;
    }
    if (b->n + more <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + more)
        cap = cap > SIZE_MAX / 2 ? b->n + more : cap * 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void buf_put(rds_buf *b, const void *p, size_t n)
{
    if (buf_reserve(b, n) == 0) {
        if (n)
            memcpy(b->p + b->n, p, n);
        b->n += n;
    }
}

static void buf_header(rds_buf *b, char kind, size_t v)
{
    char tmp[32];
    size_t i = sizeof tmp;
    tmp[--i] = '\n';
    tmp[--i] = '\r';
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    tmp[--i] = kind;
    buf_put(b, tmp + i, sizeof tmp - i);
}

void rds_buf_array(rds_buf *b, size_t n)
{
    buf_header(b, '*', n);
}

void rds_buf_bulk(rds_buf *b, const void *p, size_t n)
{
    buf_header(b, '$', n);
    buf_put(b, p, n);
    buf_put(b, "\r\n", 2);
}

void rds_buf_cmd(rds_buf *b, int argc, const char *const *argv, const size_t *lens)
{
    buf_header(b, '*', (size_t)argc);
    for (int i = 0; i < argc; i++) {
        size_t n = lens ? lens[i] : strlen(argv[i]);
        buf_header(b, '$', n);
        buf_put(b, argv[i], n);
        buf_put(b, "\r\n", 2);
    }
}

void rds_buf_cmdv(rds_buf *b, int argc, ...)
{
    va_list ap;
    va_start(ap, argc);
    buf_header(b, '*', (size_t)argc);
    for (int i = 0; i < argc; i++) {
        const char *s = va_arg(ap, const char *);
        size_t n = strlen(s);
        buf_header(b, '$', n);
        buf_put(b, s, n);
        buf_put(b, "\r\n", 2);
    }
    va_end(ap);
}

/* ---- deadline ----------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / (long)DLS_NS_PER_MS;
}

/* Milliseconds left before `deadline`, at least 0. */
static int left_ms(int64_t deadline)
{
    int64_t l = deadline - now_ms();
    if (l < 0)
        return 0;
    return l > 1000000 ? 1000000 : (int)l;
}

/* Waits for `events` on fd until the deadline: 0, or -1 with errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = events};
        int r = poll(&p, 1, left_ms(deadline));
        if (r > 0)
            return 0;
        if (r == 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        if (errno != EINTR)
            return -1;
    }
}

static int transport(dls_where *w, const char *reason, int err)
{
    return dls_where_fill(w, DLS_ERR_TRANSPORT, (dls_where){.reason = reason, .sys_errno = err});
}

/* ---- connection --------------------------------------------------------- */

void rds_conn_init(rds_conn *c, unsigned timeout_ms)
{
    c->fd = -1;
    c->rd = NULL;
    c->timeout_ms = timeout_ms ? timeout_ms : 1;
}

void rds_conn_close(rds_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    if (c->rd)
        redisReaderFree(c->rd);
    c->rd = NULL;
}

static int connect_one(const struct addrinfo *ai, int64_t deadline, int *err)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                    ai->ai_protocol);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS) {
            *err = errno;
            close(fd);
            return -1;
        }
        if (wait_fd(fd, POLLOUT, deadline) != 0) {
            *err = errno;
            close(fd);
            return -1;
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0) {
            *err = soerr ? soerr : errno;
            close(fd);
            return -1;
        }
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    return fd;
}

int rds_conn_open(rds_conn *c, const char *host, const char *port, dls_where *w)
{
    rds_conn_close(c);
    int64_t deadline = now_ms() + c->timeout_ms;
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    int g = getaddrinfo(host, port, &hints, &res);
    if (g != 0)
        return transport(w, "the Redis host name does not resolve", g == EAI_SYSTEM ? errno : 0);
    int err = 0, fd = -1;
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        if (left_ms(deadline) == 0) {
            err = ETIMEDOUT;
            break;
        }
        fd = connect_one(ai, deadline, &err);
    }
    freeaddrinfo(res);
    if (fd < 0)
        return transport(w, err == ETIMEDOUT ? "connecting to Redis timed out"
                                             : "cannot connect to Redis", err);
    c->rd = redisReaderCreate();
    if (!c->rd) {
        close(fd);
        return DLS_ERR_NOMEM;
    }
    c->fd = fd;
    return 0;
}

static int send_all(rds_conn *c, const char *p, size_t n, int64_t deadline)
{
    while (n) {
        ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (wait_fd(c->fd, POLLOUT, deadline) != 0)
                return -1;
            continue;
        }
        return -1;
    }
    return 0;
}

int rds_conn_call(rds_conn *c, const rds_buf *out, size_t nrep, redisReply **rep,
                  dls_where *w)
{
    if (out->failed)
        return DLS_ERR_NOMEM;
    if (c->fd < 0)
        return transport(w, "not connected to Redis", 0);
    int64_t deadline = now_ms() + c->timeout_ms;
    for (size_t i = 0; i < nrep; i++)
        rep[i] = NULL;
    if (send_all(c, out->p, out->n, deadline) != 0) {
        int e = errno;
        rds_conn_close(c);
        return transport(w, e == ETIMEDOUT ? "Redis did not accept the request in time"
                                           : "sending to Redis failed", e);
    }
    size_t got = 0;
    char tmp[16384];
    bool wait_first = true; /* nothing can have arrived before the request left */
    while (got < nrep) {
        void *r = NULL;
        if (redisReaderGetReply(c->rd, &r) != REDIS_OK) {
            for (size_t i = 0; i < got; i++)
                freeReplyObject(rep[i]);
            rds_conn_close(c);
            return transport(w, "Redis answered malformed RESP", 0);
        }
        if (r) {
            rep[got++] = r;
            continue;
        }
        if (wait_first) {
            wait_first = false;
            if (wait_fd(c->fd, POLLIN, deadline) != 0) {
                int e = errno;
                for (size_t i = 0; i < got; i++)
                    freeReplyObject(rep[i]);
                rds_conn_close(c);
                return transport(w, e == ETIMEDOUT ? "Redis did not answer in time"
                                                   : "receiving from Redis failed", e);
            }
        }
        ssize_t k = recv(c->fd, tmp, sizeof tmp, 0);
        if (k > 0) {
            if (redisReaderFeed(c->rd, tmp, (size_t)k) != REDIS_OK)
                k = -1, errno = ENOMEM;
            else
                continue;
        }
        int e = k == 0 ? ECONNRESET : errno;
        if (k < 0 && e == EINTR)
            continue;
        if (k < 0 && (e == EAGAIN || e == EWOULDBLOCK)) {
            if (wait_fd(c->fd, POLLIN, deadline) == 0)
                continue;
            e = errno;
        }
        for (size_t i = 0; i < got; i++)
            freeReplyObject(rep[i]);
        rds_conn_close(c);
        return transport(w, k == 0 ? "Redis closed the connection"
                            : e == ETIMEDOUT ? "Redis did not answer in time"
                                             : "receiving from Redis failed", e);
    }
    return 0;
}
