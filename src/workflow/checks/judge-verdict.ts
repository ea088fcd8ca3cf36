import { z } from "zod";

/** A judge's answer, the only thing Lisa reads of its session: PASS or FAIL, one sentence, perhaps where. */
export const verdictSchema = z.object({
  verdict: z.enum(["PASS", "FAIL"]),
  reason: z.string().trim().min(1).max(600),
  file: z.string().max(300).optional(),
  line: z.int().min(1).optional(),
});

export type Verdict = z.infer<typeof verdictSchema>;

/** Longest final message searched for the verdict: a judge answers in a line, not a report. */
const MAX_ANSWER = 20_000;

/**
 * The verdict in a judge session's final message: the last JSON object in it (bare, or in a code
 * fence) that has the verdict's shape. Anything else the message says is ignored, so text the
 * judged code planted cannot add a second answer after it; undefined when there is none.
 */
export function readVerdict(text: string): Verdict | undefined {
  const answer = text.slice(-MAX_ANSWER);
  for (const candidate of jsonObjects(answer).reverse()) {
    const parsed = verdictSchema.safeParse(candidate);
    if (parsed.success) return parsed.data;
  }
  return undefined;
}

/** Every balanced `{…}` in `text` that parses as a JSON object, in order. */
function jsonObjects(text: string): unknown[] {
  const found: unknown[] = [];
  for (let start = text.indexOf("{"); start !== -1; start = text.indexOf("{", start + 1)) {
    const end = closingBrace(text, start);
    if (end === undefined) continue;
    try {
      found.push(JSON.parse(text.slice(start, end + 1)));
      start = end;
    } catch {
      // Not JSON from this brace on: the next brace may start an object.
    }
  }
  return found;
}

/** Where the object opened at `start` closes, strings taken into account. */
function closingBrace(text: string, start: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{") depth++;
    else if (char === "}" && --depth === 0) return i;
  }
  return undefined;
}
