import type { Block } from "./fit-to-limit.ts";
import type { PackageView } from "./package-view.ts";
import { cleanAfter, code } from "./untrusted.ts";

const MAX_LISTED = 10;

/** One line per reflection: what the agent said of each gate failure it was sent back for. */
export function reflectionBlocks({
  reflections = [],
  secrets,
}: Pick<PackageView, "reflections" | "secrets">): (string | Block)[] {
  if (reflections.length === 0) return [];
  const blocks: (string | Block)[] = ["**The agent's reflections on failed gates**"];
  for (const r of reflections.slice(-MAX_LISTED)) {
    // Each part is the agent's text, cut short and cleaned, after words of Lisa's.
    const said =
      [
        cleanAfter("failed: ", r.whatFailed, { secrets, max: 150 }),
        cleanAfter("cause: ", r.cause, { secrets, max: 150 }),
        cleanAfter("change: ", r.change, { secrets, max: 150 }),
      ]
        .filter(Boolean)
        .join(" · ") || "no reflection written";
    blocks.push({ text: `- session ${r.iteration}, ${code(r.gate, { secrets, max: 80 })}: ${said}`, drop: 1 });
  }
  blocks.push("");
  return blocks;
}
