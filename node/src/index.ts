/* daolease for Node.js: the holder and the judge of the C library
 * (docs/node.md). No rule is implemented twice: grants, renewals, the
 * bound, classification, attribution and the audit are the C library's. */
export { Holder, Lease } from "./holder.js";
export type { ClaimOptions, HolderEvent, HolderOptions, HolderParts } from "./holder.js";
export { Judge, decodeValue } from "./judge.js";
export type { GrantedLease, JudgeOptions, PassResult, Reclaim, ReclaimFn } from "./judge.js";
export { Stream, audit, daoleaseBin, keygen, status } from "./stream.js";
export type { MediumArg, StreamRecord } from "./stream.js";
export { DaoleaseError, LeaseLost, Refused } from "./errors.js";
export { loadConfig } from "./config.js";
export type { Duration, Subject } from "./values.js";
export { libraryPath } from "./native.js";
