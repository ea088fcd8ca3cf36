import { readConfigOf } from "../config/run-config.ts";
import { isWriter } from "../github/permissions.ts";
import { replyOnce } from "../publication/ensure-comment.ts";
import { recordChangeRequest } from "../review/record-change-request.ts";
import { refreshGate } from "../review/refresh-gate.ts";
import type { NewGuidance } from "../store/store.ts";
import type { ReviewGesture } from "./gesture.ts";
import type { Scene } from "./gesture-scene.ts";
import { guidanceItem, inlineGuidance } from "./guidance-item.ts";
import { parseCommand } from "./parse-command.ts";
import { requestPass } from "./request-pass.ts";

/** A writer's review of one of Lisa's pull requests: an approval opens the gate, a change request starts the next pass. */
export async function onReview(scene: Scene, gesture: ReviewGesture): Promise<string> {
  const { deps, gh, run, ref } = scene;
  if (!run) return "ignored: not one of Lisa's pull requests";
  if (gesture.action === "dismissed") {
    const note = `dismissed ${await dismissedReview(scene, gesture)} on ${gesture.owner}/${gesture.repo}#${gesture.number}`;
    const verdict = await refreshGate(deps, gh, run.id, { actor: gesture.sender, note });
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
    if (run.state === "blocked") {
      // Said on the issue, where the blocked run's commands are: the approval is not lost, nor acted on yet.
      await replyOnce(
        gh,
        { owner: run.owner, repo: run.repo },
        run.issue_number,
        scene.deliveryId,
        `@${gesture.sender} approved ${gesture.owner}/${gesture.repo}#${gesture.number} at \`${pr.headSha.slice(0, 7)}\` while the run is blocked. It counts at the gate once the blocked steps are fixed (\`/lisa fix\`) or skipped (\`/lisa skip\`), if the pull request is still at that head.`,
      );
      return "approval while blocked: told on the issue";
    }
    if (run.state === "running" || run.state === "queued") return "approval recorded for the gate";
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
    items.push(inlineGuidance(scene, comment));
  }
  if (items.length === 0) {
    await refreshGate(deps, gh, run.id, { actor: gesture.sender, note: "changes requested" });
    await scene.reply(`@${gesture.sender}, what should change? Add inline comments or \`/lisa redirect <what to change>\`.`);
    return "changes requested without guidance";
  }
  const comments = inline.length ? ` (${inline.length} inline comment${inline.length === 1 ? "" : "s"})` : "";
  if (scene.step) await recordChangeRequest(deps.store, scene.step, gesture.sender);
  return requestPass(scene, { trigger: "review", by: gesture.sender, items, what: `@${gesture.sender}'s review${comments}` });
}

/** Whose review was dismissed, and whether it was an approval the gate counted. */
async function dismissedReview(scene: Scene, gesture: ReviewGesture): Promise<string> {
  if (!gesture.reviewer) return "a review";
  const steps = scene.run ? await scene.deps.store.steps.of(scene.run.id) : [];
  const step = steps.find(
    (s) =>
      s.pr_number === gesture.number &&
      s.owner.toLowerCase() === gesture.owner.toLowerCase() &&
      s.repo.toLowerCase() === gesture.repo.toLowerCase(),
  );
  const gate = step?.gate ?? undefined;
  const approved = gate?.approvers.some((login) => login.toLowerCase() === gesture.reviewer?.toLowerCase());
  return `@${gesture.reviewer}'s ${approved ? "approval" : "review"}`;
}
