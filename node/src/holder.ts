/* The holder for Node (docs/node.md, "An agent"). The C holder is a step
 * function (include/daolease/holder.h); this class owns one with its parts
 * and drives it from the event loop with its own timer, as the Python
 * package drives it from its own thread (docs/python.md).
 *
 * Threads: every call that may append (the step, propose, release) runs on
 * koffi's worker thread (an append that syncs never blocks the loop), and
 * all calls on one holder go through one queue, so the C holder is used by
 * one thread at a time (holder.h: "One thread at a time per holder"). */
import koffi from "koffi";
import { setImmediate as yieldLoop } from "node:timers/promises";
import { C, dls_holder_event, ERR } from "./native.js";
import { check, DaoleaseError, LeaseLost, newWhere, Refused } from "./errors.js";
import { loadConfig } from "./config.js";
import { loadKeyring, loadSecret, openMedium, Ptr, syncCode, Ticks, TICK_PARTY } from "./parts.js";
import { duration as cDuration, Duration, encodeSubject, str, Subject } from "./values.js";

/** The longest wait between two steps (ms). */
const TURN_MS = 50;
/** The shortest wait between two timed steps (ms). */
const STEP_GAP_MS = 10;
/** Events decoded per turn of the loop (a step's events are read in slices
 * so that 10^4 of them never hold the loop). */
const EVENT_SLICE = 64;
/** dls_holder_event's size and field offsets, as koffi lays it out
 * (test/layout.test.js compares them with the C compiler's). */
const EV = {
  size: koffi.sizeof(dls_holder_event),
  kind: koffi.offsetof(dls_holder_event, "kind"), lease: koffi.offsetof(dls_holder_event, "lease"),
  proposal: koffi.offsetof(dls_holder_event, "proposal"), reading: koffi.offsetof(dls_holder_event, "reading"),
  seq: koffi.offsetof(dls_holder_event, "seq"), cause: koffi.offsetof(dls_holder_event, "cause"),
  error: koffi.offsetof(dls_holder_event, "error"), text_len: koffi.offsetof(dls_holder_event, "text_len"),
  text: koffi.offsetof(dls_holder_event, "text"),
};

export interface HolderOptions {
  /** Leases (and proposals) tracked at once (dls_holder_settings.max_leases; default 64). */
  maxLeases?: number;
  /** Facts one append may carry (batch_max; default 1). */
  batch?: number;
  /** The ask when a claim names none (the configuration's `duration`). */
  duration?: Duration;
}

export interface HolderParts {
  party: string; key: string; keyring: string; grantor: string; journal: string; medium: string;
  sync?: string; duration?: Duration;
}

export interface ClaimOptions {
  /** The duration asked for (one unit: {s: 3}); default: the configuration's. */
  duration?: Duration;
  /** Seconds to wait for the grant (default: no limit). */
  wait?: number;
  shared?: boolean;
}

export interface HolderEvent {
  kind: string; lease: number; proposal: number; reading: number; seq: number;
  cause: string | null; error: string | null; text: string;
}

const EVENT_KIND: Record<number, string> = {
  1: "granted", 2: "refused", 3: "lapsed", 4: "renewed", 5: "renewal-failed", 6: "bound",
  7: "released", 8: "release-failed", 9: "sizing", 10: "misregistered",
};

function callAsync(fn: any, ...args: unknown[]): Promise<any> {
  return new Promise((res, rej) => fn.async(...args, (err: unknown, v: unknown) => (err ? rej(err) : res(v))));
}

class TimeoutError extends Error {
  override readonly name = "TimeoutError";
}

interface Parts { secret: Ptr; keyring: Ptr; medium: Ptr; journal: Ptr; jcursor: Ptr; jresolver: Ptr }

interface Waiter {
  subject: Subject; resolve: (l: Lease) => void; reject: (e: Error) => void;
}

/** A lease held by this holder. `token` is the lease id: the fencing token
 * to hand to the resource with every write. */
export class Lease implements AsyncDisposable {
  readonly token: number;
  readonly subject: Subject;
  readonly #holder: Holder;
  // made on first use: 10^4 leases need not carry 10^4 controllers
  #ctl: AbortController | null = null;
  #released = false;
  #lostReason: string | null = null;
  /* the newest answer of the library: remaining ns, and the time (ms,
   * performance.now) read BEFORE the reading it was computed at */
  snapT0 = 0;
  snapNs = 0;

  constructor(holder: Holder, token: number, subject: Subject) {
    this.#holder = holder;
    this.token = token;
    this.subject = subject;
  }
  /** Fired (with a LeaseLost reason) when the lease is lost: its bound
   * passed or the grantor recorded it lapsed. */
  get signal(): AbortSignal {
    if (this.#ctl === null) {
      this.#ctl = new AbortController();
      if (this.#lostReason !== null) this.#ctl.abort(new LeaseLost(this.#lostReason));
    }
    return this.#ctl.signal;
  }
  get lost(): boolean { return this.#lostReason !== null; }
  get lostReason(): string | null { return this.#lostReason; }
  get released(): boolean { return this.#released; }

  #usable(what: string): void {
    if (this.#released) throw new DaoleaseError(ERR.STATE, `lease ${this.token} was released`, what);
  }
  /** May the agent act under this lease now? False from the bound on. */
  mayAct(): boolean {
    this.#usable("mayAct");
    if (this.lost) return false;
    return this.#holder.mayActOf(this);
  }
  /** Seconds before the bound (0 at or after it). */
  remaining(): number {
    this.#usable("remaining");
    if (this.lost) return 0;
    return this.#holder.remainingOf(this) / 1e9;
  }
  /** Releases the lease (commit: the work is finished). mayAct() throws
   * from this call on. */
  async release(opts: { commit?: boolean } = {}): Promise<void> {
    if (opts === null || typeof opts !== "object") throw new TypeError("release: an options object");
    this.#usable("release");
    this.#released = true;
    if (this.lost) return;
    await this.#holder.releaseOf(this, opts.commit === true);
  }
  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.#released) await this.release({ commit: false }).catch(() => undefined);
  }
  lose(reason: string): void {
    if (this.#lostReason !== null || this.#released) return;
    this.#lostReason = reason;
    this.#ctl?.abort(new LeaseLost(reason));
  }
}

export class Holder implements AsyncDisposable {
  readonly name: string;
  readonly defaultDuration: Duration | undefined;
  #h: Ptr = null;
  #ticks: Ticks | null = null;
  #parts: Parts;
  #queue: Promise<unknown> = Promise.resolve();
  #ops: (() => Promise<void>)[] = [];
  #running = false;
  #busy = false;
  #ns: number[] = [0];
  /* one slice's renewed leases, answered by one dls_holder_remaining_many
   * call (one FFI crossing a slice, not one a renewal) */
  #sliceIds = new BigUint64Array(EVENT_SLICE);
  #sliceNs = new BigUint64Array(EVENT_SLICE);
  #sliceLeases: Lease[] = [];
  #closed = false;
  #timer: NodeJS.Timeout | null = null;
  #waiters = new Map<number, Waiter>();
  #leases = new Map<number, Lease>();
  /** The last error a background step met (transport errors: the bound
   * protects the leases), or null. */
  lastError: Error | null = null;
  /** Counters over every step: renewals appended ok, steps; asyncCalls:
   * the C calls that may append (step, propose, release) made on koffi's
   * worker thread — every one of them is (docs/node.md, "The event loop"). */
  readonly stats = { steps: 0, renewed: 0, appends: 0, events: 0, maxSyncMs: 0, asyncCalls: 0 };
  /** Called with every event of every step (optional). */
  onEvent: ((e: HolderEvent) => void) | null = null;

  /** A holder from the configuration file `daolease run` reads (party, key,
   * keyring, grantor, journal, medium, sync, duration); the medium is
   * created when missing. */
  static fromConfig(path: string, opts: HolderOptions = {}): Holder {
    const c = loadConfig(path, ["grantor", "medium"]);
    return new Holder({
      party: c.party, key: c.key, keyring: c.keyring, grantor: c.grantor!, journal: c.journal,
      medium: c.medium!, sync: c.sync, duration: c.duration as Duration | undefined,
    }, opts);
  }

  constructor(p: HolderParts, opts: HolderOptions = {}) {
    if (p === null || typeof p !== "object") throw new TypeError("Holder: a parts object");
    if (opts === null || typeof opts !== "object") throw new TypeError("Holder: an options object");
    for (const k of ["party", "key", "keyring", "grantor", "journal", "medium"] as const) str(p[k], k);
    const sync = syncCode(p.sync ?? "data");
    if (p.duration !== undefined) cDuration(p.duration, "duration");
    for (const k of ["maxLeases", "batch"] as const) {
      const v = opts[k];
      if (v !== undefined && (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1)) {
        throw new TypeError(`${k}: a positive integer, not ${String(v)}`);
      }
    }
    this.name = p.party;
    this.defaultDuration = opts.duration ?? p.duration;
    const parts = this.#parts = { secret: null, keyring: null, medium: null, journal: null,
      jcursor: null, jresolver: null } as Parts;
    try {
      parts.secret = loadSecret(p.key);
      parts.keyring = loadKeyring(p.keyring);
      parts.medium = openMedium(p.medium, true, sync, true);
      parts.journal = openMedium(p.journal, false, sync, false);
      const cur: Ptr[] = [null];
      check(C.cursor_new(cur, parts.journal, 0) as number, p.journal);
      parts.jcursor = cur[0];
      const res: Ptr[] = [null];
      check(C.resolver_new_signed(res, C.medium_id(parts.journal), parts.keyring) as number, p.journal);
      parts.jresolver = res[0];
      this.#ticks = new Ticks();
      const s: Record<string, unknown> = {};
      C.holder_settings_default(s);
      if (opts.maxLeases !== undefined) { s.max_leases = opts.maxLeases; s.max_proposals = opts.maxLeases; }
      if (opts.batch !== undefined) s.batch_max = opts.batch;
      const hp = {
        name: p.party, secret: parts.secret, medium: parts.medium, grantor: p.grantor,
        journal: parts.jcursor, journal_resolver: parts.jresolver, ticks: this.#ticks.cursor,
        tick_resolver: this.#ticks.resolver, tick_party: TICK_PARTY,
      };
      const out: Ptr[] = [null];
      const w = newWhere();
      check(C.holder_new(out, hp, s, null, null, w) as number, p.party, w);
      this.#h = out[0];
    } catch (e) {
      this.#free();
      throw e;
    }
    this.#arm(0);
  }

  #free(): void {
    const p = this.#parts;
    if (this.#h) C.holder_del(this.#h);
    this.#h = null;
    if (p.jcursor) C.cursor_del(p.jcursor);
    if (p.jresolver) C.resolver_del(p.jresolver);
    if (p.journal) C.medium_del(p.journal);
    if (p.medium) C.medium_del(p.medium);
    if (p.keyring) C.keyring_del(p.keyring);
    if (p.secret) C.secret_del(p.secret);
    this.#ticks?.close();
    this.#ticks = null;
    for (const k of Object.keys(p) as (keyof Parts)[]) p[k] = null;
  }

  #live(what: string): void {
    if (this.#closed) throw new DaoleaseError(ERR.STATE, "the holder is closed", what);
  }

  /** Runs op after the queued ops (a step before them: `front`), one at a
   * time: one C call on this holder at a time, and steps never wait behind
   * a burst of proposals. */
  #enqueue<T>(op: () => Promise<T>, front = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const run = () => op().then(resolve, reject);
      if (front) this.#ops.unshift(run); else this.#ops.push(run);
      if (!this.#running) this.#queue = this.#pump();
    });
  }
  async #pump(): Promise<void> {
    this.#running = true;
    try {
      for (let op = this.#ops.shift(); op; op = this.#ops.shift()) await op();
    } finally {
      this.#running = false;
    }
  }

  #arm(ms: number): void {
    if (this.#closed) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.#enqueue(() => this.#step(), true).catch((e: Error) => { this.lastError = e; })
        .finally(() => { if (!this.#timer) this.#arm(TURN_MS); });
    }, ms);
    // the timer keeps the process alive only while something is claimed
    if (this.#waiters.size === 0 && this.#leases.size === 0) this.#timer.unref();
  }

  /** One step: a tick (the monotonic clock, read on the loop thread), then
   * dls_holder_step on the worker thread; its events are dispatched. */
  async #step(): Promise<void> {
    if (this.#closed) return;
    this.#ticks!.now();
    const res: Record<string, any> = {};
    this.#busy = true;
    let rc: number;
    try {
      this.stats.asyncCalls++; rc = await callAsync(C.holder_step, this.#h, res);
    } finally {
      this.#busy = false;
    }
    this.stats.steps++;
    this.stats.appends += Number(res.appends);
    if (rc !== 0 && rc !== ERR.TICKS_ENDED && rc !== ERR.NOMEM) check(rc, "step");
    const n = Number(res.n_events);
    // the events are read in place (holder.h: borrowed until the next
    // step), field by field, in slices: no object per event is made but
    // for the few the claims need, so 10^4 renewals make little garbage
    const size = EV.size;
    const view = n ? new DataView(koffi.view(res.events, n * size)) : null;
    for (let i = 0; i < n; i += EVENT_SLICE) {
      if (i > 0) await yieldLoop();
      if (this.#closed) return;
      const t0 = performance.now();
      this.#ticks!.now();                       // one reading for the slice's snapshots
      const end = Math.min(n, i + EVENT_SLICE);
      this.#sliceLeases.length = 0;
      for (let k = i; k < end; k++) this.#dispatch(view!, k * size);
      this.#snapshotSlice(t0);
      this.#timed(t0);
    }
    let next = TURN_MS;
    if (res.more) next = 0;
    else if (res.has_next && res.has_now) {
      // at least STEP_GAP_MS between steps: what falls due meanwhile is
      // renewed in one batch (holder.md: the interval is a third of the
      // duration, far above this gap)
      next = Math.min(TURN_MS, Math.max(STEP_GAP_MS, (Number(res.next_reading) - Number(res.now)) / 1e6));
    }
    this.#arm(next);
  }

  /** The longest synchronous section of the package on the loop (ms). */
  #timed(t0: number): void {
    const ms = performance.now() - t0;
    if (ms > this.stats.maxSyncMs) this.stats.maxSyncMs = ms;
  }

  #dispatch(v: DataView, o: number): void {
    const code = v.getInt32(o + EV.kind, true);
    const lease = Number(v.getBigUint64(o + EV.lease, true));
    this.stats.events++;
    if (code === 4 && this.onEvent === null) {          // renewed: the common case
      this.stats.renewed++;
      const l = this.#leases.get(lease);
      if (l) {
        this.#sliceIds[this.#sliceLeases.length] = BigInt(lease);
        this.#sliceLeases.push(l);
      }
      return;
    }
    const kind = EVENT_KIND[code] ?? String(code);
    const proposal = Number(v.getBigUint64(o + EV.proposal, true));
    const cause = v.getInt32(o + EV.cause, true);
    const textLen = Math.min(Number(v.getBigUint64(o + EV.text_len, true)), 319);
    const text = textLen ? Buffer.from(v.buffer, v.byteOffset + o + EV.text, textLen).toString("utf8") : "";
    if (kind === "renewed") this.stats.renewed++;
    if (this.onEvent) {
      const err = v.getInt32(o + EV.error, true);
      this.onEvent({ kind, lease, proposal, reading: Number(v.getBigUint64(o + EV.reading, true)),
        seq: Number(v.getBigUint64(o + EV.seq, true)),
        cause: kind === "lapsed" ? C.cause_name(cause) as string : null,
        error: err ? new DaoleaseError(err).name : null, text });
    }
    const w = proposal ? this.#waiters.get(proposal) : undefined;
    if (kind === "granted" && w) {
      this.#waiters.delete(proposal);
      const l = new Lease(this, lease, w.subject);
      this.#leases.set(lease, l);
      this.#snapshot(l);
      w.resolve(l);
    } else if ((kind === "refused" || kind === "misregistered") && w) {
      this.#waiters.delete(proposal);
      w.reject(kind === "refused" ? new Refused(text, `proposal for ${String(w.subject)}`)
        : new DaoleaseError(-207, "the grant registers another medium than the holder's own", String(w.subject)));
    } else if ((kind === "bound" || kind === "lapsed") && this.#leases.has(lease)) {
      const l = this.#leases.get(lease)!;
      const why = kind === "lapsed" ? `was reclaimed by the grantor (cause ${C.cause_name(cause)})`
        : text ? `reached its bound: ${text}` : "reached its bound (renewals did not succeed)";
      l.lose(`lease ${lease} on ${String(l.subject)} ${why}`);
      this.#leases.delete(lease);
    } else if (kind === "renewed" && this.#leases.has(lease)) {
      this.#snapshot(this.#leases.get(lease)!);
    }
  }

  /* The library's answer for l now, kept with the time read before the
   * reading (so that aging it by the time elapsed since never overstates
   * what is left). Only when no call is in flight. */
  #snapshot(l: Lease): number {
    const t0 = performance.now();
    this.#ticks!.now();
    const rc = C.holder_remaining(this.#h, l.token, this.#ns) as number;
    l.snapT0 = t0;
    l.snapNs = rc === 0 ? Number(this.#ns[0]) : 0;
    return l.snapNs;
  }

  /** The snapshots of the slice's renewed leases, in one C call. */
  #snapshotSlice(t0: number): void {
    const ls = this.#sliceLeases;
    if (ls.length === 0) return;
    const rc = C.holder_remaining_many(this.#h, this.#sliceIds, ls.length, this.#sliceNs, null) as number;
    for (let k = 0; k < ls.length; k++) {
      const l = ls[k]!;
      l.snapT0 = t0;
      l.snapNs = rc === 0 ? Number(this.#sliceNs[k]) : 0;
    }
    ls.length = 0;
  }

  mayActOf(l: Lease): boolean {
    this.#live("mayAct");
    if (this.#busy) {
      // a call is in flight on the worker thread: the newest answer the
      // library gave, aged by the time since (never true after the bound)
      return l.snapNs - (performance.now() - l.snapT0) * 1e6 > 0;
    }
    this.#ticks!.now();
    const ok = C.holder_may_act(this.#h, l.token) as boolean;
    this.#snapshot(l);
    return ok;
  }

  remainingOf(l: Lease): number {
    this.#live("remaining");
    if (this.#busy) return Math.max(0, l.snapNs - (performance.now() - l.snapT0) * 1e6);
    return this.#snapshot(l);
  }

  releaseOf(l: Lease, commit: boolean): Promise<void> {
    this.#live("release");
    this.#leases.delete(l.token);
    return this.#enqueue(async () => {
      if (this.#closed) return;
      this.#busy = true;
      let rc: number;
      try { this.stats.asyncCalls++; rc = await callAsync(C.holder_release, this.#h, l.token, commit); }
      finally { this.#busy = false; }
      // a failed append is retried at every later step (holder.h)
      if (rc !== 0 && rc !== ERR.NO_LEASE) this.lastError = new DaoleaseError(rc, null, `release ${l.token}`);
    });
  }

  /** Proposes and waits for the grant (the holder steps meanwhile).
   * Rejects with Refused, TimeoutError after `wait` seconds, or
   * DaoleaseError. */
  async acquire(subject: Subject, opts: ClaimOptions = {}): Promise<Lease> {
    const enc = encodeSubject(subject);
    if (opts === null || typeof opts !== "object") throw new TypeError("claim: an options object");
    const ask = opts.duration !== undefined ? opts.duration : this.defaultDuration;
    const d = ask === undefined ? null : cDuration(ask, "duration");
    if (opts.wait !== undefined && (typeof opts.wait !== "number" || !(opts.wait >= 0) || opts.wait > 2 ** 31 / 1000)) {
      throw new TypeError(`wait: seconds, a number from 0 to ${2 ** 31 / 1000}`);
    }
    this.#live("claim");
    let timer: NodeJS.Timeout | undefined;
    let handle = 0;
    const granted = new Promise<Lease>((resolve, reject) => {
      void this.#enqueue(async () => {
        this.#live("claim");
        const out = [0];
        this.#busy = true;
        let rc: number;
        try { this.stats.asyncCalls++; rc = await callAsync(C.holder_propose, this.#h, enc, enc.length, d, opts.shared ? 1 : 0, out); }
        finally { this.#busy = false; }
        if (rc !== 0) check(rc, `propose ${String(subject)}`, undefined, C.holder_message(this.#h) as string || null);
        handle = Number(out[0]);
        this.#waiters.set(handle, { subject, resolve, reject });
        this.#arm(0);
      }).catch(reject);
      if (opts.wait !== undefined) {
        timer = setTimeout(() => {
          this.#waiters.delete(handle);
          reject(new TimeoutError(`no grant for ${String(subject)} within ${opts.wait} s`));
        }, opts.wait * 1000);
      }
    });
    try { return await granted; } finally { if (timer) clearTimeout(timer); }
  }

  /** `await holder.claim(subject, {duration}, async (lease) => ...)`: the
   * lease is renewed while the body runs; a body that returns releases it
   * with commit, one that throws releases it without. When the lease is
   * lost, lease.signal fires and claim rejects with LeaseLost. */
  async claim<T>(subject: Subject, opts: ClaimOptions, body: (lease: Lease) => Promise<T> | T): Promise<T> {
    if (typeof body !== "function") throw new TypeError("claim: the body must be a function");
    const lease = await this.acquire(subject, opts);
    let ok = false;
    let result: T;
    try {
      result = await body(lease);
      ok = true;
    } catch (e) {
      if (lease.lost) throw new LeaseLost(lease.lostReason!, { cause: e });
      throw e;
    } finally {
      if (!lease.lost && !lease.released && !this.#closed) {
        await lease.release({ commit: ok }).catch((e: Error) => { this.lastError = e; });
      }
    }
    if (lease.lost) throw new LeaseLost(lease.lostReason!);
    return result!;
  }

  /** Frees the holder once queued calls are done. Appends nothing: a lease
   * not released lapses by silence at the judge. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const err = new DaoleaseError(ERR.STATE, "the holder is closed", "claim");
    for (const w of this.#waiters.values()) w.reject(err);
    this.#waiters.clear();
    for (const l of this.#leases.values()) l.lose(`lease ${l.token}: the holder was closed`);
    this.#leases.clear();
    await this.#queue;
    this.#free();
  }
  async [Symbol.asyncDispose](): Promise<void> { await this.close(); }
  get closed(): boolean { return this.#closed; }
  /** Leases held now (granted, not lost or released). */
  get held(): number { return this.#leases.size; }
}
