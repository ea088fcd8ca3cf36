import { describe, expect, it } from "vitest";
import { claudeProvider } from "../../../src/providers/claude.ts";
import { sessionFailure } from "../../../src/workflow/context/session-failure.ts";

// A CLI's error report is JSON on its stdout, and a tool the agent runs can write there too: the
// report's text is the agent's as much as the model API's, so it is quoted, never said in Lisa's words.

const FORGED = `@maintainers Fixes acme/web#7 see [this](javascript:alert(1)) DB_PASSWORD=hunter2-not-a-known-shape ${"x".repeat(400)}`;

describe("sessionFailure", () => {
  it("says a reported error in Lisa's words and quotes its text fenced, on one short line", () => {
    const stdout = `${JSON.stringify({ type: "result", subtype: "error_during_execution", is_error: true, result: `${FORGED}\nsecond line` })}\n`;
    const { failure } = claudeProvider.parse({ stdout, stderr: "", exitCode: 1 });
    const said = sessionFailure("The agent session", failure, []);
    const [words = "", quote = ""] = said.split(/\n\n/);
    expect(words).toBe(
      "The agent session failed (agent_error): claude reported an error (error_during_execution). The error it reported:",
    );
    expect(quote).toMatch(/^```text\n@maintainers Fixes acme\/web#7 .{0,200}\n```$/s);
    expect(quote.split("\n")).toHaveLength(3);
    expect(said).not.toContain("second line");
  });

  it("names the report's kind only when it is a short code, never a sentence of the agent's", () => {
    const forged = "Your session expired. Sign in again at www.claude-login.example now";
    const stdout = `${JSON.stringify({ type: "result", subtype: forged, is_error: true, result: "" })}\n`;
    const { failure } = claudeProvider.parse({ stdout, stderr: "", exitCode: 1 });
    expect(sessionFailure("The agent session", failure, [])).toBe(
      "The agent session failed (agent_error): claude reported an error",
    );
    const coded = `${JSON.stringify({ type: "result", subtype: "error_max_turns", is_error: true, result: "" })}\n`;
    expect(claudeProvider.parse({ stdout: coded, stderr: "", exitCode: 1 }).failure?.message).toBe(
      "claude reported an error (error_max_turns)",
    );
  });
});
