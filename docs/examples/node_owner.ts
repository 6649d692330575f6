// owner.ts: node owner.js judge.json SECONDS
import { Judge } from "daolease";
const done = new Set<string>();
const judge = Judge.fromConfig(process.argv[2]!, {
  reclaim: async ({ subject, lease, cause, commit }) => {   // take the resource back
    await new Promise((r) => setTimeout(r, 50));           // e.g. a database update
    if (commit) done.add(String(subject));
    console.log(`reclaimed ${String(subject)} (lease ${lease}, ${cause})`);
    return true;                                           // done; false: not yet
  },
  granted: ({ subject, holder, lease }) => console.log(`granted ${String(subject)} to ${holder} as ${lease}`),
});
await judge.run(AbortSignal.timeout(Number(process.argv[3]) * 1000));
judge.close();
console.log(`finished: ${[...done].sort().join(" ")}`);
