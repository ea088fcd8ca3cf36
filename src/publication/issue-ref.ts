import type { RunRow, StepRow } from "../store/store.ts";

/** How a step's commits and pull request name the issue: from another repository, only the full reference links. */
export function issueRefFor(run: RunRow, step: StepRow): string {
  return isIssueRepo(run, step) ? `#${run.issue_number}` : `${run.owner}/${run.repo}#${run.issue_number}`;
}

/** Whether the step's repository is the issue's own. */
export const isIssueRepo = (run: RunRow, step: StepRow) =>
  step.owner.toLowerCase() === run.owner.toLowerCase() && step.repo.toLowerCase() === run.repo.toLowerCase();
