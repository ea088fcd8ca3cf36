import { describeGuidance } from "./describe-guidance.ts";
import type { Block } from "./fit-to-limit.ts";
import { plural } from "./format.ts";
import type { PackageView } from "./package-view.ts";

const MAX_GUIDANCE = 30;

/** The pass's guidance under `heading`, with the agent's status once the pass has ended. */
export function guidanceBlocks(view: PackageView, heading: string): (string | Block)[] {
  if (view.guidance.length === 0) return [];
  const blocks: (string | Block)[] = [heading];
  for (const item of view.guidance.slice(0, MAX_GUIDANCE)) {
    blocks.push({ text: `${describeGuidance(item, view.phase !== "working", view.secrets)}\n`, drop: 2 });
  }
  if (view.guidance.length > MAX_GUIDANCE) blocks.push(`…and ${plural(view.guidance.length - MAX_GUIDANCE, "more item")}`, "");
  return blocks;
}
