import type { ProgressReader } from "./progress-event.ts";
import type { TokenPrices } from "./token-prices.ts";
/** Why an agent invocation did not succeed, decided from structured output and exit status. */
export type FailureKind =
  | "rate_limited"
  | "overloaded"
  | "quota"
  | "auth"
  | "timeout"
  | "stalled"
  | "crashed"
  | "agent_error"
  | "not_installed"
  | "sandbox";

/** Kinds worth trying again or on the next provider: the agent itself did nothing wrong. */
export const TRANSIENT_FAILURES: ReadonlySet<FailureKind> = new Set(["rate_limited", "overloaded", "timeout", "stalled"]);

/** The typed outcome of one agent invocation, the same shape whether it succeeded or not. */
export interface AgentResult {
  ok: boolean;
  /** The agent's final message. */
  text: string;
  costUsd: number;
  turns: number | undefined;
  tokens: { input: number; output: number } | undefined;
  sessionId: string | undefined;
  /**
   * Why it failed: `message` is Lisa's own words, fit for the issue; `excerpt` is a line of the
   * CLI's (its last on stderr, or its error report's text), untrusted, for a fenced quote; `detail`
   * (the tail of the CLI's output, which can hold server paths, file contents and tool results) is
   * for Lisa's log only.
   */
  failure: { kind: FailureKind; message: string; excerpt?: Excerpt; detail?: string } | undefined;
  exitCode: number | undefined;
  durationMs: number;
  /** Lisa stopped the session to resume it with guidance written while it ran (a `restart` provider). */
  steered?: true;
}

export type ParsedOutput = Omit<AgentResult, "durationMs" | "steered">;

/**
 * How guidance written while a session runs reaches it. `stream`: the CLI reads user messages from
 * its standard input as it works; the prompt is the first, guidance a further one, and standard
 * input is closed once the CLI has answered every message. `restart`: the CLI reads its prompt once;
 * the session is stopped at the next safe point and a new one resumes the work with the guidance.
 */
export type Steering =
  | {
      via: "stream";
      /** The line on standard input that carries one user message. */
      message(text: string): string;
      /** The text of a user message the CLI echoes on standard output once it has taken it in. */
      echoed(line: string): string | undefined;
      /** Whether a line of standard output ends the CLI's answer to the messages it has taken in. */
      answered(line: string): boolean;
    }
  | {
      via: "restart";
      /** Whether a line of standard output ends a tool call or a turn; without it the session is stopped at once. */
      safePoint?(line: string): boolean;
    };

/** A line the CLI wrote, and where: its stderr, or the text of the error it reported in its JSON. */
export interface Excerpt {
  from: "stderr" | "error report";
  text: string;
}

/** One line of a CLI's text, paths shortened to their file name, 200 characters at most. */
function oneLine(text: string): string {
  return text
    .replace(/(?:file:\/\/)?(?:\/[\w.@+-]+)+\/([\w.@+-]+)/g, "…/$1")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 200);
}

/**
 * The failure a CLI reported in its structured output: Lisa's words name the CLI and the error's
 * kind and code (letters, digits and a few marks only: a tool writing into the CLI's stdout could
 * forge the report); the error's text is an excerpt, quoted fenced, never part of the message.
 */
export function reportedFailure(
  cli: string,
  kind: FailureKind,
  labels: (string | number | undefined)[],
  text: string | undefined,
) {
  // Only short codes (`Error`, `429`, `error_max_turns`): a part with spaces or other marks could
  // be a sentence of the agent's, and would read as Lisa's own words outside the fence.
  const label = labels
    .map((part) => String(part ?? ""))
    .filter((part) => /^[\w.-]{1,40}$/.test(part))
    .join(" ");
  const excerpt = oneLine(text ?? "");
  return {
    kind,
    message: `${cli} reported an error${label ? ` (${label})` : ""}`,
    ...(excerpt ? { excerpt: { from: "error report" as const, text: excerpt } } : {}),
  };
}

/** The result of an invocation that produced nothing usable. */
export function failedOutput(kind: FailureKind, message: string, exitCode: number | undefined, detail?: string): ParsedOutput {
  return {
    ok: false,
    text: "",
    costUsd: 0,
    turns: undefined,
    tokens: undefined,
    sessionId: undefined,
    failure: { kind, message, ...(detail ? { detail } : {}) },
    exitCode,
  };
}

/**
 * A CLI that died without a result: how it ended, in Lisa's words, for the issue. Nothing it
 * printed on stdout is quoted there: its stream holds tool results (a `.env` the agent read, a
 * database URL), which no redaction recognises. The last line of stderr that is not a stack frame,
 * paths shortened to their file name, is kept as an excerpt to quote; the tails of both streams go
 * to the log as `detail`.
 */
export function crashed(
  cli: string,
  exitCode: number | undefined,
  output: { stdout: string; stderr: string },
  what = "printed no result",
): ParsedOutput {
  const last = output.stderr
    .trim()
    .slice(-2_000)
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !/^at\s/.test(line) && !/^[\^~\s]+$/.test(line))
    .at(-1);
  const excerpt = last ? { from: "stderr" as const, text: oneLine(last) } : undefined;
  const ending = exitCode === undefined ? "was ended by a signal" : `exited with ${exitCode}`;
  const detail = [output.stderr.trim().slice(-2_000), output.stdout.trim().slice(-2_000)].filter(Boolean).join("\n--- stdout:\n");
  const result = failedOutput("crashed", `${cli} ${ending} and ${what}`, exitCode, detail);
  return excerpt && result.failure ? { ...result, failure: { ...result.failure, excerpt } } : result;
}

export interface ProviderCapabilities {
  /** The CLI can create its own git worktree. */
  nativeWorktree: boolean;
  /** The CLI prints a machine-readable result. */
  jsonOutput: boolean;
  /** The CLI reports what the invocation cost. */
  costReporting: boolean;
}

/**
 * One agent CLI behind Lisa's provider interface. A provider only describes the CLI;
 * `runAgent` spawns it, feeds the prompt on standard input and enforces deadlines.
 */
export interface Provider {
  name: string;
  /** Executable looked up on PATH unless the operator configures a path. */
  defaultBinary: string;
  capabilities: ProviderCapabilities;
  steering: Steering;
  /** Environment variables this CLI needs besides the basics (its model credentials, its own switches). */
  env: readonly string[];
  /** Arguments for a headless, auto-approving run; the prompt arrives on standard input. */
  args(options: { model: string | undefined }): string[];
  /**
   * How the CLI makes its own git worktree, for providers that can. Lisa then runs the CLI in its
   * checkout with these arguments and delivers from where the CLI put the worktree.
   */
  nativeWorktree?: {
    /** First CLI version whose headless mode supports it. */
    since: string;
    args(name: string): string[];
    /** The branch the CLI puts the worktree `name` on; Lisa finds the worktree by it. */
    branch(name: string): string;
  };
  /**
   * Turns what the CLI printed into a typed result. `prices` price the tokens of a CLI that reports
   * tokens and no cost (Gemini CLI).
   */
  parse(output: { stdout: string; stderr: string; exitCode: number | undefined; prices?: TokenPrices }): ParsedOutput;
  /**
   * A reader of one session's stdout while it runs, telling what each line says of its progress
   * (one per session: a CLI's stream may need what came before, as Gemini CLI's turns do). `prices`
   * price the tokens of a CLI that reports no cost. A CLI that prints nothing until the end has none.
   */
  progress?(options: { prices?: TokenPrices }): ProgressReader;
}
