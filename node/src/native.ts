/* The C declarations the package binds to, in one place (koffi), copied from
 * include/daolease/*.h. Every struct here must have the very layout of the C
 * one: test/layout.test.js compiles a C program against the headers and
 * compares each struct's size and field offsets with koffi's.
 *
 * The library is found, in order, at $DAOLEASE_LIB (a path),
 * $DAOLEASE_BUILD/libdaolease.so, a meson build/ folder beside the package
 * source (working in the tree), then the dynamic loader's path. */
import koffi from "koffi";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

function findLibrary(): string {
  const env = process.env;
  if (env.DAOLEASE_LIB) return env.DAOLEASE_LIB;
  if (env.DAOLEASE_BUILD) return join(env.DAOLEASE_BUILD, "libdaolease.so");
  const here = dirname(fileURLToPath(import.meta.url));
  const tree = join(here, "..", "..", "build", "libdaolease.so");
  if (existsSync(tree)) return tree;
  return "libdaolease.so";
}

export const libraryPath = findLibrary();
const lib = koffi.load(libraryPath);

/* ---- types ---------------------------------------------------------------- */

export const dls_where = koffi.struct("dls_where", {
  offset: "uint64_t", line: "uint64_t", reason: "const char *", rule: "int", sys_errno: "int",
  count: "uint64_t",
});
export const dls_duration = koffi.struct("dls_duration", {
  ns: "uint64_t", magnitude: "uint64_t", unit: "int",
});
export const dls_bytes = koffi.struct("dls_bytes", { p: "void *", n: "size_t" });
for (const name of ["dls_medium", "dls_cursor", "dls_keyring", "dls_secret", "dls_resolver",
                    "dls_tick", "dls_holder", "dls_judge", "dls_owner"]) {
  koffi.opaque(name);
}
export const dls_medium_settings = koffi.struct("dls_medium_settings", {
  sync: "int", lock_timeout_ms: "unsigned int", segment_bytes: "uint64_t",
  retain_segments: "uint64_t", retain_bytes: "uint64_t", ring_capacity: "size_t",
  id: "const uint8_t *", exclusive: "bool",
});
export const dls_record = koffi.struct("dls_record", {
  position: "uint64_t", gap_from: "uint64_t", p: "void *", n: "size_t",
});
export const dls_tick_settings = koffi.struct("dls_tick_settings", {
  source: "int", unit: "int", signer: "const dls_secret *", basis: "const char *",
});
export const dls_holder_tolerance = koffi.struct("dls_holder_tolerance", {
  declared: "bool", tolerance_ns: "uint64_t", grant_flight_ns: "uint64_t",
  renewal_flight_ns: "uint64_t", judge_tick_ns: "uint64_t", skew_ppm: "uint32_t",
});
export const dls_holder_settings = koffi.struct("dls_holder_settings", {
  renew_interval_ns: "uint64_t", tick_period_ns: "uint64_t", tolerance: "dls_holder_tolerance",
  retention_ns: "uint64_t", judge_lag_ns: "uint64_t", journal_lag_ns: "uint64_t",
  accept_unsolicited: "bool", lease_floor: "uint64_t", max_proposals: "size_t",
  max_leases: "size_t", journal_budget: "size_t", batch_max: "size_t",
});
export const dls_holder_parts = koffi.struct("dls_holder_parts", {
  name: "const char *", secret: "const dls_secret *", medium: "dls_medium *",
  grantor: "const char *", journal: "dls_cursor *", journal_resolver: "dls_resolver *",
  ticks: "dls_cursor *", tick_resolver: "dls_resolver *", tick_party: "const char *",
});
export const dls_holder_event = koffi.struct("dls_holder_event", {
  kind: "int", lease: "uint64_t", proposal: "uint64_t", reading: "uint64_t", seq: "uint64_t",
  cause: "int", error: "int", text_len: "size_t", text: koffi.array("char", 320, "String"),
});
export const dls_holder_result = koffi.struct("dls_holder_result", {
  events: "void *", n_events: "size_t", has_now: "bool", now: "uint64_t", has_next: "bool",
  next_reading: "uint64_t", more: "bool", ticks: "uint64_t", ticks_ignored: "uint64_t",
  journal_records: "uint64_t", verified: "uint64_t", forged: "uint64_t", ignored: "uint64_t",
  journal_gaps: "uint64_t", journal_ended: "bool", journal_error: "int", appends: "uint64_t",
  tick_error: "int",
});
export const dls_judge_pass_result = koffi.struct("dls_judge_pass_result", {
  has_now: "bool", now: "uint64_t", pass: "uint64_t", mark: "bool", cadence_overrun: "bool",
  restarted: "bool", drained: "uint64_t", ticks: "uint64_t",
  defective: koffi.array("uint64_t", 8), forged: "uint64_t", ignored_misplaced: "uint64_t",
  ignored_wrong_author: "uint64_t", ignored_replayed: "uint64_t",
  ignored_unknown_lease: "uint64_t", not_lease: "uint64_t", granted: "uint64_t",
  refused: "uint64_t", lapsed: koffi.array("uint64_t", 5), newly_due: "uint64_t",
  pending: "uint64_t", reclaim_failed: "uint64_t", late_renewals: "uint64_t", gaps: "uint64_t",
  transport_errors: "uint64_t", budget_cuts: "uint64_t", appended: "uint64_t", live: "uint64_t",
  waiting: "uint64_t", next_due: "uint64_t", facts: "uint64_t", batches: "uint64_t",
  behind: "uint64_t", standby: "bool", took_over: "bool", renewals: "uint64_t",
  late_reclaims: "uint64_t",
});
export const dls_judge_lease_info = koffi.struct("dls_judge_lease_info", {
  lease: "uint64_t", subject: "dls_bytes", holder: "dls_bytes", mode: "int",
  duration_ns: "uint64_t", max_ns: "uint64_t", medium: "uint32_t", tenure_start: "uint64_t",
  last_observation: "uint64_t", last_seq: "uint64_t", released: "bool", commit: "bool",
  ended: "bool", evidence: "int", resumed: "uint64_t", pending: "bool", cause: "int",
});
export const reclaimProto = koffi.proto(
  "int dls_reclaim_cb(void *user_data, dls_bytes subject, uint64_t lease, int cause, bool commit)");
export const grantedProto = koffi.proto(
  "void dls_granted_cb(void *user_data, const dls_judge_lease_info *lease)");
export const dls_judge_callbacks = koffi.struct("dls_judge_callbacks", {
  reclaim: koffi.pointer(reclaimProto), policy: "void *", unsolicited: "void *",
  granted: koffi.pointer(grantedProto), took_over: "void *",
});
export const dls_owner_config = koffi.struct("dls_owner_config", {
  party: "const char *", key: "const char *", keyring: "const char *", journal: "const char *",
  media: "const char **", sync: "int", tolerance: "dls_duration", cadence: "dls_duration",
  duration: "dls_duration", min_duration: "dls_duration", max_duration: "dls_duration",
  max: "dls_duration", lock_delay: "dls_duration",
});
export const dls_judge_iter = koffi.struct("dls_judge_iter", {
  judge: "void *", kind: "uint32_t", next: "uint32_t", end: "uint32_t",
});

/* ---- functions ------------------------------------------------------------ */

const f = (decl: string) => lib.func(decl);
export const C = {
  strerror: f("const char *dls_strerror(int code)"),
  err_is_fatal: f("int dls_err_is_fatal(int code)"),
  duration_make: f("int dls_duration_make(_Out_ dls_duration *d, int unit, uint64_t magnitude)"),
  unit_parse: f("int dls_unit_parse(const char *name, size_t n, _Out_ int *u)"),
  value_str: f("int dls_value_str(_Out_ uint8_t *out, size_t cap, const void *p, size_t n, _Out_ size_t *len)"),
  value_bin: f("int dls_value_bin(_Out_ uint8_t *out, size_t cap, const void *p, size_t n, _Out_ size_t *len)"),
  sync_parse: f("int dls_sync_parse(const char *text, _Out_ int *out)"),

  medium_settings_default: f("void dls_medium_settings_default(_Out_ dls_medium_settings *s)"),
  medium_create: f("int dls_medium_create(_Out_ dls_medium **out, int kind, const char *path, const dls_medium_settings *s, _Inout_ dls_where *w)"),
  medium_open: f("int dls_medium_open(_Out_ dls_medium **out, const char *path, int mode, const dls_medium_settings *s, _Inout_ dls_where *w)"),
  ring_new: f("int dls_ring_new(_Out_ dls_medium **out, const dls_medium_settings *s)"),
  medium_del: f("void dls_medium_del(dls_medium *m)"),
  medium_id: f("const uint8_t *dls_medium_id(const dls_medium *m)"),
  medium_name: f("const char *dls_medium_name(const dls_medium *m)"),
  medium_append: f("int dls_medium_append(dls_medium *m, const uint8_t *rec, size_t n, _Out_ uint64_t *pos, _Inout_ dls_where *w)"),
  cursor_new: f("int dls_cursor_new(_Out_ dls_cursor **out, dls_medium *m, uint64_t from)"),
  cursor_del: f("void dls_cursor_del(dls_cursor *c)"),
  cursor_next: f("int dls_cursor_next(dls_cursor *c, _Out_ dls_record *rec, _Inout_ dls_where *w)"),

  keyring_load: f("int dls_keyring_load(_Out_ dls_keyring **out, const char *path, _Inout_ dls_where *w)"),
  keyring_del: f("void dls_keyring_del(dls_keyring *kr)"),
  secret_generate: f("int dls_secret_generate(_Out_ dls_secret **out, const char *name, int kind)"),
  secret_load: f("int dls_secret_load(_Out_ dls_secret **out, const char *path, _Inout_ dls_where *w)"),
  secret_save: f("int dls_secret_save(const dls_secret *s, const char *path, _Inout_ dls_where *w)"),
  secret_keyring_line: f("int dls_secret_keyring_line(const dls_secret *s, _Out_ uint8_t *buf, size_t cap)"),
  secret_name: f("const char *dls_secret_name(const dls_secret *s)"),
  secret_del: f("void dls_secret_del(dls_secret *s)"),
  envelope_seal: f("int dls_envelope_seal(const dls_secret *s, const uint8_t *medium_id, const uint8_t *fact, size_t fact_len, _Out_ uint8_t *out, size_t cap, _Out_ size_t *len)"),
  resolver_new_signed: f("int dls_resolver_new_signed(_Out_ dls_resolver **out, const uint8_t *medium_id, dls_keyring *kr)"),
  resolver_new_medium: f("int dls_resolver_new_medium(_Out_ dls_resolver **out, const uint8_t *medium_id, const char *party, dls_keyring *kr)"),
  resolver_del: f("void dls_resolver_del(dls_resolver *r)"),

  tick_settings_default: f("void dls_tick_settings_default(_Out_ dls_tick_settings *s)"),
  tick_new: f("int dls_tick_new(_Out_ dls_tick **out, dls_medium *m, const dls_tick_settings *s, _Inout_ dls_where *w)"),
  tick_del: f("void dls_tick_del(dls_tick *t)"),
  tick_now: f("int dls_tick_now(dls_tick *t, void *reading_ns)"),

  holder_settings_default: f("void dls_holder_settings_default(_Out_ dls_holder_settings *s)"),
  holder_new: f("int dls_holder_new(_Out_ dls_holder **out, const dls_holder_parts *parts, const dls_holder_settings *s, void *cb, void *user_data, _Inout_ dls_where *w)"),
  holder_del: f("void dls_holder_del(dls_holder *h)"),
  holder_propose: f("int dls_holder_propose(dls_holder *h, const uint8_t *subject, size_t subject_len, const dls_duration *ask, int mode, _Out_ uint64_t *handle)"),
  holder_step: f("int dls_holder_step(dls_holder *h, _Out_ dls_holder_result *res)"),
  holder_may_act: f("bool dls_holder_may_act(dls_holder *h, uint64_t lease)"),
  holder_remaining: f("int dls_holder_remaining(dls_holder *h, uint64_t lease, _Out_ uint64_t *ns)"),
  // typed arrays, passed by address: no marshalling per lease
  holder_remaining_many: f("int dls_holder_remaining_many(dls_holder *h, const uint64_t *leases, size_t n, uint64_t *ns, void *untracked)"),
  holder_release: f("int dls_holder_release(dls_holder *h, uint64_t lease, bool commit)"),
  holder_forget: f("int dls_holder_forget(dls_holder *h, uint64_t lease)"),
  holder_message: f("const char *dls_holder_message(const dls_holder *h)"),
  holder_event_name: f("const char *dls_holder_event_name(int kind)"),
  cause_name: f("const char *dls_cause_name(int c)"),

  owner_config_default: f("void dls_owner_config_default(_Out_ dls_owner_config *c)"),
  owner_new: f("int dls_owner_new(_Out_ dls_owner **out, const dls_owner_config *c, const dls_judge_callbacks *cb, void *user_data, _Inout_ dls_where *w)"),
  owner_judge: f("dls_judge *dls_owner_judge(const dls_owner *o)"),
  owner_pass: f("int dls_owner_pass(dls_owner *o, _Out_ dls_judge_pass_result *r)"),
  owner_wait_ns: f("uint64_t dls_owner_wait_ns(const dls_owner *o, const dls_judge_pass_result *r)"),
  owner_del: f("void dls_owner_del(dls_owner *o)"),
  judge_end: f("int dls_judge_end(dls_judge *j, uint64_t lease)"),
  judge_live: f("size_t dls_judge_live(const dls_judge *j)"),
  judge_leases: f("int dls_judge_leases(dls_judge *j, _Out_ dls_judge_iter *it)"),
  judge_leases_next: f("bool dls_judge_leases_next(_Inout_ dls_judge_iter *it, _Out_ dls_judge_lease_info *info, _Out_ uint64_t *due_by)"),
};

/* The enumerators of include/daolease/error.h by value, for error names. */
export const ERROR_NAMES: Record<number, string> = {
  0: "DLS_OK", [-1]: "DLS_ERR_NOMEM", [-2]: "DLS_ERR_INVAL", [-3]: "DLS_ERR_IO",
  [-4]: "DLS_ERR_NOTFOUND", [-5]: "DLS_ERR_EXISTS", [-6]: "DLS_ERR_TOOBIG",
  [-7]: "DLS_ERR_STATE", [-8]: "DLS_ERR_CALLBACK", [-9]: "DLS_ERR_REENTRANT",
  [-10]: "DLS_ERR_CONFIG", [-11]: "DLS_ERR_PERM", [-12]: "DLS_ERR_OVERFLOW",
  [-100]: "DLS_ERR_MSGPACK", [-101]: "DLS_ERR_TRAILING", [-102]: "DLS_ERR_DEPTH",
  [-111]: "DLS_ERR_RULE1", [-112]: "DLS_ERR_RULE2", [-113]: "DLS_ERR_RULE3",
  [-114]: "DLS_ERR_RULE4", [-115]: "DLS_ERR_RULE5", [-116]: "DLS_ERR_RULE6",
  [-117]: "DLS_ERR_RULE7", [-120]: "DLS_ERR_JSON", [-121]: "DLS_ERR_MARK",
  [-200]: "DLS_ERR_SEALED", [-201]: "DLS_ERR_CORRUPT", [-202]: "DLS_ERR_HEADER",
  [-203]: "DLS_ERR_LOCKED", [-204]: "DLS_ERR_RETENTION", [-205]: "DLS_ERR_RECORD",
  [-206]: "DLS_ERR_TRANSPORT", [-207]: "DLS_ERR_MEDIUM_ID",
  [-208]: "DLS_ERR_VALID_TAIL", [-209]: "DLS_ERR_SHRUNK", [-250]: "DLS_ERR_REDIS_TYPE",
  [-300]: "DLS_ERR_KEYRING", [-301]: "DLS_ERR_KEYKIND", [-302]: "DLS_ERR_NORESOLVER",
  [-303]: "DLS_ERR_RESOLVER_MEDIUM", [-304]: "DLS_ERR_EMPTY_KEYRING",
  [-305]: "DLS_ERR_DUPLICATE", [-306]: "DLS_ERR_SODIUM", [-400]: "DLS_ERR_NO_JOURNAL",
  [-401]: "DLS_ERR_NO_TICKS", [-402]: "DLS_ERR_NO_RECLAIM", [-403]: "DLS_ERR_BASIS",
  [-404]: "DLS_ERR_TOO_MANY_MEDIA", [-405]: "DLS_ERR_TICKS_ENDED", [-406]: "DLS_ERR_HELD",
  [-407]: "DLS_ERR_UNKNOWN_LEASE", [-408]: "DLS_ERR_JOURNAL_LOCKED",
  [-409]: "DLS_ERR_JOURNAL", [-410]: "DLS_ERR_NO_GRANTOR", [-411]: "DLS_ERR_JOURNAL_SYNC",
  [-412]: "DLS_ERR_JOURNAL_SHORT", [-500]: "DLS_ERR_SIZING", [-501]: "DLS_ERR_NO_LEASE",
  [-600]: "DLS_ERR_UNAVAILABLE", [-601]: "DLS_ERR_HELD_BY_CALLER",
  [-602]: "DLS_ERR_STALE_TOKEN", [-603]: "DLS_ERR_FENCE", [-901]: "DLS_ERR_JOURNAL_WRITE",
  [-902]: "DLS_ERR_FATAL", [-903]: "DLS_ERR_FATAL_NOMEM", [-904]: "DLS_ERR_FATAL_STEP",
};
export const ERR = {
  INVAL: -2, EXISTS: -5, STATE: -7, CONFIG: -10, TICKS_ENDED: -405, NO_LEASE: -501,
  NOMEM: -1,
} as const;
