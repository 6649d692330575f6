// The package never blocks the event loop for more than 5 ms (docs/node.md,
// "The event loop"): 10^4 leases held by one Node holder (batches of 64)
// against a C judge process, measured with perf_hooks.monitorEventLoopDelay
// over the claims, the grants and three renewal rounds.
import { test } from "node:test";
import assert from "node:assert/strict";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { availableParallelism, loadavg } from "node:os";
import { setImmediate as turn } from "node:timers/promises";
import { Holder } from "../dist/index.js";
import { Site, judgeProcess, sleep } from "./helpers.js";

const N = 10000;
const ms = (ns) => ns / 1e6;

test("10^4 leases: the loop is never blocked > 5 ms by the package", async (t) => {
  const site = await new Site(1, { duration: { s: 4 } }).init();
  site.write("agent-1.json", { party: "agent-1", key: "agent-1.secret", keyring: "keyring",
    grantor: "arbiter", journal: "journal.dls", medium: "agent-1.dls", sync: "group" });
  const j = judgeProcess(site);
  const h = Holder.fromConfig(site.path("agent-1.json"), { maxLeases: N + 16, batch: 64 });
  try {
    // the machine's own noise: the same histogram over an idle second
    const idle = monitorEventLoopDelay({ resolution: 1 });
    idle.enable();
    await sleep(1000);
    idle.disable();
    const hist = monitorEventLoopDelay({ resolution: 1 });
    hist.enable();
    const pending = [];
    for (let i = 0; i < N; i++) {
      pending.push(h.acquire(`shard-${i}`, { duration: { s: 4 } }));
      if (i % 100 === 99) await turn();       // the agent's own loop yields too
    }
    const leases = await Promise.all(pending);
    assert.equal(leases.length, N);
    const renewedBefore = h.stats.renewed;
    const until = Date.now() + 4000;           // three renewal intervals of a 4 s lease
    while (Date.now() < until) {
      for (let i = 0; i < N; i += 97) assert.ok(leases[i].mayAct());
      await sleep(20);
    }
    hist.disable();
    assert.ok(h.stats.renewed - renewedBefore >= 2 * N, `renewed ${h.stats.renewed - renewedBefore}`);
    assert.ok(leases.every((l) => l.mayAct()), "every lease still held");
    const line = `max ${ms(hist.max).toFixed(2)} ms, p99 ${ms(hist.percentile(99)).toFixed(2)} ms, ` +
      `mean ${ms(hist.mean).toFixed(2)} ms (${hist.count} samples); idle max ${ms(idle.max).toFixed(2)} ms; ` +
      `longest section of the package ${h.stats.maxSyncMs.toFixed(2)} ms; steps ${h.stats.steps}`;
    console.log(`# event loop delay under ${N} leases: ${line}`);
    // A shared machine delays even an idle loop and stretches every GC
    // pause: when the load average is above the cores, the OS preempts the
    // loop for longer than 5 ms whatever the package does, and the figures
    // are reported, not judged (docs/node.md, "The event loop").
    const load = loadavg()[0], cores = availableParallelism();
    if (load > cores) {
      t.diagnostic(`load ${load.toFixed(1)} on ${cores} cores: figures reported, not judged`);
      return;
    }
    // What the package runs on the loop (every slice of a step's events,
    // measured around it) stays under 5 ms, and so does the loop's p99; the
    // loop's max also counts V8's mark-compact pauses over the heap of 10^4
    // leases, which the package shrinks but does not schedule: bounded
    // here, reported above.
    assert.ok(h.stats.maxSyncMs < 5, line);
    assert.ok(ms(hist.percentile(99)) < 5, line);
    assert.ok(ms(hist.max) < 50, line);
  } finally {
    await h.close();
    await j.stop();
    site.cleanup();
  }
});
