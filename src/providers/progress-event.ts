import { z } from "zod";

/**
 * What one line of an agent CLI's streamed output tells of its session: every field is the agent's
 * (untrusted) and optional; a line may open a model turn, add cost, touch files, run commands or say something.
 */
export const progressEventSchema = z.object({
  /** The id of the model turn the line belongs to: a new id is one more turn. */
  turn: z.string().optional(),
  /** Cost in USD this line adds to the session's. */
  costUsd: z.number().nonnegative().optional(),
  /** The session's whole cost so far in USD, which replaces what was counted (a CLI that restates its running total). */
  sessionCostUsd: z.number().nonnegative().optional(),
  /** Paths the agent wrote or edited. */
  files: z.array(z.string()).optional(),
  /** Command lines the agent ran (never their output). */
  commands: z.array(z.string()).optional(),
  /** What the agent said. */
  text: z.string().optional(),
});

export type ProgressEvent = z.infer<typeof progressEventSchema>;

/** Reads one session's stdout, line by line as it arrives: the event a line tells, or undefined. */
export type ProgressReader = (line: string) => ProgressEvent | undefined;

/** The line as JSON, or undefined: most CLIs print a log line now and then among their events. */
export function jsonLine(line: string): unknown {
  if (!line.startsWith("{")) return undefined;
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** The event without its empty fields, or undefined when it says nothing. */
export function eventOrNothing(event: ProgressEvent): ProgressEvent | undefined {
  const said = Object.entries(progressEventSchema.parse(event)).filter(
    ([, value]) => value !== undefined && (!Array.isArray(value) || value.length > 0),
  );
  return said.length ? (Object.fromEntries(said) as ProgressEvent) : undefined;
}
