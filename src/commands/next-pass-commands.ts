import { isWriter } from "../github/permissions.ts";
import type { NewGuidance } from "../store/store.ts";
import type { CommandGesture } from "./gesture.ts";
import type { Scene } from "./gesture-scene.ts";
import { guidanceItem, inlineGuidance } from "./guidance-item.ts";
import { requestPass } from "./request-pass.ts";

/** `/lisa redirect <what to change>`: the next pass, with this guidance and the inline comments it comes with. */
export async function redirect(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { command } = gesture;
  if (!command.text) {
    await scene.reply("Say what to change: `/lisa redirect <what to change>`.");
    return "redirect without guidance";
  }
  const text = command.text + (await threadAnswered(scene, gesture));
  const items = [guidanceItem(scene, "command", text, { url: gesture.url, ...inlinePlace(gesture) })];
  if (gesture.where !== "inline" && scene.step) items.push(...(await inlineCommentsSinceLastPackage(scene, gesture)));
  return requestPass(scene, { trigger: "redirect", by: gesture.sender, items, what: `@${gesture.sender}'s redirect` });
}

/** `/lisa continue`: the next pass, guided by the refinements the agent proposed in the last one. */
export async function continueRun(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, run } = scene;
  if (!run) return "no run";
  const pass = await deps.store.passes.current(run.id);
  const refinements = pass?.refinements ?? [];
  if (refinements.length === 0) {
    await scene.reply(
      `The agent proposed no refinements in pass ${run.current_pass}; say what to change with \`/lisa redirect <what to change>\`.`,
    );
    return "continue without refinements";
  }
  const items = refinements.map((text) => guidanceItem(scene, "continue", text, { url: gesture.url }));
  return requestPass(scene, { trigger: "continue", by: gesture.sender, items, what: `@${gesture.sender}'s continue` });
}

/**
 * A redirect written as a reply in an inline thread answers that thread; the agent gets
 * the thread's comments before it (as they were when the command was written), quoted after the
 * redirect's own text. Empty for any other redirect.
 */
async function threadAnswered(scene: Scene, gesture: CommandGesture): Promise<string> {
  const root = gesture.inline?.inReplyTo;
  if (!root || !scene.step?.pr_number) return "";
  const comments = await scene.gh.listPullComments(scene.ref, scene.step.pr_number);
  const thread = comments
    .filter((c) => (c.id === root || c.inReplyTo === root) && c.id !== gesture.commentId && c.createdAt <= gesture.createdAt)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id - b.id);
  if (thread.length === 0) return "";
  const quoted = thread.map((c) => `@${c.user}: ${c.body}`.replace(/\n/g, "\n> "));
  return `\n\nThis answers the review thread on \`${thread[0]?.path}\`:\n${quoted.map((line) => `> ${line}`).join("\n>\n")}`;
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
 * A redirect on a PR takes with it the writers' inline comments written on that PR since
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
  // A review's inline comments are its guidance already: a redirect said after it does not take them twice.
  const taken = new Set(
    [...(await deps.store.guidance.ledger(step.run_id)), ...(await deps.store.guidance.queued(step.run_id))].map(
      (g) => g.github_id,
    ),
  );
  const items: NewGuidance[] = [];
  for (const comment of comments) {
    if (comment.userType === "Bot" || comment.updatedAt > gesture.createdAt || taken.has(comment.id)) continue;
    if (!(await isWriter(gh, ref, comment.user))) continue;
    items.push(inlineGuidance(scene, comment, comment.user));
  }
  deps.log.info({ count: items.length }, "inline comments taken with the redirect");
  return items;
}
