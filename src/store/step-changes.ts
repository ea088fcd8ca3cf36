import type { PrState, StepPassRow, StepRow } from "./rows.ts";
import type { StepFields, Store } from "./store.ts";

/** What a read of a step's pull request saw. */
type SeenPullRequest = Pick<StepFields, "head_sha" | "draft" | "gate"> & { pr_state: PrState };

// The changes of a step and its record for the pass, each one transaction (steps.move with the
// record): a stop between the two can no longer leave a step delivered whose pass record still
// says it is being built. Outside the store, a step moves only through these.

/**
 * The pass's requester cannot write to the step's repository: it is left out of the pass. False,
 * with nothing written, when the step had moved on from where it could be skipped.
 */
export async function refuseStep(
  store: Store,
  at: { runId: number; stepId: number; passId: number },
  reason: string,
  actor: string,
): Promise<boolean> {
  const refused = await store.atomically(async () => {
    const fields = { block_reason: reason };
    if (!(await store.steps.move(at.stepId, "skip", { error: reason }, { passId: at.passId, fields }))) return undefined;
    await store.events.add(at.runId, "step_refused", { actor, note: reason });
    return true;
  }, at.runId);
  return refused === true;
}

/**
 * The step's work in this pass is over: delivered, left unchanged, or dropped (its pull request was
 * closed). The pass's record keeps what the step ended with.
 */
export async function finishStep(
  store: Store,
  at: { stepId: number; passId: number },
  outcome: "delivered" | "unchanged" | "dropped",
  endSha: string | null,
  fields: StepFields = {},
): Promise<boolean> {
  const step = await store.steps.get(at.stepId);
  const event = outcome === "delivered" ? "deliver" : outcome === "unchanged" ? "leave_unchanged" : "drop";
  return store.steps.move(
    at.stepId,
    event,
    { ...fields, phase: "done" },
    { passId: at.passId, fields: { end_sha: endSha, gates: step.gates, summary: step.summary, manifest: step.manifest } },
  );
}

/** The step needs a human (`/lisa fix` or `/lisa skip`); the pass's record keeps why and the attempt's branch head. */
export async function blockStep(
  store: Store,
  at: { runId: number; stepId: number; passId: number },
  reason: string,
  record: Pick<StepPassRow, "wip_sha">,
): Promise<boolean> {
  return (
    (await store.atomically(async () => {
      const step = await store.steps.get(at.stepId);
      const fields = { block_reason: reason, wip_sha: record.wip_sha, gates: step.gates, manifest: step.manifest };
      if (!(await store.steps.move(at.stepId, "block", { error: reason }, { passId: at.passId, fields }))) return undefined;
      await store.events.add(at.runId, "step_blocked", { note: `${step.owner}/${step.repo}: ${reason.slice(0, 200)}` });
      return true;
    }, at.runId)) ?? false
  );
}

/** The step's pull request was closed unmerged before this pass worked on it: the step is dropped (false: it had moved on). */
export async function dropStep(store: Store, at: { stepId: number; passId: number }): Promise<boolean> {
  return store.steps.move(at.stepId, "drop", { pr_state: "closed" }, { passId: at.passId });
}

/** The step's session starts (a planning step's in `worktree`); false when the step had moved on. */
export async function startStep(store: Store, stepId: number, fields: { worktree?: string } = {}): Promise<boolean> {
  return store.steps.move(stepId, "start", fields);
}

/** The planning step wrote a valid plan (`summary`: its rationale); false when the step had moved on. */
export async function deliverPlan(store: Store, stepId: number, summary: string | null): Promise<boolean> {
  return store.steps.move(stepId, "deliver", { phase: "done", summary });
}

/**
 * Its pull request was closed while the step's session ran: the step is dropped, unless it is no
 * longer running (the gate's read dropped it first: false).
 */
export async function dropRunningStep(store: Store, at: { runId: number; stepId: number; passId: number }): Promise<boolean> {
  const dropped = await store.atomically(
    async () =>
      (await store.steps.get(at.stepId)).state === "running" &&
      (await store.steps.move(at.stepId, "drop", {}, { passId: at.passId }))
        ? true
        : undefined,
    at.runId,
  );
  return dropped === true;
}

/**
 * What the gate read of the step's pull request: closed unmerged drops the step from the plan, open
 * again brings a dropped step back, and the rest is recorded as it is (a refused move writes nothing,
 * so the record alone follows).
 */
export async function seePullRequest(store: Store, step: Pick<StepRow, "id" | "state">, seen: SeenPullRequest): Promise<void> {
  const event =
    seen.pr_state === "closed" && step.state !== "dropped"
      ? "drop"
      : seen.pr_state === "open" && step.state === "dropped"
        ? "reopen"
        : undefined;
  if (!event || !(await store.steps.move(step.id, event, seen))) await store.steps.record(step.id, seen);
}
