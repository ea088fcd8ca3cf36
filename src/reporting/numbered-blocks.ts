import type { Block } from "./fit-to-limit.ts";
import { plural } from "./format.ts";
import { cleanBlock, listItem } from "./untrusted.ts";

const MAX_LISTED = 20;

/** The agent's open questions or proposed refinements, numbered under `heading`; nothing when none survives cleaning. */
export function numberedBlocks(heading: string, items: string[], secrets: readonly string[]): (string | Block)[] {
  const cleaned: string[] = [];
  let more = 0;
  for (const item of items) {
    if (cleaned.length === MAX_LISTED) {
      more += item.trim() ? 1 : 0;
      continue;
    }
    const clean = cleanBlock(item, { secrets, max: 1_000, minHeadingDepth: 6 });
    if (clean) cleaned.push(clean);
  }
  if (cleaned.length === 0) return [];
  const blocks: (string | Block)[] = [heading];
  cleaned.forEach((clean, i) => {
    blocks.push({ text: listItem(`${i + 1}.`, clean), drop: 1 });
  });
  if (more) blocks.push(`…and ${plural(more, "more")}`);
  blocks.push("");
  return blocks;
}
