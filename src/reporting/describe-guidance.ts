import { mention } from "./format.ts";
import { cleanBlock, cleanLine, code, link, listItem, quote } from "./untrusted.ts";
import type { GuidanceView } from "./views.ts";

const STATUS: Record<NonNullable<GuidanceView["status"]>, string> = {
  addressed: "✅ addressed",
  partly: "◐ partly addressed",
  not_addressed: "❌ not addressed",
  not_applicable: "➖ not applicable",
};

const SOURCE: Record<GuidanceView["source"], string> = {
  command: "`/lisa redirect`",
  review: "review",
  inline: "inline comment",
  continue: "`/lisa continue` (agent's refinement)",
  fix: "`/lisa fix` notes",
};

/**
 * One guidance item as a numbered list entry: status (when `withStatus`), author, source, place,
 * link, the agent's note, then the human's text quoted under it.
 */
export function describeGuidance(item: GuidanceView, withStatus: boolean, secrets: readonly string[]): string {
  const marker = `${item.n}.`;
  const status = withStatus ? `${item.status ? STATUS[item.status] : "❔ no status from the agent"} · ` : "";
  const where = item.where ? ` on ${code(item.where, { secrets })}` : "";
  const url = link(item.source === "review" ? "review" : "comment", item.url);
  const note = withStatus && item.note ? cleanLine(item.note, { secrets, max: 270 }) : "";
  const tail = [item.outdated ? "on an earlier commit" : "", withStatus && item.replied ? "replied in thread" : ""].filter(
    Boolean,
  );
  const first = `${status}${mention(item.author)}'s ${SOURCE[item.source]}${where}${url ? ` (${url})` : ""}${note ? `: ${note}` : ""}${tail.map((t) => ` · ${t}`).join("")}`;
  const body = quote(cleanBlock(item.body, { secrets, max: 1_000 }));
  return listItem(marker, body ? `${first}\n${body}` : first);
}
