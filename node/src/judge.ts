/* The judge for a Node owner (docs/node.md, "An owner"): dls_owner_new
 * assembles the judge from the configuration's files (include/daolease/
 * owner.h) and dls_owner_pass runs one pass. The reclaim callback may be
 * async: while its promise is pending the C callback answers
 * DLS_RECLAIM_NOT_YET, and once it settles the next pass that asks answers
 * DONE or FAILED (judge.md, "Reclaim answers": both leave the lease
 * pending and retried). */
import koffi from "koffi";
import { C, dls_judge_lease_info, grantedProto, reclaimProto } from "./native.js";
import { check, DaoleaseError, newWhere } from "./errors.js";
import { loadConfig } from "./config.js";
import { syncCode, Ptr } from "./parts.js";
import { duration as cDuration, Duration } from "./values.js";

const RECLAIM_DONE = 0, RECLAIM_NOT_YET = 1, RECLAIM_FAILED = 2;
const CAUSES = ["none", "release", "cap", "policy", "silence"];

export interface Reclaim {
  subject: string | Uint8Array; lease: number; cause: string; commit: boolean;
}
/** true/undefined: done; false: not yet (asked again next pass); a throw
 * or a rejection: failed (asked again next pass). */
export type ReclaimFn = (r: Reclaim) => boolean | void | Promise<boolean | void>;

export interface GrantedLease {
  lease: number; subject: string | Uint8Array; holder: string; durationNs: number; medium: number;
}

export interface JudgeOptions {
  reclaim: ReclaimFn;
  granted?: (l: GrantedLease) => void;
}

export interface PassResult {
  hasNow: boolean; now: number; pass: number; granted: number; refused: number;
  lapsed: Record<string, number>; pending: number; reclaimFailed: number; live: number;
  waiting: number; drained: number; appended: number; forged: number; nextDue: number;
}

/** The msgpack str or bin a subject is written as (fact.h dls_value_str /
 * dls_value_bin), as a string or bytes; any other value as its bytes. */
export function decodeValue(b: Buffer): string | Uint8Array {
  if (b.length === 0) return new Uint8Array();
  const t = b[0]!;
  let off = -1, n = 0, isStr = true;
  if (t >= 0xa0 && t <= 0xbf) { off = 1; n = t - 0xa0; }
  else if (t === 0xd9 || t === 0xc4) { off = 2; n = b[1]!; isStr = t === 0xd9; }
  else if (t === 0xda || t === 0xc5) { off = 3; n = b.readUInt16BE(1); isStr = t === 0xda; }
  else if (t === 0xdb || t === 0xc6) { off = 5; n = b.readUInt32BE(1); isStr = t === 0xdb; }
  if (off < 0 || off + n !== b.length) return new Uint8Array(b);
  const body = b.subarray(off, off + n);
  return isStr ? body.toString("utf8") : new Uint8Array(body);
}

function span(x: { p: unknown; n: number | bigint }): Buffer {
  const n = Number(x.n);
  if (!x.p || n === 0) return Buffer.alloc(0);
  return Buffer.from(koffi.decode(x.p, koffi.array("uint8_t", n, "Typed")) as Uint8Array);
}

type Settled = "pending" | "done" | "failed";

export class Judge implements Disposable {
  #o: Ptr = null;
  #cbs: unknown[] = [];
  #reclaim: ReclaimFn;
  #granted: ((l: GrantedLease) => void) | undefined;
  #inflight = new Map<number, Settled>();
  #wake: (() => void) | null = null;
  #closed = false;
  /** Errors thrown by callbacks (a failed reclaim is retried next pass). */
  readonly callbackErrors: unknown[] = [];

  /** A judge from the configuration file `daolease judge` reads. */
  static fromConfig(path: string, opts: JudgeOptions): Judge {
    const c = loadConfig(path, ["media"]);
    return new Judge(c as unknown as Record<string, unknown>, opts);
  }

  constructor(c: Record<string, unknown>, opts: JudgeOptions) {
    if (opts === null || typeof opts !== "object" || typeof opts.reclaim !== "function") {
      throw new TypeError("Judge: options with a reclaim function");
    }
    if (opts.granted !== undefined && typeof opts.granted !== "function") {
      throw new TypeError("Judge: granted must be a function");
    }
    this.#reclaim = opts.reclaim;
    this.#granted = opts.granted;
    const cfg: Record<string, unknown> = {};
    C.owner_config_default(cfg);
    for (const k of ["party", "key", "keyring", "journal"]) {
      if (typeof c[k] !== "string") throw new TypeError(`Judge: ${k} must be a string`);
      cfg[k] = c[k];
    }
    const media = c.media as { path: string; party: string | null }[] | undefined;
    if (!Array.isArray(media)) throw new TypeError("Judge: media must be a list");
    const list = media.map((m) => (m.party ? `${m.path}=${m.party}` : m.path));
    cfg.media = [...list, null];
    if (c.sync !== undefined) cfg.sync = syncCode(c.sync);
    for (const k of ["tolerance", "cadence", "duration", "min_duration", "max_duration", "max", "lock_delay"]) {
      if (c[k] !== undefined) cfg[k] = cDuration(c[k], k);
    }
    const reclaim = koffi.register((_u: unknown, subject: { p: unknown; n: number }, lease: number,
      cause: number, commit: boolean) => this.#onReclaim(subject, lease, cause, commit), koffi.pointer(reclaimProto));
    const granted = koffi.register((_u: unknown, info: any) => this.#onGranted(info), koffi.pointer(grantedProto));
    this.#cbs = [reclaim, granted];
    const out: Ptr[] = [null];
    const w = newWhere();
    const rc = C.owner_new(out, cfg, { reclaim, policy: null, unsolicited: null, granted }, null, w) as number;
    if (rc !== 0) {
      this.#unregister();
      check(rc, String(c.journal), w);
    }
    this.#o = out[0];
  }

  #unregister(): void {
    for (const cb of this.#cbs) koffi.unregister(cb as any);
    this.#cbs = [];
  }

  #onReclaim(subject: { p: unknown; n: number }, leaseRaw: number | bigint, cause: number, commit: boolean): number {
    const lease = Number(leaseRaw);
    const st = this.#inflight.get(lease);
    if (st !== undefined) {
      if (st === "pending") return RECLAIM_NOT_YET;
      this.#inflight.delete(lease);
      return st === "done" ? RECLAIM_DONE : RECLAIM_FAILED;
    }
    let r: boolean | void | Promise<boolean | void>;
    try {
      r = this.#reclaim({ subject: decodeValue(span(subject)), lease, cause: CAUSES[cause] ?? String(cause), commit });
    } catch (e) {
      this.callbackErrors.push(e);
      return RECLAIM_FAILED;
    }
    if (r !== null && typeof r === "object" && typeof (r as Promise<unknown>).then === "function") {
      this.#inflight.set(lease, "pending");
      (r as Promise<boolean | void>).then(
        (v) => { if (v === false) this.#inflight.delete(lease); else this.#inflight.set(lease, "done"); },
        (e: unknown) => { this.callbackErrors.push(e); this.#inflight.set(lease, "failed"); },
      ).finally(() => this.#wake?.());
      return RECLAIM_NOT_YET;
    }
    return r === false ? RECLAIM_NOT_YET : RECLAIM_DONE;
  }

  #onGranted(ptr: unknown): void {
    if (!this.#granted) return;
    try {
      const info = koffi.decode(ptr, dls_judge_lease_info) as any;
      const h = span(info.holder);
      this.#granted({ lease: Number(info.lease), subject: decodeValue(span(info.subject)),
        holder: h.toString("utf8"), durationNs: Number(info.duration_ns), medium: info.medium });
    } catch (e) {
      this.callbackErrors.push(e);
    }
  }

  #live(what: string): void {
    if (this.#closed) throw new DaoleaseError(-7, "the judge is closed", what);
  }

  /** One pass (the host clock read once, then dls_judge_pass) on the loop
   * thread; its counters. */
  step(): PassResult {
    this.#live("step");
    const r: Record<string, any> = {};
    check(C.owner_pass(this.#o, r) as number, "pass");
    this.#last = r;
    const lapsed: Record<string, number> = {};
    for (let i = 1; i < 5; i++) lapsed[CAUSES[i]!] = Number(r.lapsed[i]);
    return { hasNow: r.has_now, now: Number(r.now), pass: Number(r.pass), granted: Number(r.granted),
      refused: Number(r.refused), lapsed, pending: Number(r.pending), reclaimFailed: Number(r.reclaim_failed),
      live: Number(r.live), waiting: Number(r.waiting), drained: Number(r.drained),
      appended: Number(r.appended), forged: Number(r.forged), nextDue: Number(r.next_due) };
  }
  #last: Record<string, any> | null = null;

  /** Milliseconds to wait after the last pass (dls_owner_wait_ns). */
  waitMs(): number {
    this.#live("waitMs");
    return this.#last ? Number(C.owner_wait_ns(this.#o, this.#last)) / 1e6 : 0;
  }

  /** Passes until `signal` aborts; a reclaim promise that settles wakes
   * the loop for the next pass. */
  async run(signal?: AbortSignal): Promise<void> {
    while (!signal?.aborted && !this.#closed) {
      this.step();
      await new Promise<void>((res) => {
        const t = setTimeout(done, this.waitMs());
        function done() { clearTimeout(t); signal?.removeEventListener("abort", done); res(); }
        this.#wake = done;
        signal?.addEventListener("abort", done);
      });
      this.#wake = null;
    }
  }

  /** The owner ends a live lease (cause policy at the next pass). */
  end(lease: number): void {
    if (typeof lease !== "number" || !Number.isSafeInteger(lease) || lease < 1) throw new TypeError("end: a lease id");
    this.#live("end");
    check(C.judge_end(C.owner_judge(this.#o), lease) as number, `end ${lease}`);
  }

  /** Live leases in the ledger. */
  get live(): number {
    this.#live("live");
    return Number(C.judge_live(C.owner_judge(this.#o)));
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    C.owner_del(this.#o);
    this.#o = null;
    this.#unregister();
    this.#wake?.();
  }
  [Symbol.dispose](): void { this.close(); }
}

export type { Duration };
