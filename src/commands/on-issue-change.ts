import { readConfigOf } from "../config/run-config.ts";
import { isWriter } from "../github/permissions.ts";
import { nextRunState } from "../store/transitions.ts";
import type { IssueGesture } from "./gesture.ts";
import type { Scene } from "./gesture-scene.ts";
import { abort } from "./run-control-commands.ts";

/**
 * A writer who takes the Lisa label off the issue, or closes it, stops the run as `/lisa
 * abort` does. Anyone else's gesture, another label, or a run with nothing under way (ended,
 * waiting for review) changes nothing and gets no answer: closing a finished issue is not news.
 */
export async function onIssueChange(scene: Scene, gesture: IssueGesture): Promise<string> {
  const { deps, gh, ref, run } = scene;
  if (!run) return `issue ${gesture.action}: no run`;
  if (!nextRunState(run.state, "abort")) return `issue ${gesture.action}: run ${run.id} is ${run.state}, nothing to stop`;
  if (gesture.action === "unlabeled" && gesture.label !== (await readConfigOf(deps.store, run.id)).label)
    return "issue unlabeled: another label";
  // Checked last: it is the one question that costs a GitHub call.
  if (!(await isWriter(gh, ref, gesture.sender))) return `issue ${gesture.action}: ${gesture.sender} is not a writer`;
  const how = gesture.action === "closed" ? "closed the issue" : "took the label off the issue";
  return abort(scene, gesture, { quietIfRefused: true, how });
}
