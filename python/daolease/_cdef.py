"""The C declarations the package binds to, in one place.

Copied by hand from include/daolease/*.h (cffi ABI mode reads no headers).
Every struct here must have the very layout of the C one:
tests/test_layout.py compiles a C program against the headers and compares
each struct's size and every field's offset with what cffi computed, so a
header change that is not mirrored here fails the suite instead of
corrupting memory.
"""

CDEF = r"""
/* ---- error.h ---- */
typedef enum dls_error {
    DLS_OK = 0,
    DLS_ERR_NOMEM = -1,
    DLS_ERR_INVAL = -2,
    DLS_ERR_IO = -3,
    DLS_ERR_NOTFOUND = -4,
    DLS_ERR_EXISTS = -5,
    DLS_ERR_TOOBIG = -6,
    DLS_ERR_STATE = -7,
    DLS_ERR_CALLBACK = -8,
    DLS_ERR_REENTRANT = -9,
    DLS_ERR_CONFIG = -10,
    DLS_ERR_PERM = -11,
    DLS_ERR_OVERFLOW = -12,
    DLS_ERR_MSGPACK = -100,
    DLS_ERR_TRAILING = -101,
    DLS_ERR_DEPTH = -102,
    DLS_ERR_RULE1 = -111,
    DLS_ERR_RULE2 = -112,
    DLS_ERR_RULE3 = -113,
    DLS_ERR_RULE4 = -114,
    DLS_ERR_RULE5 = -115,
    DLS_ERR_RULE6 = -116,
    DLS_ERR_RULE7 = -117,
    DLS_ERR_JSON = -120,
    DLS_ERR_MARK = -121,
    DLS_ERR_SEALED = -200,
    DLS_ERR_CORRUPT = -201,
    DLS_ERR_HEADER = -202,
    DLS_ERR_LOCKED = -203,
    DLS_ERR_RETENTION = -204,
    DLS_ERR_RECORD = -205,
    DLS_ERR_TRANSPORT = -206,
    DLS_ERR_MEDIUM_ID = -207,
    DLS_ERR_VALID_TAIL = -208,
    DLS_ERR_SHRUNK = -209,
    DLS_ERR_REDIS_TYPE = -250,
    DLS_ERR_KEYRING = -300,
    DLS_ERR_KEYKIND = -301,
    DLS_ERR_NORESOLVER = -302,
    DLS_ERR_RESOLVER_MEDIUM = -303,
    DLS_ERR_EMPTY_KEYRING = -304,
    DLS_ERR_DUPLICATE = -305,
    DLS_ERR_SODIUM = -306,
    DLS_ERR_NO_JOURNAL = -400,
    DLS_ERR_NO_TICKS = -401,
    DLS_ERR_NO_RECLAIM = -402,
    DLS_ERR_BASIS = -403,
    DLS_ERR_TOO_MANY_MEDIA = -404,
    DLS_ERR_TICKS_ENDED = -405,
    DLS_ERR_HELD = -406,
    DLS_ERR_UNKNOWN_LEASE = -407,
    DLS_ERR_JOURNAL_LOCKED = -408,
    DLS_ERR_JOURNAL = -409,
    DLS_ERR_NO_GRANTOR = -410,
    DLS_ERR_JOURNAL_SYNC = -411,
    DLS_ERR_JOURNAL_SHORT = -412,
    DLS_ERR_SIZING = -500,
    DLS_ERR_NO_LEASE = -501,
    DLS_ERR_UNAVAILABLE = -600,
    DLS_ERR_HELD_BY_CALLER = -601,
    DLS_ERR_STALE_TOKEN = -602,
    DLS_ERR_FENCE = -603,
    DLS_ERR_FATAL_THRESHOLD = -900,
    DLS_ERR_JOURNAL_WRITE = -901,
    DLS_ERR_FATAL = -902,
    DLS_ERR_FATAL_NOMEM = -903,
    DLS_ERR_FATAL_STEP = -904
} dls_error;
typedef struct dls_where {
    uint64_t offset;
    uint64_t line;
    const char *reason;
    int rule;
    int sys_errno;
    uint64_t count;
} dls_where;
const char *dls_strerror(int code);
int dls_err_is_fatal(int code);

/* ---- fact.h ---- */
typedef enum dls_unit {
    DLS_UNIT_NS, DLS_UNIT_US, DLS_UNIT_MS, DLS_UNIT_S, DLS_UNIT_MIN, DLS_UNIT_H
} dls_unit;
typedef struct dls_duration {
    uint64_t ns;
    uint64_t magnitude;
    dls_unit unit;
} dls_duration;
int dls_duration_make(dls_duration *d, dls_unit unit, uint64_t magnitude);
dls_duration dls_duration_from_ns(uint64_t ns);
const char *dls_unit_name(dls_unit u);
int dls_duration_parse(const char *text, dls_duration *d);

typedef enum dls_fact_kind {
    DLS_FACT_NONE = 0, DLS_FACT_PROPOSAL, DLS_FACT_GRANT, DLS_FACT_REFUSAL,
    DLS_FACT_RELEASE, DLS_FACT_RECLAIM, DLS_FACT_RENEWAL, DLS_FACT_TICK
} dls_fact_kind;
typedef enum dls_cause {
    DLS_CAUSE_NONE = 0, DLS_CAUSE_RELEASE, DLS_CAUSE_CAP, DLS_CAUSE_POLICY,
    DLS_CAUSE_SILENCE
} dls_cause;
typedef enum dls_mode { DLS_MODE_EXCLUSIVE = 0, DLS_MODE_SHARED } dls_mode;

typedef struct dls_bytes {
    const uint8_t *p;
    size_t n;
} dls_bytes;

typedef struct dls_fact {
    dls_fact_kind kind;
    uint32_t keys;
    uint64_t lease;
    uint64_t seq;
    dls_bytes proposal;
    dls_bytes subject;
    dls_bytes holder;
    uint8_t medium[16];
    dls_duration duration, max, reading;
    dls_cause cause;
    dls_mode mode;
    bool commit;
    dls_bytes reason;
} dls_fact;
int dls_fact_decode(const uint8_t *p, size_t n, dls_fact *f, dls_where *w);
int dls_fact_encode(const dls_fact *f, uint8_t *out, size_t cap, size_t *len);
const char *dls_fact_kind_name(dls_fact_kind k);
const char *dls_cause_name(dls_cause c);
const char *dls_mode_name(dls_mode m);
int dls_value_str(uint8_t *out, size_t cap, const void *p, size_t n, size_t *len);
int dls_value_bin(uint8_t *out, size_t cap, const void *p, size_t n, size_t *len);
void dls_fact_init(dls_fact *f, dls_fact_kind kind);

/* ---- stream.h ---- */
typedef struct dls_medium dls_medium;
typedef struct dls_cursor dls_cursor;
typedef enum dls_sync { DLS_SYNC_NONE = 0, DLS_SYNC_DATA, DLS_SYNC_GROUP } dls_sync;
typedef enum dls_retention { DLS_RETAIN_ALL = 0, DLS_RETAIN_EVICT_OLDEST } dls_retention;
typedef enum dls_medium_kind {
    DLS_MEDIUM_FILE = 0, DLS_MEDIUM_SEGMENTED, DLS_MEDIUM_RING, DLS_MEDIUM_REDIS
} dls_medium_kind;
typedef enum dls_open_mode { DLS_OPEN_READ = 0, DLS_OPEN_APPEND } dls_open_mode;
typedef struct dls_medium_settings {
    dls_sync sync;
    unsigned lock_timeout_ms;
    uint64_t segment_bytes;
    uint64_t retain_segments;
    uint64_t retain_bytes;
    size_t ring_capacity;
    const uint8_t *id;
    bool exclusive;
} dls_medium_settings;
void dls_medium_settings_default(dls_medium_settings *s);
int dls_medium_create(dls_medium **out, dls_medium_kind kind, const char *path,
                      const dls_medium_settings *s, dls_where *w);
int dls_medium_open(dls_medium **out, const char *path, dls_open_mode mode,
                    const dls_medium_settings *s, dls_where *w);
int dls_ring_new(dls_medium **out, const dls_medium_settings *s);
void dls_medium_del(dls_medium *m);
const uint8_t *dls_medium_id(const dls_medium *m);
const char *dls_medium_name(const dls_medium *m);
int dls_medium_append(dls_medium *m, const uint8_t *rec, size_t n, uint64_t *pos,
                      dls_where *w);
int dls_medium_seal(dls_medium *m, dls_where *w);
typedef enum dls_next {
    DLS_NEXT_OK = 0, DLS_NEXT_BLOCKED, DLS_NEXT_END, DLS_NEXT_GAP, DLS_NEXT_ERROR
} dls_next;
typedef struct dls_record {
    uint64_t position;
    uint64_t gap_from;
    const uint8_t *p;
    size_t n;
} dls_record;
int dls_cursor_new(dls_cursor **out, dls_medium *m, uint64_t from);
void dls_cursor_del(dls_cursor *c);
dls_next dls_cursor_next(dls_cursor *c, dls_record *rec, dls_where *w);
uint64_t dls_cursor_position(const dls_cursor *c);
const char *dls_next_name(dls_next r);

/* ---- attrib.h ---- */
typedef enum dls_key_kind { DLS_KEY_ED25519 = 0, DLS_KEY_MAC } dls_key_kind;
typedef struct dls_keyring dls_keyring;
typedef struct dls_secret dls_secret;
typedef struct dls_resolver dls_resolver;
int dls_keyring_load(dls_keyring **out, const char *path, dls_where *w);
int dls_keyring_parse(dls_keyring **out, const char *text, size_t n, dls_where *w);
void dls_keyring_del(dls_keyring *kr);
int dls_secret_generate(dls_secret **out, const char *name, dls_key_kind kind);
int dls_secret_load(dls_secret **out, const char *path, dls_where *w);
int dls_secret_save(const dls_secret *s, const char *path, dls_where *w);
int dls_secret_keyring_line(const dls_secret *s, char *buf, size_t cap);
const char *dls_secret_name(const dls_secret *s);
void dls_secret_del(dls_secret *s);
int dls_envelope_seal(const dls_secret *s, const uint8_t medium_id[16],
                      const uint8_t *fact, size_t fact_len,
                      uint8_t *out, size_t cap, size_t *len);
typedef enum dls_record_kind {
    DLS_REC_FACT = 0, DLS_REC_ENVELOPE, DLS_REC_SEAL, DLS_REC_MALFORMED
} dls_record_kind;
const char *dls_record_kind_name(dls_record_kind k);
typedef enum dls_why {
    DLS_WHY_NONE = 0, DLS_WHY_BARE_FACT, DLS_WHY_SIGNATURE, DLS_WHY_UNKNOWN_AUTHOR,
    DLS_WHY_WRONG_KEY_KIND, DLS_WHY_MALFORMED
} dls_why;
const char *dls_why_name(dls_why w);
typedef struct dls_attribution {
    dls_record_kind kind;
    bool attributed;
    dls_why why;
    dls_bytes author;
    dls_bytes fact;
    uint32_t count;
} dls_attribution;
int dls_resolver_new_signed(dls_resolver **out, const uint8_t medium_id[16],
                            dls_keyring *kr);
int dls_resolver_new_medium(dls_resolver **out, const uint8_t medium_id[16],
                            const char *party, dls_keyring *kr);
void dls_resolver_del(dls_resolver *r);
void dls_resolver_attribute(dls_resolver *r, const uint8_t *rec, size_t n,
                            dls_attribution *a);

/* ---- tick.h ---- */
typedef struct dls_tick dls_tick;
typedef enum dls_tick_source { DLS_TICK_HOST = 0, DLS_TICK_MANUAL, DLS_TICK_REALTIME } dls_tick_source;
typedef struct dls_tick_settings {
    dls_tick_source source;
    dls_unit unit;
    const dls_secret *signer;
    const char *basis;
} dls_tick_settings;
void dls_tick_settings_default(dls_tick_settings *s);
int dls_tick_new(dls_tick **out, dls_medium *m, const dls_tick_settings *s, dls_where *w);
void dls_tick_del(dls_tick *t);
int dls_tick_now(dls_tick *t, uint64_t *reading_ns);
int dls_tick_append(dls_tick *t, uint64_t reading_ns);
const char *dls_tick_basis(const dls_tick *t);

/* ---- judge.h ---- */
typedef struct dls_judge_tick_source {
    dls_medium *medium;
    dls_resolver *resolver;
    const char *adapter;
    const char *basis;
    uint64_t from;
} dls_judge_tick_source;
typedef struct dls_judge_medium {
    dls_medium *medium;
    dls_resolver *resolver;
} dls_judge_medium;
typedef struct dls_judge_settings {
    const dls_secret *grantor;
    dls_medium *journal;
    const char *journal_lock_path;
    const dls_judge_tick_source *ticks;
    size_t nticks;
    const dls_judge_medium *media;
    size_t nmedia;
    uint64_t tolerance_ns;
    uint64_t cadence_ns;
    dls_duration default_duration;
    dls_duration min_duration;
    dls_duration max_duration;
    dls_duration tenure_max;
    uint64_t lock_delay_ns;
    size_t drain_budget;
    const uint8_t *hash_key;
    bool lost_ledger;
    uint64_t lease_floor;
    const uint64_t *from;
    const char *checkpoint_dir;
    bool standby;
    uint64_t heartbeat_ns;
    uint64_t takeover_after_ns;
    dls_sync takeover_sync;
    size_t drain_per_s;
} dls_judge_settings;
void dls_judge_settings_default(dls_judge_settings *s);
typedef enum dls_reclaim_answer {
    DLS_RECLAIM_DONE = 0, DLS_RECLAIM_NOT_YET = 1, DLS_RECLAIM_FAILED = 2
} dls_reclaim_answer;
typedef struct dls_judge_ask {
    dls_bytes subject;
    dls_bytes holder;
    dls_bytes proposal;
    uint32_t medium;
    bool has_duration;
    dls_duration duration;
    bool has_mode;
    dls_mode mode;
    uint64_t now;
    uint32_t live_exclusive;
    uint32_t live_shared;
    uint32_t waiters;
    bool reentrant;
    bool delayed;
    uint64_t largest_remaining_ns;
} dls_judge_ask;
typedef enum dls_judge_verdict {
    DLS_JUDGE_GRANT = 0, DLS_JUDGE_WAIT, DLS_JUDGE_REFUSE
} dls_judge_verdict;
typedef struct dls_judge_answer {
    dls_judge_verdict verdict;
    dls_duration duration;
    uint64_t bound_ns;
    const char *reason;
} dls_judge_answer;
typedef enum dls_evidence { DLS_EVIDENCE_KNOWN = 0, DLS_EVIDENCE_UNKNOWN } dls_evidence;
typedef struct dls_judge_lease_info {
    uint64_t lease;
    dls_bytes subject;
    dls_bytes holder;
    dls_mode mode;
    uint64_t duration_ns;
    uint64_t max_ns;
    uint32_t medium;
    uint64_t tenure_start;
    uint64_t last_observation;
    uint64_t last_seq;
    bool released;
    bool commit;
    bool ended;
    dls_evidence evidence;
    uint64_t resumed;
    bool pending;
    dls_cause cause;
} dls_judge_lease_info;
typedef struct dls_judge_callbacks {
    int (*reclaim)(void *user_data, dls_bytes subject, uint64_t lease,
                   dls_cause cause, bool commit);
    int (*policy)(void *user_data, const dls_judge_ask *ask, dls_judge_answer *answer);
    void (*unsolicited)(void *user_data, uint64_t ticket, uint64_t lease, int error);
    void (*granted)(void *user_data, const dls_judge_lease_info *lease);
    void (*took_over)(void *user_data, uint64_t pass);
} dls_judge_callbacks;
typedef struct dls_judge dls_judge;
int dls_judge_new(dls_judge **out, const dls_judge_settings *s,
                  const dls_judge_callbacks *cb, void *user_data, dls_where *w);
void dls_judge_del(dls_judge *j);
typedef struct dls_judge_pass_result {
    bool has_now;
    uint64_t now;
    uint64_t pass;
    bool mark;
    bool cadence_overrun;
    bool restarted;
    uint64_t drained;
    uint64_t ticks;
    uint64_t defective[8];
    uint64_t forged;
    uint64_t ignored_misplaced;
    uint64_t ignored_wrong_author;
    uint64_t ignored_replayed;
    uint64_t ignored_unknown_lease;
    uint64_t not_lease;
    uint64_t granted;
    uint64_t refused;
    uint64_t lapsed[5];
    uint64_t newly_due;
    uint64_t pending;
    uint64_t reclaim_failed;
    uint64_t late_renewals;
    uint64_t gaps;
    uint64_t transport_errors;
    uint64_t budget_cuts;
    uint64_t appended;
    uint64_t live;
    uint64_t waiting;
    uint64_t next_due;
    uint64_t facts;
    uint64_t batches;
    uint64_t behind;
    bool standby;
    bool took_over;
    uint64_t renewals;
    uint64_t late_reclaims;
} dls_judge_pass_result;
int dls_judge_pass(dls_judge *j, dls_judge_pass_result *r);
int dls_judge_end(dls_judge *j, uint64_t lease);
int dls_judge_grant(dls_judge *j, dls_bytes subject, dls_bytes holder, uint32_t medium,
                    const dls_duration *duration, const dls_mode *mode, uint64_t *ticket);
int dls_judge_lease(dls_judge *j, uint64_t lease, dls_judge_lease_info *info);
size_t dls_judge_live(const dls_judge *j);
uint64_t dls_judge_highest_lease(const dls_judge *j);
uint64_t dls_judge_last_pass(const dls_judge *j);

/* ---- judge_view.h ---- */
typedef struct dls_judge_iter {
    dls_judge *judge;
    uint32_t kind;
    uint32_t next;
    uint32_t end;
} dls_judge_iter;
int dls_judge_leases(dls_judge *j, dls_judge_iter *it);
int dls_judge_leases_by_subject(dls_judge *j, dls_bytes subject, dls_judge_iter *it);
int dls_judge_leases_by_holder(dls_judge *j, dls_bytes holder, dls_judge_iter *it);
bool dls_judge_leases_next(dls_judge_iter *it, dls_judge_lease_info *info, uint64_t *due_by);

/* ---- holder.h ---- */
typedef struct dls_holder dls_holder;
typedef struct dls_holder_tolerance {
    bool declared;
    uint64_t tolerance_ns;
    uint64_t grant_flight_ns;
    uint64_t renewal_flight_ns;
    uint64_t judge_tick_ns;
    uint32_t skew_ppm;
} dls_holder_tolerance;
typedef struct dls_holder_settings {
    uint64_t renew_interval_ns;
    uint64_t tick_period_ns;
    dls_holder_tolerance tolerance;
    uint64_t retention_ns;
    uint64_t judge_lag_ns;
    uint64_t journal_lag_ns;
    bool accept_unsolicited;
    uint64_t lease_floor;
    size_t max_proposals;
    size_t max_leases;
    size_t journal_budget;
    size_t batch_max;
} dls_holder_settings;
void dls_holder_settings_default(dls_holder_settings *s);
typedef struct dls_holder_parts {
    const char *name;
    const dls_secret *secret;
    dls_medium *medium;
    const char *grantor;
    dls_cursor *journal;
    dls_resolver *journal_resolver;
    dls_cursor *ticks;
    dls_resolver *tick_resolver;
    const char *tick_party;
} dls_holder_parts;
typedef struct dls_holder_callbacks {
    void (*warn)(void *user_data, int code, const char *message);
} dls_holder_callbacks;
/* HOLDER_NEW: a dls_where since the holder stopped writing a message
 * buffer (_holder_new in holder.py adapts to either declaration). */
int dls_holder_new(dls_holder **out, const dls_holder_parts *parts,
                   const dls_holder_settings *s, const dls_holder_callbacks *cb,
                   void *user_data, dls_where *w);
void dls_holder_del(dls_holder *h);
int dls_holder_propose(dls_holder *h, const uint8_t *subject, size_t subject_len,
                       const dls_duration *ask, dls_mode mode, uint64_t *handle);
typedef enum dls_holder_event_kind {
    DLS_HOLDER_GRANTED = 1, DLS_HOLDER_REFUSED, DLS_HOLDER_LAPSED, DLS_HOLDER_RENEWED,
    DLS_HOLDER_RENEWAL_FAILED, DLS_HOLDER_BOUND, DLS_HOLDER_RELEASED,
    DLS_HOLDER_RELEASE_FAILED, DLS_HOLDER_SIZING, DLS_HOLDER_MISREGISTERED
} dls_holder_event_kind;
typedef struct dls_holder_event {
    dls_holder_event_kind kind;
    uint64_t lease;
    uint64_t proposal;
    uint64_t reading;
    uint64_t seq;
    dls_cause cause;
    int error;
    size_t text_len;
    char text[320];
} dls_holder_event;
typedef struct dls_holder_result {
    const dls_holder_event *events;
    size_t n_events;
    bool has_now;
    uint64_t now;
    bool has_next;
    uint64_t next_reading;
    bool more;
    uint64_t ticks;
    uint64_t ticks_ignored;
    uint64_t journal_records;
    uint64_t verified;
    uint64_t forged;
    uint64_t ignored;
    uint64_t journal_gaps;
    bool journal_ended;
    int journal_error;
    uint64_t appends;
    int tick_error;
} dls_holder_result;
int dls_holder_step(dls_holder *h, dls_holder_result *res);
bool dls_holder_next_reading(const dls_holder *h, uint64_t *reading);
bool dls_holder_may_act(dls_holder *h, uint64_t lease);
int dls_holder_remaining(dls_holder *h, uint64_t lease, uint64_t *ns);
int dls_holder_release(dls_holder *h, uint64_t lease, bool commit);
int dls_holder_forget(dls_holder *h, uint64_t lease);
typedef enum dls_holder_lease_state {
    DLS_HOLDER_HELD = 0, DLS_HOLDER_AT_BOUND, DLS_HOLDER_RELEASING, DLS_HOLDER_RELEASED_OK
} dls_holder_lease_state;
typedef struct dls_holder_lease {
    uint64_t lease;
    uint64_t proposal;
    dls_holder_lease_state state;
    dls_bytes subject;
    dls_mode mode;
    dls_duration duration;
    bool has_max;
    dls_duration max;
    uint64_t interval_ns;
    uint64_t observed;
    bool renewed;
    uint64_t last_renewal;
    uint64_t seq;
    uint64_t bound;
    bool confirmed;
    uint64_t confirmed_renewal;
    uint64_t last_position;
    size_t unconfirmed;
} dls_holder_lease;
int dls_holder_lease_info(const dls_holder *h, uint64_t lease, dls_holder_lease *info);
bool dls_holder_confirmed_position(const dls_holder *h, uint64_t *pos);
const char *dls_holder_message(const dls_holder *h);
const char *dls_holder_event_name(dls_holder_event_kind k);

/* ---- audit.h ---- */
typedef enum dls_audit_verdict {
    DLS_AUDIT_OK = 0, DLS_AUDIT_LIVE, DLS_AUDIT_UNVERIFIABLE, DLS_AUDIT_DUE_MISMATCH,
    DLS_AUDIT_UNJUSTIFIED_LAPSE, DLS_AUDIT_DOUBLE_GRANT
} dls_audit_verdict;
const char *dls_audit_verdict_name(dls_audit_verdict v);
typedef struct dls_audit_point {
    uint64_t pass;
    uint64_t reading;
    uint32_t basis;
} dls_audit_point;
typedef struct dls_audit_lease {
    uint64_t lease;
    dls_bytes subject;
    dls_bytes holder;
    uint8_t medium[16];
    dls_mode mode;
    uint64_t duration_ns;
    uint64_t max_ns;
    dls_audit_point granted;
    dls_audit_point due;
    dls_cause due_cause;
    uint64_t judge_due_pass;
    dls_cause judge_due_cause;
    dls_audit_point lapsed;
    dls_cause lapsed_cause;
    dls_cause cause;
    uint64_t renewals;
    const dls_audit_point *renewal_points;
    uint64_t late_renewals;
    bool released;
    bool commit;
    uint32_t due_mismatches;
    uint32_t findings;
    dls_audit_verdict verdict;
} dls_audit_lease;
typedef struct dls_audit_count {
    const char *reason;
    uint64_t n;
} dls_audit_count;
typedef struct dls_audit_holder_count {
    dls_bytes holder;
    uint64_t n;
} dls_audit_holder_count;
typedef struct dls_audit_mismatch {
    uint64_t pass;
    uint64_t lease;
    dls_cause judge;
    dls_cause audit;
} dls_audit_mismatch;
typedef struct dls_audit_late_reclaim {
    uint64_t lease;
    uint64_t due_pass;
    uint64_t lapsed_pass;
} dls_audit_late_reclaim;
typedef struct dls_audit_span {
    uint64_t pass;
    uint8_t medium[16];
    uint64_t from;
    uint64_t to;
} dls_audit_span;
typedef struct dls_audit_basis {
    dls_bytes name;
    uint64_t min_reading;
    uint64_t max_reading;
    uint64_t first_pass;
    uint64_t last_pass;
} dls_audit_basis;
typedef struct dls_audit_summary {
    uint64_t unjustified_lapse;
    uint64_t due_mismatch;
    uint64_t double_grant;
    uint64_t journal;
    uint8_t journal_id[16];
    uint64_t journal_records;
    uint64_t passes;
    uint64_t last_pass;
    dls_audit_point last_mark;
    uint64_t journal_forged;
    uint64_t journal_malformed;
    uint64_t journal_defective;
    uint64_t journal_ignored;
    uint64_t grants, refusals, lapsed;
    const dls_bytes *forged_authors;
    size_t n_forged_authors;
    const dls_audit_count *forged;     size_t n_forged;
    const dls_audit_count *defective;  size_t n_defective;
    const dls_audit_count *ignored;    size_t n_ignored;
    uint64_t media_records;
    uint64_t undrained_records;
    const dls_audit_late_reclaim *late_reclaims; size_t n_late_reclaims;
    const dls_audit_holder_count *late_renewals; size_t n_late_renewals;
    uint64_t cadence_overruns;
    const uint64_t *cadence_overruns_unflagged; size_t n_cadence_overruns_unflagged;
    const dls_audit_mismatch *due_mismatches; size_t n_due_mismatches;
    const uint64_t *unverifiable_passes; size_t n_unverifiable_passes;
    const uint64_t *unverifiable_leases; size_t n_unverifiable_leases;
    const dls_audit_span *gaps; size_t n_gaps;
    const dls_audit_span *transport_errors; size_t n_transport_errors;
    const uint64_t *restarts; size_t n_restarts;
    const uint64_t *takeovers; size_t n_takeovers;
    const uint64_t *basis_changes; size_t n_basis_changes;
    const dls_audit_basis *bases; size_t n_bases;
    const uint8_t (*missing_media)[16]; size_t n_missing_media;
    const size_t *unused_media; size_t n_unused_media;
    const char *const *warnings; size_t n_warnings;
    const char *const *failure_details; size_t n_failure_details;
    const char *incomplete;
    uint64_t incomplete_position;
    uint64_t checkpoints_checked, checkpoints_mismatch, checkpoints_missing, checkpoints_damaged;
    uint64_t journal_first;
    uint64_t start_checkpoint;
    uint64_t not_audited_to;
    uint64_t journal_missing_from, journal_missing_to;
} dls_audit_summary;
typedef struct dls_audit_medium {
    dls_medium *medium;
    const char *party;
} dls_audit_medium;
typedef struct dls_audit_settings {
    size_t max_media;
    bool keep_renewal_points;
    const char *checkpoints;
    unsigned threads;
    uint64_t from_checkpoint;
} dls_audit_settings;
void dls_audit_settings_default(dls_audit_settings *s);
typedef struct dls_audit dls_audit;
int dls_audit_run(dls_audit **out, const dls_audit_settings *s, dls_medium *journal,
                  const char *grantor, dls_keyring *kr, const dls_audit_medium *media,
                  size_t n_media, dls_where *w);
void dls_audit_del(dls_audit *a);
size_t dls_audit_lease_count(const dls_audit *a);
const dls_audit_lease *dls_audit_lease_at(const dls_audit *a, size_t i);
const dls_audit_summary *dls_audit_summary_of(const dls_audit *a);
int dls_audit_exit_status(const dls_audit *a);
"""

# Structs whose layout tests/test_layout.py checks against the C compiler.
STRUCTS = [
    "dls_where", "dls_duration", "dls_bytes", "dls_fact", "dls_medium_settings",
    "dls_record", "dls_attribution", "dls_tick_settings", "dls_judge_tick_source",
    "dls_judge_medium", "dls_judge_settings", "dls_judge_ask", "dls_judge_answer",
    "dls_judge_lease_info", "dls_judge_callbacks", "dls_judge_pass_result", "dls_judge_iter",
    "dls_holder_tolerance", "dls_holder_settings", "dls_holder_parts",
    "dls_holder_callbacks", "dls_holder_event", "dls_holder_result", "dls_holder_lease",
    "dls_audit_point", "dls_audit_lease", "dls_audit_count", "dls_audit_holder_count",
    "dls_audit_mismatch", "dls_audit_late_reclaim", "dls_audit_span", "dls_audit_basis",
    "dls_audit_summary", "dls_audit_medium", "dls_audit_settings",
]
