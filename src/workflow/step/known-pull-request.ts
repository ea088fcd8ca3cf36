import * as stepChanges from "../../store/step-changes.ts";
import type { StepRow } from "../../store/store.ts";
import type { RunContext } from "../context/run-context.ts";

// What a pass does first with a step whose pull request a previous pass opened.

/** Before a pass works on a known PR: closed unmerged drops the step; merged moves the work to a follow-up branch. */
export async function stillOpen(ctx: RunContext, step: StepRow): Promise<boolean> {
  const { deps, gh, pass } = ctx;
  const pr = await gh.getPullRequest({ owner: step.owner, repo: step.repo }, step.pr_number ?? 0);
  if (pr.merged) {
    // Never push to a merged branch: a follow-up branch from the updated base gets a new PR.
    await deps.store.steps.record(step.id, {
      branch: `${step.branch.replace(/-p\d+$/, "")}-p${pass.number}`,
      pr_number: null,
      pr_url: null,
      pr_state: null,
      start_sha: null,
      head_sha: null,
    });
    await deps.store.events.add(ctx.run.id, "follow_up", { note: `${step.owner}/${step.repo}#${pr.number} was merged` });
    return true;
  }
  if (pr.state === "closed") {
    if (!(await stepChanges.dropStep(deps.store, { stepId: step.id, passId: pass.id })))
      deps.log.info({ runId: ctx.run.id, stepId: step.id }, "the step had moved on before its closed pull request dropped it");
    return false;
  }
  return true;
}
