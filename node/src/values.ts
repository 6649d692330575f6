/* Argument checks and conversions to the C library's values. Only the
 * JavaScript types are checked here; every rule about the values (sizes,
 * units, ranges) is the C call's. */
import { C } from "./native.js";
import { check } from "./errors.js";

export type Subject = string | Uint8Array;
/** One unit to a non-negative integer: {ms: 250}, {s: 3} (the vocabulary's form). */
export type Duration = { ns: number } | { us: number } | { ms: number } | { s: number }
  | { min: number } | { h: number };
export interface CDuration { ns: number; magnitude: number; unit: number }

const UNITS = ["ns", "us", "ms", "s", "min", "h"];

export function duration(d: unknown, what = "duration"): CDuration {
  if (d === null || typeof d !== "object" || Array.isArray(d)) {
    throw new TypeError(`${what}: a one-unit object such as {s: 3}, not ${String(d)}`);
  }
  const keys = Object.keys(d);
  if (keys.length !== 1 || !UNITS.includes(keys[0]!)) {
    throw new TypeError(`${what}: exactly one of ${UNITS.join(", ")} (got ${JSON.stringify(keys)})`);
  }
  const unit = keys[0]!;
  const mag = (d as Record<string, unknown>)[unit];
  if (typeof mag !== "number" || !Number.isSafeInteger(mag) || mag < 0) {
    throw new TypeError(`${what}: ${unit} must be a non-negative safe integer, not ${String(mag)}`);
  }
  const out = { ns: 0, magnitude: 0, unit: 0 };
  check(C.duration_make(out, UNITS.indexOf(unit), mag) as number, what);
  return out;
}

export function durationDict(d: CDuration): Duration {
  return { [UNITS[d.unit]!]: Number(d.magnitude) } as Duration;
}

/** The msgpack encoding of a subject: a string as str, bytes as bin. */
export function encodeSubject(s: unknown): Buffer {
  let src: Buffer;
  let fn;
  if (typeof s === "string") { src = Buffer.from(s, "utf8"); fn = C.value_str; }
  else if (s instanceof Uint8Array) { src = Buffer.from(s); fn = C.value_bin; }
  else throw new TypeError(`subject: a string or a Uint8Array, not ${s === null ? "null" : typeof s}`);
  const out = Buffer.alloc(src.length + 8);
  const len = [0];
  check(fn(out, out.length, src, src.length, len) as number, "subject");
  return out.subarray(0, len[0]);
}

export function str(s: unknown, what: string): string {
  if (typeof s !== "string") throw new TypeError(`${what}: a string, not ${s === null ? "null" : typeof s}`);
  if (s.includes("\0")) throw new TypeError(`${what}: contains a NUL character`);
  return s;
}
