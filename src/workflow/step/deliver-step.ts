// Over 250 lines: commit, secret scan, push and pull request of one step, in the order a delivery must keep.
import { existsSync } from "node:fs";
import { isCiGate } from "../../ci/ci-failure.ts";
import { SecretInPushError } from "../../errors.ts";
import { isWriter } from "../../github/permissions.ts";
import { composePrTitle } from "../../markdown/compose-pr-title.ts";
import { checkWaiting } from "../../publication/check-runs.ts";
import { issueRefFor } from "../../publication/issue-ref.ts";
import { publishStepPullRequest, publishWorkingDraft } from "../../publication/step-pull-request.ts";
import * as stepChanges from "../../store/step-changes.ts";
import type { StepRow } from "../../store/store.ts";
import { createWorktree } from "../../workspace/create-worktree.ts";
import { git } from "../../workspace/git.ts";
import { humanCommits, remoteHead } from "../../workspace/mirror-history.ts";
import { removeWorktree } from "../../workspace/remove-worktree.ts";
import { syncMirror } from "../../workspace/sync-mirror.ts";
import { mirrorPath } from "../../workspace/workspace-paths.ts";
import { recordAnchors } from "../checks/anchors.ts";
import { ciGate, hasWorkflows } from "../checks/ci-gate.ts";
import {
  BlockedError,
  freshToken,
  type RunContext,
  refusedMove,
  StepStoppedError,
  stepPullRequestContext,
} from "../context/run-context.ts";
import { type Checkout, chooseNativeWorktree, workDir } from "../session/invoke-agent.ts";
import { withLiveCheck } from "../session/live-check.ts";
import { takeManifest } from "../session/read-manifest.ts";
import { buildStep } from "./build-step.ts";
import { changedFiles, commitPending, commitsSince } from "./commit-changes.ts";
import { stillOpen } from "./known-pull-request.ts";
import { proposeMemory } from "./memory.ts";
import { blockAttempt, pushReconciling, wipBranch } from "./push-step.ts";
import { openPackage } from "./review-package.ts";

/** Phases whose work exists only in the step's worktree until it is pushed. */
const WORK_ON_DISK: ReadonlySet<string> = new Set(["agent", "gates", "commit", "push"]);

/**
 * One step in one pass, from wherever it stands: worktree on the branch's remote head (human
 * commits included) → agent ⇄ gates → commit → push (fast-forward only, rebasing Lisa's unpublished
 * commits onto a human push) → pull request. Work the agent cannot finish blocks the step; its
 * attempt goes to a WIP branch and the run goes on with the next step.
 */
export async function deliverStep(ctx: RunContext, stepId: number): Promise<void> {
  const { deps, gh, pass } = ctx;
  const { store } = deps;
  let step = await store.steps.get(stepId);
  const ref = { owner: step.owner, repo: step.repo };
  if (step.pr_number !== null && step.phase === "workspace" && !(await stillOpen(ctx, step))) return;
  step = await store.steps.get(stepId);

  // Checked before checkout: a plan never reaches a repository its requester cannot write to.
  if (!(await isWriter(gh, ref, pass.requested_by))) {
    const reason = `@${pass.requested_by} has no write access to ${ref.owner}/${ref.repo}, so Lisa left it out.`;
    const at = { runId: ctx.run.id, stepId, passId: pass.id };
    if (!(await stepChanges.refuseStep(store, at, reason, pass.requested_by))) await refusedMove(ctx, "step refused");
    return;
  }
  if (!(await stepChanges.startStep(store, stepId))) await refusedMove(ctx, "step start");
  ctx.publish();
  await syncMirror(deps.workspace, ref, await freshToken(ctx));
  const base = step.base_branch ?? ctx.config.base_branch ?? (await gh.defaultBranch(ref));
  await store.steps.record(stepId, { base_branch: base });
  const record = await store.steps.inPass(stepId, pass.id);
  // `/lisa fix` resumes from the blocked attempt, which includes what humans pushed to the WIP branch.
  const resumeWip = Boolean(record?.block_reason);
  const worktree = await createWorktree(deps.workspace, ref, {
    branch: step.branch,
    base,
    dir: `run-${ctx.run.id}-step-${step.position}`,
    ...(resumeWip ? { from: wipBranch(step.branch) } : {}),
  });
  const startSha = step.start_sha ?? (await remoteHead(deps.workspace, ref, step.branch)) ?? worktree.startSha;
  await store.steps.record(stepId, { worktree: worktree.path, start_sha: startSha });
  if (!worktree.reused && WORK_ON_DISK.has(step.phase) && (await commitsSince(worktree.path, startSha)) === 0) {
    // The step was under way in a worktree that is gone (its worker died on another machine, or
    // the disk budget of stopped runs took it), and none of that work was pushed: the session runs
    // again, from scratch, and the issue is told.
    await store.steps.redo(stepId);
    await store.events.add(ctx.run.id, "work_redone", {
      note: `The work of ${ref.owner}/${ref.repo}'s last session was not pushed and its worktree is gone, so the session runs again.`,
    });
    ctx.publish();
  }
  if (record && !record.start_sha) {
    await store.steps.recordInPass(record.id, {
      start_sha: startSha,
      human_shas: await humansSinceLastPass(ctx, step, startSha),
    });
  }
  step = await store.steps.get(stepId);
  if (step.pr_number !== null) {
    await openPackage(ctx, stepId);
    await publishWorkingDraft(stepPullRequestContext(ctx), step);
  }
  const checkout: Checkout = {
    ref,
    host: worktree,
    native: await chooseNativeWorktree(ctx, step),
    nativePath: step.native_worktree && existsSync(step.native_worktree) ? step.native_worktree : undefined,
    scope: { mirrors: [mirrorPath(deps.workspace, ref)] },
  };
  try {
    // A failing check of the pull request's CI sends the step back to its agent, in this pass.
    for (let ciFailed = true; ciFailed; ) ciFailed = await deliver(ctx, stepId, checkout, base);
  } catch (error) {
    if (error instanceof StepStoppedError) {
      // Its pull request was closed mid-pass: the step is dropped (unless the gate's read did it first), the others go on.
      const dropped = await stepChanges.dropRunningStep(store, { runId: ctx.run.id, stepId, passId: pass.id });
      if (!dropped) deps.log.info({ runId: ctx.run.id, stepId }, "the step was dropped already (the gate's read)");
    } else if (error instanceof BlockedError) {
      await blockAttempt(ctx, stepId, checkout, error.message);
    } else throw error;
  }
  if (checkout.native && checkout.nativePath) {
    await removeWorktree(deps.workspace, ref, { path: checkout.nativePath, branch: checkout.native.branch });
  }
  await removeWorktree(deps.workspace, ref, worktree);
}

/** One round of the step from its phase on; true when the pull request's CI failed and the agent is to fix it. */
async function deliver(ctx: RunContext, stepId: number, checkout: Checkout, base: string): Promise<boolean> {
  const { deps, pass, run } = ctx;
  const { store } = deps;
  const step = () => store.steps.get(stepId);
  const ref = checkout.ref;
  const dir = () => workDir(checkout);

  if (["workspace", "agent", "gates"].includes((await step()).phase)) {
    const current = await step();
    await withLiveCheck(ctx, current, (live) => buildStep(ctx, current, checkout, live));
    await store.steps.enterPhase(stepId, "commit");
  }
  if ((await step()).phase === "commit") {
    // After a CI fix (the agent's reflection on it is recorded), the pass's manifest is already
    // recorded: what the fix writes amends it, field by field.
    const ciFixed = (await store.learnings.reflections(stepId, pass.number)).some((r) => isCiGate(r.gate));
    const taken = await takeManifest(dir(), ciFixed ? ((await step()).manifest ?? undefined) : undefined);
    if (taken.manifest) await store.steps.record(stepId, { manifest: taken.manifest });
    if (!taken.manifest && taken.problem) deps.log.warn({ runId: run.id, problem: taken.problem }, "agent manifest ignored");
    const manifest = (await step()).manifest ?? undefined;
    const title = composePrTitle({ title: run.issue_title }, manifest, ctx.secrets);
    await commitPending(dir(), `${title}\n\nMade by Lisa for ${issueRefFor(run, await step())}, pass ${pass.number}.`);
    if (taken.manifest?.recommendation === "blocked") {
      const blocked = taken.manifest.blocked;
      throw new BlockedError(
        blocked ? `The agent is blocked: ${blocked.needed} (tried: ${blocked.tried})` : "The agent says it is blocked.",
      );
    }
    if ((await commitsSince(dir(), (await step()).start_sha ?? base)) === 0) {
      // A later pass may rightly change nothing here, if the agent says why; otherwise a human must look.
      if (pass.number > 1 && taken.manifest?.no_change_reason) {
        const at = { stepId, passId: pass.id };
        if (!(await stepChanges.finishStep(store, at, "unchanged", (await step()).start_sha)))
          await refusedMove(ctx, "step unchanged");
        return false;
      }
      throw new BlockedError(`The agent finished without changing anything in ${ref.owner}/${ref.repo}.`);
    }
    await proposeMemory(ctx, await step(), dir(), manifest);
    await store.steps.enterPhase(stepId, "push");
    ctx.publish();
  }
  if ((await step()).phase === "push") {
    try {
      await pushReconciling(ctx, stepId, checkout);
    } catch (error) {
      if (!(error instanceof SecretInPushError)) throw error;
      // None of that work may be published, and a retry must not find it again: it is dropped, and
      // the step goes back to its agent, from the last commit that was published: the head Lisa
      // pushed (a CI fix comes after one), else where the pass started.
      const published = (await step()).head_sha ?? (await step()).start_sha ?? base;
      await git(dir(), ["reset", "--hard", "--quiet", published]);
      await git(dir(), ["clean", "-fd", "--quiet"]);
      await store.steps.enterPhase(stepId, "agent");
      throw new SecretInPushError(
        `${error.message} Lisa discarded that work; \`/lisa retry\` runs the agent again from the last published commit.`,
      );
    }
    await store.steps.enterPhase(stepId, "pull_request");
    ctx.publish();
  }
  if ((await step()).phase === "pull_request") {
    const start = (await step()).start_sha ?? base;
    await store.steps.record(stepId, { changed_files: await changedFiles(dir(), `refs/remotes/origin/${base}`) });
    const record = await store.steps.inPass(stepId, pass.id);
    if (record) {
      await store.steps.recordInPass(record.id, {
        changed_files: await changedFiles(dir(), start),
        commits: await commitsSince(dir(), start),
      });
    }
    // The pass's last step opens the gate right after it: its PR is written as it will read there,
    // and opens ready for review, instead of a draft marked ready and edited a moment later.
    const gateNext = !(await stepsStillOpen(ctx, stepId));
    const published = await publishStepPullRequest(stepPullRequestContext(ctx), await step(), { base, gateNext });
    if (published.state !== "open") {
      const closed = { pr_number: published.number, pr_url: published.url, pr_state: published.state };
      if (!(await stepChanges.finishStep(store, { stepId, passId: pass.id }, "dropped", (await step()).start_sha, closed)))
        await refusedMove(ctx, "step dropped");
      return false;
    }
    // The commit Lisa pushed (the worktree's HEAD until the step ends), not the PR's head: GitHub
    // updates that a moment after a push, and may still show the one before.
    const pushed = (await git(dir(), ["rev-parse", "--verify", "--end-of-options", "HEAD^{commit}"])).trim();
    await store.steps.record(stepId, { head_sha: pushed, draft: published.current.draft ? 1 : 0 });
    await store.steps.enterPhase(stepId, "ci");
  }
  const number = (await step()).pr_number;
  if ((await step()).phase === "ci" && number !== null) {
    const pushed = (await git(dir(), ["rev-parse", "--verify", "--end-of-options", "HEAD^{commit}"])).trim();
    const workflows = hasWorkflows(dir());
    const ciFailure = await ciGate(ctx, stepId, { ref, number, sha: pushed, base, workflows });
    if (ciFailure) {
      // Kept before the phase moves: a Lisa restarted from here on still gives the agent the report.
      await store.steps.record(stepId, { ci_failure: ciFailure });
      await store.steps.enterPhase(stepId, "agent");
      return true;
    }
    await recordAnchors(ctx, stepId, dir());
    if (!(await stepChanges.finishStep(store, { stepId, passId: pass.id }, "delivered", pushed)))
      await refusedMove(ctx, "step delivered");
    // While later steps of the plan run, the package says this PR waits for them. After the last
    // step the gate opens at once and writes the package then: writing it twice is a wasted write.
    if (await laterSteps(ctx, (await step()).position)) {
      await checkWaiting(ctx, stepId, pushed);
      if (pass.number === 1) await openPackage(ctx, stepId);
    }
  }
  return false;
}

/** Whether steps after `position` are still to be built in this pass. */
const laterSteps = async (ctx: RunContext, position: number) =>
  (await ctx.deps.store.steps.of(ctx.run.id)).some((s) => s.position > position && s.state === "pending");

/** Whether a step of this pass other than `stepId` is still to be built, or blocked: the gate waits for it. */
const stepsStillOpen = async (ctx: RunContext, stepId: number) =>
  (await ctx.deps.store.steps.of(ctx.run.id)).some(
    (s) => s.id !== stepId && s.position > 0 && s.pass === ctx.pass.number && ["pending", "running", "blocked"].includes(s.state),
  );

/** Commits people pushed to the branch since Lisa's last pass there. */
async function humansSinceLastPass(ctx: RunContext, step: StepRow, head: string) {
  const previous = (await ctx.deps.store.steps.history(step.id)).filter((r) => r.pass_id !== ctx.pass.id && r.end_sha).at(-1);
  if (!previous?.end_sha || previous.end_sha === head) return [];
  return humanCommits(ctx.deps.workspace, { owner: step.owner, repo: step.repo }, { since: previous.end_sha, until: head });
}
