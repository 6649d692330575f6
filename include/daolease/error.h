/* daolease — error codes.
 *
 * Every function that can fail returns 0 on success or a negative code from
 * this one enum. Codes are grouped by component; a code at or below
 * DLS_ERR_FATAL_THRESHOLD is fatal: the handle that returned it refuses
 * everything but its _del function afterwards.
 *
 * Where the caller needs to know *where* and *why* (decoders, stream
 * readers, file loaders), functions also fill a dls_where out-struct.
 */
#ifndef DAOLEASE_ERROR_H
#define DAOLEASE_ERROR_H

#include <stddef.h>
#include <stdint.h>

#include "daolease/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dls_error {
    DLS_OK = 0,

    /* general, -1 … -99 */
    DLS_ERR_NOMEM = -1,        /* an allocation failed */
    DLS_ERR_INVAL = -2,        /* an argument is out of its documented range */
    DLS_ERR_IO = -3,           /* an operating-system call failed (errno in dls_where) */
    DLS_ERR_NOTFOUND = -4,     /* a named thing does not exist */
    DLS_ERR_EXISTS = -5,       /* a thing to create exists already */
    DLS_ERR_TOOBIG = -6,       /* an output does not fit the caller's buffer or a limit */
    DLS_ERR_STATE = -7,        /* the call is not allowed in the handle's state */
    DLS_ERR_CALLBACK = -8,     /* an owner callback failed */
    DLS_ERR_REENTRANT = -9,    /* a callback called back into its caller */
    DLS_ERR_CONFIG = -10,      /* a configuration file or setting is invalid */
    DLS_ERR_PERM = -11,        /* a file's permissions are refused (e.g. a secret key readable by others) */
    DLS_ERR_OVERFLOW = -12,    /* an arithmetic result does not fit */

    /* codec (vocabulary, msgpack walker, JSON mapping), -100 … -199 */
    DLS_ERR_MSGPACK = -100,    /* bytes are not well-formed msgpack (truncated, reserved byte 0xc1) */
    DLS_ERR_TRAILING = -101,   /* well-formed msgpack followed by trailing bytes */
    DLS_ERR_DEPTH = -102,      /* nesting deeper than allowed */
    DLS_ERR_RULE1 = -111,      /* vocabulary rule 1: not a map, trailing bytes, > 4096 bytes,
                                  repeated key, non-str key, or deeper than 8 levels */
    DLS_ERR_RULE2 = -112,      /* rule 2: both dispatch keys, or a status/event outside the table */
    DLS_ERR_RULE3 = -113,      /* rule 3: a required key missing, or a key of wrong type or range */
    DLS_ERR_RULE4 = -114,      /* rule 4: a duration, max or reading that is not a valid duration map */
    DLS_ERR_RULE5 = -115,      /* rule 5: lease on a proposal */
    DLS_ERR_RULE6 = -116,      /* rule 6: a repeated or contradicting accepted/rejected/released/lapsed */
    DLS_ERR_RULE7 = -117,      /* rule 7: a reading older than one already observed on the tick stream */
    DLS_ERR_JSON = -120,       /* JSON input cannot be parsed or mapped to msgpack */
    DLS_ERR_MARK = -121,       /* a pass mark record is malformed (judge.md, Journal) */

    /* streams, -200 … -299 */
    DLS_ERR_SEALED = -200,     /* the medium is sealed: appends are refused */
    DLS_ERR_CORRUPT = -201,    /* a bad record is followed by more than R bytes: corruption */
    DLS_ERR_HEADER = -202,     /* a stream file header is invalid or of another version */
    DLS_ERR_LOCKED = -203,     /* a lock could not be taken within its bound */
    DLS_ERR_RETENTION = -204,  /* a medium's retention is refused for this use */
    DLS_ERR_RECORD = -205,     /* a record is empty or longer than 65536 bytes */
    DLS_ERR_TRANSPORT = -206,  /* a medium cannot be read or written (remote media) */
    DLS_ERR_MEDIUM_ID = -207,  /* a medium's id is not the expected one */
    DLS_ERR_VALID_TAIL = -208, /* a bad record is followed by CRC-valid records that an
                                  exclusive writer (a journal) never cuts: dls_where's
                                  offset = the bad record, count = the valid records */
    DLS_ERR_SHRUNK = -209,     /* a medium is shorter than what was written or read, or its
                                  path names another file */
    DLS_ERR_REDIS_TYPE = -250, /* a Redis key of a medium holds another type than its layout */

    /* attribution, -300 … -399 */
    DLS_ERR_KEYRING = -300,    /* a keyring or secret key file is malformed */
    DLS_ERR_KEYKIND = -301,    /* a key of the wrong kind (e.g. a MAC key where Ed25519 is required) */
    DLS_ERR_NORESOLVER = -302, /* a medium has no resolver */
    DLS_ERR_RESOLVER_MEDIUM = -303, /* a resolver is bound to another medium */
    DLS_ERR_EMPTY_KEYRING = -304,   /* a signed resolver has an empty keyring */
    DLS_ERR_DUPLICATE = -305,  /* a name is listed twice */
    DLS_ERR_SODIUM = -306,     /* libsodium failed to initialise or to sign */

    /* judge, -400 … -499 */
    DLS_ERR_NO_JOURNAL = -400,
    DLS_ERR_NO_TICKS = -401,
    DLS_ERR_NO_RECLAIM = -402,
    DLS_ERR_BASIS = -403,      /* tick cursors on different reading bases */
    DLS_ERR_TOO_MANY_MEDIA = -404,
    DLS_ERR_TICKS_ENDED = -405,/* the last tick cursor was retired */
    DLS_ERR_HELD = -406,       /* an unsolicited grant for a held subject */
    DLS_ERR_UNKNOWN_LEASE = -407,
    DLS_ERR_JOURNAL_LOCKED = -408, /* another judge holds the journal */
    DLS_ERR_JOURNAL = -409,    /* a journal cannot be replayed (forged, malformed) */
    DLS_ERR_NO_GRANTOR = -410, /* no grantor name or Ed25519 signing key */
    DLS_ERR_JOURNAL_SYNC = -411, /* a journal opened with sync `none` */
    DLS_ERR_JOURNAL_SHORT = -412, /* the journal is shorter than the holders' evidence (lost ledger) */

    /* holder, -500 … -599 */
    DLS_ERR_SIZING = -500,     /* a sizing relation of holder.md does not hold */
    DLS_ERR_NO_LEASE = -501,   /* the holder holds no such lease */

    /* host (Lease atom), -600 … -699 */
    DLS_ERR_UNAVAILABLE = -600,/* take: the arrival term elapsed */
    DLS_ERR_HELD_BY_CALLER = -601, /* take of a key the caller already holds */
    DLS_ERR_STALE_TOKEN = -602,/* fence guard: a token older than one admitted */
    DLS_ERR_FENCE = -603,      /* fence: the allowance exceeds expires_at */

    /* fatal, -900 and below: the handle refuses everything but _del */
    DLS_ERR_FATAL_THRESHOLD = -900,
    DLS_ERR_JOURNAL_WRITE = -901, /* a journal append or sync failed */
    DLS_ERR_FATAL = -902,         /* an earlier fatal error stopped this handle */
    DLS_ERR_FATAL_NOMEM = -903,   /* out of memory inside a step: the handle stopped */
    DLS_ERR_FATAL_STEP = -904     /* another failure inside a step: the handle stopped */
} dls_error;

/* A static, human-readable sentence for an error code (never NULL). */
DLS_EXPORT const char *dls_strerror(int code);

/* Non-zero when `code` is fatal for the handle that returned it. */
DLS_EXPORT int dls_err_is_fatal(int code);

/* Where and why something failed: filled by decoders, readers and loaders.
 * `offset` is a byte offset within the input (or a position for streams,
 * see the function's doc); `line` is 1-based for text inputs, 0 otherwise;
 * `reason` is a static string; `sys_errno` is errno for DLS_ERR_IO;
 * `count` is a count the error names (DLS_ERR_VALID_TAIL: the CRC-valid
 * records after the bad one), 0 otherwise. */
typedef struct dls_where {
    uint64_t offset;
    uint64_t line;
    const char *reason;
    int rule;
    int sys_errno;
    uint64_t count;
} dls_where;

#ifdef __cplusplus
}
#endif
#endif
