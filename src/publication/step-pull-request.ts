import type { GitHubReader, PullRequestState } from "../github/github-port.ts";
import type { PrState } from "../store/rows.ts";
import type { PassRow, StepRow } from "../store/store.ts";
import { composeStepPullRequest, type PullRequestContext } from "./compose-step-pr.ts";
import { ensureDraft, ensurePullRequest, ensurePullRequestText, requestReviewers } from "./pull-requests.ts";

// A step's pull request as its pass stands: opened with the text the store composes, a draft while
// the pass works on it, ready and asking for review at the gate. Each write is decided here from
// what the store says of the run, the pass and the step (who asked, who guided, who blocks), and
// what was published is recorded on the step.

/** What a step's pull request is published with. */
export interface StepPullRequestContext extends PullRequestContext {
  gh: GitHubReader;
  pass: Pick<PassRow, "id" | "number">;
  /** `review.draft_until_review`. */
  draftUntilReview: boolean;
}

/**
 * Before a pass works on a pull request a previous pass opened, it turns into a draft, so nobody
 * merges a half-done pass. Where the repository refuses drafts, the body's "pass in progress" line
 * says so instead.
 */
export async function publishWorkingDraft(ctx: StepPullRequestContext, step: StepRow): Promise<void> {
  if (!ctx.draftUntilReview || step.pr_number === null || step.draft === 1) return;
  const ref = { owner: step.owner, repo: step.repo };
  try {
    await ensureDraft(ctx.gh, await ctx.gh.getPullRequest(ref, step.pr_number), true);
    await ctx.deps.store.steps.record(step.id, { draft: 1 });
  } catch (error) {
    ctx.deps.log.warn({ err: error, stepId: step.id }, "could not turn the PR into a draft while Lisa works on it");
    await publishStepPullRequestBody(ctx, step);
  }
}

/**
 * At the gate the pull request is ready for review (a refusal leaves it a draft; the package still
 * asks), and Lisa asks for review explicitly, as drafts do not reliably request code owners: the
 * requester, whoever gave guidance in this pass, and whoever requested changes on it
 * (docs/operations.md). Returns the pull request as read before these writes.
 */
export async function publishReadyForReview(ctx: StepPullRequestContext, step: StepRow): Promise<PullRequestState | undefined> {
  if (step.pr_number === null) return undefined;
  const { store, log } = ctx.deps;
  const ref = { owner: step.owner, repo: step.repo };
  const pr = await ctx.gh.getPullRequest(ref, step.pr_number);
  await ensureDraft(ctx.gh, pr, false).catch((error) => log.warn({ err: error }, "could not mark the PR ready"));
  await store.steps.record(step.id, { draft: 0 });
  const people = [
    ctx.run.requested_by,
    ...(await store.guidance.forPass(ctx.pass.id)).map((g) => g.author),
    ...(step.gate?.blockers ?? []),
  ];
  const logins = [...new Set(people.filter((login) => !login.toLowerCase().endsWith("[bot]")))];
  await requestReviewers(ctx.gh, ref, step.pr_number, logins).catch((error) =>
    log.warn({ err: error, stepId: step.id }, "could not request reviewers"),
  );
  return pr;
}

/**
 * The step's pull request as `publishStepPullRequest` left it: open (`current`: as GitHub showed it
 * before the text was written), or closed by a human.
 */
export type PublishedPullRequest =
  | { state: "open"; number: number; url: string; current: PullRequestState }
  | { state: Exclude<PrState, "open">; number: number; url: string };

/**
 * The step's pull request opened, or brought to the title and body the store composes of it. One
 * that exists from before a crash is found again, never opened twice; one a human closed stays
 * closed (returned as it is, nothing written). It opens ready when its pass's gate opens right
 * after (`gateNext`: written as it will read there), else a draft where the configuration asks.
 */
export async function publishStepPullRequest(
  ctx: StepPullRequestContext,
  step: StepRow,
  options: { base: string; gateNext: boolean },
): Promise<PublishedPullRequest> {
  const ref = { owner: step.owner, repo: step.repo };
  const text = await composeStepPullRequest(ctx, step, { delivered: options.gateNext });
  let { pr_number: number, pr_url: url } = step;
  if (number === null || url === null) {
    const opened = await ensurePullRequest(ctx.gh, ref, {
      title: text.title,
      body: text.mergeInto(null),
      head: step.branch,
      base: options.base,
      draft: ctx.draftUntilReview && !options.gateNext,
    });
    if (opened.state === "closed") return { number: opened.number, url: opened.url, state: opened.merged ? "merged" : "closed" };
    ({ number, url } = opened);
    await ctx.deps.store.steps.record(step.id, { pr_number: number, pr_url: url, pr_state: "open", draft: opened.draft ? 1 : 0 });
  }
  const current = await ctx.gh.getPullRequest(ref, number);
  // A PR opened a moment ago already says all this: only what changed is written.
  await ensurePullRequestText(ctx.gh, ref, current, { title: text.title, body: text.mergeInto(current.body) });
  return { number, url, state: "open", current };
}

/** The step's pull request shows the body the store composes of it now (`current`: as just read, else read here). */
export async function publishStepPullRequestBody(
  ctx: StepPullRequestContext,
  step: StepRow,
  current?: PullRequestState,
): Promise<void> {
  if (step.pr_number === null) return;
  const ref = { owner: step.owner, repo: step.repo };
  const pr = current ?? (await ctx.gh.getPullRequest(ref, step.pr_number));
  await ensurePullRequestText(ctx.gh, ref, pr, { body: (await composeStepPullRequest(ctx, step)).mergeInto(pr.body) });
}
