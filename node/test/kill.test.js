// kill -9 of a Node agent mid-work: the C judge reclaims by silence, the
// subject is granted again, and `daolease audit` finds the journal clean
// (judge.md: silence; audit.md).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Holder } from "../dist/index.js";
import { Site, judgeProcess, waitExit } from "./helpers.js";

const INDEX = fileURLToPath(new URL("../dist/index.js", import.meta.url));
const AGENT = `
import { Holder } from ${JSON.stringify(INDEX)};
const h = Holder.fromConfig(process.argv[1]);
await h.claim("work-7", { duration: { s: 1 }, wait: 30 }, async (lease) => {
  console.log(lease.token);
  for (;;) { if (!lease.mayAct()) break; await new Promise((r) => setTimeout(r, 20)); }
});
`;

test("kill -9 mid-work: reclaimed by silence, granted again, audit clean", async () => {
  const site = await new Site(2).init();
  const j = judgeProcess(site);
  let h2;
  try {
    const agent = spawn(process.execPath, ["--input-type=module", "-e", AGENT, site.path("agent-1.json")],
      { stdio: ["ignore", "pipe", "inherit"] });
    const token = await new Promise((res) => agent.stdout.once("data", (d) => res(Number(String(d).trim()))));
    assert.ok(token >= 1);
    await new Promise((r) => setTimeout(r, 1500));          // renewed past its duration
    agent.kill("SIGKILL");
    assert.equal((await waitExit(agent)).signal, "SIGKILL");
    const t0 = Date.now();
    h2 = Holder.fromConfig(site.path("agent-2.json"));
    const second = await h2.claim("work-7", { duration: { s: 1 }, wait: 30 }, (l) => l.token);
    const waited = Date.now() - t0;
    assert.ok(second > token);
    assert.ok(waited >= 500 && waited < 10000, `granted again after ${waited} ms`);
  } finally {
    await h2?.close();
    await j.stop();
  }
  const a = await site.audit();
  assert.equal(a.exit, 0, JSON.stringify(a.summary));
  const first = a.leases.find((l) => l.holder === "agent-1");
  assert.equal(first.cause, "silence");
  assert.equal(first.verdict, "ok", JSON.stringify(first));
  site.cleanup();
});
