/* The tick adapter: the one place in the library that reads the host's
 * monotonic clock and its wall clock (include/daolease/tick.h). It lives outside the core
 * folders on purpose: the judge and the holder learn time only from the
 * tick facts it appends. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "adapters/tick_clock.h"
#include "daolease/tick.h"
#include "vocab/where.h"

#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
#define BOOT_ID_MAX 64
/* An envelope around a tick: fact + author (<= 64) + sig + keys. */
#define TICK_REC_MAX 512

struct dls_tick {
    dls_medium *m;
    dls_tick_source source;
    dls_unit unit;
    uint64_t unit_ns;
    const dls_secret *signer;
    bool have_last;
    uint64_t last;
    char basis[DLS_TICK_BASIS_MAX];
};

void dls_tick_settings_default(dls_tick_settings *s)
{
    if (!s)
        return;
    s->source = DLS_TICK_HOST;
    s->unit = DLS_UNIT_NS;
    s->signer = NULL;
    s->basis = NULL;
}


int dls_tick_fact(uint64_t reading_ns, dls_unit unit, uint8_t *out, size_t cap,
                  size_t *len)
{
    uint64_t per = dls_unit_ns(unit);
    if (per == 0 || reading_ns > DLS_NS_MAX || !out || !len)
        return DLS_ERR_INVAL;
    dls_fact f;
    memset(&f, 0, sizeof f);
    f.kind = DLS_FACT_TICK;
    f.keys = DLS_K_READING;
    int rc = dls_duration_make(&f.reading, unit, reading_ns / per);
    if (rc != 0)
        return DLS_ERR_INVAL;
    return dls_fact_encode(&f, out, cap, len);
}

int dls_tick_basis_format(char *buf, size_t cap, const char *boot_id,
                          size_t boot_id_len, const char *clock_name)
{
    if (!buf || !boot_id || !clock_name)
        return DLS_ERR_INVAL;
    while (boot_id_len > 0 && (boot_id[boot_id_len - 1] == '\n' ||
                               boot_id[boot_id_len - 1] == '\r' ||
                               boot_id[boot_id_len - 1] == ' ' ||
                               boot_id[boot_id_len - 1] == '\t'))
        boot_id_len--;
    if (boot_id_len == 0 || boot_id_len > BOOT_ID_MAX)
        return DLS_ERR_CONFIG;
    char id[BOOT_ID_MAX + 1];
    for (size_t i = 0; i < boot_id_len; i++) {
        char c = boot_id[i];
        if (c >= 'A' && c <= 'F')
            c = (char)(c - 'A' + 'a');
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-'))
            return DLS_ERR_CONFIG;
        id[i] = c;
    }
    id[boot_id_len] = '\0';
    size_t need = 5 + boot_id_len + 1 + strlen(clock_name) + 1;
    if (need > cap)
        return DLS_ERR_TOOBIG;
    memcpy(buf, "boot-", 5);
    memcpy(buf + 5, id, boot_id_len);
    buf[5 + boot_id_len] = '/';
    memcpy(buf + 6 + boot_id_len, clock_name, strlen(clock_name) + 1);
    return 0;
}

int dls_tick_host_basis(char *buf, size_t cap, dls_where *w)
{
    if (!buf)
        return DLS_ERR_INVAL;
    int fd = open(BOOT_ID_PATH, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return dls_where_fill(w, DLS_ERR_IO,
                              (dls_where){.reason = "cannot open " BOOT_ID_PATH,
                                          .sys_errno = errno});
    char id[BOOT_ID_MAX + 8];
    ssize_t got;
    do {
        got = pread(fd, id, sizeof id, 0);
    } while (got < 0 && errno == EINTR);
    int err = errno;
    close(fd);
    if (got < 0)
        return dls_where_fill(w, DLS_ERR_IO,
                              (dls_where){.reason = "cannot read " BOOT_ID_PATH,
                                          .sys_errno = err});
    int rc = dls_tick_basis_format(buf, cap, id, (size_t)got, "CLOCK_MONOTONIC");
    if (rc == DLS_ERR_CONFIG)
        dls_where_fill(w, rc, (dls_where){.reason = BOOT_ID_PATH " does not hold a boot id"});
    return rc;
}

/* "realtime/<name>" (include/daolease/tick.h, Basis). */
static int realtime_basis(char *buf, const char *name, dls_where *w)
{
    size_t n = strlen(name);
    if (n + sizeof "realtime/" > DLS_TICK_BASIS_MAX)
        return dls_where_fill(w, DLS_ERR_INVAL,
                              (dls_where){.reason = "a realtime basis name is 1-118 bytes"});
    memcpy(buf, "realtime/", 9);
    memcpy(buf + 9, name, n + 1);
    return 0;
}

int dls_tick_new(dls_tick **out, dls_medium *m, const dls_tick_settings *s,
                 dls_where *w)
{
    if (!out)
        return DLS_ERR_INVAL;
    *out = NULL;
    dls_tick_settings def;
    if (!s) {
        dls_tick_settings_default(&def);
        s = &def;
    }
    if (!m || (s->source != DLS_TICK_HOST && s->source != DLS_TICK_MANUAL &&
               s->source != DLS_TICK_REALTIME) ||
        dls_unit_ns(s->unit) == 0)
        return dls_where_fill(
            w, DLS_ERR_INVAL,
            (dls_where){.reason = "a medium, a known source and a v1 unit are required"});
    if (s->source == DLS_TICK_REALTIME && (!s->basis || !s->basis[0]))
        return dls_where_fill(
            w, DLS_ERR_INVAL,
            (dls_where){.reason = "a realtime tick source needs a basis name (e.g. the "
                                  "cluster's name): its basis is \"realtime/<name>\""});
    dls_tick *t = calloc(1, sizeof *t);
    if (!t)
        return DLS_ERR_NOMEM;
    t->m = m;
    t->source = s->source;
    t->unit = s->unit;
    t->unit_ns = dls_unit_ns(s->unit);
    t->signer = s->signer;
    int rc = 0;
    if (s->source == DLS_TICK_REALTIME) {
        rc = realtime_basis(t->basis, s->basis, w);
    } else if (s->basis) {
        size_t n = strlen(s->basis);
        if (n == 0 || n >= DLS_TICK_BASIS_MAX) {
            rc = dls_where_fill(w, DLS_ERR_INVAL,
                                (dls_where){.reason = "a basis is 1-127 bytes"});
        } else {
            memcpy(t->basis, s->basis, n + 1);
        }
    } else if (s->source == DLS_TICK_MANUAL) {
        memcpy(t->basis, "manual", sizeof "manual");
    } else {
        rc = dls_tick_host_basis(t->basis, sizeof t->basis, w);
    }
    if (rc != 0) {
        free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void dls_tick_del(dls_tick *t)
{
    free(t);
}

/* Encodes (and seals, with a signer) one tick and appends it. */
static int tick_put(dls_tick *t, uint64_t reading_ns)
{
    uint64_t floored = reading_ns - reading_ns % t->unit_ns;
    if (t->have_last && floored < t->last)
        return DLS_ERR_INVAL;
    uint8_t fact[64];
    size_t flen = 0;
    int rc = dls_tick_fact(floored, t->unit, fact, sizeof fact, &flen);
    if (rc != 0)
        return rc;
    const uint8_t *rec = fact;
    size_t rlen = flen;
    uint8_t env[TICK_REC_MAX];
    if (t->signer) {
        rc = dls_envelope_seal(t->signer, dls_medium_id(t->m), fact, flen, env,
                               sizeof env, &rlen);
        if (rc != 0)
            return rc;
        rec = env;
    }
    uint64_t pos;
    rc = dls_medium_append(t->m, rec, rlen, &pos, NULL);
    if (rc != 0)
        return rc;
    t->have_last = true;
    t->last = floored;
    return 0;
}

int dls_tick_clock_step(dls_tick *t, uint64_t ns, uint64_t *reading_ns)
{
    if (!t || ns > DLS_NS_MAX)
        return DLS_ERR_INVAL;
    if (t->source == DLS_TICK_MANUAL)
        return DLS_ERR_STATE;
    uint64_t floored = ns - ns % t->unit_ns;
    int rc = 0;
    if (t->have_last && floored < t->last && t->source == DLS_TICK_REALTIME) {
        /* a wall clock stepped back: wait until it passes the last reading
         * (vocabulary.md rule 7); nothing is appended meanwhile */
        rc = DLS_ERR_RULE7;
    } else {
        /* CLOCK_MONOTONIC never goes back; a floor to a coarse unit may
         * equal the last reading, which is valid (rule 7 allows equal
         * readings) */
        if (t->have_last && floored < t->last)
            floored = t->last;
        rc = tick_put(t, floored);
    }
    if ((rc == 0 || rc == DLS_ERR_RULE7) && reading_ns)
        *reading_ns = t->last;
    return rc;
}

void dls_tick_resume(dls_tick *t, uint64_t reading_ns)
{
    if (!t || (t->have_last && reading_ns <= t->last))
        return;
    t->have_last = true;
    t->last = reading_ns;
}

int dls_tick_now(dls_tick *t, uint64_t *reading_ns)
{
    if (!t)
        return DLS_ERR_INVAL;
    if (t->source == DLS_TICK_MANUAL)
        return DLS_ERR_STATE;
    struct timespec ts;
    clockid_t id = t->source == DLS_TICK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC;
    if (clock_gettime(id, &ts) != 0 || ts.tv_sec < 0)
        return DLS_ERR_IO;
    uint64_t ns = (uint64_t)ts.tv_sec * DLS_NS_PER_S + (uint64_t)ts.tv_nsec;
    return dls_tick_clock_step(t, ns, reading_ns);
}

int dls_tick_append(dls_tick *t, uint64_t reading_ns)
{
    if (!t)
        return DLS_ERR_INVAL;
    if (t->source != DLS_TICK_MANUAL)
        return DLS_ERR_STATE;
    if (reading_ns > DLS_NS_MAX)
        return DLS_ERR_INVAL;
    return tick_put(t, reading_ns);
}

const char *dls_tick_basis(const dls_tick *t)
{
    return t ? t->basis : "";
}

bool dls_tick_last(const dls_tick *t, uint64_t *reading_ns)
{
    if (!t || !t->have_last)
        return false;
    if (reading_ns)
        *reading_ns = t->last;
    return true;
}
