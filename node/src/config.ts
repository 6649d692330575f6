/* The configuration file `daolease judge` and `daolease run` read
 * (docs/config.md), read into an object with paths made absolute.
 *
 * The library exports no file loader today: it assembles a judge from a
 * dls_owner_config (include/daolease/owner.h), and a holder from its parts.
 * This module only reads the JSON and resolves paths; every rule about the
 * values (defaults, ranges, durations, which keys a role needs beyond the
 * file names) is checked by the C call they are handed to (dls_owner_new,
 * dls_duration_make, dls_sync_parse, dls_holder_new). docs/node.md says so. */
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { DaoleaseError } from "./errors.js";
const ERR_CONFIG = -10;

export interface Config {
  party: string; key: string; keyring: string; journal: string;
  grantor?: string; medium?: string; media?: { path: string; party: string | null }[];
  sync?: string; [k: string]: unknown;
}

const KNOWN = new Set(["party", "key", "keyring", "grantor", "journal", "medium", "media",
  "ticks", "sync", "tolerance", "cadence", "duration", "min_duration", "max_duration", "max",
  "lock_delay", "grace", "create_medium", "create_journal", "checkpoint_every", "checkpoints",
  "keep_checkpoints", "journal_segment_bytes"]);

function abs(base: string, p: unknown, file: string, key: string): string {
  if (typeof p !== "string") throw new DaoleaseError(ERR_CONFIG, `key "${key}": not a string`, file);
  return isAbsolute(p) || p.includes("://") ? p : join(base, p);
}

export function loadConfig(path: string, need: string[] = []): Config {
  if (typeof path !== "string") throw new TypeError("config: a file name");
  const fail = (msg: string): never => { throw new DaoleaseError(ERR_CONFIG, msg, path); };
  let cfg: unknown;
  try { cfg = JSON.parse(readFileSync(path, "utf8")); }
  catch (e) { fail((e as Error).message); }
  if (cfg === null || typeof cfg !== "object" || Array.isArray(cfg)) fail("not a JSON object");
  const c = cfg as Record<string, unknown>;
  for (const k of Object.keys(c)) if (!KNOWN.has(k)) fail(`key "${k}": unknown key`);
  for (const k of ["party", "key", "keyring", "journal", ...need]) {
    if (!(k in c)) fail(`key "${k}": missing`);
  }
  const base = dirname(resolve(path));
  for (const k of ["key", "keyring", "journal", "medium"]) {
    if (k in c) c[k] = abs(base, c[k], path, k);
  }
  if ("media" in c) {
    if (!Array.isArray(c.media)) fail(`key "media": not a list`);
    c.media = (c.media as unknown[]).map((m) => {
      if (m !== null && typeof m === "object") {
        const o = m as Record<string, unknown>;
        return { path: abs(base, o.medium, path, "media"), party: typeof o.party === "string" ? o.party : null };
      }
      if (typeof m !== "string") fail(`key "media": an entry is not a string`);
      const s = m as string;
      const eq = s.includes("://") ? -1 : s.indexOf("=");
      return eq < 0 ? { path: abs(base, s, path, "media"), party: null }
        : { path: abs(base, s.slice(0, eq), path, "media"), party: s.slice(eq + 1) };
    });
  }
  return c as unknown as Config;
}
