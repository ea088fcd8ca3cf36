import { z } from "zod";
import { jsonLine } from "./progress-event.ts";
import { type TokenPrices, tokenCost } from "./token-prices.ts";

/** One model's tokens in the `result` event (the CLI's `convertToStreamStats`). */
const modelTokensSchema = z.looseObject({
  /** Every token the requests counted: prompt, answer, thinking and tool-use prompt. */
  total_tokens: z.number().nonnegative().optional(),
  /** The prompt's tokens, cached ones included. */
  input_tokens: z.number().nonnegative().optional(),
  /** The answer's tokens, thinking left out. */
  output_tokens: z.number().nonnegative().optional(),
  /** The prompt's tokens less the cached ones. */
  input: z.number().nonnegative().optional(),
});

const statsSchema = z.looseObject({ models: z.record(z.string(), modelTokensSchema).optional() });

/**
 * One line of `gemini --output-format stream-json` (@google/gemini-cli 0.61.0, `StreamJsonFormatter`):
 * every field but `type` is the CLI's or the model's, untrusted, and read as data only.
 */
const geminiEventSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("init"), session_id: z.string().optional(), model: z.string().optional() }),
  /** The prompt (`user`), then the model's words in pieces as they stream (`assistant`, `delta: true`). */
  z.looseObject({ type: z.literal("message"), role: z.string(), content: z.string() }),
  z.looseObject({
    type: z.literal("tool_use"),
    tool_name: z.string(),
    tool_id: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()),
  }),
  z.looseObject({ type: z.literal("tool_result"), tool_id: z.string().optional(), status: z.string().optional() }),
  /** A warning (a loop detected) or, `severity: "error"`, an answer the CLI could not use (empty, blocked). */
  z.looseObject({ type: z.literal("error"), severity: z.string().optional(), message: z.string().optional() }),
  /** The last line, on success and failure alike; `error` is absent when the last answer was unusable. */
  z.looseObject({
    type: z.literal("result"),
    status: z.string(),
    error: z.looseObject({ type: z.string().optional(), message: z.string().optional() }).optional(),
    stats: statsSchema.optional(),
  }),
]);

export type GeminiEvent = z.infer<typeof geminiEventSchema>;
export type GeminiStats = z.infer<typeof statsSchema>;

/** The line as an event of the stream, or undefined (a log line, or an event Lisa does not read). */
export function geminiEvent(line: string): GeminiEvent | undefined {
  const parsed = geminiEventSchema.safeParse(jsonLine(line));
  return parsed.success ? parsed.data : undefined;
}

/**
 * Numbers the model turns of one stream as its events arrive: the stream has no turn ids, and a turn
 * opens with the model's first piece of text, tool call or unusable answer after the prompt or after
 * the tool results it asked for. Returns the turn an event of the model's belongs to.
 */
export function turnCounter(): (event: GeminiEvent) => number | undefined {
  let turns = 0;
  let awaitingModel = true;
  return (event) => {
    if (event.type === "tool_result" || (event.type === "message" && event.role === "user")) {
      awaitingModel = true;
      return undefined;
    }
    const fromModel =
      (event.type === "message" && event.role === "assistant") || event.type === "tool_use" || event.type === "error";
    if (!fromModel) return undefined;
    if (awaitingModel) turns += 1;
    awaitingModel = false;
    return turns;
  };
}

/**
 * The session's tokens and what they cost at `prices`: the CLI reports tokens per model and no money.
 * Read are the prompt's tokens less the cached ones; written, all the rest (the answer's count leaves
 * thinking out, which is billed as output), as Lisa priced the `json` output's.
 */
export function streamUsage(
  stats: GeminiStats | undefined,
  prices: TokenPrices,
): { tokens: { input: number; output: number } | undefined; costUsd: number } {
  const models = Object.entries(stats?.models ?? {});
  if (models.length === 0) return { tokens: undefined, costUsd: 0 };
  let input = 0;
  let output = 0;
  let costUsd = 0;
  for (const [name, model] of models) {
    const prompt = model.input_tokens ?? 0;
    const tokens = {
      input: model.input ?? prompt,
      output: Math.max(model.output_tokens ?? 0, (model.total_tokens ?? 0) - prompt),
    };
    input += tokens.input;
    output += tokens.output;
    costUsd += tokenCost(prices, name, tokens);
  }
  // A session that got no answer has each model listed with no tokens.
  return { tokens: input + output > 0 ? { input, output } : undefined, costUsd };
}
