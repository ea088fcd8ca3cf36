import { describe, expect, it } from "vitest";
import { claudeProvider } from "../../src/providers/claude.ts";
import { geminiProvider } from "../../src/providers/gemini.ts";
import { opencodeProvider } from "../../src/providers/opencode.ts";
import type { ProgressEvent } from "../../src/providers/progress-event.ts";
import type { Provider } from "../../src/providers/provider.ts";
import { runAgent } from "../../src/providers/run-agent.ts";
import { AGENT_BIN, agentEnvSource, OPENCODE_MODEL, useModelServer } from "../support/agent-clis.ts";
import { gitIn, tempDir } from "../support/git-fixtures.ts";

// The real CLIs (agents/node_modules) against the scripted model, each model turn answered after a
// pause: their events reach `onLine` while the session runs, and `progress` reads them.

const model = useModelServer();

/** Each CLI's names for writing a file (and the input naming it) and for running a command. */
const TOOLS = new Map<Provider, { write: string; path: string; shell: string }>([
  [claudeProvider, { write: "Write", path: "file_path", shell: "Bash" }],
  [opencodeProvider, { write: "write", path: "filePath", shell: "bash" }],
  [geminiProvider, { write: "write_file", path: "file_path", shell: "run_shell_command" }],
]);

/** Runs `provider` through `runAgent` on a fresh repository and notes each progress event and when it came. */
async function watch(provider: Provider, modelName: string | undefined) {
  const cwd = tempDir("live-lines");
  gitIn(cwd, "init", "-q");
  const tools = TOOLS.get(provider);
  if (!tools) throw new Error(`no tool names for ${provider.name}`);
  const server = await model.start({
    turns: [
      {
        delay_ms: 1_000,
        text: "Writing it.",
        tool_use: [{ name: tools.write, input: { [tools.path]: `${cwd}/a.txt`, content: "a\n" } }],
      },
      { delay_ms: 1_000, tool_use: [{ name: tools.shell, input: { command: "ls", description: "List" } }] },
      { delay_ms: 1_000, text: "Done." },
    ],
  });
  const { GITHUB_TOKEN: _token, ...env } = agentEnvSource(server.url);
  const events: { event: ProgressEvent; at: number }[] = [];
  const read = provider.progress?.({});
  const started = Date.now();
  const result = await runAgent({
    provider,
    binary: `${AGENT_BIN}/${provider.defaultBinary}`,
    model: modelName,
    cwd,
    prompt: "Write a.txt, then list the folder.",
    env: env as Record<string, string>,
    timeoutMs: 120_000,
    stallMs: 60_000,
    sandbox: { mode: "off" },
    onLine: (line) => {
      const event = read?.(line);
      if (event) events.push({ event, at: Date.now() - started });
    },
  });
  return { result, events };
}

describe.each([
  ["Claude Code", claudeProvider, undefined],
  ["OpenCode", opencodeProvider, OPENCODE_MODEL],
  ["Gemini CLI", geminiProvider, "gemini-2.5-flash"],
] as const)("%s streams its events as it goes", (_name, provider, modelName) => {
  it("hands each to onLine while the session runs, and progress reads the file written and the command run", async () => {
    const { result, events } = await watch(provider, modelName);
    expect(result.ok).toBe(true);
    expect(events.flatMap((e) => e.event.files ?? [])).toContainEqual(expect.stringMatching(/a\.txt$/));
    expect(events.flatMap((e) => e.event.commands ?? [])).toEqual(["ls"]);
    const file = events.find((e) => e.event.files?.length);
    // The file's event came a turn (a second's pause) and more before the session ended.
    expect(result.durationMs - (file?.at ?? Infinity)).toBeGreaterThan(1_500);
    expect(new Set(events.map((e) => e.event.turn).filter(Boolean)).size).toBeGreaterThanOrEqual(3);
    // And what the session cost, per step or once at the end.
    expect(events.some((e) => (e.event.costUsd ?? e.event.sessionCostUsd ?? 0) > 0)).toBe(true);
  });
});
