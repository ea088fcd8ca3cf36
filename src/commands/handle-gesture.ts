import type { CoreDeps } from "../deps.ts";
import { replyOnce } from "../publication/ensure-comment.ts";
import type { Gesture } from "./gesture.ts";
import type { RunControls, Scene } from "./gesture-scene.ts";
import { onCommand } from "./on-command.ts";
import { onIssueChange } from "./on-issue-change.ts";
import { onPullRequestChange } from "./on-pull-request-change.ts";
import { onReview } from "./on-review.ts";
import { onCheckRerun } from "./rerun-check.ts";

/**
 * Acts on a human gesture stored by a webhook handler: a `/lisa` command, a review, a change to
 * one of Lisa's pull requests, or the issue unlabeled or closed. Only writers on the repository where it happened count; commands of
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
    case "issue":
      return onIssueChange(scene, gesture);
    case "check":
      return onCheckRerun(scene, gesture);
  }
}
