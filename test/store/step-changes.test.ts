import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import { blockStep, finishStep } from "../../src/store/step-changes.ts";
import { Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { newRun, oneStep } from "../support/store-fixtures.ts";

/** A run whose one step is being built in pass 1, on a store in `dir`. */
function stepUnderWay(dir: string) {
  const store = new Store(testDatabaseUrl(dir) ?? path.join(dir, "lisa.db"));
  const run = store.createRun(newRun(1), oneStep(1));
  if (!run) throw new Error("no run");
  const pass = store.currentPass(run.id);
  const [step] = store.steps(run.id);
  if (!pass || !step) throw new Error("no pass or step");
  expect(store.moveStep(step.id, "start")).toBe(true);
  const held = () => ({ step: store.step(step.id).state, record: store.stepPass(step.id, pass.id)?.state });
  return { store, runId: run.id, stepId: step.id, passId: pass.id, held };
}

describe("the changes of a step and its record for the pass", () => {
  it("moves a step along its table only, as a compare-and-set", () => {
    const { store, stepId, held } = stepUnderWay(tempDir("steps"));
    expect(store.moveStep(stepId, "deliver", { phase: "done" })).toBe(true);
    expect(store.moveStep(stepId, "block", { error: "late" })).toBe(false);
    expect(store.step(stepId)).toMatchObject({ state: "delivered", phase: "done", error: null });
    expect(held().step).toBe("delivered");
  });

  it("writes a finished step and its pass record together", () => {
    const { store, stepId, passId, held } = stepUnderWay(tempDir("steps"));
    store.updateStep(stepId, { gates: '[{"name":"test","ok":true}]' });
    expect(finishStep(store, { stepId, passId }, "delivered", "abc123")).toBe(true);
    expect(held()).toEqual({ step: "delivered", record: "delivered" });
    expect(store.stepPass(stepId, passId)).toMatchObject({ end_sha: "abc123", gates: '[{"name":"test","ok":true}]' });
  });

  it("writes neither when the store refuses the step's half (SQLite: another connection's trigger)", (context) => {
    if (testDatabaseUrl(tempDir("probe"))) context.skip();
    const dir = tempDir("steps");
    const { store, runId, stepId, passId, held } = stepUnderWay(dir);
    const db = new DatabaseSync(path.join(dir, "lisa.db"));
    db.exec(
      "CREATE TRIGGER refuse_step_ends BEFORE UPDATE OF state ON steps WHEN NEW.state IN ('delivered', 'blocked') BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END",
    );
    const before = held();
    expect(() => finishStep(store, { stepId, passId }, "delivered", "abc123")).toThrow(/disk I\/O error/);
    expect(held()).toEqual(before);
    expect(() => blockStep(store, { runId, stepId, passId }, "gates failed twice", { wip_sha: null })).toThrow(/disk I\/O error/);
    expect(held()).toEqual(before);
    expect(store.events(runId).map((e) => e.kind)).not.toContain("step_blocked");
    db.exec("DROP TRIGGER refuse_step_ends");
    db.close();
    expect(blockStep(store, { runId, stepId, passId }, "gates failed twice", { wip_sha: null })).toBe(true);
    expect(held()).toEqual({ step: "blocked", record: "blocked" });
  });
});
