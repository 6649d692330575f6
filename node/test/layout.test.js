// koffi trusts the declared layouts (src/native.ts): a program compiled
// against include/daolease/*.h prints every bound struct's size and field
// offsets, and every error code's value, and they must be koffi's (as
// python/tests/test_layout.py does for cffi) — docs/node.md, "Why koffi".
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import koffi from "koffi";
import * as N from "../dist/native.js";
import { ROOT } from "./helpers.js";

const STRUCTS = ["dls_where", "dls_duration", "dls_bytes", "dls_medium_settings", "dls_record",
  "dls_tick_settings", "dls_holder_tolerance", "dls_holder_settings", "dls_holder_parts",
  "dls_holder_event", "dls_holder_result", "dls_judge_pass_result", "dls_judge_lease_info",
  "dls_judge_callbacks", "dls_owner_config", "dls_judge_iter"];

test("every bound struct has the C layout; every error name has the C value", () => {
  const lines = [];
  const expected = {};
  for (const s of STRUCTS) {
    const info = koffi.introspect(N[s]);
    lines.push(`  printf("${s} size %zu\\n", sizeof(${s}));`);
    expected[`${s} size`] = info.size;
    for (const m of Object.values(info.members)) {
      lines.push(`  printf("${s}.${m.name} %zu\\n", offsetof(${s}, ${m.name}));`);
      expected[`${s}.${m.name}`] = m.offset;
    }
  }
  for (const [code, name] of Object.entries(N.ERROR_NAMES)) {
    lines.push(`  printf("${name} %d\\n", (int)${name});`);
    expected[name] = Number(code);
  }
  const dir = mkdtempSync(join(tmpdir(), "dls-node-layout-"));
  try {
    const src = join(dir, "layout.c");
    writeFileSync(src, `#include <stddef.h>\n#include <stdio.h>\n#include "daolease/owner.h"\n` +
      `#include "daolease/holder.h"\n#include "daolease/judge_view.h"\n#include "daolease/tick.h"\n` +
      `int main(void) {\n${lines.join("\n")}\n  return 0;\n}\n`);
    const exe = join(dir, "layout");
    execFileSync(process.env.CC ?? "cc", ["-std=c11", "-I", join(ROOT, "include"), "-o", exe, src], { stdio: "inherit" });
    const got = {};
    for (const l of execFileSync(exe, { encoding: "utf8" }).trim().split("\n")) {
      const i = l.lastIndexOf(" ");
      got[l.slice(0, i)] = Number(l.slice(i + 1));
    }
    assert.deepEqual(expected, got);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
