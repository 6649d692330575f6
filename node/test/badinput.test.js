// Bad input through the API throws TypeError or DaoleaseError, never
// crashes the process (docs/node.md "Errors"): one test a case.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DaoleaseError, Holder, Judge, Stream, keygen, loadConfig } from "../dist/index.js";
import { Site, judgeProcess } from "./helpers.js";

const site = await new Site(1).init();
const cfg = site.path("agent-1.json");
const isDls = (name) => (e) => e instanceof DaoleaseError && e.name === name;

test("wrong types: a number subject, an object subject, a duration string", async () => {
  const h = Holder.fromConfig(cfg);
  await assert.rejects(h.acquire(42), TypeError);
  await assert.rejects(h.acquire({ a: 1 }), TypeError);
  await assert.rejects(h.acquire("x", { duration: "3s" }), TypeError);
  await assert.rejects(h.acquire("x", { duration: { s: 1, ms: 2 } }), TypeError);
  await assert.rejects(h.acquire("x", { duration: { s: -1 } }), TypeError);
  await assert.rejects(h.acquire("x", { duration: { s: 1.5 } }), TypeError);
  await assert.rejects(h.acquire("x", { wait: "1" }), TypeError);
  await assert.rejects(h.claim("x", {}, "not a function"), TypeError);
  assert.throws(() => new Holder({ party: 1 }), TypeError);
  assert.throws(() => Holder.fromConfig(cfg, { maxLeases: -3 }), TypeError);
  await h.close();
});

test("null: subject, options, parts, reclaim", async () => {
  const h = Holder.fromConfig(cfg);
  await assert.rejects(h.acquire(null), TypeError);
  await assert.rejects(h.acquire("x", null), TypeError);
  await assert.rejects(h.acquire("x", { duration: null }), TypeError);
  assert.throws(() => new Holder(null), TypeError);
  assert.throws(() => new Judge(null, null), TypeError);
  assert.throws(() => Judge.fromConfig(site.path("judge.json"), { reclaim: null }), TypeError);
  assert.throws(() => keygen(null), TypeError);
  assert.throws(() => Stream.open(null), TypeError);
  await h.close();
});

test("huge durations: beyond a safe integer (TypeError), beyond 2^63-1 ns (DLS_ERR_RULE4, the vocabulary's duration rule)", async () => {
  const h = Holder.fromConfig(cfg);
  await assert.rejects(h.acquire("x", { duration: { h: 2 ** 60 } }), TypeError);
  await assert.rejects(h.acquire("x", { duration: { h: 2 ** 52 } }),
    isDls("DLS_ERR_RULE4"));
  await assert.rejects(h.acquire("x", { duration: { s: 1 }, wait: 1e12 }), TypeError);
  await h.close();
});

test("a subject too large for a fact: DLS_ERR_INVAL from the C holder", async () => {
  const h = Holder.fromConfig(cfg);
  await assert.rejects(h.acquire("s".repeat(5000), { wait: 1 }), (e) => e instanceof DaoleaseError);
  await h.close();
});

test("a closed Holder reused: claim, acquire and close again", async () => {
  const h = Holder.fromConfig(cfg);
  await h.close();
  await assert.rejects(h.acquire("x"), isDls("DLS_ERR_STATE"));
  await assert.rejects(h.claim("x", {}, () => 1), isDls("DLS_ERR_STATE"));
  await h.close();                               // idempotent
  assert.ok(h.closed);
});

test("closing a holder with a claim waiting rejects the claim with DLS_ERR_STATE", async () => {
  const h = Holder.fromConfig(cfg);             // no judge: the claim waits
  const p = h.acquire("waits");
  await new Promise((r) => setTimeout(r, 100));
  await h.close();
  await assert.rejects(p, isDls("DLS_ERR_STATE"));
});

test("a lease used after release: mayAct, remaining, release throw DLS_ERR_STATE", async () => {
  const j = judgeProcess(site);
  try {
    const h = Holder.fromConfig(cfg);
    const lease = await h.acquire("after-release", { wait: 20 });
    await lease.release({ commit: true });
    assert.throws(() => lease.mayAct(), isDls("DLS_ERR_STATE"));
    assert.throws(() => lease.remaining(), isDls("DLS_ERR_STATE"));
    await assert.rejects(lease.release(), isDls("DLS_ERR_STATE"));
    await h.close();
  } finally {
    await j.stop();
  }
});

test("a lease used after its holder closed: mayAct throws DLS_ERR_STATE or answers false", async () => {
  const j = judgeProcess(site);
  try {
    const h = Holder.fromConfig(cfg);
    const lease = await h.acquire("after-close", { wait: 20 });
    await h.close();
    assert.equal(lease.lost, true);
    assert.equal(lease.mayAct(), false);
    assert.equal(lease.signal.aborted, true);
  } finally {
    await j.stop();
  }
});

test("bad configuration: missing file, unknown key, missing key name the file and the key", () => {
  assert.throws(() => loadConfig(site.path("nope.json")), isDls("DLS_ERR_CONFIG"));
  site.write("bad.json", { party: "agent-1", tolernace: { ms: 1 } });
  assert.throws(() => Holder.fromConfig(site.path("bad.json")), /bad\.json: key "tolernace": unknown key/);
  site.write("bad2.json", { party: "agent-1", key: "agent-1.secret", keyring: "keyring", journal: "journal.dls" });
  assert.throws(() => Holder.fromConfig(site.path("bad2.json")), /key "grantor": missing/);
  site.write("bad3.json", { party: "agent-1", key: "nokey.secret", keyring: "keyring", grantor: "arbiter",
    journal: "journal.dls", medium: "agent-1.dls" });
  assert.throws(() => Holder.fromConfig(site.path("bad3.json")), (e) => e instanceof DaoleaseError && /nokey\.secret/.test(e.message));
  site.write("bad4.json", { party: "agent-1", key: "agent-1.secret", keyring: "keyring", grantor: "arbiter",
    journal: "journal.dls", medium: "agent-1.dls", sync: "sometimes" });
  assert.throws(() => Holder.fromConfig(site.path("bad4.json")), (e) => e instanceof DaoleaseError);
});

test("a second judge on a locked journal: DLS_ERR_JOURNAL_LOCKED", () => {
  const a = Judge.fromConfig(site.path("judge.json"), { reclaim: () => true });
  try {
    assert.throws(() => Judge.fromConfig(site.path("judge.json"), { reclaim: () => true }),
      isDls("DLS_ERR_JOURNAL_LOCKED"));
  } finally {
    a.close();
  }
  assert.throws(() => a.step(), isDls("DLS_ERR_STATE"));
  assert.throws(() => a.end(1.5), TypeError);
});

test("Stream: append of a non-buffer (TypeError), create over an existing file (DLS_ERR_EXISTS)", async () => {
  assert.throws(() => Stream.create(site.journal), isDls("DLS_ERR_EXISTS"));
  const s = Stream.open(site.media[0], { append: true });
  await assert.rejects(s.append("text"), TypeError);
  await s.close();
  await assert.rejects(s.append(Buffer.from([0x80])), isDls("DLS_ERR_STATE"));
});

test.after(() => site.cleanup());
