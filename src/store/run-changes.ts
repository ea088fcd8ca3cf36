import type { PassOutcome } from "./passes.ts";
import type { PassRow, RunRow } from "./rows.ts";
import type { NewGuidance, Store } from "./store.ts";

// The state changes that span a run, its pass and its steps, each one transaction: all of it is
// written or none. Written one record at a time, a crash or a lost connection between two writes
// left a run `running` with a `blocked` pass (whose resume opened the gate with a blocked step), a
// pass that moved while its run did not, or a failed step in a run still running. Each returns the
// run as the change left it, or undefined when the run's state refused the change (nothing written).
// The run's compare-and-set decides: its pass and steps follow it where their tables allow (follow).
// Outside the store, a run and its passes move only through these.

type Cause = { actor?: string; note?: string };

/** The pass moves on a phase: to planning (start), building (planned) or ascending (built); false when it had moved on. */
export async function advancePass(store: Store, passId: number, event: "start" | "planned" | "built"): Promise<boolean> {
  return store.passes.transition(passId, event);
}

/** The gate found every pull request of the run merged (merge), or closed unmerged (close). */
export async function finishRun(
  store: Store,
  runId: number,
  event: "merge" | "close",
  cause: Cause,
): Promise<RunRow | undefined> {
  return store.runs.transition(runId, event, cause);
}

/** The pass stopped at blocked steps: it and the run wait for `/lisa fix` or `/lisa skip`. */
export async function blockRun(store: Store, runId: number, passId: number): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    await store.passes.follow(passId, "block");
    return store.runs.transition(runId, "block");
  }, runId);
}

/**
 * The pass reached its review gate with `outcome` (none when an earlier Lisa recorded it): the run
 * waits for review or, when guidance was queued meanwhile and a pass is left, the next pass starts
 * from it at once (`next`). One change: stopped before it, the pass is still ascending, and its
 * resume ascends again.
 */
export async function openGate(
  store: Store,
  change: { runId: number; passId: number; worker: string; outcome?: PassOutcome; config: unknown; maxPasses: number },
): Promise<{ run: RunRow; next?: PassRow } | undefined> {
  return store.atomically(async () => {
    const run = await store.runs.get(change.runId);
    // A worker that lost its claim meanwhile leaves the gate to the one that took the run over.
    if (run?.worker !== change.worker) return undefined;
    if (change.outcome) await store.passes.reachGate(change.passId, change.outcome);
    const [first] = await store.guidance.queued(change.runId);
    if (first && run.current_pass < change.maxPasses) {
      const next = await store.passes.startNext(change.runId, {
        trigger: first.source === "review" || first.source === "inline" ? "review" : "redirect",
        requestedBy: first.author,
        config: change.config,
        guidance: [],
        event: "queued_pass",
      });
      const moved = next && (await store.runs.get(change.runId));
      if (moved) return { run: moved, next };
    }
    const moved = await store.runs.transition(change.runId, "gate_open");
    return moved && { run: moved };
  }, change.runId);
}

/** A multi-repository plan waits for `/lisa proceed` (`review.plan`). */
export async function awaitPlanReview(store: Store, runId: number, passId: number): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    await store.passes.follow(passId, "plan_ready");
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
    await store.passes.follow(change.passId, "replan");
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
    await store.passes.follow(change.passId, "fix");
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
    for (const id of change.stepIds) await store.steps.follow(id, "skip");
    if ((await store.steps.of(change.runId)).some((s) => s.state === "blocked")) return "still blocked";
    if (change.passId !== undefined) await store.passes.follow(change.passId, "skip");
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
    if (passId !== undefined) await store.passes.follow(passId, "planned");
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
    if (passId !== undefined) await store.passes.follow(passId, "abort");
    for (const step of await store.steps.of(runId)) {
      if (step.state === "running" || step.state === "pending" || step.state === "blocked")
        await store.steps.follow(step.id, "skip");
    }
    return run;
  }, runId);
}

/** An accepted run goes back to review (an approval dismissed, a human push), with its pass. */
export async function withdrawRun(store: Store, runId: number, cause: Cause): Promise<RunRow | undefined> {
  return store.atomically(async () => {
    const run = await store.runs.transition(runId, "withdraw", cause);
    const pass = run && (await store.passes.current(runId));
    if (pass) await store.passes.follow(pass.id, "withdraw");
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
    if (pass.state === "accepted") await store.passes.follow(pass.id, "withdraw");
    if (atGate) return run;
    await store.passes.follow(pass.id, "abort");
    for (const step of await store.steps.of(runId)) {
      if (step.state === "running" || step.state === "pending" || step.state === "blocked")
        await store.steps.follow(step.id, "skip");
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
    for (const step of steps) await store.steps.follow(step.id, "fail", { error: step.error });
    return store.runs.transition(runId, "fail", { note: message.slice(0, 500) }, { error: message });
  }, runId);
}

/**
 * The run under way is queued again to resume where it stands, its running sessions ended as
 * interrupted with `session`: at a restart (`restart`, counted toward the limit), or handed back at
 * a shutdown or a lost database connection (not counted). One change, so a queued run never has a
 * session still running. The run and how many sessions it interrupted; undefined when the run had
 * ended meanwhile (nothing written).
 */
export async function interruptRun(
  store: Store,
  runId: number,
  why: { session: string; note?: string; restart?: boolean },
): Promise<{ run: RunRow; sessions: number } | undefined> {
  return store.atomically(async () => {
    const sessions = await store.sessions.interruptRun(runId, why.session);
    const run = await store.runs.transition(
      runId,
      "interrupt",
      why.note ? { note: why.note } : {},
      why.restart ? { restart: true } : {},
    );
    return run && { run, sessions: sessions.length };
  }, runId);
}
