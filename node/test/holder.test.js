// The Holder against a C judge process (`daolease judge --config`):
// docs/node.md "An agent"; holder.md (the bound, may_act, release).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Holder, LeaseLost } from "../dist/index.js";
import { Site, judgeProcess, sleep } from "./helpers.js";

test("claim: granted, renewed past its duration, released with commit; audit clean", async () => {
  const site = await new Site(2).init();
  const j = judgeProcess(site);
  try {
    const h = Holder.fromConfig(site.path("agent-1.json"));
    let token = 0;
    const out = await h.claim("item-1", { duration: { s: 1 }, wait: 20 }, async (lease) => {
      token = lease.token;
      assert.ok(lease.mayAct());
      assert.ok(lease.remaining() > 0 && lease.remaining() <= 1);
      await sleep(2500);                         // more than the duration: renewals keep it
      assert.ok(lease.mayAct(), "renewals keep the lease past its duration");
      assert.equal(lease.signal.aborted, false);
      return "done";
    });
    assert.equal(out, "done");
    assert.ok(token >= 1);
    assert.ok(h.stats.renewed >= 2, `renewed ${h.stats.renewed}`);
    // the same subject again: the judge granted it, commit released it
    const again = await h.claim("item-1", { duration: { s: 1 }, wait: 20 }, (l) => l.token);
    assert.ok(again > token, "a new lease id (fencing token rises)");
    await sleep(500);
    await h.close();
  } finally {
    assert.equal(await j.stop(), 0, j.stderr);
  }
  const a = await site.audit();
  assert.equal(a.exit, 0, JSON.stringify(a.summary));
  assert.equal(a.summary.failures.double_grant, 0);
  assert.ok(a.leases.some((l) => l.lease === 1 && l.cause === "release"), JSON.stringify(a.leases));
  site.cleanup();
});

test("explicit resource form: acquire + Symbol.asyncDispose releases; the lease throws after", async () => {
  const site = await new Site(1).init();
  const j = judgeProcess(site);
  try {
    const h = Holder.fromConfig(site.path("agent-1.json"));
    const lease = await h.acquire("res", { wait: 20 });
    assert.ok(lease.mayAct());
    await lease[Symbol.asyncDispose]();
    assert.ok(lease.released);
    assert.throws(() => lease.mayAct(), { name: "DLS_ERR_STATE" });
    await h[Symbol.asyncDispose]();
    assert.ok(h.closed);
  } finally {
    await j.stop();
    site.cleanup();
  }
});

test("two holders, one subject: the second waits until the first releases", async () => {
  const site = await new Site(2).init();
  const j = judgeProcess(site);
  try {
    const h1 = Holder.fromConfig(site.path("agent-1.json"));
    const h2 = Holder.fromConfig(site.path("agent-2.json"));
    const l1 = await h1.acquire("shared-item", { wait: 20 });
    const p2 = h2.acquire("shared-item", { wait: 20 });
    await sleep(600);
    assert.ok(l1.mayAct());
    await l1.release({ commit: false });
    const l2 = await p2;
    assert.ok(l2.token > l1.token);
    assert.ok(l2.mayAct());
    await l2.release();
    await h1.close();
    await h2.close();
  } finally {
    await j.stop();
  }
  assert.equal((await site.audit()).exit, 0);
  site.cleanup();
});

test("the signal fires when the bound passes (judge stopped): claim rejects LeaseLost", async () => {
  const site = await new Site(1).init();
  const j = judgeProcess(site);
  const h = Holder.fromConfig(site.path("agent-1.json"));
  let aborted = null;
  const t0 = Date.now();
  await assert.rejects(h.claim("item-x", { duration: { ms: 600 }, wait: 20 }, async (lease) => {
    await j.stop();                              // no more pass marks: renewals are never confirmed
    await new Promise((res) => lease.signal.addEventListener("abort", res));
    aborted = lease.signal.reason;
    assert.equal(lease.mayAct(), false);
    assert.equal(lease.remaining(), 0);
  }), LeaseLost);
  assert.ok(aborted instanceof LeaseLost, String(aborted));
  assert.ok(Date.now() - t0 < 5000);
  await h.close();
  site.cleanup();
});
