import { describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import * as changes from "../../src/store/run-changes.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { newRun, oneStep } from "../support/store-fixtures.ts";

/** A run blocked in its first pass, on an empty store (SQLite in memory, or PostgreSQL in npm run test:postgres). */
async function blockedRun() {
  const store = new Store(testDatabaseUrl(tempDir("run-changes")) ?? ":memory:");
  const run = await store.createRun(newRun(1), oneStep(1));
  if (!run) throw new Error("no run");
  await store.claimRun("w", run.id);
  const pass = await store.currentPass(run.id);
  if (!pass) throw new Error("no pass");
  await store.transitionPass(pass.id, "start");
  await store.transitionPass(pass.id, "planned");
  const [step] = await store.steps(run.id);
  if (!step) throw new Error("no step");
  await store.moveStep(step.id, "start");
  await store.moveStep(step.id, "block");
  expect((await changes.blockRun(store, run.id, pass.id))?.state).toBe("blocked");
  const held = async () => ({
    run: (await store.run(run.id))?.state,
    pass: (await store.currentPass(run.id))?.state,
    steps: (await store.steps(run.id)).map((s) => s.state),
    events: (await store.events(run.id)).length,
  });
  return { store, runId: run.id, passId: pass.id, stepId: step.id, held };
}

describe("the changes of a run, its pass and its steps", () => {
  it("move all three together", async () => {
    const { store, runId, passId, stepId, held } = await blockedRun();
    expect(await held()).toMatchObject({ run: "blocked", pass: "blocked", steps: ["blocked"] });
    expect((await changes.fixBlocked(store, { runId, passId, stepIds: [stepId], guidance: [] }, { actor: "ann" }))?.state).toBe(
      "queued",
    );
    expect(await held()).toMatchObject({ run: "queued", pass: "building", steps: ["pending"] });
    await store.close();
  });

  it.each([
    [
      "fix",
      (c: Awaited<ReturnType<typeof blockedRun>>) => changes.fixBlocked(c.store, { ...c, stepIds: [c.stepId], guidance: [] }, {}),
    ],
    ["skip", (c: Awaited<ReturnType<typeof blockedRun>>) => changes.skipBlocked(c.store, { ...c, stepIds: [c.stepId] }, {})],
    ["proceed", (c: Awaited<ReturnType<typeof blockedRun>>) => changes.proceedWithPlan(c.store, c.runId, c.passId, {})],
    ["abort", (c: Awaited<ReturnType<typeof blockedRun>>) => changes.abortRun(c.store, c.runId, c.passId, {})],
    [
      "fail",
      (c: Awaited<ReturnType<typeof blockedRun>>) =>
        changes.failRun(c.store, c.runId, "broke", [{ id: c.stepId, error: "broke" }]),
    ],
  ])("write nothing when the run's state refuses the change (%s of a run already accepted elsewhere)", async (_name, change) => {
    const context = await blockedRun();
    const { store, runId, held } = context;
    // Another writer moved the run on meanwhile: skipped to the gate and accepted.
    await store.transitionRun(runId, "skip");
    await store.transitionRun(runId, "claim");
    await store.transitionRun(runId, "gate_open");
    await store.transitionRun(runId, "accept");
    const before = await held();
    expect(before.run).toBe("accepted");
    expect(await change(context)).toBeUndefined();
    expect(await held()).toEqual(before);
    await store.close();
  });
});
