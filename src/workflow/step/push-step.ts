import { GitError } from "../../errors.ts";
import { plainLiveText } from "../../markdown/live-text.ts";
import { redactSecrets } from "../../markdown/redact-secrets.ts";
import * as stepChanges from "../../store/step-changes.ts";
import { remoteHead } from "../../workspace/mirror-history.ts";
import { pushBranch, rebaseOnto } from "../../workspace/push-branch.ts";
import { syncMirror } from "../../workspace/sync-mirror.ts";
import { BlockedError, freshToken, type RunContext, refusedMove } from "../context/run-context.ts";
import { type Checkout, workDir } from "../session/invoke-agent.ts";
import { verifyGates } from "./build-step.ts";
import { commitPending } from "./commit-changes.ts";
import { ownCommits } from "./own-commits.ts";
import { dropWorkflowChanges, keepWorkflowsUnpushed, refusedWorkflow, workflowBlockReason } from "./workflow-guard.ts";

// A step's pushes: its work to its branch (deliver-step's push phase), or a blocked attempt to
// Lisa's WIP branch, so the pull request's head has always passed the gates.

/** Lisa's own branch for a blocked step's attempt, so a PR head has always passed the gates. */
export const wipBranch = (branch: string) => `${branch}--wip`;

/**
 * Pushes without force. When a human pushed meanwhile, git refuses; Lisa then fetches, replays its
 * unpublished commits on top, runs the gates again and pushes. A conflict blocks the step, and so
 * does a change to a workflow, which GitHub refuses from Lisa's App (workflow-guard.ts).
 */
export async function pushReconciling(ctx: RunContext, stepId: number, checkout: Checkout): Promise<void> {
  const { deps } = ctx;
  const step = await deps.store.steps.get(stepId);
  const dir = workDir(checkout);
  try {
    await ownCommits(dir, deps.workspace.author, ctx.secrets);
    await keepWorkflowsUnpushed(ctx, dir);
    await pushBranch(deps.workspace, checkout.ref, { path: dir, branch: step.branch }, await freshToken(ctx), {
      secrets: ctx.secrets,
    });
    return;
  } catch (error) {
    if (!(error instanceof GitError) || !/rejected|non-fast-forward|fetch first/i.test(error.message)) throw error;
    throwIfWorkflowRefused(error);
  }
  await syncMirror(deps.workspace, checkout.ref, await freshToken(ctx));
  const rebased = await rebaseOnto(dir, `refs/remotes/origin/${step.branch}`);
  if (!rebased.ok) {
    throw new BlockedError(
      `Someone pushed to \`${step.branch}\` while Lisa worked, and Lisa's commits conflict with theirs in ${rebased.conflicts.map((c) => `\`${c}\``).join(", ") || "some files"}.`,
    );
  }
  await deps.store.events.add(ctx.run.id, "rebased_onto_human_push", { note: `${step.owner}/${step.repo} ${step.branch}` });
  await verifyGates(ctx, step.id, checkout);
  await ownCommits(dir, deps.workspace.author, ctx.secrets);
  await keepWorkflowsUnpushed(ctx, dir);
  try {
    await pushBranch(deps.workspace, checkout.ref, { path: dir, branch: step.branch }, await freshToken(ctx), {
      secrets: ctx.secrets,
    });
  } catch (error) {
    if (error instanceof GitError) throwIfWorkflowRefused(error);
    throw error;
  }
}

/**
 * GitHub's refusal of a workflow change, should it come though Lisa looked (an installation may
 * hold fewer permissions than she expects), blocks the step as her own look does: no rebase, no retry.
 */
function throwIfWorkflowRefused(error: GitError): void {
  const workflow = refusedWorkflow(error.message);
  if (workflow !== undefined) throw new BlockedError(workflowBlockReason([workflow]));
}

/**
 * A blocked step keeps the PR at its last verified head: the attempt is committed to Lisa's WIP
 * branch (replaced only where Lisa left it, so a human push there is never clobbered).
 */
export async function blockAttempt(ctx: RunContext, stepId: number, checkout: Checkout, reason: string): Promise<void> {
  const { deps, pass } = ctx;
  const { store } = deps;
  const step = await store.steps.get(stepId);
  const dir = workDir(checkout);
  const wip = wipBranch(step.branch);
  let wipSha: string | null = null;
  try {
    // The reason may quote the agent; in a commit message GitHub still acts on closing keywords.
    await commitPending(
      dir,
      `Lisa's blocked attempt, pass ${pass.number}\n\n${plainLiveText(redactSecrets(reason, ctx.secrets)).slice(0, 500)}`,
    );
    await ownCommits(dir, deps.workspace.author, ctx.secrets);
    // GitHub would refuse the whole attempt for its workflow changes: the rest of it is pushed.
    await dropWorkflowChanges(ctx, dir);
    const lease = (await remoteHead(deps.workspace, checkout.ref, wip)) ?? "";
    // What was pushed, as pushBranch says: the mirror's copy of the branch moves only at its next fetch.
    wipSha = await pushBranch(deps.workspace, checkout.ref, { path: dir, branch: wip }, await freshToken(ctx), {
      lease,
      secrets: ctx.secrets,
    });
  } catch (error) {
    deps.log.warn({ err: error, stepId }, "could not push the blocked attempt");
  }
  const at = { runId: ctx.run.id, stepId, passId: pass.id };
  if (!(await stepChanges.blockStep(store, at, reason, { wip_sha: wipSha }))) await refusedMove(ctx, "step blocked");
}
