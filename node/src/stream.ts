/* Streams, keys and the operators' reports. */
import koffi from "koffi";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { C } from "./native.js";
import { check, DaoleaseError, newWhere } from "./errors.js";
import { openMedium, Ptr, syncCode } from "./parts.js";
import { str } from "./values.js";

const NEXT_OK = 0;

function callAsync(fn: any, ...args: unknown[]): Promise<any> {
  return new Promise((res, rej) => fn.async(...args, (err: unknown, v: unknown) => (err ? rej(err) : res(v))));
}

export interface StreamRecord { position: number; data: Buffer }

/** A stream file (docs/streams.md). Appends run on the worker thread (they
 * sync); all calls on one stream go through one queue. */
export class Stream {
  #m: Ptr;
  #queue: Promise<unknown> = Promise.resolve();
  readonly path: string;

  private constructor(m: Ptr, path: string) { this.#m = m; this.path = path; }

  static create(path: string, opts: { sync?: string } = {}): Stream {
    str(path, "path");
    if (existsSync(path)) throw new DaoleaseError(-5, "exists", path);
    return new Stream(openMedium(path, true, syncCode(opts.sync ?? "data"), true), path);
  }
  static open(path: string, opts: { append?: boolean; sync?: string } = {}): Stream {
    str(path, "path");
    return new Stream(openMedium(path, opts.append === true, syncCode(opts.sync ?? "data"), false), path);
  }

  #enqueue<T>(op: () => Promise<T> | T): Promise<T> {
    const run = this.#queue.then(op);
    this.#queue = run.catch(() => undefined);
    return run;
  }
  #live(): Ptr {
    if (!this.#m) throw new DaoleaseError(-7, "the stream is closed", this.path);
    return this.#m;
  }

  /** Appends one record (a msgpack map); its position once durable. */
  append(record: Uint8Array): Promise<number> {
    if (!(record instanceof Uint8Array)) return Promise.reject(new TypeError("append: a Uint8Array"));
    return this.#enqueue(async () => {
      const m = this.#live();
      const pos = [0];
      const w = newWhere();
      const rc = await callAsync(C.medium_append, m, record, record.length, pos, w);
      check(rc, this.path, w);
      return Number(pos[0]);
    });
  }

  /** Seals `fact` (an encoded fact) into an envelope with `secret` (a key
   * file) for this medium, and appends it. */
  appendFact(fact: Uint8Array, keyFile: string): Promise<number> {
    if (!(fact instanceof Uint8Array)) return Promise.reject(new TypeError("appendFact: a Uint8Array"));
    str(keyFile, "key");
    const out: Ptr[] = [null];
    const w = newWhere();
    check(C.secret_load(out, keyFile, w) as number, keyFile, w);
    try {
      const buf = Buffer.alloc(fact.length + 256);
      const len = [0];
      check(C.envelope_seal(out[0], C.medium_id(this.#live()), fact, fact.length, buf, buf.length, len) as number, "seal");
      return this.append(buf.subarray(0, len[0]));
    } finally {
      C.secret_del(out[0]);
    }
  }

  /** The ok records from `from` on, as an async iterator; with `follow`,
   * waits for more (polling every `pollMs`) until `signal` aborts. */
  async *cursor(opts: { from?: number; follow?: boolean; pollMs?: number; signal?: AbortSignal } = {}): AsyncGenerator<StreamRecord> {
    const from = opts.from ?? 0;
    if (typeof from !== "number" || !Number.isSafeInteger(from) || from < 0) throw new TypeError("cursor: from must be a position");
    const out: Ptr[] = [null];
    check(C.cursor_new(out, this.#live(), from) as number, this.path);
    const cur = out[0];
    try {
      for (;;) {
        const batch = await this.#enqueue(() => {
          const recs: StreamRecord[] = [];
          const w = newWhere();
          for (let i = 0; i < 256; i++) {
            const rec: Record<string, any> = {};
            const r = C.cursor_next(cur, rec, w) as number;
            if (r !== NEXT_OK) break;
            const n = Number(rec.n);
            const data = n ? Buffer.from(koffi.decode(rec.p, koffi.array("uint8_t", n, "Typed")) as Uint8Array) : Buffer.alloc(0);
            recs.push({ position: Number(rec.position), data });
          }
          return recs;
        });
        for (const r of batch) yield r;
        if (batch.length === 256) continue;
        if (!opts.follow || opts.signal?.aborted) return;
        await new Promise((res) => setTimeout(res, opts.pollMs ?? 50));
        if (opts.signal?.aborted) return;
      }
    } finally {
      await this.#enqueue(() => C.cursor_del(cur));
    }
  }

  async close(): Promise<void> {
    await this.#enqueue(() => {
      if (this.#m) C.medium_del(this.#m);
      this.#m = null;
    });
  }
}

/** Writes NAME.secret (mode 0600) in `dir` and returns the keyring line,
 * as `daolease keygen` does. DaoleaseError DLS_ERR_EXISTS when it exists. */
export function keygen(name: string, dir = ".", opts: { mac?: boolean } = {}): string {
  str(name, "name");
  str(dir, "dir");
  const out: Ptr[] = [null];
  check(C.secret_generate(out, name, opts.mac ? 1 : 0) as number, name);
  try {
    const path = join(dir, `${name}.secret`);
    if (existsSync(path)) throw new DaoleaseError(-5, "exists", path);
    const w = newWhere();
    check(C.secret_save(out[0], path, w) as number, path, w);
    const buf = Buffer.alloc(256);
    check(C.secret_keyring_line(out[0], buf, buf.length) as number, name);
    return buf.toString("utf8", 0, buf.indexOf(0));
  } finally {
    C.secret_del(out[0]);
  }
}

/** The `daolease` command: $DAOLEASE_BIN, the build tree's, or PATH's. */
export function daoleaseBin(): string {
  if (process.env.DAOLEASE_BIN) return process.env.DAOLEASE_BIN;
  if (process.env.DAOLEASE_BUILD) return join(process.env.DAOLEASE_BUILD, "cli", "daolease");
  const tree = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "build", "cli", "daolease");
  return existsSync(tree) ? tree : "daolease";
}

function jsonLines(args: string[], okCodes: number[]): Promise<{ lines: any[]; exit: number }> {
  return new Promise((resolve, reject) => {
    execFile(daoleaseBin(), args, { maxBuffer: 1 << 30 }, (err, stdout, stderr) => {
      const exit = err ? (typeof (err as any).code === "number" ? (err as any).code : -1) : 0;
      if (!okCodes.includes(exit)) {
        reject(new DaoleaseError(-3, (stderr || String(err)).trim(), `daolease ${args[0]}`));
        return;
      }
      resolve({ lines: stdout.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l)), exit });
    });
  });
}

export type MediumArg = string | { path: string; party: string };
function mediaArgs(media: MediumArg[]): string[] {
  if (!Array.isArray(media)) throw new TypeError("media: a list");
  return media.map((m) => (typeof m === "string" ? m : `${str(m.path, "path")}=${str(m.party, "party")}`));
}

/** `daolease audit --json` (docs/cli.md, audit): {leases, summary, exit}
 * with the CLI's shapes (exit 0: clean, 1: failures, 3: unreadable). */
export async function audit(journal: string, grantor: string, keyring: string, media: MediumArg[]):
    Promise<{ leases: any[]; summary: any; exit: number }> {
  const args = ["audit", "--journal", str(journal, "journal"), "--grantor", str(grantor, "grantor"),
    "--keyring", str(keyring, "keyring"), "--json", "--media", ...mediaArgs(media)];
  const { lines, exit } = await jsonLines(args, [0, 1]);
  const summary = lines.find((l) => l.summary === true) ?? null;
  return { leases: lines.filter((l) => l.summary !== true), summary, exit };
}

/** `daolease status --json` (docs/cli.md, status): {leases, summary}. */
export async function status(journal: string, opts: { media?: MediumArg[]; grantor?: string; keyring?: string } = {}):
    Promise<{ leases: any[]; summary: any }> {
  const args = ["status", "--journal", str(journal, "journal"), "--json"];
  if (opts.grantor !== undefined) args.push("--grantor", str(opts.grantor, "grantor"));
  if (opts.keyring !== undefined) args.push("--keyring", str(opts.keyring, "keyring"));
  if (opts.media) args.push("--media", ...mediaArgs(opts.media));
  const { lines } = await jsonLines(args, [0]);
  return { leases: lines.filter((l) => l.summary !== true), summary: lines.find((l) => l.summary === true) ?? null };
}

