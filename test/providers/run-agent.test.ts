import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildAgentEnv } from "../../src/providers/agent-env.ts";
import { claudeProvider } from "../../src/providers/claude.ts";
import { runAgent } from "../../src/providers/run-agent.ts";
import { tempDir } from "../support/git-fixtures.ts";
import { isAlive } from "../support/process-alive.ts";

const agent = (name: string) => fileURLToPath(new URL(`../fixtures/agents/${name}`, import.meta.url));
const base = { provider: claudeProvider, model: undefined, cwd: process.cwd(), env: { PATH: process.env.PATH ?? "" } };

describe("runAgent", () => {
  it("passes the prompt on standard input, not as an argument", async () => {
    const prompt = "x".repeat(200_000);
    const result = await runAgent({ ...base, binary: agent("echo-stdin.sh"), prompt, timeoutMs: 10_000, stallMs: 10_000 });
    expect(result.ok).toBe(true);
    expect(result.text).toBe(`${prompt}|args=5`);
    expect(result.costUsd).toBe(0.5);
  });

  it("kills the whole process group at the session deadline and calls it a timeout", async () => {
    const pidsFile = path.join(tempDir("pids"), "pids");
    const result = await runAgent({
      ...base,
      binary: agent("chatty-then-silent.sh"),
      env: { ...base.env, PIDS_FILE: pidsFile },
      prompt: "go",
      timeoutMs: 300,
      stallMs: 10_000,
    });
    expect(result.failure?.kind).toBe("timeout");
    expect(result.failure?.message).toMatch(/did not finish within/);
  });

  it("kills a silent agent and its children at the stall deadline", async () => {
    const pidsFile = path.join(tempDir("pids"), "pids");
    const result = await runAgent({
      ...base,
      binary: agent("hang-with-child.sh"),
      env: { ...base.env, PIDS_FILE: pidsFile },
      prompt: "go",
      timeoutMs: 30_000,
      stallMs: 500,
    });
    expect(result.failure?.kind).toBe("stalled");
    const pids = readFileSync(pidsFile, "utf8").trim().split(" ").map(Number);
    expect(pids).toHaveLength(2);
    // A killed process is gone once its new parent has reaped it, which takes a moment.
    for (let i = 0; i < 40 && pids.some(isAlive); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(pids.filter(isAlive)).toEqual([]);
  });

  it("restarts the stall deadline on every output, so a talkative agent is not stalled", async () => {
    const result = await runAgent({
      ...base,
      binary: agent("chatty-then-silent.sh"),
      prompt: "go",
      timeoutMs: 30_000,
      stallMs: 400,
    });
    expect(result.failure?.kind).toBe("stalled");
    expect(result.durationMs).toBeGreaterThan(600);
  });

  it("reports a missing CLI as not installed", async () => {
    const result = await runAgent({ ...base, binary: "/nonexistent/claude", prompt: "go", timeoutMs: 5_000, stallMs: 5_000 });
    expect(result.failure).toEqual({
      kind: "not_installed",
      message: "claude is not installed: `/nonexistent/claude` was not found",
    });
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
