/* Errors: every failure of the C library is a DaoleaseError carrying the C
 * enumerator's name (docs/node.md, "Errors"). */
import { C, ERROR_NAMES } from "./native.js";

export class DaoleaseError extends Error {
  /** The C enumerator, e.g. "DLS_ERR_SIZING". */
  override readonly name: string;
  /** The negative code of include/daolease/error.h. */
  readonly code: number;
  /** The library's sentence (dls_strerror) or the dls_where reason. */
  readonly reason: string;
  /** dls_err_is_fatal(code). */
  readonly fatal: boolean;
  constructor(code: number, reason?: string | null, context?: string) {
    const name = ERROR_NAMES[code] ?? `DLS_ERR_${code}`;
    const why = reason || (C.strerror(code) as string);
    super(`${context ? context + ": " : ""}${why} (${name})`);
    this.name = name;
    this.code = code;
    this.reason = why;
    this.fatal = C.err_is_fatal(code) !== 0;
  }
}

/** The holder's grant was refused by the judge (reason: the judge's text). */
export class Refused extends DaoleaseError {
  readonly refusal: string;
  constructor(refusal: string, context: string) {
    super(-7, `refused: ${refusal || "no reason"}`, context);
    this.refusal = refusal;
  }
}

/** A lease was lost while its body ran (bound passed, or reclaimed). */
export class LeaseLost extends Error {
  override readonly name = "LeaseLost";
}

export interface Where { offset: number; line: number; reason: string | null; rule: number; sys_errno: number }
export function newWhere(): Where {
  return { offset: 0, line: 0, reason: null, rule: 0, sys_errno: 0 };
}

export function check(rc: number, context: string, w?: Where, reason?: string | null): void {
  if (rc === 0) return;
  let why = reason ?? w?.reason ?? null;
  if (why && w && w.offset) why = `${why} (at ${w.offset})`;
  throw new DaoleaseError(rc, why, context);
}
