import { z } from "zod";
import { eventOrNothing, jsonLine, type ProgressEvent } from "./progress-event.ts";

/** Tools of OpenCode that write a file (their input names it `filePath`). */
const FILE_TOOLS = new Set(["write", "edit", "multiedit", "patch"]);

/** A line of `opencode run --format json`, as far as progress goes. */
const eventSchema = z.looseObject({
  type: z.string(),
  part: z
    .looseObject({
      id: z.string().optional(),
      text: z.string().optional(),
      cost: z.number().nonnegative().optional(),
      tool: z.string().optional(),
      state: z.looseObject({ input: z.record(z.string(), z.unknown()).optional() }).optional(),
    })
    .optional(),
});

/** What one line of `opencode run --format json` tells while the session runs: each event is printed as it happens. */
export function opencodeProgress(line: string): ProgressEvent | undefined {
  const parsed = eventSchema.safeParse(jsonLine(line));
  if (!parsed.success) return undefined;
  const { type, part } = parsed.data;
  switch (type) {
    // Each model request is a step of its own, with its own id.
    case "step_start":
      return part?.id ? { turn: part.id } : undefined;
    case "step_finish":
      return part?.cost !== undefined ? { costUsd: part.cost } : undefined;
    case "text":
      return part?.text ? { text: part.text } : undefined;
    case "tool_use": {
      const input = part?.state?.input ?? {};
      const tool = part?.tool ?? "";
      if (FILE_TOOLS.has(tool) && typeof input.filePath === "string") return eventOrNothing({ files: [input.filePath] });
      if (tool === "bash" && typeof input.command === "string") return eventOrNothing({ commands: [input.command] });
      return undefined;
    }
    default:
      return undefined;
  }
}
