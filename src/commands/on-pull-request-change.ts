import { refreshGate } from "../review/refresh-gate.ts";
import { isAncestor } from "../workspace/mirror-history.ts";
import { syncMirror } from "../workspace/sync-mirror.ts";
import type { PullRequestGesture } from "./gesture.ts";
import type { Scene } from "./gesture-scene.ts";

/** A human pushed to, closed or reopened one of Lisa's pull requests: record it, stop what it ends, read the gate again. */
export async function onPullRequestChange(scene: Scene, gesture: PullRequestGesture): Promise<string> {
  const { deps, gh, run, step } = scene;
  if (!run || !step) return "ignored: not one of Lisa's pull requests";
  if (gesture.action === "synchronize") {
    await deps.store.events.add(run.id, "human_push", {
      actor: gesture.sender,
      note: `${gesture.owner}/${gesture.repo}#${gesture.number} ${gesture.before?.slice(0, 7)}..${gesture.after?.slice(0, 7)}`,
    });
    if (gesture.before && gesture.after && (await rewritesHistory(scene, gesture.before, gesture.after))) {
      // Lisa never restores what a human force-pushed away; it says what disappeared.
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
  // Said where a change of the gate is noted (an acceptance withdrawn): what happened, on which PR.
  const pr = `${gesture.owner}/${gesture.repo}#${gesture.number}`;
  const note = gesture.action === "synchronize" ? `pushed \`${gesture.after?.slice(0, 7)}\` to ${pr}` : `${gesture.action} ${pr}`;
  const verdict = await refreshGate(deps, gh, run.id, { actor: gesture.sender, note });
  return `pull request ${gesture.action}: gate ${verdict ?? "closed"}`;
}

/** Whether a push replaced history: the old head is no longer an ancestor of the new one. */
async function rewritesHistory(scene: Scene, before: string, after: string): Promise<boolean> {
  const { deps, gh, ref } = scene;
  await syncMirror(deps.workspace, ref, await gh.installationToken());
  return !(await isAncestor(deps.workspace, ref, before, after));
}
