import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { geminiProvider } from "../../src/providers/gemini.ts";
import { geminiProgress } from "../../src/providers/gemini-progress.ts";

// Real output of `gemini --approval-mode yolo --skip-trust --output-format stream-json --model gemini-2.5-flash`
// (@google/gemini-cli 0.61.0) against dev/scripted-model-server.mjs, prompt on stdin, one case per
// script; `node dev/capture-gemini-stream.mjs` captures them again.
interface Captured {
  stdout: string;
  stderr: string;
  exitCode: number;
}
const CAPTURED: Record<string, Captured> = JSON.parse(
  readFileSync(new URL("../fixtures/agents/gemini-stream-json.json", import.meta.url), "utf8"),
);
const captured = (name: string): Captured => {
  const found = CAPTURED[name];
  if (!found) throw new Error(`no captured output "${name}"`);
  return found;
};

/** A run that wrote a file, edited it, ran a shell command and answered: 4 turns of 12,000 tokens read, 40 written and 30 of thinking. */
const SUCCESS = captured("success");

describe("geminiProvider.args", () => {
  it("runs headless in YOLO mode with streamed JSON output, trusting the worktree, the model only when chosen", () => {
    expect(geminiProvider.args({ model: undefined })).toEqual([
      "--approval-mode",
      "yolo",
      "--skip-trust",
      "--output-format",
      "stream-json",
    ]);
    expect(geminiProvider.args({ model: "gemini-2.5-flash" })).toEqual([
      "--approval-mode",
      "yolo",
      "--skip-trust",
      "--output-format",
      "stream-json",
      "--model",
      "gemini-2.5-flash",
    ]);
  });

  it("passes Google's credentials and its own switches, never another vendor's key or a GitHub token", () => {
    expect(geminiProvider.env).toEqual(expect.arrayContaining(["GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"]));
    expect(geminiProvider.env).toContain("GEMINI_CLI_NO_RELAUNCH");
    for (const name of geminiProvider.env) expect(name).not.toMatch(/ANTHROPIC|OPENAI|CLAUDE|OPENCODE|GITHUB|^GH_/);
  });

  it("does not claim a native worktree: the CLI's --worktree is experimental", () => {
    expect(geminiProvider.nativeWorktree).toBeUndefined();
    expect(geminiProvider.capabilities).toEqual({ nativeWorktree: false, jsonOutput: true, costReporting: true });
  });
});

describe("geminiProvider.parse", () => {
  it("reads the answer (the last turn's words), tokens, turns and session of a successful run", () => {
    expect(geminiProvider.parse(SUCCESS)).toEqual({
      ok: true,
      text: "All done: wrote a.txt, changed it and listed the folder.",
      // 48,000 tokens read at $0.30 and 160 written plus 120 of thinking at $2.50 per million: Google's list price for 2.5 Flash.
      costUsd: expect.closeTo(0.0151, 9),
      turns: 4,
      tokens: { input: 48_000, output: 280 },
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      failure: undefined,
      exitCode: 0,
    });
  });

  it("prices the tokens at the operator's prices, and a model it has no price for as the dearest it has", () => {
    const prices = { "gemini-2.5-flash": { input: 1, output: 10 }, "gemini-3-pro": { input: 2, output: 12 } };
    expect(geminiProvider.parse({ ...SUCCESS, prices }).costUsd).toBeCloseTo(0.0508, 9);
    const unknown = SUCCESS.stdout.replace('"models":{"gemini-2.5-flash":', '"models":{"gemini-9-ultra":');
    expect(geminiProvider.parse({ ...SUCCESS, stdout: unknown, prices }).costUsd).toBeCloseTo((48_000 * 2 + 280 * 12) / 1e6, 9);
  });

  it.each([
    ["rate limited", "rate_limited", "Error 429: Resource has been exhausted (e.g. check quota)."],
    ["server error", "overloaded", 'Error 500: {"error":{"code":500,"message":"Internal error encountered."'],
    ["stream broken off by a 503", "overloaded", "Error 503: got status: UNAVAILABLE."],
    ["unauthenticated", "auth", "Error 401: "],
    ["forbidden", "auth", "Error 403: "],
    ["payment required", "quota", "Error 402: "],
    ["overloaded 529", "overloaded", "Error 529: "],
    ["bad request", "agent_error", "Error 400: "],
    ["dropped connection", "agent_error", "Error 1: exception TypeError: fetch failed sending request"],
    ["turn limit", "agent_error", "FatalTurnLimitedError 53: Reached max session turns for this session."],
  ])("classifies %s from the result's error and the exit code", (name, kind, message) => {
    const parsed = geminiProvider.parse(captured(name));
    expect(parsed.ok).toBe(false);
    expect(parsed.failure?.kind).toBe(kind);
    // Lisa's words name the error; its text (without the CLI's `[API Error: …]` and hints) is an excerpt, quoted apart.
    const [label = "", text = ""] = message.split(/: (.*)/s);
    expect(parsed.failure?.message).toBe(`gemini reported an error (${label})`);
    expect(parsed.failure?.excerpt?.text ?? "").toMatch(new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    expect(parsed.failure?.excerpt?.text).not.toMatch(/API Error|Please wait/);
    expect(parsed.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(parsed.exitCode).toBe(captured(name).exitCode);
  });

  it("counts what the turns answered before a failure cost", () => {
    expect(geminiProvider.parse(captured("overloaded after a turn"))).toMatchObject({
      ok: false,
      turns: 1,
      tokens: { input: 100, output: 20 },
      costUsd: expect.closeTo((100 * 0.3 + 20 * 2.5) / 1e6, 12),
      failure: { kind: "overloaded", message: "gemini reported an error (Error 503)" },
    });
  });

  it("fails a run that exits 0 with an unusable answer, from the error event before its result", () => {
    const parsed = geminiProvider.parse(captured("empty response"));
    expect(parsed).toMatchObject({ ok: false, text: "", turns: 1, tokens: { input: 100, output: 20 }, exitCode: 0 });
    expect(parsed.failure).toEqual({
      kind: "agent_error",
      message: "gemini reported an error (INVALID_STREAM)",
      excerpt: {
        from: "error report",
        text: "The model returned an empty response with no text or thoughts. This may be a transient API issue; please try again.",
      },
    });
  });

  it("reads an unusable auth method, which the CLI tells on stderr alone and exits 41, as an auth failure", () => {
    const parsed = geminiProvider.parse(captured("no auth method"));
    expect(parsed.failure).toMatchObject({
      kind: "auth",
      message: "gemini exited with 41 and printed no result",
      excerpt: { from: "stderr", text: "Invalid auth method selected." },
    });
  });

  it("reports a crash, with the tail of stderr, when the CLI prints no result (no input: exit 42)", () => {
    const parsed = geminiProvider.parse(captured("no input"));
    expect(parsed.failure).toMatchObject({
      kind: "crashed",
      message: "gemini exited with 42 and printed no result",
      excerpt: { from: "stderr", text: expect.stringMatching(/^No input provided via stdin\./) },
    });
    // A stream cut off before its result is no result either.
    const cut = SUCCESS.stdout.split("\n").slice(0, 5).join("\n");
    expect(geminiProvider.parse({ stdout: cut, stderr: "", exitCode: 0 }).failure?.kind).toBe("crashed");
  });

  it("does not trust a result when the CLI exited with an error status", () => {
    const parsed = geminiProvider.parse({ ...SUCCESS, exitCode: 1 });
    expect(parsed.ok).toBe(false);
    expect(parsed.failure?.kind).toBe("crashed");
  });
});

describe("geminiProgress", () => {
  const lines = SUCCESS.stdout.trimEnd().split("\n");

  it("numbers the turns, and reads the files written and edited, the commands run, the words and the cost, from real lines", () => {
    const events = lines.map(geminiProgress());
    expect(events).toEqual([
      undefined,
      undefined,
      { turn: "turn-1", text: "Writing it." },
      { turn: "turn-1", files: ["a.txt"] },
      undefined,
      { turn: "turn-2", files: ["a.txt"] },
      undefined,
      { turn: "turn-3", commands: ["ls"] },
      undefined,
      { turn: "turn-4", text: "All done: wrote a.txt, changed it and listed the folder." },
      { sessionCostUsd: expect.closeTo(geminiProvider.parse(SUCCESS).costUsd, 12) },
    ]);
  });

  it("prices the result's tokens at the operator's prices", () => {
    const prices = { "gemini-2.5-flash": { input: 1, output: 10 } };
    const read = geminiProgress({ prices });
    expect(read(lines.at(-1) ?? "")?.sessionCostUsd).toBeCloseTo(geminiProvider.parse({ ...SUCCESS, prices }).costUsd, 12);
  });

  it("gathers a turn's words as they stream in pieces, and starts again with the next turn", () => {
    const read = geminiProgress();
    const piece = (content: string) => JSON.stringify({ type: "message", role: "assistant", content, delta: true });
    expect(read(piece("Looking at "))).toEqual({ turn: "turn-1", text: "Looking at " });
    expect(read(piece("the README."))).toEqual({ turn: "turn-1", text: "Looking at the README." });
    read(JSON.stringify({ type: "tool_result", tool_id: "t", status: "success" }));
    expect(read(piece("Done."))).toEqual({ turn: "turn-2", text: "Done." });
  });

  it("ignores lines that are not events, and tool calls that write nothing", () => {
    const read = geminiProgress();
    for (const line of [
      "",
      "YOLO mode is enabled. All tool calls will be automatically approved.",
      "{broken",
      '{"type":"tool_use","tool_name":"write_file","parameters":"a.txt"}',
      '{"type":"surprise","content":"hi"}',
    ])
      expect(read(line)).toBeUndefined();
    // A read, or a write naming no path, is its turn and nothing more.
    expect(read('{"type":"tool_use","tool_name":"read_file","parameters":{"file_path":"a.txt"}}')).toEqual({ turn: "turn-1" });
    expect(read('{"type":"tool_use","tool_name":"write_file","parameters":{"file_path":["a.txt"]}}')).toEqual({ turn: "turn-1" });
  });
});
