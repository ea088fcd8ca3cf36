import { isWriter } from "../github/permissions.ts";
import { reactToComment } from "../publication/reactions.ts";
import type { CommandGesture } from "./gesture.ts";
import type { Scene } from "./gesture-scene.ts";
import { HELP } from "./help.ts";
import { continueRun, redirect } from "./next-pass-commands.ts";
import { abort, acceptOverride, fixBlocked, proceed, retryFailed, skipBlocked } from "./run-control-commands.ts";
import { answerStatus } from "./status-command.ts";

/** A `/lisa` command: only a writer's is heard; help and status are answered here, the rest go to their family. */
export async function onCommand(scene: Scene, gesture: CommandGesture): Promise<string> {
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
      reactToComment(gh, ref, gesture.commentId, gesture.where === "inline" ? "review" : "issue", "eyes").catch((error) =>
        deps.log.warn({ err: error }, "could not react to the command"),
      ),
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
    case "status":
      return answerStatus(scene, gesture);
    case "redirect":
      return redirect(scene, gesture);
    case "continue":
      return continueRun(scene, gesture);
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
