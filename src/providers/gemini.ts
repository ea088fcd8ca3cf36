import { z } from "zod";
import { crashed, type FailureKind, type ParsedOutput, type Provider, reportedFailure } from "./provider.ts";
import { GEMINI_PRICES, type TokenPrices, tokenCost } from "./token-prices.ts";

const tokensSchema = z.looseObject({
  input: z.number().optional(),
  prompt: z.number().optional(),
  candidates: z.number().optional(),
  thoughts: z.number().optional(),
});

const modelStatsSchema = z.looseObject({
  api: z.looseObject({ totalRequests: z.number().optional() }).optional(),
  tokens: tokensSchema.optional(),
  /** Requests per role (`main`, the model router, …); only `main` requests are agent turns. */
  roles: z.record(z.string(), z.looseObject({ totalRequests: z.number().optional() })).optional(),
});

/**
 * The object `gemini --output-format json` prints: on stdout when the run succeeds, on stderr
 * (after any log lines and stack trace) when it fails, then with `error` and no `response`.
 */
const geminiOutputSchema = z.looseObject({
  session_id: z.string().optional(),
  response: z.string().optional(),
  stats: z.looseObject({ models: z.record(z.string(), modelStatsSchema).optional() }).optional(),
  error: z
    .looseObject({
      /** `Error` for API errors, the class of the CLI's own (`FatalAuthenticationError`, …), or `INVALID_STREAM`. */
      type: z.string().optional(),
      message: z.string().optional(),
      /** The HTTP status for API errors, the CLI's exit code for its fatal errors, or a Node error code. */
      code: z.union([z.number(), z.string()]).optional(),
    })
    .optional(),
});

type GeminiOutput = z.infer<typeof geminiOutputSchema>;

/** Exit code of the CLI's `FatalAuthenticationError` (bad or missing credentials, invalid auth method). */
const FATAL_AUTHENTICATION = 41;

/**
 * API errors carry the HTTP status as `code` (type `Error`: 0.61.0 rewraps them, so a daily-quota 429
 * reads like any other 429). The CLI's own fatal errors carry its exit code; errors without a
 * status (a dropped connection, an `INVALID_STREAM`) carry 1 or no code.
 */
function classify(error: NonNullable<GeminiOutput["error"]>): FailureKind {
  const { code, type } = error;
  if (type === "FatalAuthenticationError" || code === FATAL_AUTHENTICATION || code === 401 || code === 403) return "auth";
  if (code === 429) return "rate_limited";
  if (code === 402) return "quota";
  if (typeof code === "number" && code >= 500 && code <= 599) return "overloaded";
  return "agent_error";
}

/**
 * The last output object in `text`. The CLI pretty-prints it over several lines, so it starts at
 * the last line that opens a JSON object in column 0 and parses to the end; log lines and stack
 * traces before it never start that way.
 */
function findOutput(text: string): GeminiOutput | undefined {
  const lines = text.split("\n");
  for (let start = lines.length - 1; start >= 0; start--) {
    if (!lines[start]?.startsWith("{")) continue;
    try {
      const parsed = geminiOutputSchema.safeParse(JSON.parse(lines.slice(start).join("\n")));
      if (parsed.success && (parsed.data.response !== undefined || parsed.data.error !== undefined)) return parsed.data;
    } catch {
      // Not the object: keep looking further up.
    }
  }
  return undefined;
}

/**
 * Tokens and turns across the models the session used, and what they cost at `prices`: the CLI
 * reports tokens per model and no money, so without pricing them `max_cost_usd` never applied.
 */
function usage(output: GeminiOutput, prices: TokenPrices): Pick<ParsedOutput, "tokens" | "turns" | "costUsd"> {
  const models = Object.entries(output.stats?.models ?? {});
  if (models.length === 0) return { tokens: undefined, turns: undefined, costUsd: 0 };
  let input = 0;
  let out = 0;
  let turns = 0;
  let costUsd = 0;
  for (const [name, model] of models) {
    const tokens = {
      input: model.tokens?.input ?? model.tokens?.prompt ?? 0,
      // Thinking is billed as output.
      output: (model.tokens?.candidates ?? 0) + (model.tokens?.thoughts ?? 0),
    };
    input += tokens.input;
    out += tokens.output;
    costUsd += tokenCost(prices, name, tokens);
    turns += model.roles?.main?.totalRequests ?? model.api?.totalRequests ?? 0;
  }
  return { tokens: { input, output: out }, turns: turns || undefined, costUsd };
}

export const geminiProvider: Provider = {
  name: "gemini",
  defaultBinary: "gemini",
  // Gemini CLI reports tokens, not money: Lisa prices them (token-prices.ts). Its `--worktree` is experimental in 0.61.0: it needs
  // `experimental.worktrees` in the user's settings (without it the flag exits 1) and headless runs
  // leave the worktree and its branch behind, so Lisa makes the worktree itself (no `nativeWorktree`).
  capabilities: { nativeWorktree: false, jsonOutput: true, costReporting: true },
  // Headless, it reads standard input once (`-p` text is appended to it), and its JSON output says
  // nothing until the end: guidance stops the session at once and a new one resumes the work.
  steering: { via: "restart" },
  env: [
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GEMINI_MODEL",
    "GEMINI_DEFAULT_AUTH_TYPE",
    "GEMINI_API_KEY_AUTH_MECHANISM",
    "GEMINI_CLI_HOME",
    "GEMINI_CLI_NO_RELAUNCH",
    "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
    "GEMINI_CLI_TRUST_WORKSPACE",
    "GEMINI_TELEMETRY_ENABLED",
  ],
  // The prompt arrives on standard input, which makes the run headless without `-p`.
  // `--skip-trust` trusts the worktree for this run: an untrusted folder stops a headless run
  // (exit 55) and turns YOLO back into asking. Without YOLO, headless runs do not even declare
  // the write and shell tools.
  args: ({ model }) => [
    "--approval-mode",
    "yolo",
    "--skip-trust",
    "--output-format",
    "json",
    ...(model ? ["--model", model] : []),
  ],
  parse({ stdout, stderr, exitCode, prices = GEMINI_PRICES }): ParsedOutput {
    // Success is printed on stdout; failures on stderr, after the CLI's own log lines.
    const output = findOutput(stdout) ?? findOutput(stderr);
    if (!output) {
      return crashed("gemini", exitCode ?? undefined, { stdout, stderr });
    }
    const { tokens, turns, costUsd } = usage(output, prices);
    const base = { costUsd, turns, tokens, sessionId: output.session_id, exitCode };
    if (output.error) {
      const { type, code, message } = output.error;
      return { ...base, ok: false, text: "", failure: reportedFailure("gemini", classify(output.error), [type, code], message) };
    }
    if (exitCode !== 0) {
      return {
        ...base,
        ok: false,
        text: output.response ?? "",
        failure: { kind: "crashed", message: `gemini printed a result but exited with ${exitCode ?? "a signal"}` },
      };
    }
    return { ...base, ok: true, text: output.response ?? "", failure: undefined };
  },
};
