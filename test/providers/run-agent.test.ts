import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { processesMatching } from "../../dev/processes-matching.ts";
import { KILL_GRACE_MS } from "../../src/process/run-with-deadline.ts";
import { buildAgentEnv } from "../../src/providers/agent-env.ts";
import { claudeProvider } from "../../src/providers/claude.ts";
import { runAgent } from "../../src/providers/run-agent.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { isAlive } from "../support/process-alive.ts";

const agent = (name: string) => fileURLToPath(new URL(`../fixtures/agents/${name}`, import.meta.url));
const base = { provider: claudeProvider, model: undefined, env: { PATH: process.env.PATH ?? "" } };
/** A `sleep` duration no other process has, so the test finds the agent's child by its command line from outside the sandbox. */
const uniqueSleep = () => `600.${process.pid}${Math.floor(Math.random() * 1e6)}`;

async function gone(pids: number[]): Promise<number[]> {
  // A killed process disappears once it has been reaped, which takes a moment.
  for (let i = 0; i < 40 && pids.some(isAlive); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return pids.filter(isAlive);
}

describe("runAgent", () => {
  it("passes the prompt on standard input, not as an argument", async () => {
    const prompt = "x".repeat(200_000);
    const result = await runAgent({
      ...base,
      // A CLI that reads its prompt once, to the end of standard input (Gemini CLI, OpenCode).
      provider: { ...claudeProvider, steering: { via: "restart" } },
      cwd: tempDir("agent"),
      binary: agent("echo-stdin.sh"),
      prompt,
      timeoutMs: 10_000,
      stallMs: 10_000,
    });
    expect(result.ok).toBe(true);
    expect(result.text).toBe(`${prompt}|args=8`);
    expect(result.costUsd).toBe(0.5);
  });

  it("kills the whole process group at the session deadline and calls it a timeout", async () => {
    const result = await runAgent({
      ...base,
      cwd: tempDir("agent"),
      binary: agent("chatty-then-silent.sh"),
      prompt: "go",
      timeoutMs: 300,
      stallMs: 10_000,
    });
    expect(result.failure?.kind).toBe("timeout");
    expect(result.failure?.message).toMatch(/did not finish within/);
  });

  it("kills a silent agent and its children at the stall deadline", async () => {
    const sleep = uniqueSleep();
    const result = await runAgent({
      ...base,
      cwd: tempDir("agent"),
      binary: agent("hang-with-child.sh"),
      env: { ...base.env, SLEEP_FOR: sleep },
      prompt: "go",
      timeoutMs: 30_000,
      stallMs: 500,
    });
    expect(result.failure?.kind).toBe("stalled");
    expect(await gone(processesMatching(`sleep ${sleep}`))).toEqual([]);
  });

  it("holds the deadline for an agent that ignores SIGTERM, and ends it and its children", async () => {
    const sleep = uniqueSleep();
    const started = Date.now();
    const result = await runAgent({
      ...base,
      cwd: tempDir("agent"),
      binary: agent("ignore-term.sh"),
      env: { ...base.env, SLEEP_FOR: sleep },
      prompt: "go",
      timeoutMs: 1_000,
      stallMs: 10_000,
    });
    expect(result.failure?.kind).toBe("timeout");
    // The deadline plus at most the kill grace.
    expect(Date.now() - started).toBeLessThan(1_000 + KILL_GRACE_MS + 1_000);
    expect(await gone(processesMatching(`sleep ${sleep}`))).toEqual([]);
  });

  it("ends a `setsid` child holding stdout open with the session, in the sandbox's PID namespace", async () => {
    const sleep = uniqueSleep();
    const started = Date.now();
    const result = await runAgent({
      ...base,
      cwd: tempDir("agent"),
      binary: agent("setsid-child.sh"),
      env: { ...base.env, SLEEP_FOR: sleep },
      prompt: "go",
      timeoutMs: 1_000,
      stallMs: 10_000,
    });
    expect(result.failure?.kind).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(1_000 + KILL_GRACE_MS + 1_000);
    expect(await gone(processesMatching(`sleep ${sleep}`))).toEqual([]);
  });

  it("holds the same deadline with the sandbox off, and ends the `setsid` child that left the group", async () => {
    const sleep = uniqueSleep();
    const started = Date.now();
    const result = await runAgent({
      ...base,
      cwd: tempDir("agent"),
      binary: agent("setsid-child.sh"),
      env: { ...base.env, SLEEP_FOR: sleep },
      prompt: "go",
      timeoutMs: 1_000,
      stallMs: 10_000,
      sandbox: { mode: "off" },
    });
    expect(result.failure?.kind).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(1_000 + KILL_GRACE_MS + 1_000);
    // No PID namespace here: the tag it inherited from the agent (tagged-processes.ts) found it.
    expect(await gone(processesMatching(`sleep ${sleep}`))).toEqual([]);
  });

  it("restarts the stall deadline on every output, so a talkative agent is not stalled", async () => {
    const result = await runAgent({
      ...base,
      cwd: tempDir("agent"),
      binary: agent("chatty-then-silent.sh"),
      prompt: "go",
      timeoutMs: 30_000,
      // Seconds, not a few hundred ms: on a loaded machine a tick may come late, and must not stall it.
      stallMs: 2_000,
    });
    expect(result.failure?.kind).toBe("stalled");
    // Six ticks 0.1 s apart, then the stall: a deadline that did not restart would have ended it at 2 s.
    expect(result.durationMs).toBeGreaterThan(2_500);
  });

  it("tells each stdout line as the sandboxed agent prints it, not only at the end", async () => {
    const lines: { line: string; at: number }[] = [];
    const started = Date.now();
    const result = await runAgent({
      ...base,
      cwd: tempDir("agent"),
      binary: agent("chatty-then-silent.sh"),
      prompt: "go",
      timeoutMs: 30_000,
      stallMs: 1_000,
      onLine: (line) => lines.push({ line, at: Date.now() - started }),
    });
    expect(result.failure?.kind).toBe("stalled");
    expect(lines.map((l) => l.line)).toEqual(["tick 1", "tick 2", "tick 3", "tick 4", "tick 5", "tick 6"]);
    // The ticks came while the agent ran, a second and more before the stall deadline ended it.
    expect(result.durationMs - (lines.at(-1)?.at ?? Infinity)).toBeGreaterThan(800);
  });

  it("reports a missing CLI as not installed", async () => {
    const result = await runAgent({
      ...base,
      cwd: tempDir("agent"),
      binary: "/nonexistent/claude",
      prompt: "go",
      timeoutMs: 5_000,
      stallMs: 5_000,
    });
    expect(result.failure).toEqual({
      kind: "not_installed",
      message: "claude is not installed: `/nonexistent/claude` was not found",
    });
  });

  it("reports a CLI missing from PATH as not installed, in the sandbox too", async () => {
    const result = await runAgent({
      ...base,
      cwd: tempDir("agent"),
      env: { PATH: "/usr/bin:/bin" },
      prompt: "go",
      timeoutMs: 5_000,
      stallMs: 5_000,
    });
    expect(result.failure?.kind).toBe("not_installed");
  });
});

describe("buildAgentEnv", () => {
  const source = {
    PATH: "/usr/bin",
    HOME: "/home/lisa",
    ANTHROPIC_API_KEY: "sk-ant-key",
    GEMINI_API_KEY: "gemini-key",
    GITHUB_TOKEN: "ghp_x",
    PRIVATE_KEY: "pem",
    WEBHOOK_SECRET: "s",
    LISA_DATA_DIR: "/data",
    RANDOM_THING: "1",
  };

  it("keeps the basics and the provider's own variables only", () => {
    expect(buildAgentEnv(source, claudeProvider.env, { GIT_AUTHOR_NAME: "Lisa" }, [])).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/lisa",
      ANTHROPIC_API_KEY: "sk-ant-key",
      GIT_AUTHOR_NAME: "Lisa",
    });
  });

  it("never passes a forbidden name, even when a provider asks for it", () => {
    expect(buildAgentEnv(source, ["GITHUB_TOKEN", "PRIVATE_KEY", "WEBHOOK_SECRET"], {}, [])).toEqual({
      PATH: "/usr/bin",
      HOME: "/home/lisa",
    });
  });

  it("drops any variable whose value contains a known secret", () => {
    const env = buildAgentEnv({ ...source, HTTPS_PROXY: "http://user:installation-token-value@proxy" }, [], {}, [
      "installation-token-value",
    ]);
    expect(env.HTTPS_PROXY).toBeUndefined();
  });
});
