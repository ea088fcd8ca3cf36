import { composeStepPullRequest } from "../publication/compose-step-pr.ts";
import * as stepChanges from "../store/step-changes.ts";
import type { StepRow } from "../store/store.ts";
import type { RunContext } from "../workflow/run-context.ts";

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
    await stepChanges.dropStep(deps.store, { stepId: step.id, passId: pass.id });
    return false;
  }
  return true;
}

/**
 * A PR is a draft while Lisa works on it, so nobody merges a half-done pass; ascend marks it ready.
 * Repositories that refuse drafts keep a normal PR and a "pass in progress" line in the body.
 */
export async function draftWhileWorking(ctx: RunContext, step: StepRow): Promise<void> {
  if (!ctx.config.review.draft_until_review || step.pr_number === null || step.draft === 1) return;
  const ref = { owner: step.owner, repo: step.repo };
  try {
    const pr = await ctx.gh.getPullRequest(ref, step.pr_number);
    if (!pr.draft) await ctx.gh.setDraft(pr.nodeId, true);
    await ctx.deps.store.steps.record(step.id, { draft: 1 });
  } catch (error) {
    ctx.deps.log.warn({ err: error, stepId: step.id }, "could not turn the PR into a draft while Lisa works on it");
    const pr = await ctx.gh.getPullRequest(ref, step.pr_number);
    await ctx.gh.updatePullRequest(ref, step.pr_number, { body: (await composeStepPullRequest(ctx, step)).mergeInto(pr.body) });
  }
}
