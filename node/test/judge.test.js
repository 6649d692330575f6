// A Node judge (docs/node.md "An owner") with C `daolease run` and Python
// holders; the async reclaim answers not yet while its promise is pending,
// then done or failed on a later pass (judge.md, "Reclaim answers").
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";
import { Judge } from "../dist/index.js";
import { BIN, BUILD, ROOT, Site, sleep, waitExit } from "./helpers.js";

const PY = `
import sys, time, daolease
with daolease.Holder.from_config(sys.argv[1]) as h:
    with h.claim(sys.argv[2], duration={"s": 2}, wait=30) as lease:
        print(lease.token, flush=True)
        time.sleep(0.3)
        assert lease.may_act()
    h.wait_released(lease.token)
`;

function python(site, agent, subject) {
  return spawn("/usr/bin/python3", ["-c", PY, site.path(`${agent}.json`), subject], {
    env: { ...process.env, PYTHONPATH: join(ROOT, "python"), DAOLEASE_LIB: join(BUILD, "libdaolease.so") },
    stdio: ["ignore", "pipe", "inherit"],
  });
}

test("Node judge: C `daolease run` and a Python holder; async reclaim (not yet, failed, done); audit clean", async () => {
  const site = await new Site(2).init();
  const calls = [];
  const granted = [];
  let failOnce = true;
  const judge = Judge.fromConfig(site.path("judge.json"), {
    reclaim: async ({ subject, lease, cause, commit }) => {
      calls.push({ subject, lease, cause, commit });
      await sleep(150);                          // the owner takes the resource back
      if (subject === "item-py" && failOnce) {
        failOnce = false;
        throw new Error("the resource was busy");   // FAILED: asked again next pass
      }
      return true;
    },
    granted: (l) => granted.push(l),
  });
  const passes = [];
  const ctl = new AbortController();
  const loop = (async () => {
    while (!ctl.signal.aborted) {
      passes.push(judge.step());
      await sleep(Math.min(judge.waitMs(), 50));
    }
  })();
  const run = spawn(BIN, ["run", "--config", site.path("agent-1.json"), "--subject", "item-c",
    "--wait", "30s", "--", "sh", "-c", "sleep 0.3"], { stdio: "inherit" });
  const py = python(site, "agent-2", "item-py");
  let pyOut = "";
  py.stdout.on("data", (d) => { pyOut += d; });
  assert.deepEqual(await waitExit(run), { code: 0, signal: null });
  assert.deepEqual(await waitExit(py), { code: 0, signal: null });
  for (let i = 0; i < 100 && calls.filter((c) => c.cause === "release").length < 3; i++) await sleep(50);
  for (let i = 0; i < 100 && passes.at(-1).pending > 0; i++) await sleep(50);
  ctl.abort();
  await loop;
  judge.close();

  assert.equal(granted.length, 2);
  assert.deepEqual(granted.map((g) => g.subject).sort(), ["item-c", "item-py"]);
  assert.deepEqual(granted.map((g) => g.holder).sort(), ["agent-1", "agent-2"]);
  assert.ok(Number(pyOut.trim()) >= 1, pyOut);
  const bySubject = (s) => calls.filter((c) => c.subject === s);
  assert.equal(bySubject("item-c").length, 1, JSON.stringify(calls));
  assert.equal(bySubject("item-py").length, 2, "a failed reclaim is asked again");
  for (const c of calls) assert.deepEqual([c.cause, c.commit], ["release", true]);
  assert.ok(passes.some((p) => p.reclaimFailed > 0), "not yet answered while the promise was pending");
  assert.equal(passes.at(-1).pending, 0);
  assert.equal(passes.at(-1).lapsed.release >= 0, true);
  assert.deepEqual(judge.callbackErrors.map((e) => e.message), ["the resource was busy"]);
  const a = await site.audit();
  assert.equal(a.exit, 0, JSON.stringify(a.summary));
  assert.deepEqual(a.leases.map((l) => l.cause).sort(), ["release", "release"]);
  site.cleanup();
});

test("Judge.run: passes until the signal aborts; a settled reclaim wakes it", async () => {
  const site = await new Site(1).init();
  const judge = Judge.fromConfig(site.path("judge.json"), { reclaim: () => true });
  const ctl = new AbortController();
  const running = judge.run(ctl.signal);
  await sleep(300);
  ctl.abort();
  await running;
  assert.equal(judge.live, 0);
  judge.close();
  site.cleanup();
});
