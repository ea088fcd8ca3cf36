import { z } from "zod";
import { opencodeProgress } from "./opencode-progress.ts";
import { crashed, type FailureKind, type ParsedOutput, type Provider, reportedFailure } from "./provider.ts";

/** One line of `opencode run --format json`: `step_start`, `tool_use`, `text`, `reasoning`, `step_finish` or `error`. */
const eventSchema = z.looseObject({
  type: z.string(),
  sessionID: z.string().optional(),
  part: z
    .looseObject({
      messageID: z.string().optional(),
      text: z.string().optional(),
      tokens: z
        .looseObject({ input: z.number().optional(), output: z.number().optional(), reasoning: z.number().optional() })
        .optional(),
      cost: z.number().optional(),
    })
    .optional(),
  /** A session error: `APIError`, `ProviderAuthError`, `UnknownError`, `MessageAbortedError`, … */
  error: z
    .looseObject({
      name: z.string().optional(),
      data: z
        .looseObject({
          message: z.string().optional(),
          /** The provider's HTTP status; absent when the API could not be reached at all. */
          statusCode: z.number().optional(),
          isRetryable: z.boolean().optional(),
          /** The provider's error body, as text. */
          responseBody: z.string().optional(),
        })
        .optional(),
    })
    .optional(),
});

type OpencodeEvent = z.infer<typeof eventSchema>;

/** Whether an event line reports a finished tool call or step. */
function endsWork(line: string): boolean {
  try {
    const type = eventSchema.safeParse(JSON.parse(line)).data?.type;
    return type === "tool_use" || type === "step_finish";
  } catch {
    return false;
  }
}
type SessionError = NonNullable<OpencodeEvent["error"]>;

/** The error object providers put in their bodies: `{ error: { type, code } }` (Anthropic, OpenAI). */
const providerBodySchema = z.looseObject({
  error: z.looseObject({ type: z.string().nullish(), code: z.string().nullish() }),
});

/** Error types and codes by which providers say the account is out of money or quota. */
const QUOTA_ERRORS = new Set(["insufficient_quota", "billing_error"]);

function providerErrorCodes(body: string | undefined): string[] {
  if (!body) return [];
  try {
    const parsed = providerBodySchema.safeParse(JSON.parse(body));
    return parsed.success ? [parsed.data.error.type, parsed.data.error.code].filter((c): c is string => !!c) : [];
  } catch {
    return [];
  }
}

function classify(error: SessionError): FailureKind {
  if (error.name === "ProviderAuthError") return "auth";
  if (error.name !== "APIError") return "agent_error";
  const { statusCode: status, isRetryable, responseBody } = error.data ?? {};
  if (providerErrorCodes(responseBody).some((code) => QUOTA_ERRORS.has(code))) return "quota";
  if (status === 429) return "rate_limited";
  if (status === 401 || status === 403) return "auth";
  if (status === 402) return "quota";
  if (status !== undefined && status >= 500) return "overloaded";
  // No status but retryable: the API could not be reached (after OpenCode's own retries).
  if (status === undefined && isRetryable) return "overloaded";
  return "agent_error";
}

function parseEvents(stdout: string): OpencodeEvent[] {
  const events: OpencodeEvent[] = [];
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    try {
      const parsed = eventSchema.safeParse(JSON.parse(line));
      if (parsed.success) events.push(parsed.data);
    } catch {
      // Not an event.
    }
  }
  return events;
}

/** The agent's final message: the text parts of the last message that had any. */
function finalText(events: OpencodeEvent[]): string {
  const texts = events.filter((event) => event.type === "text" && event.part?.text !== undefined);
  const lastMessage = texts.at(-1)?.part?.messageID;
  return texts
    .filter((event) => event.part?.messageID === lastMessage)
    .map((event) => event.part?.text ?? "")
    .join("\n\n")
    .trim();
}

export const opencodeProvider: Provider = {
  name: "opencode",
  defaultBinary: "opencode",
  capabilities: { nativeWorktree: false, jsonOutput: true, costReporting: true },
  // `opencode run` takes one message; its events say when a tool call or a step has finished,
  // the point where stopping loses nothing half done.
  steering: { via: "restart", safePoint: (line) => endsWork(line) },
  env: [
    // Its configuration: the provider, models and permissions; XDG dirs locate the global config and state.
    "OPENCODE_CONFIG",
    "OPENCODE_CONFIG_DIR",
    "OPENCODE_CONFIG_CONTENT",
    "OPENCODE_PERMISSION",
    "OPENCODE_AUTH_CONTENT",
    "OPENCODE_API_KEY",
    "OPENCODE_MODELS_PATH",
    "OPENCODE_MODELS_URL",
    "OPENCODE_PURE",
    "OPENCODE_DISABLE_AUTOUPDATE",
    "OPENCODE_DISABLE_MODELS_FETCH",
    "OPENCODE_DISABLE_SHARE",
    "OPENCODE_DISABLE_LSP_DOWNLOAD",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS",
    "OPENCODE_DISABLE_PROJECT_CONFIG",
    "OPENCODE_DISABLE_CLAUDE_CODE",
    "OPENCODE_DISABLE_CLAUDE_CODE_PROMPT",
    "OPENCODE_DISABLE_CLAUDE_CODE_SKILLS",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS",
    "OPENCODE_DISABLE_AUTOCOMPACT",
    "OPENCODE_DISABLE_PRUNE",
    "OPENCODE_DISABLE_TERMINAL_TITLE",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    // Credentials of the model providers OpenCode may be configured to use.
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENROUTER_API_KEY",
    "GOOGLE_GENERATIVE_AI_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "XAI_API_KEY",
  ],
  // The prompt arrives on standard input (no message argument). `--auto` approves every permission
  // not explicitly denied: `run` otherwise rejects "ask" permissions and still exits 0. `--title`
  // spares the title-generation request to the model.
  args: ({ model }) => ["run", "--format", "json", "--auto", "--title", "lisa", ...(model ? ["--model", model] : [])],
  // Each line stands on its own.
  progress: () => opencodeProgress,
  parse({ stdout, stderr, exitCode }): ParsedOutput {
    const events = parseEvents(stdout);
    if (events.length === 0) {
      return crashed("opencode", exitCode ?? undefined, { stdout, stderr }, "printed no events");
    }
    // There is no summary event: each model step reports its own tokens and cost.
    const steps = events.filter((event) => event.type === "step_finish");
    let input = 0;
    let output = 0;
    let costUsd = 0;
    for (const step of steps) {
      input += step.part?.tokens?.input ?? 0;
      output += (step.part?.tokens?.output ?? 0) + (step.part?.tokens?.reasoning ?? 0);
      costUsd += step.part?.cost ?? 0;
    }
    const error = events.findLast((event) => event.type === "error")?.error;
    const base = {
      text: finalText(events),
      costUsd,
      turns: steps.length || undefined,
      tokens: steps.length ? { input, output } : undefined,
      sessionId: events.find((event) => event.sessionID)?.sessionID,
      exitCode,
    };
    if (error) {
      const failure = reportedFailure("opencode", classify(error), [error.name, error.data?.statusCode], error.data?.message);
      return { ...base, ok: false, failure };
    }
    if (exitCode !== 0)
      return {
        ...base,
        ok: false,
        failure: crashed("opencode", exitCode ?? undefined, { stdout: "", stderr }, "failed").failure,
      };
    return { ...base, ok: true, failure: undefined };
  },
};
