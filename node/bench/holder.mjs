// Benchmark (not a test; docs/bench.md "Node holder"): a Node agent holding
// 10^4 leases with batches of 64 against a C judge process, beside the C
// holder's own benchmark (bench/bench_holder, the same lease count, batch
// 64, `group` sync) in the same run. Prints JSON Lines
// {"bench","metric","value","baseline","ratio"} (bench/common.h's shape):
//
//   node_holder_cpu_us_per_renewal   Node process CPU (loop, koffi worker and
//                                    the C holder in it) per renewal; baseline:
//                                    bench_holder's CPU per renewal (batch 64)
//   node_holder_renewals_per_cpu_s   renewals per CPU second of the Node
//                                    process; baseline: the C holder's
//   node_holder_renewals_per_s       renewals per wall second over the window
//                                    (the leases' schedule asks for
//                                    N / (duration / 3) a second); baseline:
//                                    what the schedule asks for
//
// Usage: node bench/holder.mjs [leases 10000] [seconds 8] [duration_ms 600]
// with DAOLEASE_BUILD (default ../build) holding bench/bench_holder.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { setImmediate as turn } from "node:timers/promises";
import { Holder } from "../dist/index.js";
import { BUILD, Site, judgeProcess, sleep } from "../test/helpers.js";

const N = Number(process.argv[2] ?? 10000);
const SECONDS = Number(process.argv[3] ?? 8);
const DURATION_MS = Number(process.argv[4] ?? 600);

function line(metric, value, baseline) {
  console.log(JSON.stringify({ bench: "node_holder", metric, value: +value.toPrecision(6),
    baseline: +baseline.toPrecision(6), ratio: +(value / baseline).toPrecision(4) }));
}

// the C holder, same run
const c = {};
for (const l of execFileSync(join(BUILD, "bench", "bench_holder"), [String(N), "8"], { encoding: "utf8" }).trim().split("\n")) {
  const o = JSON.parse(l);
  c[o.metric] = o.value;
}
const cCpuUs = c.holder_cpu_us_per_renewal_batch64;

const site = await new Site(1, { duration: { ms: DURATION_MS }, min_duration: { ms: 100 } }).init();
site.write("agent-1.json", { party: "agent-1", key: "agent-1.secret", keyring: "keyring",
  grantor: "arbiter", journal: "journal.dls", medium: "agent-1.dls", sync: "group" });
const j = judgeProcess(site);
const h = Holder.fromConfig(site.path("agent-1.json"), { maxLeases: N + 16, batch: 64 });
try {
  const pending = [];
  for (let i = 0; i < N; i++) {
    pending.push(h.acquire(`shard-${i}`, { duration: { ms: DURATION_MS } }));
    if (i % 100 === 99) await turn();
  }
  const leases = await Promise.all(pending);
  await sleep(2 * DURATION_MS);                 // into the steady state
  const r0 = h.stats.renewed, c0 = process.cpuUsage(), w0 = performance.now();
  await sleep(SECONDS * 1000);
  const cpu = process.cpuUsage(c0), wall = (performance.now() - w0) / 1000;
  const renewed = h.stats.renewed - r0;
  const lost = leases.filter((l) => l.lost).length;
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const nodeCpuUs = cpuS * 1e6 / renewed;
  line("node_holder_cpu_us_per_renewal", nodeCpuUs, cCpuUs);
  line("node_holder_renewals_per_cpu_s", renewed / cpuS, 1e6 / cCpuUs);
  line("node_holder_renewals_per_s", renewed / wall, N / (DURATION_MS / 3000));
  console.error(`node_holder: ${N} leases, ${renewed} renewals in ${wall.toFixed(2)} s, ` +
    `${cpuS.toFixed(2)} CPU s, ${lost} lost, ${h.stats.steps} steps; C holder: ` +
    `${c.holder_renewals_per_s_batch64} renewals/s, ${cCpuUs} CPU us a renewal`);
} finally {
  await h.close();
  await j.stop();
  site.cleanup();
}
