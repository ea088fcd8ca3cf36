import type { PrGate } from "../reporting/views.ts";
import type { StepRow, Store } from "../store/store.ts";

/**
 * A writer requested changes on a step's PR: its recorded gate says so at once, so what the next
 * pass writes before the gate is read again (its package's list of the plan's PRs) agrees with it.
 */
export async function recordChangeRequest(store: Store, step: StepRow, reviewer: string): Promise<void> {
  const gate = step.gate;
  if (!gate) return;
  if (gate.status === "merged" || gate.status === "dropped") return;
  const same = (login: string) => login.toLowerCase() === reviewer.toLowerCase();
  const updated: PrGate = {
    ...gate,
    status: "changes_requested",
    approvers: gate.approvers.filter((login) => !same(login)),
    blockers: [...gate.blockers.filter((login) => !same(login)), reviewer],
  };
  await store.steps.record(step.id, { gate: updated });
}
