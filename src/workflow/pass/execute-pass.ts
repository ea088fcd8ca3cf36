// Over 250 lines: a pass's phases in the order they run, each a few lines, read top to bottom as one story.
import { parseConfig } from "../../config/parse-config.ts";
import { planRun } from "../../planner/plan-run.ts";
import { checkAtGate } from "../../publication/check-runs.ts";
import { settleLeftOutPassComment } from "../../publication/pass-comment.ts";
import { setStateLabel } from "../../publication/state-labels.ts";
import { publishReadyForReview, publishStepPullRequestBody } from "../../publication/step-pull-request.ts";
import { refreshGate } from "../../review/refresh-gate.ts";
import { shownHead } from "../../review/shown-head.ts";
import { advancePass, awaitPlanReview, blockRun, openGate } from "../../store/run-changes.ts";
import type { PassOutcome, StepRow } from "../../store/store.ts";
import type { RunState } from "../../store/transitions.ts";
import { assertStillRunning, type RunContext, refusedMove, stepPullRequestContext } from "../context/run-context.ts";
import { invokeAgent } from "../session/invoke-agent.ts";
import { deliverStep } from "../step/deliver-step.ts";
import { finishPackage } from "../step/review-package.ts";

/**
 * One pass of a run, resumable from wherever it stands, as numbered steps:
 * 1. start: the config of the default branch in force; guidance waiting joins the pass;
 * 2. descend: the plan (multi-repository runs ask the planner; a single repository is its own plan);
 * 3. build: each planned step on its branch; a blocked step does not stop the others;
 * 4. blocked steps wait for `/lisa fix`, `/lisa skip` or `/lisa abort`;
 * 5. ascend: each touched PR gets its package, thread replies, body, and is marked ready;
 * 6. gate: queued guidance starts the next pass at once; otherwise the run waits for review.
 */
export async function executePass(ctx: RunContext): Promise<void> {
  const { gh, run } = ctx;
  const issue = { owner: run.owner, repo: run.repo };
  // The working label is a write that waits its turn in the write pacing (about a second), and
  // nothing in the pass needs it on first: the pass starts meanwhile. Later label changes queue
  // behind it so they land in order, and the pass ends only once they are on.
  let labels = setStateLabel(gh, issue, run.issue_number, "running");
  const relabel = (state: RunState): Promise<void> => {
    labels = labels.then(() => setStateLabel(gh, issue, run.issue_number, state));
    // Awaited at the end of the pass; until then a refusal must not count as unhandled.
    labels.catch(() => undefined);
    return labels;
  };
  labels.catch(() => undefined);
  try {
    await passSteps(ctx, relabel);
  } catch (error) {
    await labels.catch(() => undefined);
    throw error;
  }
  // A label GitHub refused on the way (the pass went on without it, and the ones queued behind it
  // were not written) is not the pass's failure: executeRun publishes where the run stands next.
  await labels.catch((error) => ctx.deps.log.warn({ err: error, runId: run.id }, "could not set the state label"));
}

async function passSteps(ctx: RunContext, relabel: (state: RunState) => Promise<void>): Promise<void> {
  const { deps, gh, run } = ctx;
  const { store } = deps;
  const issue = { owner: run.owner, repo: run.repo };
  ctx.publish();

  // 1 + 2
  if (ctx.pass.state === "queued") {
    // Each pass runs with the configuration on the default branch now: raising a limit is a commit.
    if (ctx.pass.number > 1) {
      const raw = await gh.readConfig(issue);
      ctx.config = parseConfig(raw);
      await store.passes.recordConfig(ctx.pass.id, raw);
    }
    if (!(await advancePass(store, ctx.pass.id, "start"))) await refusedMove(ctx, "pass start");
    await refresh(ctx);
  }
  if (ctx.pass.state === "planning") {
    await descend(ctx);
    // `review.plan`: a multi-repository plan waits for `/lisa proceed`.
    if (ctx.config.review.plan && (await store.steps.of(run.id)).some((s) => s.position === 0)) {
      if (!(await awaitPlanReview(store, run.id, ctx.pass.id))) await assertStillRunning(ctx);
      await relabel("plan_review");
      return;
    }
    if (!(await advancePass(store, ctx.pass.id, "planned"))) await refusedMove(ctx, "pass planned");
    await refresh(ctx);
  }

  // 3
  if (ctx.pass.state === "building") {
    for (const step of await store.steps.of(run.id)) {
      if (step.position === 0 || step.pass !== ctx.pass.number) continue;
      if (step.state !== "pending" && step.state !== "running") continue;
      await assertStillRunning(ctx);
      await deliverStep(ctx, step.id);
      await linkSiblingPullRequests(ctx, step.id);
    }
    await assertStillRunning(ctx);
    const blocked = (await store.steps.of(run.id)).filter((s) => s.pass === ctx.pass.number && s.state === "blocked");
    // 4
    if (blocked.length > 0) {
      // The packages first: stopped before the store says blocked, the resumed pass writes them again.
      for (const step of blocked) await finishPackage(ctx, step.id, "blocked");
      await settleLeftOut(ctx, await stepsOfPass(ctx));
      // Refused only when the run was stopped or taken over meanwhile: whoever did that shows it.
      if (!(await blockRun(store, run.id, ctx.pass.id))) await assertStillRunning(ctx);
      await relabel("blocked");
      return;
    }
    if (!(await advancePass(store, ctx.pass.id, "built"))) await refusedMove(ctx, "pass built");
    await refresh(ctx);
  }

  // 5: a pass an earlier Lisa left at its gate (it opened in two writes then) has its outcome recorded.
  const outcome = ctx.pass.state === "ascending" ? await ascend(ctx) : undefined;

  // 6: one change, so guidance stored meanwhile is either seen here (the next pass starts) or queued after.
  const opened = await openGate(store, {
    runId: run.id,
    passId: ctx.pass.id,
    worker: deps.workerName,
    ...(outcome ? { outcome } : {}),
    config: ctx.pass.config,
    maxPasses: ctx.config.limits.max_passes,
  });
  if (opened?.next) return;
  if (!opened) await refusedMove(ctx, "run gate_open");
  await relabel("review");
  // Approvals of PRs this pass left unchanged still count: the gate may already be open. Reading it can
  // wait for the next event or start-up if GitHub fails now; the pass itself is done.
  await refreshGate(deps, gh, run.id, {}, ctx.publish).catch((error) =>
    deps.log.warn({ err: error, runId: run.id }, "could not read the review gate"),
  );
}

/** Re-reads the pass from the store after a transition. */
async function refresh(ctx: RunContext): Promise<void> {
  const pass = await ctx.deps.store.passes.get(ctx.run.id, ctx.pass.number);
  if (pass) ctx.pass = pass;
}

/**
 * Fixes the pass's plan. Pass 1 of a multi-repository run asks the planner; a later pass asks it
 * again with the guidance and each PR's state. A single repository is its own plan.
 */
async function descend(ctx: RunContext): Promise<void> {
  const { deps, run } = ctx;
  const { store } = deps;
  const planning = (await store.steps.of(run.id)).find((s) => s.position === 0);
  if (planning) {
    if (ctx.pass.number > 1 && planning.pass !== ctx.pass.number) await store.steps.replan(planning.id, ctx.pass.number);
    const guidanceBefore = (await store.guidance.forPass(ctx.pass.id)).length;
    await planOnce(ctx, planning.id);
    // Guidance that arrived while the planner worked joins this pass: plan once more with it (E6).
    if ((await store.guidance.forPass(ctx.pass.id)).length > guidanceBefore) {
      await store.steps.replan(planning.id, ctx.pass.number);
      await planOnce(ctx, planning.id);
    }
    return;
  }
  if (ctx.pass.number === 1) return;
  // A single repository: the pass works on its one step (a merged PR's follow-up included).
  const [step] = await store.steps.of(run.id);
  if (step && step.pr_state !== "closed") {
    await store.passes.recordPlan(run.id, ctx.pass.number, { steps: [{ repo: `${step.owner}/${step.repo}` }] }, [
      {
        position: step.position,
        owner: step.owner,
        repo: step.repo,
        branch: step.branch,
        baseBranch: step.base_branch,
        scope: null,
      },
    ]);
  }
}

/** Runs the planning step unless it has already planned this pass. */
async function planOnce(ctx: RunContext, planningId: number): Promise<void> {
  if ((await ctx.deps.store.steps.get(planningId)).state === "delivered") return;
  const issueRepo = { owner: ctx.run.owner, repo: ctx.run.repo };
  await planRun(ctx, planningId, (iteration, prompt, cwd, mirrors) =>
    invokeAgent(ctx, planningId, iteration, "plan", prompt, {
      ref: issueRepo,
      host: { path: cwd, branch: "", startSha: "", reused: true },
      native: undefined,
      nativePath: undefined,
      // The planner reads the repositories it may plan and changes none.
      scope: { readOnly: mirrors },
    }),
  );
}

/**
 * Ascend: every PR the pass touched gets its review package and thread replies, its body with the
 * pass table, and is marked ready for review; the agents' recommendations are kept for continue.
 */
async function ascend(ctx: RunContext): Promise<PassOutcome> {
  const { deps } = ctx;
  const { store } = deps;
  const publishing = stepPullRequestContext(ctx);
  const refinements: string[] = [];
  const questions: string[] = [];
  let recommendation: "accept" | "continue" | "blocked" | null = null;
  const touched: StepRow[] = [];
  for (const record of await store.steps.allInPass(ctx.pass.id)) {
    // A run stopped or taken over meanwhile asks nobody to review its next pull request.
    await assertStillRunning(ctx);
    const step = await store.steps.get(record.step_id);
    touched.push(step);
    if (step.pr_number === null || step.pr_state !== "open") continue;
    const manifest = record.manifest;
    refinements.push(...(manifest?.refinements ?? []));
    questions.push(...(manifest?.open_questions ?? []));
    if (manifest?.recommendation === "continue" || (manifest?.recommendation && !recommendation))
      recommendation = manifest.recommendation;
    // Planned steps only: a PR the planner left out of the pass has no record here and gets no package.
    await finishPackage(ctx, step.id, step.state === "skipped" ? "skipped" : "ready");
    // Ready, and reviewers asked, once the package is there and before the check run: each write
    // waits a paced second, and the review request is the one people wait for.
    const pr = await publishReadyForReview(publishing, step);
    if (!pr) continue;
    await store.steps.record(step.id, { head_sha: await shownHead(store, step, pr.headSha) });
    // The head Lisa pushed in this pass: a human's commit on top is not hers to vouch for.
    if (record.state === "delivered" && record.end_sha) await checkAtGate(ctx, step.id, record.end_sha);
    await publishStepPullRequestBody(publishing, await store.steps.get(step.id), pr);
  }
  await settleLeftOut(ctx, touched);
  return { refinements, open_questions: questions, recommendation };
}

/** The steps this pass planned (those with a record of it), in plan order. */
async function stepsOfPass(ctx: RunContext): Promise<StepRow[]> {
  const { store } = ctx.deps;
  return Promise.all((await store.steps.allInPass(ctx.pass.id)).map((record) => store.steps.get(record.step_id)));
}

/**
 * The open pull requests of the run this pass left out (a gesture there may have started it) are
 * told so, at the gate or when the pass ends blocked, instead of a pass comment left "working".
 */
async function settleLeftOut(ctx: RunContext, touched: readonly StepRow[]): Promise<void> {
  for (const step of await ctx.deps.store.steps.of(ctx.run.id)) {
    if (step.position > 0 && step.pr_state === "open" && !touched.some((t) => t.id === step.id))
      await settleLeftOutPassComment(ctx.gh, { run: ctx.run, pass: ctx.pass, step, touched });
  }
}

/** Once a step of a plan has opened its pull request, the earlier ones link to it too. */
async function linkSiblingPullRequests(ctx: RunContext, deliveredId: number): Promise<void> {
  const steps = (await ctx.deps.store.steps.of(ctx.run.id)).filter((s) => s.position > 0);
  if (steps.length < 2) return;
  for (const step of steps) {
    if (step.id === deliveredId || step.pr_number === null || step.pr_state !== "open") continue;
    await publishStepPullRequestBody(stepPullRequestContext(ctx), step);
  }
}
