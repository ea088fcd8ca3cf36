import { publishTracking, trackingView } from "../publication/publish-tracking.ts";
import { trackingCommentUrl } from "../publication/tracking-url.ts";
import { renderStatusReply } from "../reporting/status-reply.ts";
import { refreshGate } from "../review/refresh-gate.ts";
import type { CommandGesture } from "./gesture.ts";
import type { Scene } from "./gesture-scene.ts";

/**
 * `/lisa status`: the gate read again from GitHub (a lost webhook changes nothing), then one reply:
 * the run's state in words, the pass and its limit, each pull request's gate and what it still
 * needs, what Lisa waits for, and a link to the tracking comment.
 */
export async function answerStatus(scene: Scene, gesture: CommandGesture): Promise<string> {
  const { deps, gh, run } = scene;
  if (!run) return "status: no run";
  await refreshGate(deps, gh, run.id).catch((error) => deps.log.warn({ err: error }, "could not read the gate"));
  let now = (await deps.store.runs.get(run.id)) ?? run;
  // The link needs the comment: a run whose comment was never written (GitHub refused it) gets it now.
  if (now.comment_id === null) {
    await publishTracking(deps, gh, run.id);
    now = (await deps.store.runs.get(run.id)) ?? now;
  }
  const view = await trackingView(deps.store, run.id, deps.now(), deps.heldSecrets);
  const steps = await deps.store.steps.of(run.id);
  const url = trackingCommentUrl(now, [gesture.url, ...steps.map((step) => step.pr_url)]);
  await scene.reply(renderStatusReply(view, url));
  return "status";
}
