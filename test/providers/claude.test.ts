import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { claudeProvider } from "../../src/providers/claude.ts";

const result = (fields: Record<string, unknown>) =>
  JSON.stringify({
    type: "result",
    subtype: "success",
    is_error: false,
    result: "All done.",
    total_cost_usd: 0.1234,
    num_turns: 7,
    session_id: "abc",
    usage: { input_tokens: 1200, output_tokens: 340 },
    ...fields,
  });

describe("claudeProvider.args", () => {
  it("runs headless with streamed JSON input and events and no permission prompts, the model only when chosen", () => {
    expect(claudeProvider.args({ model: undefined })).toEqual([
      "-p",
      "--input-format",
      "stream-json",
      "--output-format",
      "stream-json",
      "--verbose",
      "--replay-user-messages",
      "--dangerously-skip-permissions",
    ]);
    expect(claudeProvider.args({ model: "opus" })).toContain("opus");
  });
});

describe("claudeProvider.parse", () => {
  it("reads a successful result", () => {
    expect(claudeProvider.parse({ stdout: `${result({})}\n`, stderr: "", exitCode: 0 })).toEqual({
      ok: true,
      text: "All done.",
      costUsd: 0.1234,
      turns: 7,
      tokens: { input: 1200, output: 340 },
      sessionId: "abc",
      failure: undefined,
      exitCode: 0,
    });
  });

  it("finds the result event at the end of a stream-json transcript", () => {
    const stdout = [
      JSON.stringify({ type: "system", subtype: "init", session_id: "abc" }),
      JSON.stringify({ type: "assistant", message: { content: [{ type: "text", text: "working" }] } }),
      result({ result: "streamed" }),
    ].join("\n");
    expect(claudeProvider.parse({ stdout, stderr: "", exitCode: 0 }).text).toBe("streamed");
  });

  it("finds the result line among other output", () => {
    const stdout = `warming up\n${result({ result: "ok" })}\n`;
    expect(claudeProvider.parse({ stdout, stderr: "", exitCode: 0 }).text).toBe("ok");
  });

  it.each([
    [429, "rate_limited"],
    [529, "overloaded"],
    [500, "overloaded"],
    [401, "auth"],
    [402, "quota"],
    [null, "agent_error"],
  ])("classifies api_error_status %s as %s", (status, kind) => {
    const stdout = result({ is_error: true, subtype: "success", api_error_status: status, result: "API Error" });
    expect(claudeProvider.parse({ stdout, stderr: "", exitCode: 1 }).failure?.kind).toBe(kind);
  });

  it("treats running out of turns as the agent's error", () => {
    const parsed = claudeProvider.parse({
      stdout: result({ subtype: "error_max_turns", is_error: true }),
      stderr: "",
      exitCode: 1,
    });
    expect(parsed.ok).toBe(false);
    expect(parsed.failure?.kind).toBe("agent_error");
  });

  it("reports a crash when no result was printed: Lisa's words for the issue, stderr's last line as an excerpt, the tails for the log", () => {
    const parsed = claudeProvider.parse({ stdout: "", stderr: "TypeError: boom\n", exitCode: 1 });
    expect(parsed.failure).toEqual({
      kind: "crashed",
      message: "claude exited with 1 and printed no result",
      excerpt: { from: "stderr", text: "TypeError: boom" },
      detail: "TypeError: boom",
    });
  });

  it("quotes nothing of stdout when the CLI dies by a signal: a tool result there is no reason for the issue", () => {
    const stdout = `${JSON.stringify({ type: "user", message: { content: [{ type: "tool_result", content: "DB_PASSWORD=hunter2-plain" }] } })}\n`;
    const failure = claudeProvider.parse({ stdout, stderr: "", exitCode: undefined }).failure;
    expect(failure?.message).toBe("claude was ended by a signal and printed no result");
    expect(failure?.excerpt).toBeUndefined();
    expect(failure?.detail).toContain("hunter2-plain");
  });

  it("keeps a stack trace's server paths and file contents out of the message for the issue", () => {
    const stderr = [
      "file:///srv/lisa/node_modules/@anthropic-ai/claude-code/cli.js:4201",
      "  const secretConfig = readFileSync('/srv/lisa/.env');",
      "Error: ENOENT: no such file or directory, open '/home/lisa/data/worktrees/run-1-step-1/x.ts'",
      "    at Object.openSync (node:fs:573:18)",
      "    at file:///srv/lisa/node_modules/@anthropic-ai/claude-code/cli.js:4201:9",
    ].join("\n");
    const failure = claudeProvider.parse({ stdout: "", stderr, exitCode: 1 }).failure;
    expect(failure?.message).toBe("claude exited with 1 and printed no result");
    expect(failure?.excerpt).toEqual({ from: "stderr", text: "Error: ENOENT: no such file or directory, open '…/x.ts'" });
    expect(failure?.detail).toContain("/srv/lisa/node_modules");
  });
});

describe("claudeProvider.progress", () => {
  // Real stream-json lines of Claude Code (agents/node_modules) against dev/scripted-model-server.mjs:
  // a text block, a Write, its tool result, a Bash, its tool result, the final text, the result.
  const lines = readFileSync(new URL("../fixtures/agents/claude-stream-json.jsonl", import.meta.url), "utf8")
    .trimEnd()
    .split("\n");
  const read = claudeProvider.progress?.({});
  const progress = (line: string) => read?.(line);

  it("reads each model turn, the files written, the commands run and the session's cost", () => {
    const events = lines.map(progress);
    expect(events.map((e) => e && Object.keys(e).sort().join("+"))).toEqual([
      "text+turn",
      "files+turn",
      undefined,
      "commands+turn",
      undefined,
      "text+turn",
      "sessionCostUsd",
    ]);
    expect(events[0]?.text).toBe("Writing the file.");
    expect(events[1]?.files).toEqual(["/tmp/lisa-work/repo/a.txt"]);
    // Two lines of the first message share its id: one turn.
    expect(events[1]?.turn).toBe(events[0]?.turn);
    expect(events[3]?.commands).toEqual(["ls -la"]);
    expect(new Set(events.map((e) => e?.turn).filter(Boolean)).size).toBe(3);
    expect(events[6]?.sessionCostUsd).toBeCloseTo(0.0024);
  });

  it("ignores lines that are not events: log lines, broken JSON, events of another shape", () => {
    for (const line of ["", "Warning: something", "{not json", '{"type":"assistant"}', '{"type":"user","message":{}}'])
      expect(progress(line)).toBeUndefined();
  });
});
