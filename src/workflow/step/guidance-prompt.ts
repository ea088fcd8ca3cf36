import { redactSecrets } from "../../markdown/redact-secrets.ts";
import type { GuidanceRow, StepRow } from "../../store/store.ts";
import { fenceAsData } from "../context/render-prompt.ts";
import type { RunContext } from "../context/run-context.ts";

/** One guidance item as the agent reads it: `gN`, its author and place in the diff, its text fenced as data. */
export function guidanceItemText(ctx: RunContext, step: StepRow, item: GuidanceRow, index: number): string {
  const other =
    item.owner &&
    item.repo &&
    (item.owner.toLowerCase() !== step.owner.toLowerCase() || item.repo.toLowerCase() !== step.repo.toLowerCase())
      ? ` (said on ${item.owner}/${item.repo}#${item.pr_number}; apply it here only where it concerns this repository)`
      : "";
  const place = item.path
    ? ` on \`${item.path}${item.line ? `:${item.line}` : ""}\`${item.outdated ? " (on an earlier commit)" : ""}`
    : "";
  const hunk = item.diff_hunk
    ? `\n${fenceAsData("the diff lines it refers to", redactSecrets(item.diff_hunk, ctx.secrets))}`
    : "";
  return `### g${index + 1}: from ${item.author} (${item.source})${place}${other}\n${fenceAsData(`guidance g${index + 1}, written on GitHub`, redactSecrets(item.body, ctx.secrets))}${hunk}`;
}

/** Guidance written while the session runs, as the further message that gives it to the agent. */
export function steeringMessage(ctx: RunContext, step: StepRow, item: GuidanceRow, index: number): string {
  return [
    "## New guidance from the reviewers",
    "",
    `A reviewer wrote this while you work, for this pass. Take it in from now on, together with what you were asked before. In \`.lisa-manifest.json\`, report what you did with it in a \`guidance\` list: \`[{ "id": "g${index + 1}", "status": "addressed", "note": "How." }]\`, where \`status\` is one of \`addressed\`, \`partly\`, \`not_addressed\`, \`not_applicable\`.`,
    "",
    guidanceItemText(ctx, step, item, index),
  ].join("\n");
}
