import type { Block } from "./fit-to-limit.ts";
import { mention, money, plural } from "./format.ts";
import type { TrackingView } from "./tracking-view.ts";
import { cleanLine } from "./untrusted.ts";

const MAX_QUEUED = 20;
const MAX_HISTORY = 20;

/** The guidance waiting for the next pass, one quoted excerpt per request. */
export function queuedGuidanceBlocks(view: TrackingView): (string | Block)[] {
  const { secrets, queuedGuidance } = view;
  if (!queuedGuidance.length) return [];
  const blocks: (string | Block)[] = [`**${plural(queuedGuidance.length, "request")} queued for pass ${view.pass + 1}**`];
  for (const item of queuedGuidance.slice(0, MAX_QUEUED)) {
    const source = cleanLine(item.source, { secrets, max: 30 });
    blocks.push({
      text: `- ${mention(item.author)} (${source}): "${cleanLine(item.excerpt, { secrets, max: 200 })}"`,
      drop: 1,
    });
  }
  if (queuedGuidance.length > MAX_QUEUED) blocks.push(`- …and ${plural(queuedGuidance.length - MAX_QUEUED, "more", "more")}`);
  blocks.push("");
  return blocks;
}

/** The passes so far, the latest ones when there are many: what started each, who, how it ended and its cost. */
export function passHistoryBlocks(view: TrackingView): (string | Block)[] {
  const { secrets, history } = view;
  if (!history.length) return [];
  const blocks: (string | Block)[] = ["**Passes**"];
  const shown = history.slice(-MAX_HISTORY);
  if (history.length > shown.length) blocks.push(`- …${plural(history.length - shown.length, "earlier pass", "earlier passes")}`);
  for (const entry of shown) {
    const trigger = cleanLine(entry.trigger, { secrets, max: 40 });
    const outcome = cleanLine(entry.outcome, { secrets, max: 60 });
    blocks.push({
      text: `- Pass ${entry.pass} · ${trigger} by ${mention(entry.by)} · ${outcome} · ${money(entry.costUsd)}`,
      drop: 1,
    });
  }
  blocks.push("");
  return blocks;
}
