// Fixtures for the node --test suites: a folder with keys, a keyring, a
// journal, agent media and the configuration files `daolease judge` and
// `daolease run` read (docs/config.md), as python/tests/conftest.py.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import * as daolease from "../dist/index.js";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const BUILD = process.env.DAOLEASE_BUILD ?? join(ROOT, "build");
export const BIN = daolease.daoleaseBin();

export class Site {
  constructor(agents = 3, judgeExtra = {}) {
    this.dir = mkdtempSync(join(tmpdir(), "dls-node-"));
    this.agents = Array.from({ length: agents }, (_, i) => `agent-${i + 1}`);
    const lines = [daolease.keygen("arbiter", this.dir)];
    for (const a of this.agents) lines.push(daolease.keygen(a, this.dir));
    this.keyring = this.path("keyring");
    writeFileSync(this.keyring, lines.join("\n") + "\n");
    this.journal = this.path("journal.dls");
    this.media = [];
    for (const a of this.agents) {
      this.media.push(this.path(`${a}.dls`));
      this.write(`${a}.json`, { party: a, key: `${a}.secret`, keyring: "keyring", grantor: "arbiter",
        journal: "journal.dls", medium: `${a}.dls`, duration: { s: 2 } });
    }
    this.write("judge.json", { party: "arbiter", key: "arbiter.secret", keyring: "keyring",
      journal: "journal.dls", media: this.agents.map((a) => `${a}.dls`), tolerance: { ms: 250 },
      cadence: { ms: 100 }, duration: { s: 2 }, ...judgeExtra });
  }
  async init() {
    await daolease.Stream.create(this.journal).close();
    for (const m of this.media) await daolease.Stream.create(m).close();
    return this;
  }
  path(name) { return join(this.dir, name); }
  write(name, obj) { writeFileSync(this.path(name), JSON.stringify(obj)); }
  audit() { return daolease.audit(this.journal, "arbiter", this.keyring, this.media); }
  cleanup() { rmSync(this.dir, { recursive: true, force: true }); }
}

/** `daolease judge --config judge.json` over the site; stop() ends it. */
export function judgeProcess(site) {
  const p = spawn(BIN, ["judge", "--config", site.path("judge.json")], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  p.stderr.on("data", (d) => { err += d; });
  p.stdout.resume();
  return {
    proc: p,
    get stderr() { return err; },
    async stop() {
      if (p.exitCode !== null) return p.exitCode;
      const done = new Promise((res) => p.on("exit", (code) => res(code)));
      p.kill("SIGINT");
      const t = setTimeout(() => p.kill("SIGKILL"), 10000);
      const code = await done;
      clearTimeout(t);
      return code;
    },
  };
}

export function waitExit(p) {
  return new Promise((res) => {
    if (p.exitCode !== null || p.signalCode !== null) res({ code: p.exitCode, signal: p.signalCode });
    else p.on("exit", (code, signal) => res({ code, signal }));
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
