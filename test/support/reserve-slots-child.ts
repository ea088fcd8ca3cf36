import { LANES } from "../../src/github/write-pacer.ts";
import { Store } from "../../src/store/store.ts";

// A Lisa process of its own that reserves write slots as fast as it can and prints their times:
// the store's transaction is all that keeps two of these from taking slots too close together.
const [location = "", count = "0"] = process.argv.slice(2);
const store = new Store(location);
const slots: number[] = [];
for (let i = 0; i < Number(count); i++) {
  const answer = await store.writeSlots.reserve({
    installationId: 7,
    creates: i % 2 === 0,
    lane: LANES.indexOf("normal"),
    horizonMs: 1e12,
  });
  if ("at" in answer) slots.push(answer.at);
}
await store.close();
process.stdout.write(JSON.stringify(slots));
