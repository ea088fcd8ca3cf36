import { z } from "zod";
import { eventOrNothing, jsonLine, type ProgressEvent } from "./progress-event.ts";

/** Tools of Claude Code that write a file, and the input field that names it. */
const FILE_TOOLS: Record<string, string> = {
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
};

const contentSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("tool_use"), name: z.string(), input: z.record(z.string(), z.unknown()) }),
  z.looseObject({ type: z.literal("thinking") }),
]);

/** A model message of `--output-format stream-json --verbose`: one line per content block, sharing the message id. */
const assistantSchema = z.looseObject({
  type: z.literal("assistant"),
  message: z.looseObject({ id: z.string(), content: z.array(z.unknown()) }),
});

/** A turn's last line: the running total of the whole process, restated after each message Lisa writes to it. */
const resultSchema = z.looseObject({ type: z.literal("result"), total_cost_usd: z.number().nonnegative() });

/** What one line of `claude -p --output-format stream-json --verbose` tells while the session runs. */
export function claudeProgress(line: string): ProgressEvent | undefined {
  const json = jsonLine(line);
  const result = resultSchema.safeParse(json);
  if (result.success) return { sessionCostUsd: result.data.total_cost_usd };
  const assistant = assistantSchema.safeParse(json);
  if (!assistant.success) return undefined;
  const files: string[] = [];
  const commands: string[] = [];
  const texts: string[] = [];
  for (const raw of assistant.data.message.content) {
    const block = contentSchema.safeParse(raw);
    if (!block.success) continue;
    if (block.data.type === "text") texts.push(block.data.text);
    if (block.data.type !== "tool_use") continue;
    const { name, input } = block.data;
    const field = FILE_TOOLS[name];
    const path = field ? input[field] : undefined;
    if (typeof path === "string") files.push(path);
    if (name === "Bash" && typeof input.command === "string") commands.push(input.command);
  }
  return eventOrNothing({
    turn: assistant.data.message.id,
    files,
    commands,
    ...(texts.length ? { text: texts.join("\n\n") } : {}),
  });
}
