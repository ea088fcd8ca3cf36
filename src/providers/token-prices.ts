import { z } from "zod";

/** US dollars per million tokens, read (prompt) and written (answer and thinking). */
export const tokenPriceSchema = z.object({ input: z.number().nonnegative(), output: z.number().nonnegative() });

/** Prices by model name; a name matches a model whose id starts with it, the longest name winning. */
export const tokenPricesSchema = z.record(z.string().min(1), tokenPriceSchema);

export type TokenPrices = z.infer<typeof tokenPricesSchema>;

/**
 * Google's list prices for the Gemini models Gemini CLI picks, in USD per million tokens (prompts
 * up to 200k tokens; cached prompt tokens are counted at the full price, which overstates a little).
 * An operator with other prices sets LISA_GEMINI_PRICES.
 */
export const GEMINI_PRICES: TokenPrices = {
  "gemini-3-pro": { input: 2, output: 12 },
  "gemini-2.5-pro": { input: 1.25, output: 10 },
  "gemini-2.5-flash": { input: 0.3, output: 2.5 },
  "gemini-2.5-flash-lite": { input: 0.1, output: 0.4 },
  "gemini-2.0-flash": { input: 0.1, output: 0.4 },
};

/**
 * What `tokens` of `model` cost. A model the table does not know is priced as the dearest one it
 * does, so that `max_cost_usd` still stops a run rather than count it as free.
 */
export function tokenCost(prices: TokenPrices, model: string, tokens: { input: number; output: number }): number {
  const known = Object.keys(prices)
    .filter((name) => model.startsWith(name))
    .sort((a, b) => b.length - a.length)[0];
  const price = known ? prices[known] : dearest(prices);
  if (!price) return 0;
  return (tokens.input * price.input + tokens.output * price.output) / 1_000_000;
}

function dearest(prices: TokenPrices) {
  return Object.values(prices).sort((a, b) => b.input + b.output - (a.input + a.output))[0];
}
