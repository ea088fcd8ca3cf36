import { z } from "zod";
import { claudeProgress } from "./claude-progress.ts";
import { crashed, type FailureKind, type ParsedOutput, type Provider, reportedFailure } from "./provider.ts";

/** The final object `claude -p` prints: the whole output with `json`, the last event with `stream-json`. */
const claudeResultSchema = z.looseObject({
  type: z.literal("result"),
  subtype: z.string(),
  is_error: z.boolean(),
  result: z.string().optional(),
  total_cost_usd: z.number().optional(),
  num_turns: z.number().optional(),
  session_id: z.string().optional(),
  api_error_status: z.number().nullish(),
  usage: z.looseObject({ input_tokens: z.number().optional(), output_tokens: z.number().optional() }).optional(),
});

type ClaudeResult = z.infer<typeof claudeResultSchema>;

function classify(result: ClaudeResult): FailureKind {
  const status = result.api_error_status;
  if (status === 429) return "rate_limited";
  if (status === 529 || (status !== undefined && status !== null && status >= 500)) return "overloaded";
  if (status === 401 || status === 403) return "auth";
  if (status === 402) return "quota";
  return "agent_error";
}

/** The last line of stdout that parses as the CLI's result object. */
function findResult(stdout: string): ClaudeResult | undefined {
  const lines = stdout.trim().split("\n").reverse();
  for (const line of lines) {
    try {
      const parsed = claudeResultSchema.safeParse(JSON.parse(line));
      if (parsed.success) return parsed.data;
    } catch {
      // Not JSON: progress or warnings around the result line.
    }
  }
  return undefined;
}

/** A user message of Lisa's, echoed back; tool results are user messages too, with a list as content. */
const echoSchema = z.looseObject({ type: z.literal("user"), message: z.looseObject({ content: z.string() }) });

function echoedMessage(line: string): string | undefined {
  try {
    return echoSchema.safeParse(JSON.parse(line)).data?.message.content;
  } catch {
    return undefined;
  }
}

function isResultLine(line: string): boolean {
  try {
    return claudeResultSchema.safeParse(JSON.parse(line)).success;
  } catch {
    return false;
  }
}

export const claudeProvider: Provider = {
  name: "claude",
  defaultBinary: "claude",
  capabilities: { nativeWorktree: true, jsonOutput: true, costReporting: true },
  // `--input-format stream-json` reads user messages from stdin as the session goes and waits for
  // more until stdin ends. `--replay-user-messages` echoes each one once taken in: mid-turn it joins
  // that turn (after the running tool call), else it starts a turn; every turn ends in a result event.
  steering: {
    via: "stream",
    message: (text) => `${JSON.stringify({ type: "user", message: { role: "user", content: text } })}\n`,
    echoed: (line) => echoedMessage(line),
    answered: (line) => isResultLine(line),
  },
  // `--worktree` works in `-p` mode from 2.1.50 on. It makes `.claude/worktrees/<name>` under the
  // main repository's root (the mirror itself, for Lisa's bare mirrors), not under the cwd, and
  // leaves it there, locked, after the run.
  nativeWorktree: {
    since: "2.1.50",
    args: (name) => ["--worktree", name],
    branch: (name) => `worktree-${name}`,
  },
  env: [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
    "CLAUDE_CODE_MAX_RETRIES",
    "CLAUDE_CONFIG_DIR",
    "API_TIMEOUT_MS",
    "CLAUDE_BYTE_STREAM_IDLE_TIMEOUT_MS",
    "DISABLE_ERROR_REPORTING",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_TELEMETRY",
    "DISABLE_AUTOUPDATER",
    "IS_SANDBOX",
  ],
  // stream-json prints an event per message as the session goes, so a silent agent really is
  // stalled; plain json says nothing until the end. The last event is the same result object.
  args: ({ model }) => [
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--replay-user-messages",
    "--dangerously-skip-permissions",
    ...(model ? ["--model", model] : []),
  ],
  // Each line stands on its own.
  progress: () => claudeProgress,
  parse({ stdout, stderr, exitCode }): ParsedOutput {
    const result = findResult(stdout);
    if (!result) {
      return crashed("claude", exitCode ?? undefined, { stdout, stderr });
    }
    const failed = result.is_error || result.subtype !== "success";
    return {
      ok: !failed,
      text: result.result ?? "",
      costUsd: result.total_cost_usd ?? 0,
      turns: result.num_turns,
      tokens: result.usage ? { input: result.usage.input_tokens ?? 0, output: result.usage.output_tokens ?? 0 } : undefined,
      sessionId: result.session_id,
      failure: failed ? reportedFailure("claude", classify(result), [result.subtype], result.result) : undefined,
      exitCode,
    };
  },
};
