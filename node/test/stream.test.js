// Stream (append, cursor as an async iterator), keygen, and status() in the
// CLI's JSON shape (docs/node.md "Streams, keys, audit, status";
// docs/cli.md status).
import { test } from "node:test";
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { Holder, Stream, keygen, status } from "../dist/index.js";
import { Site, judgeProcess } from "./helpers.js";

test("append returns rising positions; cursor yields the ok records in order; follow waits for more", async () => {
  const site = await new Site(1).init();
  const s = Stream.open(site.media[0], { append: true });
  const recs = [Buffer.from([0x81, 0xa1, 0x61, 0x01]), Buffer.from([0x81, 0xa1, 0x62, 0x02])];
  const pos = [];
  for (const r of recs) pos.push(await s.append(r));
  assert.ok(pos[1] > pos[0]);
  const seen = [];
  for await (const r of s.cursor()) seen.push(r);
  assert.deepEqual(seen.map((r) => r.position), pos);
  assert.deepEqual(seen.map((r) => r.data), recs);
  const ctl = new AbortController();
  const followed = [];
  const reader = (async () => {
    for await (const r of s.cursor({ from: pos[1] + 1, follow: true, pollMs: 10, signal: ctl.signal })) {
      followed.push(r.data);
      ctl.abort();
    }
  })();
  await new Promise((r) => setTimeout(r, 50));
  await s.append(Buffer.from([0x81, 0xa1, 0x63, 0x03]));
  await reader;
  assert.deepEqual(followed, [Buffer.from([0x81, 0xa1, 0x63, 0x03])]);
  await s.close();
  site.cleanup();
});

test("keygen writes NAME.secret with mode 0600 and returns its keyring line; twice is DLS_ERR_EXISTS", () => {
  const site = new Site(0);
  const line = keygen("agent-9", site.dir);
  assert.match(line, /^agent-9 ed25519 [0-9a-f]{64}$/);
  assert.equal(statSync(site.path("agent-9.secret")).mode & 0o777, 0o600);
  assert.throws(() => keygen("agent-9", site.dir), { name: "DLS_ERR_EXISTS" });
  assert.match(keygen("mac-1", site.dir, { mac: true }), /^mac-1 mac /);
  site.cleanup();
});

test("status(): the live lease in `daolease status --json`'s shape", async () => {
  const site = await new Site(1).init();
  const j = judgeProcess(site);
  const h = Holder.fromConfig(site.path("agent-1.json"));
  try {
    const lease = await h.acquire("status-item", { wait: 20 });
    await new Promise((r) => setTimeout(r, 400));
    const st = await status(site.journal, { media: site.media, grantor: "arbiter", keyring: site.keyring });
    const l = st.leases.find((x) => x.lease === lease.token);
    assert.ok(l, JSON.stringify(st));
    assert.equal(l.subject, "status-item");
    assert.equal(l.holder, "agent-1");
    assert.ok("due_by" in l && "remaining_ns" in l && "released" in l);
    assert.equal(st.summary.summary, true);
    assert.equal(st.summary.verified, true);
    assert.ok(st.summary.live >= 1);
    await lease.release({ commit: true });
  } finally {
    await h.close();
    await j.stop();
    site.cleanup();
  }
});
