import type { RunRow } from "./rows.ts";
import type { NewGuidance, Store } from "./store.ts";

// The state changes that span a run, its pass and its steps, each one transaction: all of it is
// written or none. Written one record at a time, a crash or a lost connection between two writes
// left a run `running` with a `blocked` pass (whose resume opened the gate with a blocked step), a
// pass that moved while its run did not, or a failed step in a run still running. Each returns the
// run as the change left it, or undefined when the run's state refused the change (nothing written).

type Cause = { actor?: string; note?: string };

/** The pass stopped at blocked steps: it and the run wait for `/lisa fix` or `/lisa skip`. */
export async function blockRun(store: Store, runId: number, passId: number): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    await store.passes.transition(passId, "block");
    return store.runs.transition(runId, "block");
  }, runId);
}

/** A multi-repository plan waits for `/lisa proceed` (`review.plan`). */
export async function awaitPlanReview(store: Store, runId: number, passId: number): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    await store.passes.transition(passId, "plan_ready");
    return store.runs.transition(runId, "plan_ready");
  }, runId);
}

/** `/lisa redirect` on a plan waiting for review: the same pass plans again, with `guidance`. */
export async function replanRun(
  store: Store,
  change: { runId: number; passId: number; passNumber: number; planningStepId: number; guidance: NewGuidance[] },
  cause: Cause,
): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    await store.guidance.add(change.runId, change.guidance, change.passId);
    await store.passes.transition(change.passId, "replan");
    await store.steps.replan(change.planningStepId, change.passNumber);
    return store.runs.transition(change.runId, "replan", cause);
  }, change.runId);
}

/** `/lisa fix`: the blocked steps go again in the same pass, each with a fresh budget, with `guidance`. */
export async function fixBlocked(
  store: Store,
  change: { runId: number; passId: number; stepIds: number[]; guidance: NewGuidance[] },
  cause: Cause,
): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    if (change.guidance.length > 0) await store.guidance.add(change.runId, change.guidance, change.passId);
    for (const id of change.stepIds) await store.steps.freshBudget(id);
    await store.passes.transition(change.passId, "fix");
    return store.runs.transition(change.runId, "fix", cause);
  }, change.runId);
}

/**
 * `/lisa skip`: the blocked steps `stepIds` are skipped; once none is left blocked, the pass goes on
 * to review. "still blocked" when others are (the skipped ones are written).
 */
export async function skipBlocked(
  store: Store,
  change: { runId: number; passId: number | undefined; stepIds: number[] },
  cause: Cause,
): Promise<RunRow | "still blocked" | undefined> {
  return store.atomically(async () => {
    for (const id of change.stepIds) await store.steps.move(id, "skip");
    if ((await store.steps.of(change.runId)).some((s) => s.state === "blocked")) return "still blocked";
    if (change.passId !== undefined) await store.passes.transition(change.passId, "skip");
    return store.runs.transition(change.runId, "skip", cause);
  }, change.runId);
}

/** `/lisa proceed`: the plan that waited for review is built as it is. */
export async function proceedWithPlan(
  store: Store,
  runId: number,
  passId: number | undefined,
  cause: Cause,
): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    if (passId !== undefined) await store.passes.transition(passId, "planned");
    return store.runs.transition(runId, "proceed", cause);
  }, runId);
}

/** `/lisa abort`: the run and its pass stop, and the steps not done are skipped. */
export async function abortRun(
  store: Store,
  runId: number,
  passId: number | undefined,
  cause: Cause,
): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    const run = await store.runs.transition(runId, "abort", cause);
    if (!run) return undefined;
    if (passId !== undefined) await store.passes.transition(passId, "abort");
    for (const step of await store.steps.of(runId)) {
      if (step.state === "running" || step.state === "pending" || step.state === "blocked")
        await store.steps.move(step.id, "skip");
    }
    return run;
  }, runId);
}

/** An accepted run goes back to review (an approval dismissed, a human push), with its pass. */
export async function withdrawRun(store: Store, runId: number, cause: Cause): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    const run = await store.runs.transition(runId, "withdraw", cause);
    const pass = run && (await store.passes.current(runId));
    if (pass) await store.passes.transition(pass.id, "withdraw");
    return run;
  }, runId);
}

/**
 * A PR of a closed run was reopened (docs/operations.md): a pass that had reached the gate waits for review
 * again (an accepted one withdrawn to the gate); one closed mid-way is aborted, its unfinished steps
 * skipped, and the run stands stopped, as after `/lisa abort`.
 */
export async function reopenRun(store: Store, runId: number, cause: Cause): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    const pass = await store.passes.current(runId);
    const atGate = pass?.state === "at_gate" || pass?.state === "accepted";
    const run = await store.runs.transition(runId, atGate ? "reopen" : "reopen_stopped", cause);
    if (!run || !pass) return run;
    if (pass.state === "accepted") await store.passes.transition(pass.id, "withdraw");
    if (atGate) return run;
    await store.passes.transition(pass.id, "abort");
    for (const step of await store.steps.of(runId)) {
      if (step.state === "running" || step.state === "pending" || step.state === "blocked")
        await store.steps.move(step.id, "skip");
    }
    return run;
  }, runId);
}

/** The run failed with `message`; `steps` are the ones that failed with it, each with its own error. */
export async function failRun(
  store: Store,
  runId: number,
  message: string,
  steps: { id: number; error: string }[],
): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    for (const step of steps) await store.steps.move(step.id, "fail", { error: step.error });
    return store.runs.transition(runId, "fail", { note: message.slice(0, 500) }, { error: message });
  }, runId);
}

/** A run this process had under way when it stopped is queued to resume, a restart counted. */
export async function interruptRun(store: Store, runId: number): Promise<RunRow | undefined> {
  return store.runs.transition(runId, "interrupt", {}, { restart: true });
}
