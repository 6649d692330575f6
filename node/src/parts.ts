/* Handles the holder and streams borrow, opened through the C library. */
import { existsSync } from "node:fs";
import { C } from "./native.js";
import { check, newWhere } from "./errors.js";

export type Ptr = unknown;
export const TICK_PARTY = "ticks";

export function syncCode(sync: unknown): number {
  if (typeof sync !== "string") throw new TypeError(`sync: "none", "data" or "group", not ${String(sync)}`);
  const out = [0];
  check(C.sync_parse(sync, out) as number, `sync "${sync}"`);
  return out[0]!;
}

function mediumSettings(sync: number) {
  const s: Record<string, unknown> = {};
  C.medium_settings_default(s);
  s.sync = sync;
  return s;
}

export function openMedium(path: string, append: boolean, sync: number, create: boolean): Ptr {
  const out: Ptr[] = [null];
  const w = newWhere();
  if (create && !existsSync(path)) {
    check(C.medium_create(out, 0, path, mediumSettings(sync), w) as number, path, w);
  } else {
    check(C.medium_open(out, path, append ? 1 : 0, mediumSettings(sync), w) as number, path, w);
  }
  return out[0];
}

export function loadSecret(path: string): Ptr {
  const out: Ptr[] = [null];
  const w = newWhere();
  check(C.secret_load(out, path, w) as number, path, w);
  return out[0];
}

export function loadKeyring(path: string): Ptr {
  const out: Ptr[] = [null];
  const w = newWhere();
  check(C.keyring_load(out, path, w) as number, path, w);
  return out[0];
}

/** Host-clock ticks for one holder (as the CLI's and Python's): an in-memory
 * ring, the library's tick adapter appending tick facts read from
 * CLOCK_MONOTONIC, a `medium` resolver naming the tick party, a cursor. */
export class Ticks {
  ring: Ptr = null; adapter: Ptr = null; resolver: Ptr = null; cursor: Ptr = null;
  constructor() {
    try {
      const s: Record<string, unknown> = {};
      C.medium_settings_default(s);
      s.ring_capacity = 1024;
      const ring: Ptr[] = [null];
      check(C.ring_new(ring, s) as number, "tick ring");
      this.ring = ring[0];
      const ts: Record<string, unknown> = {};
      C.tick_settings_default(ts);
      const ad: Ptr[] = [null];
      const w = newWhere();
      check(C.tick_new(ad, this.ring, ts, w) as number, "tick adapter", w);
      this.adapter = ad[0];
      const res: Ptr[] = [null];
      check(C.resolver_new_medium(res, C.medium_id(this.ring), TICK_PARTY, null) as number, "tick resolver");
      this.resolver = res[0];
      const cur: Ptr[] = [null];
      check(C.cursor_new(cur, this.ring, 0) as number, "tick cursor");
      this.cursor = cur[0];
    } catch (e) {
      this.close();
      throw e;
    }
  }
  /** Reads the monotonic clock once and appends a tick. */
  now(): void {
    check(C.tick_now(this.adapter, null) as number, "tick");
  }
  close(): void {
    if (this.cursor) C.cursor_del(this.cursor);
    if (this.resolver) C.resolver_del(this.resolver);
    if (this.adapter) C.tick_del(this.adapter);
    if (this.ring) C.medium_del(this.ring);
    this.cursor = this.resolver = this.adapter = this.ring = null;
  }
}
