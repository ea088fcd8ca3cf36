import { describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import * as changes from "../../src/store/run-changes.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { newRun, oneStep } from "../support/store-fixtures.ts";

/** A run blocked in its first pass, on an empty store (SQLite in memory, or PostgreSQL in npm run test:postgres). */
function blockedRun() {
  const store = new Store(testDatabaseUrl(tempDir("run-changes")) ?? ":memory:");
  const run = store.createRun(newRun(1), oneStep(1));
  if (!run) throw new Error("no run");
  store.claimRun("w", run.id);
  const pass = store.currentPass(run.id);
  if (!pass) throw new Error("no pass");
  store.transitionPass(pass.id, "start");
  store.transitionPass(pass.id, "planned");
  const [step] = store.steps(run.id);
  if (!step) throw new Error("no step");
  store.moveStep(step.id, "start");
  store.moveStep(step.id, "block");
  expect(changes.blockRun(store, run.id, pass.id)?.state).toBe("blocked");
  const held = () => ({
    run: store.run(run.id)?.state,
    pass: store.currentPass(run.id)?.state,
    steps: store.steps(run.id).map((s) => s.state),
    events: store.events(run.id).length,
  });
  return { store, runId: run.id, passId: pass.id, stepId: step.id, held };
}

describe("the changes of a run, its pass and its steps", () => {
  it("move all three together", () => {
    const { store, runId, passId, stepId, held } = blockedRun();
    expect(held()).toMatchObject({ run: "blocked", pass: "blocked", steps: ["blocked"] });
    expect(changes.fixBlocked(store, { runId, passId, stepIds: [stepId], guidance: [] }, { actor: "ann" })?.state).toBe("queued");
    expect(held()).toMatchObject({ run: "queued", pass: "building", steps: ["pending"] });
    store.close();
  });

  it.each([
    ["fix", (c: ReturnType<typeof blockedRun>) => changes.fixBlocked(c.store, { ...c, stepIds: [c.stepId], guidance: [] }, {})],
    ["skip", (c: ReturnType<typeof blockedRun>) => changes.skipBlocked(c.store, { ...c, stepIds: [c.stepId] }, {})],
    ["proceed", (c: ReturnType<typeof blockedRun>) => changes.proceedWithPlan(c.store, c.runId, c.passId, {})],
    ["abort", (c: ReturnType<typeof blockedRun>) => changes.abortRun(c.store, c.runId, c.passId, {})],
    [
      "fail",
      (c: ReturnType<typeof blockedRun>) => changes.failRun(c.store, c.runId, "broke", [{ id: c.stepId, error: "broke" }]),
    ],
  ])("write nothing when the run's state refuses the change (%s of a run already accepted elsewhere)", (_name, change) => {
    const context = blockedRun();
    const { store, runId, held } = context;
    // Another writer moved the run on meanwhile: skipped to the gate and accepted.
    store.transitionRun(runId, "skip");
    store.transitionRun(runId, "claim");
    store.transitionRun(runId, "gate_open");
    store.transitionRun(runId, "accept");
    const before = held();
    expect(change(context)).toBeUndefined();
    expect(held()).toEqual(before);
    store.close();
  });
});
