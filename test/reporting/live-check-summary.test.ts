import { describe, expect, it } from "vitest";
import { type LiveView, liveEndReport, liveReport } from "../../src/reporting/live-check-summary.ts";

const view = (change: Partial<LiveView> = {}): LiveView => ({
  issueRef: "acme/api#1",
  pass: 2,
  headSha: "1a2b3c4d5e6f",
  session: 1,
  purpose: "revise",
  provider: "claude",
  turns: 3,
  costUsd: 0.1234,
  files: ["src/a.ts"],
  commands: ["npm test"],
  commandsRun: 1,
  said: undefined,
  gates: undefined,
  intervalMs: 30_000,
  trackingUrl: "https://github.com/acme/api/issues/1#issuecomment-9",
  secrets: ["hunter2-the-secret"],
  ...change,
});

describe("the live check run's report", () => {
  it("is in progress, says how often it is written, and links the tracking comment", () => {
    const report = liveReport(view());
    expect(report.conclusion).toBeUndefined();
    expect(report.title).toBe("Pass 2: claude is working, turn 3");
    expect(report.summary).toContain("Pass 2 of acme/api#1 is running on `1a2b3c4`.");
    expect(report.summary).toContain("updated at most every 30 seconds");
    expect(report.summary).toContain("**Session** 1, revising · **Provider** `claude` · **Turns** 3 · **Cost so far** $0.12");
    expect(report.summary).toContain("**Gates**: not run yet in this pass.");
    expect(report.detailsUrl).toBe("https://github.com/acme/api/issues/1#issuecomment-9");
  });

  it("lists the judges with the gates once they ran, each verdict's sentence an inert code span", () => {
    const judge = {
      command: "judge: The README explains it.",
      passed: false,
      judge: { criterion: "The README explains it.", verdict: "FAIL" as const, reason: "No usage @team.", provider: "gemini" },
    };
    const { summary } = liveReport(view({ gates: [{ command: "npm test", passed: true }, judge] }));
    expect(summary).toContain("**Gates**: ✅ `npm test` · ❌ judge `The README explains it.` (`gemini`): FAIL `No usage @team.`");
  });

  it("bounds the files and commands it lists, and the length of each", () => {
    const files = Array.from({ length: 25 }, (_, i) => `f${i}.ts`);
    const commands = Array.from({ length: 10 }, (_, i) => `cmd-${i} ${"x".repeat(300)}`);
    const { summary } = liveReport(view({ files, commands, commandsRun: 14 }));
    expect(summary).toContain("**Files touched** (25): `f5.ts`");
    expect(summary).not.toContain("`f4.ts`");
    expect(summary).toContain("`f24.ts`, and 5 more");
    expect(summary).toContain("**Commands run** (14, the last 10; names only, never their output):");
    const listed = summary.split("\n").filter((line) => line.startsWith("- `cmd-"));
    expect(listed).toHaveLength(10);
    for (const line of listed) expect(line.length).toBeLessThanOrEqual(2 + 2 + 160);
  });

  it("quotes the agent's words fenced and redacted, and nothing of theirs as live markdown", () => {
    const { summary } = liveEndReport(
      view({
        said: "</details><img src=x> @team ``` hunter2-the-secret",
        commands: ["echo `hunter2-the-secret` ]] (x)"],
        files: ["[a](javascript:x).ts"],
      }),
      { kind: "blocked", reason: "The gates still fail: `npm test` <b>x</b> @ann" },
    );
    expect(summary).not.toContain("hunter2-the-secret");
    const fence = summary.match(/(`{3,})text\n([\s\S]*?)\n\1/);
    expect(fence?.[2]).toContain("</details><img src=x> @team ``` ‹redacted›");
    const outside = summary.replace(fence?.[0] ?? "", "");
    expect(outside).not.toMatch(/<img|<b>|@team|@ann/);
    // A link the agent names as a file is a code span, not a link.
    expect(outside).toContain("**Files touched** (1): `[a](javascript:x).ts`");
    expect(outside).toContain("- ``echo `‹redacted›` ]] (x)``");
  });

  it("ends with the pass's outcome", () => {
    expect(liveEndReport(view(), { kind: "built" })).toMatchObject({ conclusion: "neutral", title: "Pass 2's session is done" });
    expect(liveEndReport(view(), { kind: "blocked", reason: "red" })).toMatchObject({
      conclusion: "failure",
      title: "Pass 2 is blocked",
    });
    expect(liveEndReport(view(), { kind: "stopped" })).toMatchObject({ conclusion: "cancelled" });
    expect(liveEndReport(view(), { kind: "failed", reason: "x" })).toMatchObject({
      conclusion: "failure",
      title: "Pass 2 failed",
    });
  });
});
