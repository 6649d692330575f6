// docs/node.md's agent and owner, extracted from the doc (and equal to
// docs/examples/node_*.ts), compiled with tsc and run: the agent against a
// C judge process, the owner with C `daolease run` agents.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BIN, ROOT, Site, judgeProcess, waitExit } from "./helpers.js";

const PKG = join(ROOT, "node");
const DOC = readFileSync(join(ROOT, "docs", "node.md"), "utf8");

function block(first) {
  const blocks = [...DOC.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
  const b = blocks.find((x) => x.startsWith(first));
  assert.ok(b, `docs/node.md has a block starting ${first}`);
  return b;
}

/** Compiles the doc's blocks in a folder where `daolease` is this package. */
let compiled = null;
function compile() {
  if (compiled) return compiled;
  const dir = mkdtempSync(join(tmpdir(), "dls-node-docs-"));
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  symlinkSync(PKG, join(dir, "node_modules", "daolease"));
  symlinkSync(join(PKG, "node_modules", "@types"), join(dir, "node_modules", "@types"));
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module" }));
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: {
    target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true,
    lib: ["ES2022", "ESNext.Disposable"], types: ["node"], outDir: "out" }, include: ["*.ts"] }));
  for (const [file, first, example] of [["agent.ts", "// agent.ts", "node_agent.ts"], ["owner.ts", "// owner.ts", "node_owner.ts"]]) {
    const text = block(first);
    assert.equal(readFileSync(join(ROOT, "docs", "examples", example), "utf8"), text, `docs/examples/${example} is the doc's block`);
    const lines = text.trim().split("\n").length;
    assert.ok(file === "agent.ts" ? lines <= 11 : lines <= 16, `${file}: ${lines} lines`);
    writeFileSync(join(dir, file), text);
  }
  execFileSync(process.execPath, [join(PKG, "node_modules", "typescript", "bin", "tsc"), "-p", dir], { stdio: "inherit" });
  compiled = join(dir, "out");
  return compiled;
}

function run(cmd, args) {
  const p = spawn(cmd, args, { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  p.stdout.on("data", (d) => { out += d; });
  return { p, get out() { return out; } };
}

test("docs/node.md agent: two items against a C judge process; audit clean", async () => {
  const site = await new Site(1).init();
  const out = compile();
  const j = judgeProcess(site);
  try {
    const a = run(process.execPath, [join(out, "agent.js"), site.path("agent-1.json"), "item-1", "item-2"]);
    assert.deepEqual(await waitExit(a.p), { code: 0, signal: null });
    assert.match(a.out, /^item-1: done under lease 1\nitem-2: done under lease 2\n$/);
    console.log(a.out.replace(/^/gm, "# "));
  } finally {
    await j.stop();
  }
  const r = await site.audit();
  assert.equal(r.exit, 0);
  site.cleanup();
});

test("docs/node.md owner: C `daolease run` agents; async reclaim with commit", async () => {
  const site = await new Site(2).init();
  const out = compile();
  const owner = run(process.execPath, [join(out, "owner.js"), site.path("judge.json"), "4"]);
  const agents = ["agent-1", "agent-2"].map((a, i) => spawn(BIN, ["run", "--config", site.path(`${a}.json`),
    "--subject", `job-${i + 1}`, "--wait", "10s", "--", "sh", "-c", "sleep 0.2"], { stdio: "inherit" }));
  for (const a of agents) assert.deepEqual(await waitExit(a), { code: 0, signal: null });
  assert.deepEqual(await waitExit(owner.p), { code: 0, signal: null });
  console.log(owner.out.replace(/^/gm, "# "));
  assert.match(owner.out, /granted job-1 to agent-1 as \d/);
  assert.match(owner.out, /reclaimed job-2 \(lease \d, release\)/);
  assert.match(owner.out, /finished: job-1 job-2\n$/);
  const r = await site.audit();
  assert.equal(r.exit, 0);
  site.cleanup();
});
