// One lease, start to end, in one process: keys, a keyring, a journal and
// an agent medium in a new folder; a Judge (the owner) and a Holder (the
// agent); one claim; the audit of the files it leaves (docs/node.md).
//   node node_modules/daolease/examples/one-lease.mjs
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Holder, Judge, Stream, audit, keygen } from "daolease";

const dir = mkdtempSync(join(tmpdir(), "daolease-one-"));
const at = (f) => join(dir, f);
writeFileSync(at("keyring"), [keygen("arbiter", dir), keygen("agent-1", dir)].join("\n") + "\n");
await Stream.create(at("journal.dls")).close();
await Stream.create(at("agent-1.dls")).close();
const judge = new Judge({ party: "arbiter", key: at("arbiter.secret"), keyring: at("keyring"),
  journal: at("journal.dls"), media: [{ path: at("agent-1.dls"), party: null }], duration: { s: 2 } }, {
  reclaim: ({ subject, lease, cause, commit }) => {
    console.log(`owner: reclaimed ${subject} (lease ${lease}, cause ${cause}, commit ${commit})`);
    return true;
  },
  granted: ({ subject, holder, lease }) => console.log(`owner: granted ${subject} to ${holder} as lease ${lease}`),
});
const stop = new AbortController();
const owner = judge.run(stop.signal);
const holder = new Holder({ party: "agent-1", key: at("agent-1.secret"), keyring: at("keyring"),
  grantor: "arbiter", journal: at("journal.dls"), medium: at("agent-1.dls") });
await holder.claim("item-1", { duration: { s: 2 } }, async (lease) => {
  console.log(`agent: holding item-1 under lease ${lease.token}, may act: ${lease.mayAct()}`);
  await new Promise((r) => setTimeout(r, 1000));
  console.log(`agent: still may act: ${lease.mayAct()}, ${lease.remaining().toFixed(2)} s left`);
});
await new Promise((r) => setTimeout(r, 500));   // the judge reclaims the released lease
await holder.close();
stop.abort();
await owner;
judge.close();
const report = await audit(at("journal.dls"), "arbiter", at("keyring"), [at("agent-1.dls")]);
for (const l of report.leases) console.log(`audit: lease ${l.lease} ${l.subject} ${l.holder} ${l.cause} ${l.verdict}`);
console.log(`audit: exit ${report.exit}`);
process.exit(report.exit);
