import type { CommentCommand } from "../handlers/on-issue-comment.ts";
import type { CoreDeps } from "./deps.ts";
import { replyOnce, WRITE_ROLES } from "./start-run.ts";

const HELP = [
  "Lisa understands these commands, each at the start of a comment:",
  "",
  "- `/lisa retry`: on the issue, resume a failed run at the step that failed; finished steps are kept.",
  "- `/lisa status`: where the current run stands.",
  "- `/lisa help`: this list.",
].join("\n");

/**
 * Acts on a `/lisa` command from a comment. Only people with write access may steer Lisa; others
 * get a polite answer. Returns the outcome in words for the command log.
 */
export async function handleCommentCommand(deps: CoreDeps, deliveryId: string, command: CommentCommand): Promise<string> {
  const gh = await deps.github(command.installationId);
  const ref = { owner: command.owner, repo: command.repo };
  const reply = (text: string) => replyOnce(gh, ref, command.number, deliveryId, text);

  const role = await gh.roleOf(ref, command.sender);
  if (!WRITE_ROLES.has(role)) {
    await reply(`@${command.sender}, only people with write access to this repository can steer Lisa.`);
    return `denied: ${command.sender} has role ${role}`;
  }

  switch (command.name) {
    case "retry": {
      const latest = deps.store.latestRunFor(command.owner, command.repo, command.number);
      if (!latest) {
        await reply(`There is no Lisa run for this issue to retry. Add the label to start one.`);
        return "retry: no run";
      }
      if (latest.state !== "failed") {
        await reply(
          `The latest run is ${latest.state === "review" ? "waiting for review" : latest.state}, so there is nothing to retry.`,
        );
        return `retry: run ${latest.id} is ${latest.state}`;
      }
      if (!deps.store.retryRun(latest.id)) {
        await reply("Another run for this issue is already under way.");
        return "retry: another run is active";
      }
      await gh.addReaction(ref, command.number, "rocket");
      return `retry: run ${latest.id} queued again`;
    }
    case "status": {
      const latest = deps.store.latestRunFor(command.owner, command.repo, command.number);
      await reply(
        latest
          ? `Run ${latest.id} is ${latest.state}; the tracking comment on this issue has the details.`
          : "Lisa has no run for this issue.",
      );
      return "status";
    }
    case "help":
    case "":
      await reply(HELP);
      return "help";
    default:
      await reply(`Lisa does not know \`/lisa ${command.name}\`.\n\n${HELP}`);
      return `unknown command ${command.name}`;
  }
}
