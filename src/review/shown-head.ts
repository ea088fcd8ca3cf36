import type { StepRow, Store } from "../store/store.ts";

/**
 * The head of a step's pull request: the one GitHub shows, unless that is the commit Lisa's last
 * push replaced. GitHub updates a PR's head a moment after a push, so right after it the PR may
 * still show the commit before; approvals of that commit must not count for the new one.
 */
export async function shownHead(store: Store, step: StepRow, shown: string): Promise<string> {
  if (!step.head_sha || shown === step.head_sha) return shown;
  const last = (await store.steps.history(step.id)).filter((record) => record.end_sha !== null).at(-1);
  return last?.end_sha === step.head_sha && last.start_sha === shown ? step.head_sha : shown;
}
