import { GITHUB_BODY_LIMIT } from "../markdown/sanitize-markdown.ts";

/** The note left where text was cut to fit GitHub's limit. */
export const CUT_NOTE = "_…cut to fit GitHub's 65,536-character limit._";

/**
 * One self-contained piece of a rendered comment (a heading, a list item with its quotation, a
 * paragraph). `drop` > 0 marks it as something that may be left out when the whole is too long;
 * higher numbers go first. Plain strings are kept.
 */
export interface Block {
  text: string;
  drop?: number;
}

/**
 * Joins blocks with newlines. When the result is longer than `limit`, leaves out droppable blocks
 * (highest `drop` first, last first) and puts one note where the first was left out; then, if
 * still needed, kept blocks from the end, never the first or the last (where markers are).
 */
export function fitToLimit(blocks: (string | Block)[], limit = GITHUB_BODY_LIMIT): string {
  const items = blocks.map((block) => (typeof block === "string" ? { text: block, drop: 0 } : { drop: 0, ...block }));
  let length = items.reduce((sum, item) => sum + item.text.length + 1, -1);
  if (length <= limit) return items.map((item) => item.text).join("\n");

  const note = `\n${CUT_NOTE}\n`;
  const removed = new Set<number>();
  const indexed = items.map((item, index) => ({ index, drop: item.drop })).filter(({ index }) => index > 0);
  const droppable = indexed.filter(({ drop }) => drop > 0).sort((a, b) => b.drop - a.drop || b.index - a.index);
  const keptToo = indexed.filter(({ drop, index }) => drop === 0 && index < items.length - 1).sort((a, b) => b.index - a.index);
  for (const { index } of [...droppable, ...keptToo]) {
    if (length + note.length + 1 <= limit) break;
    removed.add(index);
    length -= (items[index]?.text.length ?? 0) + 1;
  }
  const firstRemoved = Math.min(...removed);
  const kept = items.flatMap((item, index) =>
    (index === firstRemoved ? [note] : []).concat(removed.has(index) ? [] : [item.text]),
  );
  const result = kept.join("\n");
  return result.length <= limit ? result : cutMarkdown(result, limit);
}

// An opening or closing code fence, possibly inside block quotes or list items.
const FENCE = /^([ \t>]*)(`{3,}|~{3,})(.*)$/;

/**
 * Cuts markdown to at most `max` characters at a line boundary, closes a code fence the cut left
 * open (so the text after it is not swallowed) and ends with `note`.
 */
export function cutMarkdown(markdown: string, max: number, note = CUT_NOTE): string {
  if (markdown.length <= max) return markdown;
  const lines = markdown.slice(0, Math.max(0, max - note.length - 2)).split("\n");
  lines.pop(); // the last line may be cut in the middle
  for (;;) {
    let open: { prefix: string; fence: string } | undefined;
    for (const line of lines) {
      const match = FENCE.exec(line);
      if (!match) continue;
      const [, prefix = "", fence = "", rest = ""] = match;
      if (fence.startsWith("`") && rest.includes("`")) continue; // a code span, not a fence
      if (!open) open = { prefix, fence };
      else if (fence[0] === open.fence[0] && fence.length >= open.fence.length && rest.trim() === "") open = undefined;
    }
    const closed = open ? [...lines, `${open.prefix}${open.fence}`] : lines;
    const result = `${closed.join("\n")}\n\n${note}`;
    if (result.length <= max || lines.length === 0) return result.slice(0, max);
    lines.pop();
  }
}
