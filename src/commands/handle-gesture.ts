import { labelOf, parseConfig } from "../config/parse-config.ts";
import { readConfigOf } from "../config/run-config.ts";
import type { CoreDeps } from "../deps.ts";
import { replyOnce } from "../github/ensure-comment.ts";
import type { GitHubPort, RepoRef } from "../github/github-port.ts";
import { isWriter } from "../github/permissions.ts";
import { sanitizeMarkdown } from "../markdown/sanitize-markdown.ts";
import { publishRunState } from "../publication/publish-state.ts";
import { publishTracking } from "../publication/publish-tracking.ts";
import { refreshGate } from "../review/refresh-gate.ts";
import * as changes from "../store/run-changes.ts";
import type { NewGuidance, PassRow, RunRow, StepRow } from "../store/store.ts";
import { isAncestor, syncMirror } from "../workspace/workspace.ts";
import type { CommandGesture, Gesture, PullRequestGesture, ReviewGesture } from "./gesture.ts";
import { HELP } from "./help.ts";
import { parseCommand } from "./parse-command.ts";

/** What the worker lets a command do to runs it is executing. */
export interface RunControls {
  /** Stops the live agent sessions of a run (or of one of its steps) now. */
  stopSessions(runId: number, stepId?: number): Promise<void>;
  /**
   * Lets a write that only tells someone Lisa heard them (👀) wait for its turn in GitHub's write
   * pacing without holding up the commands and runs after it.
   */
  acknowledge(write: Promise<void>): void;
}

/** Guidance kept per pass: the prompt and the package must stay readable. */
const MAX_GUIDANCE_CHARS = 30_000;

interface Scene {
  deps: CoreDeps;
  gh: GitHubPort;
  deliveryId: string;
  /** The repository where the gesture happened. */
  ref: RepoRef;
  gesture: Gesture;
  run: RunRow | undefined;
  /** The step whose pull request it happened on. */
  step: StepRow | undefined;
  controls: RunControls;
  reply(text: string): Promise<void>;
}

/**
 * Acts on a human gesture stored by a webhook handler: a `/lisa` command, a review, or a change to
 * one of Lisa's pull requests. Only writers on the repository where it happened count; commands of
 * others get a polite answer, their reviews are ignored. Returns the outcome in words for the log.
 */
export async function handleGesture(
  deps: CoreDeps,
  deliveryId: string,
  gesture: Gesture,
  controls: RunControls,
): Promise<string> {
  const gh = await deps.github(gesture.installationId);
  const ref = { owner: gesture.owner, repo: gesture.repo };
  const found = gesture.isPullRequest
    ? await deps.store.steps.byPullRequest(gesture.owner, gesture.repo, gesture.number)
    : undefined;
  const scene: Scene = {
    deps,
    gh,
    deliveryId,
    ref,
    gesture,
    run: gesture.isPullRequest ? found?.run : await deps.store.runs.latestFor(gesture.owner, gesture.repo, gesture.number),
    step: found?.step,
    controls,
    reply: (text) => replyOnce(gh, ref, gesture.number, deliveryId, text),
  };
  switch (gesture.kind) {
    case "pull_request":
      return onPullRequestChange(scene, gesture);
    case "review":
      return onReview(scene, gesture);
    case "command":
      return onCommand(scene, gesture);
  }
}

async function onPullRequestChange(scene: Scene, gesture: PullRequestGesture): Promise<string> {
  const { deps, gh, run, step } = scene;
  if (!run || !step) return "ignored: not one of Lisa's pull requests";
  if (gesture.action === "synchronize") {
    await deps.store.events.add(run.id, "human_push", {
      actor: gesture.sender,
      note: `${gesture.owner}/${gesture.repo}#${gesture.number} ${gesture.before?.slice(0, 7)}..${gesture.after?.slice(0, 7)}`,
    });
    if (gesture.before && gesture.after && (await rewritesHistory(scene, gesture.before, gesture.after))) {
      // Rule 20: Lisa never restores what a human force-pushed away; it says what disappeared.
      await deps.store.events.add(run.id, "force_push", { actor: gesture.sender, note: `${gesture.before}..${gesture.after}` });
      await scene.reply(
        `@${gesture.sender} rewrote this branch: \`${gesture.before.slice(0, 7)}\` and the commits before it that are not in \`${gesture.after.slice(0, 7)}\` are no longer on it. Lisa does not restore them; the next pass starts from \`${gesture.after.slice(0, 7)}\`.`,
      );
    }
  }
  if (gesture.action === "closed" && !gesture.merged && step.state === "running") {
    // The PR was closed while Lisa worked on it: the work is not wanted, stop it now.
    await scene.controls.stopSessions(run.id, step.id);
  }
  const verdict = await refreshGate(deps, gh, run.id, { actor: gesture.sender, note: `pull_request ${gesture.action}` });
  return `pull request ${gesture.action}: gate ${verdict ?? "closed"}`;
}

/** Whether a push replaced history: the old head is no longer an ancestor of the new one. */
async function rewritesHistory(scene: Scene, before: string, after: string): Promise<boolean> {
  const { deps, gh, ref } = scene;
  await syncMirror(deps.workspace, ref, await gh.installationToken());
  return !(await isAncestor(deps.workspace, ref, before, after));
}

async function onReview(scene: Scene, gesture: ReviewGesture): Promise<string> {
  const { deps, gh, run, ref } = scene;
  if (!run) return "ignored: not one of Lisa's pull requests";
  if (gesture.action === "dismissed") {
    const verdict = await refreshGate(deps, gh, run.id, { actor: gesture.sender, note: "review dismissed" });
    return `review dismissed: gate ${verdict}`;
  }
  // A review is addressed to people: a non-writer's counts for nothing and gets no answer.
  if (!(await isWriter(gh, ref, gesture.sender))) return `ignored: ${gesture.sender} is not a writer`;
  if (gesture.state === "approved") {
    const pr = await gh.getPullRequest(ref, gesture.number);
    if (gesture.commitId && gesture.commitId !== pr.headSha) {
      await scene.reply(
        `@${gesture.sender} approved \`${gesture.commitId.slice(0, 7)}\`, but this pull request is now at \`${pr.headSha.slice(0, 7)}\` (pass ${run.current_pass}). Approve again to accept it.`,
      );
      return "approval of an older head";
    }
    if (run.state === "running" || run.state === "queued" || run.state === "blocked") return "approval recorded for the gate";
    const verdict = await refreshGate(deps, gh, run.id, { actor: gesture.sender, note: "approved" });
    return `approved: gate ${verdict}`;
  }
  // Changes requested: it blocks accepting whatever happens, and (by default) starts the next pass.
  const config = await readConfigOf(deps.store, run.id);
  if (config.review.changes_requested === "ignore") {
    await refreshGate(deps, gh, run.id, { actor: gesture.sender, note: "changes requested" });
    return "changes requested: gate only";
  }
  const inline = await gh.listReviewComments(ref, gesture.number, gesture.reviewId);
  const items: NewGuidance[] = [];
  if (gesture.body.trim()) items.push(guidanceItem(scene, "review", gesture.body, { url: gesture.url }));
  for (const comment of inline) {
    // An inline `/lisa …` arrives as its own command too; taking it here as well would count it twice.
    if (parseCommand(comment.body)) continue;
    items.push(
      guidanceItem(scene, "inline", comment.body, {
        url: comment.url,
        githubId: comment.id,
        path: comment.path,
        line: comment.line ?? comment.originalLine,
        diffHunk: comment.diffHunk,
        outdated: comment.line === null,
      }),
    );
  }
  if (items.length === 0) {
    await refreshGate(deps, gh, run.id, { actor: gesture.sender, note: "changes requested" });
    await scene.reply(`@${gesture.sender}, what should change? Add inline comments or \`/lisa redirect <what to change>\`.`);
    return "changes requested without guidance";
  }
  const comments = inline.length ? ` (${inline.length} inline comment${inline.length === 1 ? "" : "s"})` : "";
  return requestPass(scene, { trigger: "review", by: gesture.sender, items, what: `@${gesture.sender}'s review${comments}` });
}

async function onCommand(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, gh, ref, run } = scene;
  const { command } = gesture;
  if (!(await isWriter(gh, ref, gesture.sender))) {
    await scene.reply(`@${gesture.sender}, only people with write access to this repository can steer Lisa.`);
    return `denied: ${gesture.sender} is not a writer`;
  }
  if (gesture.isPullRequest && !scene.step) {
    await scene.reply("This pull request isn't one of Lisa's, so Lisa does nothing here. Comment on the issue instead.");
    return "not one of Lisa's pull requests";
  }
  if (gesture.commentId !== null) {
    scene.controls.acknowledge(
      gh
        .addCommentReaction(ref, gesture.commentId, gesture.where === "inline" ? "review" : "issue", "eyes")
        .catch((error) => deps.log.warn({ err: error }, "could not react to the command")),
    );
  }
  if (command.name === "help") {
    await scene.reply(HELP);
    return "help";
  }
  if (command.name === "unknown") {
    await scene.reply(`Lisa does not know \`/lisa ${command.word}\`.\n\n${HELP}`);
    return "unknown";
  }
  if (!run) {
    await scene.reply("Lisa has no run for this issue. Add the label to start one.");
    return `${command.name}: no run`;
  }
  switch (command.name) {
    case "status": {
      await refreshGate(deps, gh, run.id).catch((error) => deps.log.warn({ err: error }, "could not read the gate"));
      const now = (await deps.store.runs.get(run.id)) ?? run;
      await scene.reply(
        `Run ${now.id} is ${now.state}, pass ${now.current_pass}; the tracking comment on the issue has the details.`,
      );
      return "status";
    }
    case "redirect": {
      if (!command.text) {
        await scene.reply("Say what to change: `/lisa redirect <what to change>`.");
        return "redirect without guidance";
      }
      const items = [guidanceItem(scene, "command", command.text, { url: gesture.url, ...inlinePlace(gesture) })];
      if (gesture.where !== "inline" && scene.step) items.push(...(await inlineCommentsSinceLastPackage(scene, gesture)));
      return requestPass(scene, { trigger: "redirect", by: gesture.sender, items, what: `@${gesture.sender}'s redirect` });
    }
    case "continue": {
      const pass = await deps.store.passes.current(run.id);
      const refinements = JSON.parse(pass?.refinements ?? "[]") as string[];
      if (refinements.length === 0) {
        await scene.reply(
          `The agent proposed no refinements in pass ${run.current_pass}; say what to change with \`/lisa redirect <what to change>\`.`,
        );
        return "continue without refinements";
      }
      const items = refinements.map((text) => guidanceItem(scene, "continue", text, { url: gesture.url }));
      return requestPass(scene, { trigger: "continue", by: gesture.sender, items, what: `@${gesture.sender}'s continue` });
    }
    case "accept":
      return acceptOverride(scene, gesture);
    case "fix":
    case "retry":
      if (run.state === "blocked") return fixBlocked(scene, gesture);
      return retryFailed(scene, gesture);
    case "skip":
      return skipBlocked(scene, gesture);
    case "abort":
      return abort(scene, gesture);
    case "proceed":
      return proceed(scene, gesture);
  }
}

/** Where an inline command was said, so the agent sees the line it is about. */
function inlinePlace(gesture: CommandGesture) {
  if (!gesture.inline || gesture.commentId === null) return {};
  return {
    githubId: gesture.commentId,
    path: gesture.inline.path,
    line: gesture.inline.line,
    diffHunk: gesture.inline.diffHunk,
    outdated: gesture.inline.outdated,
  };
}

/**
 * Rule 9: a redirect on a PR takes with it the writers' inline comments written on that PR since
 * its last review package and before the command (text edited after the command is not used).
 */
async function inlineCommentsSinceLastPackage(scene: Scene, gesture: CommandGesture): Promise<NewGuidance[]> {
  const { gh, ref, step, deps } = scene;
  if (!step?.pr_number) return [];
  // Since the last package: the end of the pass that last delivered to this PR.
  const lastPass = (await deps.store.steps.history(step.id)).filter((r) => r.end_sha !== null).at(-1);
  const finished = lastPass
    ? (await deps.store.passes.of(step.run_id)).find((p) => p.number === lastPass.number)?.finished_at
    : null;
  const since = new Date(finished ?? step.created_at).toISOString();
  const comments = await gh.listPullComments(ref, step.pr_number, since);
  const items: NewGuidance[] = [];
  for (const comment of comments) {
    if (comment.userType === "Bot" || comment.updatedAt > gesture.createdAt) continue;
    if (!(await isWriter(gh, ref, comment.user))) continue;
    items.push(
      guidanceItem(scene, "inline", comment.body, {
        author: comment.user,
        url: comment.url,
        githubId: comment.id,
        path: comment.path,
        line: comment.line ?? comment.originalLine,
        diffHunk: comment.diffHunk,
        outdated: comment.line === null,
      }),
    );
  }
  deps.log.info({ count: items.length }, "inline comments taken with the redirect");
  return items;
}

function guidanceItem(
  scene: Scene,
  source: NewGuidance["source"],
  text: string,
  extra: {
    author?: string;
    url?: string | null;
    githubId?: number;
    path?: string;
    line?: number | null;
    diffHunk?: string;
    outdated?: boolean;
  },
): NewGuidance {
  const { gesture } = scene;
  return {
    delivery_id: scene.deliveryId,
    source,
    owner: gesture.isPullRequest ? gesture.owner : null,
    repo: gesture.isPullRequest ? gesture.repo : null,
    pr_number: gesture.isPullRequest ? gesture.number : null,
    author: extra.author ?? gesture.sender,
    url: extra.url ?? null,
    // One row per delivery and comment: a redelivered webhook adds nothing.
    github_id: extra.githubId ?? null,
    path: extra.path ?? null,
    line: extra.line ?? null,
    diff_hunk: extra.diffHunk ? extra.diffHunk.slice(-2_000) : null,
    outdated: extra.outdated ? 1 : 0,
    body: sanitizeMarkdown(text, { maxLength: 8_000 }),
  };
}

/**
 * Redirect, change request and continue all land here: pass N+1 now when the run waits, queued
 * behind the pass under way otherwise, refused past `limits.max_passes` (read from the default
 * branch now, so raising it is an ordinary commit).
 */
async function requestPass(
  scene: Scene,
  request: { trigger: PassRow["trigger"]; by: string; items: NewGuidance[]; what: string },
): Promise<string> {
  const { deps, gh, run } = scene;
  if (!run) return "no run";
  const issueRef = { owner: run.owner, repo: run.repo };
  let raw: unknown;
  let config: ReturnType<typeof parseConfig>;
  try {
    raw = await gh.readConfig(issueRef);
    config = parseConfig(raw);
  } catch (error) {
    await scene.reply(
      `Lisa cannot start another pass: ${(error as Error).message}\n\nFix the file on the default branch and ask again.`,
    );
    return "config invalid";
  }
  const items = capGuidance(request.items);
  const current = (await deps.store.runs.get(run.id)) ?? run;
  if (current.state === "merged" || current.state === "closed") {
    await scene.reply(
      `Run ${run.id} has ended (${current.state}). Add the \`${labelOf(raw)}\` label to the issue again to start a new one.`,
    );
    return "run ended";
  }
  if (current.state === "plan_review") {
    // The plan waits for review: the same pass plans again, with this guidance.
    const pass = await deps.store.passes.current(run.id);
    const planning = (await deps.store.steps.of(run.id)).find((s) => s.position === 0);
    if (!pass || !planning) return "no plan waits";
    const change = { runId: run.id, passId: pass.id, passNumber: pass.number, planningStepId: planning.id, guidance: items };
    if (!(await changes.replanRun(deps.store, change, { actor: request.by }))) return "replan lost a race";
    await publishRunState(deps, gh, run.id);
    await scene.reply(`Lisa plans pass ${pass.number} again with ${request.what}.`);
    return "plan: planning again";
  }
  if (current.state === "running" || current.state === "queued") {
    const pass = await deps.store.passes.current(run.id);
    // Guidance joins a pass whose plan is not fixed yet (the planner runs again with it); after
    // that it waits for one next pass.
    const joins = pass?.state === "queued" || pass?.state === "planning" ? pass.id : undefined;
    await deps.store.guidance.add(run.id, items, joins);
    const queued = (await deps.store.guidance.queued(run.id)).length;
    await scene.reply(
      joins
        ? `Taken into pass ${current.current_pass}: its plan is not fixed yet, so the plan will include it.`
        : `Queued for pass ${current.current_pass + 1}, after the current pass (${queued} request${queued === 1 ? "" : "s"} waiting).`,
    );
    await publishTracking(deps, gh, run.id);
    return joins ? "guidance joined the pass" : "guidance queued";
  }
  if (current.current_pass >= config.limits.max_passes) {
    await scene.reply(
      `Pass ${current.current_pass} of ${config.limits.max_passes} is done (\`limits.max_passes\`). Approve the pull requests to accept them, raise the limit in \`.github/lisa.yml\`, or close them.`,
    );
    return "max passes reached";
  }
  const pass = await deps.store.passes.startNext(run.id, {
    trigger: request.trigger,
    requestedBy: request.by,
    config: JSON.stringify(raw ?? {}),
    guidance: items,
  });
  if (!pass) {
    await scene.reply(`Run ${run.id} is ${current.state}; it cannot start another pass now.`);
    return `refused in ${current.state}`;
  }
  await publishRunState(deps, gh, run.id);
  await scene.reply(`⏳ Pass ${pass.number} started by ${request.what}.`);
  return `pass ${pass.number} queued`;
}

/** At most 50 items and 30,000 characters per request: the prompt and the package must stay readable. */
function capGuidance(items: NewGuidance[]): NewGuidance[] {
  let total = 0;
  return items.slice(0, 50).filter((item) => {
    total += item.body.length;
    return total <= MAX_GUIDANCE_CHARS;
  });
}

async function acceptOverride(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, gh, run } = scene;
  if (!run) return "no run";
  if (gesture.isPullRequest) {
    await scene.reply("`/lisa accept` accepts the whole run: comment it on the issue. To accept this pull request, approve it.");
    return "accept on a PR";
  }
  if (run.state !== "review" && run.state !== "stopped") {
    await scene.reply(`Run ${run.id} is ${run.state}; \`/lisa accept\` works when it waits for review.`);
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

async function fixBlocked(scene: Scene, gesture: CommandGesture): Promise<string> {
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

async function skipBlocked(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, gh, run, step } = scene;
  if (run?.state !== "blocked") {
    await scene.reply("Nothing is blocked here, so there is nothing to skip.");
    return "skip: nothing blocked";
  }
  const stepIds = (await deps.store.steps.of(run.id))
    .filter((s) => s.state === "blocked" && (!step || s.id === step.id))
    .map((s) => s.id);
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

async function retryFailed(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, gh, run } = scene;
  if (!run) return "no run";
  if (run.state !== "failed") {
    await scene.reply(
      `The latest run is ${run.state === "review" ? "waiting for review" : run.state}, so there is nothing to retry.`,
    );
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
  if (!(await deps.store.runs.retry(run.id, JSON.stringify(raw ?? {}), gesture.sender))) return "retry lost a race";
  await gh.addReaction({ owner: run.owner, repo: run.repo }, run.issue_number, "rocket").catch(() => undefined);
  return `retry: run ${run.id} queued again`;
}

/** `/lisa proceed`: the plan that waited for review is built as it is. */
async function proceed(scene: Scene, gesture: CommandGesture): Promise<string> {
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

async function abort(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, gh, run } = scene;
  if (!run) return "no run";
  const passId = (await deps.store.passes.current(run.id))?.id;
  if (!(await changes.abortRun(deps.store, run.id, passId, { actor: gesture.sender }))) {
    await scene.reply(`Run ${run.id} is ${run.state}; there is nothing under way to stop.`);
    return `abort refused in ${run.state}`;
  }
  await scene.controls.stopSessions(run.id);
  await publishRunState(deps, gh, run.id);
  await scene.reply(
    `Stopped pass ${run.current_pass}. \`/lisa continue\` or \`/lisa redirect <what to change>\` starts pass ${run.current_pass + 1}; closing the pull requests ends the run.`,
  );
  return "aborted";
}
