// `npm pack` produces a package that installs into a fresh folder and runs
// the one-lease example against an installed libdaolease (a `meson install
// --destdir` copy of the build) — docs/node.md, "Install".
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUILD, ROOT } from "./helpers.js";

function find(dir, name) {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (e === name) return p;
    if (statSync(p).isDirectory()) { const r = find(p, name); if (r) return r; }
  }
  return null;
}

test("npm pack → npm install in a fresh folder → examples/one-lease.mjs against the installed library", () => {
  const tmp = mkdtempSync(join(tmpdir(), "dls-node-pack-"));
  try {
    const npmEnv = { ...process.env, npm_config_audit: "false", npm_config_fund: "false" };
    const out = execFileSync("npm", ["pack", "--loglevel", "error", "--pack-destination", tmp], { cwd: join(ROOT, "node"), env: npmEnv, encoding: "utf8" });
    const tgz = join(tmp, out.trim().split("\n").at(-1));
    const listing = execFileSync("tar", ["tzf", tgz], { encoding: "utf8" });
    assert.match(listing, /package\/dist\/index\.d\.ts/);
    assert.match(listing, /package\/examples\/one-lease\.mjs/);
    assert.doesNotMatch(listing, /node_modules|package\/src\/|package\/test\//);
    const root = join(tmp, "root");
    execFileSync("meson", ["install", "-C", BUILD, "--destdir", root, "--no-rebuild", "--quiet"], { stdio: "inherit" });
    const lib = find(root, "libdaolease.so");
    const bin = find(root, "daolease");
    assert.ok(lib && bin, "meson install wrote libdaolease.so and daolease");
    const app = join(tmp, "app");
    execFileSync("mkdir", ["-p", app]);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tgz], { cwd: app, env: npmEnv, stdio: "inherit" });
    const env = { ...process.env, DAOLEASE_LIB: lib, DAOLEASE_BIN: bin };
    delete env.DAOLEASE_BUILD;
    const text = execFileSync(process.execPath, [join(app, "node_modules", "daolease", "examples", "one-lease.mjs")],
      { cwd: app, env, encoding: "utf8" });
    console.log(text.replace(/^/gm, "# "));
    assert.match(text, /owner: granted item-1 to agent-1 as lease 1/);
    assert.match(text, /agent: holding item-1 under lease 1, may act: true/);
    assert.match(text, /owner: reclaimed item-1 \(lease 1, cause release, commit true\)/);
    assert.match(text, /audit: lease 1 item-1 agent-1 release ok\naudit: exit 0/);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
