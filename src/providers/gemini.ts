import { geminiProgress } from "./gemini-progress.ts";
import { type GeminiEvent, geminiEvent, streamUsage, turnCounter } from "./gemini-stream.ts";
import { crashed, type FailureKind, type ParsedOutput, type Provider, reportedFailure } from "./provider.ts";
import { GEMINI_PRICES } from "./token-prices.ts";

/** Exit code of the CLI's `FatalAuthenticationError` (bad or missing credentials, invalid auth method). */
const FATAL_AUTHENTICATION = 41;

type ResultEvent = Extract<GeminiEvent, { type: "result" }>;

/**
 * The HTTP status of an API error, which the stream's error leaves out: the CLI exits with it, modulo
 * 256 (173 for a 429), and 400–511 land on 144–255, above the CLI's own codes (1, 41, 42, 53, 130, …).
 * A status past 511 (a 529) lands among them: the API's error object quoted in the message says it.
 */
function httpStatus(exitCode: number | undefined, message: string): number | undefined {
  if (exitCode !== undefined && exitCode >= 144 && exitCode <= 255) return exitCode + 256;
  const quoted = /"code":\s*(\d{3})\b/.exec(message)?.[1];
  return quoted ? Number(quoted) : undefined;
}

/** The API's message out of the CLI's `[API Error: <message>]` (a 429 adds a hint on the lines after it). */
function apiMessage(message: string): string {
  return /^\[API Error: ([\s\S]*)\](?:\n|$)/.exec(message)?.[1] ?? message;
}

/**
 * The failure a result reports. The CLI's own fatal errors are named by their class and exit code
 * (`FatalTurnLimitedError` 53); API errors by their status, as `Error` (the stream says `unknown`, its
 * name for an error that is no `Error` instance). A result with no error object is an answer the CLI
 * could not use (empty, blocked): the `error` event before it says why.
 */
function resultFailure(result: ResultEvent, events: GeminiEvent[], exitCode: number | undefined) {
  if (!result.error) {
    const said = events.findLast((event) => event.type === "error" && event.severity === "error");
    const message = said?.type === "error" ? said.message : undefined;
    return reportedFailure("gemini", "agent_error", ["INVALID_STREAM"], message);
  }
  const { type = "Error", message = "" } = result.error;
  const status = type.startsWith("Fatal") ? undefined : httpStatus(exitCode, message);
  const kind = classify(type, status ?? exitCode);
  return reportedFailure("gemini", kind, [type === "unknown" ? "Error" : type, status ?? exitCode], apiMessage(message));
}

/**
 * An API error by its HTTP status (0.61.0 rewraps them, so a daily-quota 429 reads like any other
 * 429); the CLI's own by its exit code (41: credentials or auth method).
 */
function classify(type: string, code: number | undefined): FailureKind {
  if (type === "FatalAuthenticationError" || code === FATAL_AUTHENTICATION || code === 401 || code === 403) return "auth";
  if (code === 429) return "rate_limited";
  if (code === 402) return "quota";
  if (code !== undefined && code >= 500 && code <= 599) return "overloaded";
  return "agent_error";
}

/** The stream's events, its turns, and the model's words in the last turn (the answer). */
function readStream(stdout: string) {
  const turnOf = turnCounter();
  const events: GeminiEvent[] = [];
  let turns = 0;
  let text = "";
  for (const line of stdout.split("\n")) {
    const event = geminiEvent(line);
    if (!event) continue;
    events.push(event);
    const turn = turnOf(event);
    if (turn === undefined) continue;
    if (turn > turns) text = "";
    turns = turn;
    if (event.type === "message") text += event.content;
  }
  return { events, turns, text };
}

export const geminiProvider: Provider = {
  name: "gemini",
  defaultBinary: "gemini",
  // Gemini CLI reports tokens, not money: Lisa prices them (token-prices.ts). Its `--worktree` is experimental in 0.61.0: it needs
  // `experimental.worktrees` in the user's settings (without it the flag exits 1) and headless runs
  // leave the worktree and its branch behind, so Lisa makes the worktree itself (no `nativeWorktree`).
  capabilities: { nativeWorktree: false, jsonOutput: true, costReporting: true },
  // Headless, it reads standard input once (`-p` text is appended to it): guidance stops the session
  // at once and a new one resumes the work.
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
  // the write and shell tools. `stream-json` prints each event as it happens (`json`, one object at
  // the end, left the live check blank).
  args: ({ model }) => [
    "--approval-mode",
    "yolo",
    "--skip-trust",
    "--output-format",
    "stream-json",
    ...(model ? ["--model", model] : []),
  ],
  progress: geminiProgress,
  parse({ stdout, stderr, exitCode, prices = GEMINI_PRICES }): ParsedOutput {
    const { events, turns, text } = readStream(stdout);
    const result = events.findLast((event) => event.type === "result");
    if (!result) {
      // Failures before the session starts (no usable auth method) are told on stderr alone.
      const failed = crashed("gemini", exitCode ?? undefined, { stdout, stderr });
      return exitCode === FATAL_AUTHENTICATION && failed.failure
        ? { ...failed, failure: { ...failed.failure, kind: "auth" } }
        : failed;
    }
    const sessionId = events.find((event) => event.type === "init")?.session_id;
    const { tokens, costUsd } = streamUsage(result.stats, prices);
    const base = { costUsd, turns: turns || undefined, tokens, sessionId, exitCode };
    if (result.status !== "success") return { ...base, ok: false, text: "", failure: resultFailure(result, events, exitCode) };
    if (exitCode !== 0) {
      return {
        ...base,
        ok: false,
        text,
        failure: { kind: "crashed", message: `gemini printed a result but exited with ${exitCode ?? "a signal"}` },
      };
    }
    return { ...base, ok: true, text, failure: undefined };
  },
};
