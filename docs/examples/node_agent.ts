// agent.ts: node agent.js agent-1.json item-1 item-2 ...
import { Holder, LeaseLost } from "daolease";
await using holder = Holder.fromConfig(process.argv[2]!);
for (const item of process.argv.slice(3)) {
  const token = await holder.claim(item, { duration: { s: 2 } }, async (lease) => {
    if (!lease.mayAct()) throw new LeaseLost(`${item}: lost`);   // never write after the bound
    await new Promise((r) => setTimeout(r, 100));              // the work, fenced by lease.token
    return lease.token;
  });
  console.log(`${item}: done under lease ${token}`);
}
