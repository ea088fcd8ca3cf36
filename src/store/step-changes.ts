import type { StepPassRow } from "./rows.ts";
import type { StepFields, Store } from "./store.ts";

// The changes of a step and its record for the pass, each one transaction (steps.move with the
// record): a stop between the two can no longer leave a step delivered whose pass record still
// says it is being built.

/** The pass's requester cannot write to the step's repository: it is left out of the pass. */
export async function refuseStep(
  store: Store,
  at: { runId: number; stepId: number; passId: number },
  reason: string,
  actor: string,
): Promise<void> {
  await store.atomically(async () => {
    await store.steps.move(at.stepId, "skip", { error: reason }, { passId: at.passId, fields: { block_reason: reason } });
    await store.events.add(at.runId, "step_refused", { actor, note: reason });
    return true;
  }, at.runId);
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

/** The step's pull request was closed unmerged before this pass worked on it: the step is dropped. */
export async function dropStep(store: Store, at: { stepId: number; passId: number }): Promise<void> {
  await store.steps.move(at.stepId, "drop", { pr_state: "closed" }, { passId: at.passId });
}
