import { randomUUID } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { freshSchemaUrl, requirePostgres } from "../../dev/test-postgres.ts";
import { Store } from "../../src/store/store.ts";
import { newRun, oneStep } from "../support/store-fixtures.ts";

// Two Lisa processes on one PostgreSQL store: a transaction holds only its run, so a slow one on
// one run keeps no other run waiting, and two on the same run still take turns.

let base: string;
const stores: Store[] = [];
beforeAll(async () => {
  base = await requirePostgres();
});
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

/** Two stores on one fresh schema, with runs 1 and 2 queued. */
async function twoProcesses(): Promise<[Store, Store]> {
  const url = freshSchemaUrl(base, `locks_${randomUUID().replaceAll("-", "").slice(0, 12)}`);
  const [one, two] = [new Store(url), new Store(url)];
  stores.push(one, two);
  for (const issue of [1, 2]) await one.runs.create(newRun(issue), oneStep(issue));
  return [one, two];
}

/** A change of run `runId` on `store` that stays open until `release` is called. */
function heldOpen(store: Store, runId: number) {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let entered = () => {};
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const done = store.atomically(async () => {
    const run = await store.runs.transition(runId, "claim");
    entered();
    await released;
    return run;
  }, runId);
  return { inside, release, done };
}

describe("the PostgreSQL store's locks", () => {
  it("lets a change of another run commit while one run's transaction is open", async () => {
    const [one, two] = await twoProcesses();
    const slow = heldOpen(one, 1);
    await slow.inside;
    // Under one lock for the whole schema this waited for the slow transaction, which waits for it.
    expect((await two.runs.transition(2, "claim"))?.state).toBe("running");
    slow.release();
    expect((await slow.done)?.state).toBe("running");
  });

  it("makes a change of the same run wait for the open transaction, then see what it wrote", async () => {
    const [one, two] = await twoProcesses();
    const slow = heldOpen(one, 1);
    await slow.inside;
    let settled = false;
    const second = two.runs.transition(1, "claim").finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);
    slow.release();
    // The run was claimed by the first: the second's compare-and-set finds it running.
    expect(await second).toBeUndefined();
    expect((await one.runs.get(1))?.state).toBe("running");
  });
});
