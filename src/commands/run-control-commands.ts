import { parseConfig } from "../config/parse-config.ts";
import { readConfigOf } from "../config/run-config.ts";
import { isWriter } from "../github/permissions.ts";
import { publishRunState } from "../publication/publish-state.ts";
import { publishTracking } from "../publication/publish-tracking.ts";
import { reactToIssue } from "../publication/reactions.ts";
import { choicesAfterStop } from "../reporting/after-stop.ts";
import { prRef } from "../reporting/describe-pr-gate.ts";
import { STATE_WORDS } from "../reporting/state-words.ts";
import * as changes from "../store/run-changes.ts";
import type { CommandGesture } from "./gesture.ts";
import type { Scene } from "./gesture-scene.ts";
import { guidanceItem } from "./guidance-item.ts";

/** `/lisa accept`: a writer of every repository accepts the whole run without the approvals the gate waits for. */
export async function acceptOverride(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, gh, run } = scene;
  if (!run) return "no run";
  if (gesture.isPullRequest) {
    await scene.reply("`/lisa accept` accepts the whole run: comment it on the issue. To accept this pull request, approve it.");
    return "accept on a PR";
  }
  if (run.state !== "review" && run.state !== "stopped") {
    await scene.reply(`Run ${run.id} is ${STATE_WORDS[run.state]}; \`/lisa accept\` works when it waits for review.`);
    return `accept refused in ${run.state}`;
  }
  // The override needs write on every repository whose pull request it accepts.
  for (const step of await deps.store.steps.of(run.id)) {
    if (step.pr_number === null || step.pr_state !== "open") continue;
    if (!(await isWriter(gh, { owner: step.owner, repo: step.repo }, gesture.sender))) {
      await scene.reply(`@${gesture.sender}, accepting needs write access to ${step.owner}/${step.repo} too.`);
      return "accept denied";
    }
  }
  if (!(await deps.store.runs.accept(run.id, { by: gesture.sender, via: "override" }))) return "accept lost a race";
  await publishRunState(deps, gh, run.id);
  return "accepted by override";
}

/** `/lisa fix [how]` on a blocked run: its blocked steps (or this pull request's) are queued again, with the guidance. */
export async function fixBlocked(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, gh, run, step } = scene;
  if (!run) return "no run";
  const pass = await deps.store.passes.current(run.id);
  const blocked = (await deps.store.steps.of(run.id)).filter((s) => s.state === "blocked" && (!step || s.id === step.id));
  if (!pass || blocked.length === 0) {
    await scene.reply("Nothing is blocked here.");
    return "fix: nothing blocked";
  }
  const guidance = gesture.command.text ? [guidanceItem(scene, "fix", gesture.command.text, { url: gesture.url })] : [];
  const change = { runId: run.id, passId: pass.id, stepIds: blocked.map((s) => s.id), guidance };
  if (!(await changes.fixBlocked(deps.store, change, { actor: gesture.sender }))) return "fix lost a race";
  await publishRunState(deps, gh, run.id);
  return `fix: ${blocked.length} step(s) queued again`;
}

/** `/lisa skip`: the blocked steps (or this pull request's) are left out, and the pass goes on without them. */
export async function skipBlocked(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, gh, run, step } = scene;
  if (run?.state !== "blocked") {
    await scene.reply("Nothing is blocked here, so there is nothing to skip.");
    return "skip: nothing blocked";
  }
  const stepIds = (await deps.store.steps.of(run.id))
    .filter((s) => s.state === "blocked" && (!step || s.id === step.id))
    .map((s) => s.id);
  // On a pull request whose step is not blocked there is nothing to skip; the issue's skip still ends a block without steps.
  if (step && stepIds.length === 0) {
    await scene.reply("Nothing is blocked here, so there is nothing to skip.");
    return "skip: nothing blocked";
  }
  const passId = (await deps.store.passes.current(run.id))?.id;
  const skipped = await changes.skipBlocked(deps.store, { runId: run.id, passId, stepIds }, { actor: gesture.sender });
  if (skipped === "still blocked") {
    await publishTracking(deps, gh, run.id);
    return "skip: one step skipped, others still blocked";
  }
  if (!skipped) return "skip lost a race";
  await publishRunState(deps, gh, run.id);
  return "skip: the pass goes on to review";
}

/** `/lisa retry` (or `fix` on a failed run): the run is queued again under the default branch's config of now. */
export async function retryFailed(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, gh, run } = scene;
  if (!run) return "no run";
  if (run.state !== "failed") {
    await scene.reply(`The latest run is ${STATE_WORDS[run.state]}, so there is nothing to retry.`);
    return `retry: run ${run.id} is ${run.state}`;
  }
  // The config of the default branch now, so raising a limit and retrying helps.
  let raw: unknown;
  try {
    raw = await gh.readConfig({ owner: run.owner, repo: run.repo });
    parseConfig(raw);
  } catch (error) {
    await scene.reply(`Lisa cannot retry: ${(error as Error).message}`);
    return "retry: config invalid";
  }
  if (!(await deps.store.runs.retry(run.id, raw, gesture.sender))) return "retry lost a race";
  await reactToIssue(gh, { owner: run.owner, repo: run.repo }, run.issue_number, "rocket").catch(() => undefined);
  return `retry: run ${run.id} queued again`;
}

/** `/lisa proceed`: the plan that waited for review is built as it is. */
export async function proceed(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, gh, run } = scene;
  if (run?.state !== "plan_review") {
    await scene.reply("`/lisa proceed` is for a plan waiting for review; this run has none waiting.");
    return "proceed: nothing waits";
  }
  const passId = (await deps.store.passes.current(run.id))?.id;
  if (!(await changes.proceedWithPlan(deps.store, run.id, passId, { actor: gesture.sender }))) return "proceed lost a race";
  await publishRunState(deps, gh, run.id);
  return "proceed: building the plan";
}

/**
 * `/lisa abort` (or the issue unlabeled or closed by a writer): the pass under way stops now, its
 * agents with it; the run waits to be steered again. `quietIfRefused`: a run that just came to rest
 * says nothing. `how` is the gesture, as the stopped sessions show it ("`/lisa abort`").
 */
export async function abort(
  scene: Scene,
  gesture: Pick<CommandGesture, "sender">,
  options: { quietIfRefused?: boolean; how?: string } = {},
): Promise<string> {
  const { deps, gh, run } = scene;
  if (!run) return "no run";
  const pass = await deps.store.passes.current(run.id);
  const how = options.how ?? "/lisa abort";
  if (!(await changes.abortRun(deps.store, run.id, pass?.id, { actor: gesture.sender, note: how }))) {
    if (!options.quietIfRefused)
      await scene.reply(`Run ${run.id} is ${STATE_WORDS[run.state]}; there is nothing under way to stop.`);
    return `abort refused in ${run.state}`;
  }
  await scene.controls.stopSessions(run.id);
  await publishRunState(deps, gh, run.id);
  const open = (await deps.store.steps.of(run.id)).filter((s) => s.pr_number !== null && s.pr_state === "open");
  const choices = choicesAfterStop({
    pass: run.current_pass,
    maxPasses: (await readConfigOf(deps.store, run.id)).limits.max_passes,
    canContinue: (pass?.refinements ?? []).length > 0,
    openPullRequests: open.map((s) => prRef({ repo: `${s.owner}/${s.repo}`, number: s.pr_number ?? 0, url: s.pr_url ?? "" })),
  });
  await scene.reply(`Stopped pass ${run.current_pass}. Next: ${choices.join("; ")}.`);
  return "aborted";
}
