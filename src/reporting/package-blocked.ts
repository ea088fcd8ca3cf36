import type { PackageView } from "./package-view.ts";
import { cleanBlock, cleanLine, code, link } from "./untrusted.ts";

/** Why the step stopped (blocked, skipped or aborted), what was tried, what is needed and where the unverified work is. */
export function blockedBlocks(
  phase: PackageView["phase"],
  block: NonNullable<PackageView["block"]>,
  secrets: readonly string[],
): string[] {
  const label = phase === "skipped" ? "⏭️ Skipped" : phase === "aborted" ? "⏹️ Aborted" : "⛔ Blocked";
  const lines = [`**${label}:** ${cleanLine(block.reason, { secrets, max: 270 }) || "no reason given"}`, ""];
  const tried = cleanBlock(block.tried ?? "", { secrets, max: 2_000 });
  const needed = cleanBlock(block.needed ?? "", { secrets, max: 2_000 });
  if (tried) lines.push("**What was tried**", "", tried, "");
  if (needed) lines.push("**What is needed**", "", needed, "");
  if (block.wipRef) {
    const browse = link("browse", block.wipUrl);
    lines.push(
      `**Work in progress:** ${code(block.wipRef, { secrets })}${browse ? ` (${browse})` : ""}; the pull request's branch is untouched, so its head is the last one that passed the gates.`,
      "",
    );
  }
  return lines;
}
