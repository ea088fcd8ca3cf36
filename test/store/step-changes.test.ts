import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import { blockStep, dropStep, finishStep, refuseStep } from "../../src/store/step-changes.ts";
import { type StepPassFields, Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { buildThrough, newRun, oneStep } from "../support/store-fixtures.ts";

/** A run whose one step is being built in pass 1 (up to its pull request, unless not `built`), on a store in `dir`. */
async function stepUnderWay(dir: string, { built = true } = {}) {
  const store = new Store(testDatabaseUrl(dir) ?? path.join(dir, "lisa.db"));
  const run = await store.runs.create(newRun(1), oneStep(1));
  if (!run) throw new Error("no run");
  const pass = await store.passes.current(run.id);
  const [step] = await store.steps.of(run.id);
  if (!pass || !step) throw new Error("no pass or step");
  expect(await store.steps.move(step.id, "start")).toBe(true);
  if (built) await buildThrough(store, step.id);
  const held = async () => ({
    step: (await store.steps.get(step.id)).state,
    record: (await store.steps.inPass(step.id, pass.id))?.state,
  });
  return { store, runId: run.id, stepId: step.id, passId: pass.id, held };
}

describe("the changes of a step and its record for the pass", () => {
  it("say when the step had moved on: a refusal or a second drop reports false and writes nothing", async () => {
    const { store, runId, stepId, passId, held } = await stepUnderWay(tempDir("steps"));
    expect(await finishStep(store, { stepId, passId }, "delivered", "abc123")).toBe(true);
    expect(await refuseStep(store, { runId, stepId, passId }, "no write access", "bob")).toBe(false);
    expect(await held()).toEqual({ step: "delivered", record: "delivered" });
    expect(await dropStep(store, { stepId, passId })).toBe(true);
    expect(await dropStep(store, { stepId, passId })).toBe(false);
    expect(await held()).toEqual({ step: "dropped", record: "dropped" });
    expect((await store.events.of(runId)).map((e) => e.kind)).not.toContain("step_refused");
  });

  it("moves a pass or a step along with its run's change only where their tables allow, with no result to look at", async () => {
    const { store, stepId, passId, held } = await stepUnderWay(tempDir("steps"));
    await store.steps.follow(stepId, "start");
    await store.passes.follow(passId, "built");
    expect(await held()).toEqual({ step: "running", record: "pending" });
    expect((await store.passes.current((await store.steps.get(stepId)).run_id))?.state).toBe("queued");
    await store.steps.follow(stepId, "fail", { error: "it broke" });
    expect(await store.steps.get(stepId)).toMatchObject({ state: "failed", error: "it broke" });
  });

  it("moves a step along its table only, as a compare-and-set", async () => {
    const { store, stepId, held } = await stepUnderWay(tempDir("steps"));
    expect(await store.steps.move(stepId, "deliver", { phase: "done" })).toBe(true);
    expect(await store.steps.move(stepId, "block", { error: "late" })).toBe(false);
    expect(await store.steps.get(stepId)).toMatchObject({ state: "delivered", phase: "done", error: null });
    expect((await held()).step).toBe("delivered");
  });

  it("writes a finished step and its pass record together", async () => {
    const { store, stepId, passId, held } = await stepUnderWay(tempDir("steps"));
    await store.steps.record(stepId, { gates: [{ command: "test", passed: true }] });
    expect(await finishStep(store, { stepId, passId }, "delivered", "abc123")).toBe(true);
    expect(await held()).toEqual({ step: "delivered", record: "delivered" });
    expect(await store.steps.inPass(stepId, passId)).toMatchObject({
      end_sha: "abc123",
      gates: [{ command: "test", passed: true }],
    });
  });

  it("writes neither when the store refuses the step's half (SQLite: another connection's trigger)", async (context) => {
    if (testDatabaseUrl(tempDir("probe"))) context.skip();
    const dir = tempDir("steps");
    const { store, runId, stepId, passId, held } = await stepUnderWay(dir);
    const db = new DatabaseSync(path.join(dir, "lisa.db"));
    db.exec(
      "CREATE TRIGGER refuse_step_ends BEFORE UPDATE OF state ON steps WHEN NEW.state IN ('delivered', 'blocked') BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END",
    );
    const before = await held();
    await expect(finishStep(store, { stepId, passId }, "delivered", "abc123")).rejects.toThrow(/disk I\/O error/);
    expect(await held()).toEqual(before);
    await expect(blockStep(store, { runId, stepId, passId }, "gates failed twice", { wip_sha: null })).rejects.toThrow(
      /disk I\/O error/,
    );
    expect(await held()).toEqual(before);
    expect((await store.events.of(runId)).map((e) => e.kind)).not.toContain("step_blocked");
    db.exec("DROP TRIGGER refuse_step_ends");
    db.close();
    expect(await blockStep(store, { runId, stepId, passId }, "gates failed twice", { wip_sha: null })).toBe(true);
    expect(await held()).toEqual({ step: "blocked", record: "blocked" });
  });
});

describe("a step's phases", () => {
  it("move on only as the phase table allows, and a refused move writes nothing", async () => {
    const { store, stepId } = await stepUnderWay(tempDir("steps"), { built: false });
    await expect(store.steps.enterPhase(stepId, "push")).rejects.toThrow("step 1 cannot go from phase workspace to push");
    await expect(store.steps.move(stepId, "deliver", { phase: "done" })).rejects.toThrow(/from phase workspace to done/);
    expect(await store.steps.get(stepId)).toMatchObject({ state: "running", phase: "workspace" });
    // A resumed step enters the phase it stood in again; a failed gate goes back to the agent.
    for (const phase of ["agent", "agent", "gates", "agent", "gates", "commit"] as const)
      await store.steps.enterPhase(stepId, phase);
    expect((await store.steps.get(stepId)).phase).toBe("commit");
  });

  it("go back to the start only through the store's own fresh starts", async () => {
    const { store, runId, stepId, passId } = await stepUnderWay(tempDir("steps"));
    expect(await blockStep(store, { runId, stepId, passId }, "gates failed", { wip_sha: null })).toBe(true);
    await expect(store.steps.enterPhase(stepId, "workspace")).rejects.toThrow(/from phase pull_request to workspace/);
    await store.steps.freshBudget(stepId);
    expect(await store.steps.get(stepId)).toMatchObject({ state: "pending", phase: "workspace" });
  });
});

describe("a step's record for the pass", () => {
  it("takes the state the step moves to, in the same write, and none when the step's move is refused", async () => {
    const { store, stepId, passId, held } = await stepUnderWay(tempDir("steps"));
    expect(await store.steps.move(stepId, "skip", {}, { passId, fields: { block_reason: "left out" } })).toBe(true);
    expect(await held()).toEqual({ step: "skipped", record: "skipped" });
    expect(await store.steps.move(stepId, "block", {}, { passId, fields: { block_reason: "late" } })).toBe(false);
    expect(await store.steps.inPass(stepId, passId)).toMatchObject({ state: "skipped", block_reason: "left out" });
    // @ts-expect-error: the record's state is the step's, never written on its own.
    const written: StepPassFields = { state: "delivered" };
    expect(written).toBeDefined();
  });
});
