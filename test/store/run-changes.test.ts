import { describe, expect, it } from "vitest";
import { testDatabaseUrl } from "../../dev/test-database.ts";
import * as changes from "../../src/store/run-changes.ts";
import { type NewGuidance, Store } from "../../src/store/store.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { newRun, oneStep } from "../support/store-fixtures.ts";

/** A run blocked in its first pass, on an empty store (SQLite in memory, or PostgreSQL in npm run test:postgres). */
async function blockedRun() {
  const store = new Store(testDatabaseUrl(tempDir("run-changes")) ?? ":memory:");
  const run = await store.runs.create(newRun(1), oneStep(1));
  if (!run) throw new Error("no run");
  await store.runs.claim("w", run.id);
  const pass = await store.passes.current(run.id);
  if (!pass) throw new Error("no pass");
  await store.passes.transition(pass.id, "start");
  await store.passes.transition(pass.id, "planned");
  const [step] = await store.steps.of(run.id);
  if (!step) throw new Error("no step");
  await store.steps.move(step.id, "start");
  await store.steps.move(step.id, "block");
  expect((await changes.blockRun(store, run.id, pass.id))?.state).toBe("blocked");
  const held = async () => ({
    run: (await store.runs.get(run.id))?.state,
    pass: (await store.passes.current(run.id))?.state,
    steps: (await store.steps.of(run.id)).map((s) => s.state),
    events: (await store.events.of(run.id)).length,
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
    await store.runs.transition(runId, "skip");
    await store.runs.transition(runId, "claim");
    await store.runs.transition(runId, "gate_open");
    await store.runs.transition(runId, "accept");
    const before = await held();
    expect(before.run).toBe("accepted");
    expect(await change(context)).toBeUndefined();
    expect(await held()).toEqual(before);
    await store.close();
  });
});

describe("a closed run whose PR is reopened (rule 22)", () => {
  /** The blocked run skipped on to its gate: run in review, pass at the gate. */
  async function atGate() {
    const context = await blockedRun();
    const { store, runId, passId, stepId } = context;
    await store.steps.move(stepId, "skip");
    await store.passes.transition(passId, "skip");
    await store.passes.transition(passId, "gate_open");
    await store.runs.transition(runId, "skip");
    await store.runs.transition(runId, "claim");
    await store.runs.transition(runId, "gate_open");
    return context;
  }

  it("waits for review again when its pass was at the gate", async () => {
    const { store, runId, held } = await atGate();
    await store.runs.transition(runId, "close");
    expect((await store.runs.get(runId))?.finished_at).not.toBeNull();
    expect(await changes.reopenRun(store, runId, { actor: "ann" })).toMatchObject({ state: "review", finished_at: null });
    expect(await held()).toMatchObject({ run: "review", pass: "at_gate" });
    await store.close();
  });

  it("withdraws an accepted pass to the gate, so the next approval accepts it again", async () => {
    const { store, runId, passId, held } = await atGate();
    await store.runs.accept(runId, { by: "ann", via: "approval" });
    await store.runs.transition(runId, "close");
    expect(await held()).toMatchObject({ run: "closed", pass: "accepted" });
    expect((await changes.reopenRun(store, runId, {}))?.state).toBe("review");
    expect(await held()).toMatchObject({ run: "review", pass: "at_gate" });
    expect((await store.runs.accept(runId, { by: "bob", via: "approval" }))?.state).toBe("accepted");
    expect((await store.passes.current(runId))?.id).toBe(passId);
    await store.close();
  });

  it("stands stopped, its pass aborted and its unfinished steps skipped, when the pass had not reached the gate", async () => {
    const { store, runId, held } = await blockedRun();
    await store.runs.transition(runId, "close");
    expect((await changes.reopenRun(store, runId, {}))?.state).toBe("stopped");
    expect(await held()).toMatchObject({ run: "stopped", pass: "aborted", steps: ["skipped"] });
    await store.close();
  });

  it("writes nothing for a run that is not closed", async () => {
    const { store, runId, held } = await atGate();
    const before = await held();
    expect(await changes.reopenRun(store, runId, {})).toBeUndefined();
    expect(await held()).toEqual(before);
    await store.close();
  });
});

describe("the columns that change with a run's state", () => {
  it("are written by the state change itself, and not at all when it is refused", async () => {
    const { store, runId, stepId } = await blockedRun();
    await store.runs.transition(runId, "fix");
    await store.runs.claim("w", runId);
    expect(await changes.failRun(store, runId, "git broke", [{ id: stepId, error: "git broke" }])).toMatchObject({
      state: "failed",
      error: "git broke",
    });
    // A failed run cannot fail again: the second message is not written over the first.
    expect(await changes.failRun(store, runId, "later", [])).toBeUndefined();
    expect((await store.runs.get(runId))?.error).toBe("git broke");
    await store.close();
  });

  it("count a restart only when the run was running", async () => {
    const { store, runId } = await blockedRun();
    const restart = { session: "Lisa stopped during this session", restart: true };
    expect(await changes.interruptRun(store, runId, restart)).toBeUndefined();
    expect((await store.runs.get(runId))?.restarts).toBe(0);
    await store.runs.transition(runId, "skip");
    await store.runs.claim("w", runId);
    expect((await changes.interruptRun(store, runId, restart))?.run).toMatchObject({ state: "queued", restarts: 1 });
    await store.runs.claim("w", runId);
    expect((await changes.interruptRun(store, runId, restart))?.run).toMatchObject({ state: "queued", restarts: 2 });
    await store.close();
  });

  it("interrupt a run with its running sessions in one change, and neither when the run had ended", async () => {
    const { store, runId, stepId } = await blockedRun();
    const sessionsOf = async () => (await store.sessions.of(stepId)).map((s) => [s.state, s.message]);
    const started = () =>
      store.sessions.start({ step_id: stepId, iteration: 1, purpose: "implement", provider: "claude", model: null });
    await started();
    const handBack = { session: "Lisa stopped during this session", note: "Lisa was stopped (SIGTERM)" };
    // Blocked, not running: refused, and its session is left as it is.
    expect(await changes.interruptRun(store, runId, handBack)).toBeUndefined();
    expect(await sessionsOf()).toEqual([["running", null]]);
    await store.runs.transition(runId, "skip");
    await store.runs.claim("w", runId);
    const handed = await changes.interruptRun(store, runId, handBack);
    expect(handed).toMatchObject({ run: { state: "queued", restarts: 0 }, sessions: 1 });
    expect(await sessionsOf()).toEqual([["interrupted", "Lisa stopped during this session"]]);
    const events = await store.events.of(runId);
    expect(events.at(-1)).toMatchObject({ kind: "interrupt", detail: "Lisa was stopped (SIGTERM)" });
    await store.close();
  });
});

describe("a pass's gate", () => {
  /** The blocked run's step skipped: its pass ascends while the run runs again, as at the end of a pass. */
  async function ascendingRun() {
    const context = await blockedRun();
    const { store, runId, passId, stepId } = context;
    await changes.skipBlocked(store, { runId, passId, stepIds: [stepId] }, {});
    await store.runs.claim("w", runId);
    expect(await context.held()).toMatchObject({ run: "running", pass: "ascending" });
    return context;
  }
  const outcome = { recommendation: "accept" as const, refinements: [], open_questions: ["which port?"] };
  const asked = (body: string): NewGuidance => ({
    delivery_id: `d-${body}`,
    source: "inline",
    owner: "acme",
    repo: "api",
    pr_number: 5,
    author: "bob",
    url: null,
    github_id: 7,
    path: "src/api.ts",
    line: 3,
    diff_hunk: null,
    outdated: 0,
    body,
  });

  it("opens in one change: the pass at its gate with the agents' recommendation, and the run waiting for review", async () => {
    const { store, runId, passId, held } = await ascendingRun();
    const opened = await changes.openGate(store, { runId, passId, worker: "w", outcome, config: {}, maxPasses: 3 });
    expect(opened?.run.state).toBe("review");
    expect(opened?.next).toBeUndefined();
    expect(await held()).toMatchObject({ run: "review", pass: "at_gate" });
    expect(await store.passes.current(runId)).toMatchObject({ state: "at_gate", ...outcome });
    await store.close();
  });

  it("starts the next pass instead, in the same change, when guidance was queued meanwhile and a pass is left", async () => {
    const { store, runId, passId } = await ascendingRun();
    await store.guidance.add(runId, [asked("rename it")], undefined);
    const opened = await changes.openGate(store, { runId, passId, worker: "w", outcome, config: { v: 2 }, maxPasses: 3 });
    expect(opened?.next).toMatchObject({ number: 2, trigger: "review", requested_by: "bob", state: "queued" });
    expect(opened?.run).toMatchObject({ state: "queued", current_pass: 2 });
    expect(await store.passes.get(runId, 1)).toMatchObject({ state: "superseded", ...outcome });
    expect(await store.guidance.queued(runId)).toEqual([]);
    await store.close();
  });

  it("waits for review with the guidance still queued when no pass is left", async () => {
    const { store, runId, passId } = await ascendingRun();
    await store.guidance.add(runId, [asked("rename it")], undefined);
    const opened = await changes.openGate(store, { runId, passId, worker: "w", outcome, config: {}, maxPasses: 1 });
    expect(opened?.run.state).toBe("review");
    expect(await store.guidance.queued(runId)).toHaveLength(1);
    await store.close();
  });

  it("writes nothing for a worker whose claim another took over meanwhile", async () => {
    const { store, runId, passId, held } = await ascendingRun();
    const before = await held();
    expect(await changes.openGate(store, { runId, passId, worker: "lost", outcome, config: {}, maxPasses: 3 })).toBeUndefined();
    expect(await held()).toEqual(before);
    await store.close();
  });

  it("writes nothing when the run was stopped meanwhile: the pass stays ascending, without an outcome", async () => {
    const { store, runId, passId, held } = await ascendingRun();
    expect(await changes.abortRun(store, runId, passId, {})).toBeDefined();
    const before = await held();
    expect(await changes.openGate(store, { runId, passId, worker: "w", outcome, config: {}, maxPasses: 3 })).toBeUndefined();
    expect(await held()).toEqual(before);
    expect((await store.passes.current(runId))?.open_questions).not.toEqual(outcome.open_questions);
    await store.close();
  });
});
