#include "daolease/error.h"

const char *dls_strerror(int code)
{
    switch (code) {
    case DLS_OK: return "success";
    case DLS_ERR_NOMEM: return "out of memory";
    case DLS_ERR_INVAL: return "invalid argument";
    case DLS_ERR_IO: return "input/output error";
    case DLS_ERR_NOTFOUND: return "not found";
    case DLS_ERR_EXISTS: return "already exists";
    case DLS_ERR_TOOBIG: return "too big";
    case DLS_ERR_STATE: return "not allowed in this state";
    case DLS_ERR_CALLBACK: return "an owner callback failed";
    case DLS_ERR_REENTRANT: return "a callback called back into its caller";
    case DLS_ERR_CONFIG: return "invalid configuration";
    case DLS_ERR_PERM: return "file permissions refused";
    case DLS_ERR_OVERFLOW: return "arithmetic overflow";
    case DLS_ERR_MSGPACK: return "malformed msgpack";
    case DLS_ERR_TRAILING: return "trailing bytes after the value";
    case DLS_ERR_DEPTH: return "nested too deeply";
    case DLS_ERR_RULE1: return "defective fact (rule 1: shape)";
    case DLS_ERR_RULE2: return "defective fact (rule 2: dispatch)";
    case DLS_ERR_RULE3: return "defective fact (rule 3: key missing, of wrong type or range)";
    case DLS_ERR_RULE4: return "defective fact (rule 4: duration)";
    case DLS_ERR_RULE5: return "defective fact (rule 5: lease on a proposal)";
    case DLS_ERR_RULE6: return "defective fact (rule 6: repeated or contradicting)";
    case DLS_ERR_RULE7: return "defective fact (rule 7: reading older than one observed)";
    case DLS_ERR_JSON: return "invalid JSON input";
    case DLS_ERR_MARK: return "malformed pass mark";
    case DLS_ERR_SEALED: return "the medium is sealed";
    case DLS_ERR_CORRUPT: return "the medium is corrupt";
    case DLS_ERR_HEADER: return "invalid stream header";
    case DLS_ERR_LOCKED: return "lock not obtained in time";
    case DLS_ERR_RETENTION: return "medium retention refused";
    case DLS_ERR_RECORD: return "record length out of range";
    case DLS_ERR_TRANSPORT: return "medium transport error";
    case DLS_ERR_MEDIUM_ID: return "medium id mismatch";
    case DLS_ERR_VALID_TAIL: return "a bad record is followed by CRC-valid records (never cut "
                                    "from a journal: see `daolease stream repair`)";
    case DLS_ERR_SHRUNK: return "the medium is shorter than what was written or read";
    case DLS_ERR_REDIS_TYPE: return "a Redis key holds the wrong type for a medium";
    case DLS_ERR_KEYRING: return "malformed keyring or key file";
    case DLS_ERR_KEYKIND: return "wrong key kind";
    case DLS_ERR_NORESOLVER: return "a medium has no resolver";
    case DLS_ERR_RESOLVER_MEDIUM: return "resolver bound to another medium";
    case DLS_ERR_EMPTY_KEYRING: return "signed resolver with an empty keyring";
    case DLS_ERR_DUPLICATE: return "name listed twice";
    case DLS_ERR_SODIUM: return "libsodium failure";
    case DLS_ERR_NO_JOURNAL: return "no journal";
    case DLS_ERR_NO_TICKS: return "no tick cursor";
    case DLS_ERR_NO_RECLAIM: return "no reclaim procedure";
    case DLS_ERR_BASIS: return "tick cursors on different reading bases";
    case DLS_ERR_TOO_MANY_MEDIA: return "too many lease-fact media (at most 1024)";
    case DLS_ERR_TICKS_ENDED: return "the last tick cursor was retired";
    case DLS_ERR_HELD: return "the subject is held";
    case DLS_ERR_UNKNOWN_LEASE: return "unknown lease";
    case DLS_ERR_JOURNAL_LOCKED: return "the journal is held by another judge";
    case DLS_ERR_JOURNAL: return "the journal cannot be replayed";
    case DLS_ERR_NO_GRANTOR: return "no grantor name or Ed25519 signing key";
    case DLS_ERR_JOURNAL_SYNC: return "the journal must be opened with sync data or group";
    case DLS_ERR_JOURNAL_SHORT:
        return "the journal is shorter than the holders' evidence (a lost ledger: see docs/judge.md, Lost ledger)";
    case DLS_ERR_SIZING: return "sizing relation violated";
    case DLS_ERR_NO_LEASE: return "no such lease held";
    case DLS_ERR_UNAVAILABLE: return "unavailable";
    case DLS_ERR_HELD_BY_CALLER: return "the caller already holds this key";
    case DLS_ERR_STALE_TOKEN: return "stale fencing token: a newer holder took over";
    case DLS_ERR_FENCE: return "the allowance exceeds expires_at: no fence instant";
    case DLS_ERR_JOURNAL_WRITE: return "journal write or sync failed (fatal)";
    case DLS_ERR_FATAL: return "stopped by an earlier fatal error";
    case DLS_ERR_FATAL_NOMEM: return "out of memory inside a step (fatal: the handle stopped)";
    case DLS_ERR_FATAL_STEP: return "a step failed (fatal: the handle stopped)";
    default: return "unknown error";
    }
}

int dls_err_is_fatal(int code)
{
    return code <= DLS_ERR_FATAL_THRESHOLD;
}
