import type { CoreDeps } from "../deps.ts";
import type { CheckReport, GitHubReader, RepoRef } from "../github/github-port.ts";
import { publisherOf } from "../github/github-publisher.ts";
import { CHECK_NAME, type CheckView, checkEnded, checkInProgress, checkReady } from "../reporting/check-summary.ts";
import type { RunRow, StepRow } from "../store/store.ts";
import { issueRefFor } from "./issue-ref.ts";

/**
 * The "Lisa" check run on each head Lisa pushes to a pull request, for the merge box: in progress
 * while later steps of the plan are built, success at the review gate, failure or cancelled when
 * the run ends before it. Each report looks before it creates (one check run per head, even across
 * a crash), and a pass that opens its gate at once reports only its end: one write, not two.
 */

/** The tracking comment's address, from the pull request's (same host, the issue's repository). */
export function trackingUrl(run: RunRow, step: StepRow): string | undefined {
  if (!step.pr_url || run.comment_id === null) return undefined;
  const url = new URL(step.pr_url);
  url.pathname = url.pathname.replace(/\/[^/]+\/[^/]+\/pull\/\d+$/, `/${run.owner}/${run.repo}/issues/${run.issue_number}`);
  url.hash = `issuecomment-${run.comment_id}`;
  return url.toString();
}

function view(run: RunRow, step: StepRow, pass: number, headSha: string, secrets: readonly string[]): CheckView {
  return {
    issueRef: issueRefFor(run, step),
    pass,
    headSha,
    gates: step.gates ?? [],
    trackingUrl: trackingUrl(run, step),
    secrets,
  };
}

/** What a check report needs of the run being executed (a RunContext has it). */
interface CheckContext {
  deps: CoreDeps;
  gh: GitHubReader;
  run: RunRow;
  pass: { number: number };
  secrets: readonly string[];
}

/**
 * Creates or updates the check run on `headSha`. A check is a courtesy, never a reason to fail a
 * run: an installation that has not accepted `checks: write` yet gets 403, which is logged.
 */
async function report(ctx: CheckContext, step: StepRow, headSha: string, make: (view: CheckView) => CheckReport): Promise<void> {
  const run = (await ctx.deps.store.runs.get(ctx.run.id)) ?? ctx.run;
  const ref = { owner: step.owner, repo: step.repo };
  try {
    await publisherOf(ctx.gh).ensureCheckRun(
      ref,
      headSha,
      CHECK_NAME,
      make(view(run, step, ctx.pass.number, headSha, ctx.secrets)),
    );
  } catch (error) {
    ctx.deps.log.warn({ err: error, runId: run.id, stepId: step.id }, "could not report the check run");
  }
}

/** Lisa pushed `headSha` for this step, and later steps of the plan are still to be built. */
export const checkWaiting = async (ctx: CheckContext, stepId: number, headSha: string) =>
  report(ctx, await ctx.deps.store.steps.get(stepId), headSha, checkInProgress);

/** The pass reached its review gate with `headSha`, the head Lisa pushed for this step. */
export const checkAtGate = async (ctx: CheckContext, stepId: number, headSha: string) =>
  report(ctx, await ctx.deps.store.steps.get(stepId), headSha, checkReady);

/** Why a stopped run's open check runs end. */
export const STOPPED_BEFORE_REVIEW = "The run was stopped before this pass reached review.";

/**
 * The run ended before its gate: each head whose check is still in progress is completed with
 * `conclusion`, so no merge box shows Lisa working forever. GitHub failing here is logged; the
 * tracking comment already tells the run's end.
 */
export async function endOpenChecks(
  deps: CoreDeps,
  gh: GitHubReader,
  runId: number,
  conclusion: "failure" | "cancelled",
  reason: string,
  secrets: readonly string[],
): Promise<void> {
  const run = await deps.store.runs.get(runId);
  const planned = (await deps.store.steps.of(runId)).filter((step) => step.position > 0);
  // In pass 1 only a step with later steps after it reports "in progress" (checkWaiting): a run of
  // one step has no open check to end, and no lookup to make. Later passes have live checks (live-check.ts).
  if (!run || (planned.length < 2 && run.current_pass === 1)) return;
  for (const step of planned) {
    if (!step.head_sha || step.pr_number === null) continue;
    const ref = { owner: step.owner, repo: step.repo };
    try {
      const found = await gh.findCheckRun(ref, step.head_sha, CHECK_NAME);
      if (found?.status !== "in_progress") continue;
      await publisherOf(gh).updateCheckRun(
        ref,
        found.id,
        checkEnded(view(run, step, run.current_pass, step.head_sha, secrets), conclusion, reason),
      );
    } catch (error) {
      deps.log.warn({ err: error, runId, stepId: step.id }, "could not end the check run");
    }
  }
}

/** A new "Lisa" check run on `sha` saying `report`, newer than any before it; none for a person's token. */
export const createCheck = (gh: GitHubReader, ref: RepoRef, sha: string, report: CheckReport): Promise<number | undefined> =>
  publisherOf(gh).createCheckRun(ref, sha, CHECK_NAME, report);

/** Check run `id` says `report` now. */
export const updateCheck = (gh: GitHubReader, ref: RepoRef, id: number, report: CheckReport): Promise<void> =>
  publisherOf(gh).updateCheckRun(ref, id, report);

/**
 * The check run a live session writes on `sha`: the one still in progress there (a pass resumed
 * after a crash takes up what its first attempt left), else a new one. Its id; none for a person's token.
 */
export async function openLiveCheck(
  gh: GitHubReader,
  ref: RepoRef,
  sha: string,
  report: CheckReport,
): Promise<number | undefined> {
  const found = await gh.findCheckRun(ref, sha, CHECK_NAME);
  if (found?.status !== "in_progress") return createCheck(gh, ref, sha, report);
  await updateCheck(gh, ref, found.id, report);
  return found.id;
}
