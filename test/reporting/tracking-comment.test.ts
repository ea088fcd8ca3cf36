import { describe, expect, it } from "vitest";
import { GITHUB_BODY_LIMIT } from "../../src/markdown/sanitize-markdown.ts";
import { CUT_NOTE } from "../../src/reporting/fit-to-limit.ts";
import { renderTrackingComment, type TrackingView, trackingMarker } from "../../src/reporting/tracking-comment.ts";
import type { PrGate } from "../../src/reporting/views.ts";

const ZWSP = "\u200B";

const apiGate: PrGate = {
  repo: "acme/api",
  number: 5,
  url: "https://github.com/acme/api/pull/5",
  status: "approved",
  approvers: ["ann"],
  blockers: [],
  headSha: "1a2b3c4d5e6f",
};
const webGate: PrGate = {
  repo: "acme/web",
  number: 7,
  url: "https://github.com/acme/web/pull/7",
  status: "changes_requested",
  approvers: [],
  blockers: ["bob"],
  headSha: "9f8e7d6c",
};
const docsGate: PrGate = {
  repo: "acme/docs",
  number: 3,
  url: "https://github.com/acme/docs/pull/3",
  status: "pending",
  approvers: [],
  blockers: [],
  headSha: "abcdef12",
};

type Step = TrackingView["steps"][number];

function step(overrides: Partial<Step> = {}): Step {
  return {
    position: 1,
    repo: "acme/api",
    branch: "lisa/12-list-items",
    state: "delivered",
    prUrl: "https://github.com/acme/api/pull/5",
    sessions: [
      {
        iteration: 1,
        provider: "claude",
        model: "sonnet",
        purpose: "implement",
        state: "succeeded",
        durationMs: 242_000,
        costUsd: 0.4,
        turns: 12,
      },
    ],
    ...overrides,
  };
}

function trackingView(overrides: Partial<TrackingView> = {}): TrackingView {
  return {
    runId: 12,
    state: "review",
    pass: 3,
    maxPasses: 5,
    requestedBy: "ann",
    elapsedMs: 723_000,
    costUsd: 2.1,
    limitUsd: 20,
    steps: [step({ gate: apiGate })],
    queuedGuidance: [],
    history: [],
    canContinue: true,
    secrets: [],
    ...overrides,
  };
}

const lineStartingWith = (text: string, start: string) => text.split("\n").find((line) => line.startsWith(start));

describe("trackingMarker", () => {
  it("keeps the marker existing comments are found by", () => {
    expect(trackingMarker(12)).toBe("<!-- lisa:tracking run=12 -->");
  });
});

describe("renderTrackingComment", () => {
  it("starts with the marker, the pass and the state, then who asked, time and cost against the limit", () => {
    const lines = renderTrackingComment(trackingView()).split("\n");
    expect(lines.slice(0, 4)).toEqual([
      "<!-- lisa:tracking run=12 -->",
      "### Lisa · pass 3 · 👀 Ready for review",
      "",
      "Requested by @ann · pass 3 of at most 5 · elapsed 12m 3s · agent cost $2.10 of $20.00",
    ]);
  });

  it.each([
    ["queued", "⏳ Queued"],
    ["running", "🔧 Working"],
    ["blocked", "⛔ Blocked"],
    ["review", "👀 Ready for review"],
    ["accepted", "✅ Accepted"],
    ["stopped", "⏹️ Stopped"],
    ["failed", "❌ Failed"],
    ["merged", "🔀 Merged"],
    ["closed", "🚪 Closed"],
  ] as const)("heads a %s run with %s", (state, headline) => {
    expect(renderTrackingComment(trackingView({ state })).split("\n")[1]).toBe(`### Lisa · pass 3 · ${headline}`);
  });

  it("lists the plan and each step with its branch, state, pull request and sessions", () => {
    const text = renderTrackingComment(
      trackingView({
        state: "running",
        plan: { summary: "API first, then the web client", state: "delivered" },
        steps: [
          step({ scope: "add the v2 endpoint" }),
          step({ position: 2, repo: "acme/web", state: "running", phase: "gates", prUrl: undefined, sessions: [] }),
        ],
      }),
    );
    expect(text).toContain(
      [
        "- [x] Plan: 2 steps — API first, then the web client",
        "- [x] Step 1: `acme/api` on `lisa/12-list-items` — delivered — pull request: https://github.com/acme/api/pull/5 — add the v2 endpoint",
        "  - ✅ Agent session 1: claude (sonnet), implementing · 4m 2s · $0.40 · 12 turns",
        "- [ ] Step 2: `acme/web` on `lisa/12-list-items` — running the gates",
      ].join("\n"),
    );
  });

  it("unticks a delivered step whose pull request has changes requested: it is not done", () => {
    const gate = {
      repo: "acme/api",
      number: 5,
      url: "",
      status: "changes_requested" as const,
      approvers: [],
      blockers: ["bob"],
      headSha: null,
    };
    const text = renderTrackingComment(trackingView({ state: "review", steps: [step({ gate })] }));
    expect(text).toContain("- [ ] `acme/api` on `lisa/12-list-items` — delivered");
  });

  it("says why a step is blocked", () => {
    const text = renderTrackingComment(
      trackingView({ state: "blocked", steps: [step({ state: "blocked", blockReason: "gates still red after 8 sessions" })] }),
    );
    expect(text).toContain("— ⛔ blocked: gates still red after 8 sessions");
  });

  it("shows the review gate of every pull request", () => {
    const text = renderTrackingComment(
      trackingView({
        steps: [step({ gate: apiGate }), step({ position: 2, gate: webGate }), step({ position: 3, gate: docsGate })],
      }),
    );
    expect(lineStartingWith(text, "**Review:**")).toBe(
      "**Review:** [acme/api#5](https://github.com/acme/api/pull/5) ✅ @ann at `1a2b3c4` · [acme/web#7](https://github.com/acme/web/pull/7) ❌ changes requested by @bob · [acme/docs#3](https://github.com/acme/docs/pull/3) ⏳ waiting",
    );
    expect(lineStartingWith(text, "**Waiting for:**")).toBe(
      "**Waiting for:** your review: approve [acme/web#7](https://github.com/acme/web/pull/7), [acme/docs#3](https://github.com/acme/docs/pull/3) to accept the pass, or request changes",
    );
  });

  it("counts the queued guidance and names the pass it will start", () => {
    const text = renderTrackingComment(
      trackingView({
        state: "running",
        queuedGuidance: [
          { author: "bob", source: "review", excerpt: "Use the v2 endpoint\nfor listing" },
          { author: "ann", source: "redirect", excerpt: "Also paginate, cc @org/team" },
        ],
      }),
    );
    expect(text).toContain(
      [
        "**2 requests queued for pass 4**",
        '- @bob (review): "Use the v2 endpoint for listing"',
        `- @ann (redirect): "Also paginate, cc @${ZWSP}org/team"`,
      ].join("\n"),
    );
  });

  it("keeps one line per pass in the history", () => {
    const text = renderTrackingComment(
      trackingView({
        history: [
          { pass: 1, trigger: "label", by: "ann", outcome: "superseded", costUsd: 0.84 },
          { pass: 2, trigger: "redirect", by: "bob", outcome: "superseded", costUsd: 0.5 },
          { pass: 3, trigger: "review", by: "bob", outcome: "at gate", costUsd: 0.76 },
        ],
      }),
    );
    expect(text).toContain(
      [
        "**Passes**",
        "- Pass 1 · label by @ann · superseded · $0.84",
        "- Pass 2 · redirect by @bob · superseded · $0.50",
        "- Pass 3 · review by @bob · at gate · $0.76",
      ].join("\n"),
    );
  });

  it("shows the last gate failure redacted and cut to its last 40 lines, in a fence the output cannot close", () => {
    const token = `ghs_${"k".repeat(36)}`;
    const output = [
      ...Array.from({ length: 60 }, (_, i) => `log ${i + 1}`),
      "```",
      `\u001b[31mFAIL\u001b[0m auth with ${token}`,
      "<!-- lisa:tracking run=12 -->",
    ].join("\n");
    const text = renderTrackingComment(
      trackingView({
        state: "blocked",
        steps: [step({ state: "blocked", repo: "acme/web", lastGateFailure: { command: "npm test", output } })],
      }),
    );
    expect(text).toContain("**Gate failure** in acme/web: `npm test`\n\n````text\n… (23 earlier lines not shown)\nlog 24\n");
    expect(text).toContain("log 60\n```\nFAIL auth with ‹redacted›\n<!-\u200B- lisa:tracking run=12 -->\n````");
    expect(text).not.toContain(token);
    expect(text).not.toContain("<details");
    expect(text.split("<!-- lisa:")).toHaveLength(2);
  });

  it("says what went wrong when the run failed, and how to retry", () => {
    const text = renderTrackingComment(trackingView({ state: "failed", error: "git push failed: <b>403</b>" }));
    expect(text).toContain(
      "**What went wrong:**\n\ngit push failed: 403\n\nComment `/lisa retry` to resume at the step that failed (finished steps are kept), or fix the cause first.",
    );
    expect(lineStartingWith(text, "**Commands:**")).toBe("**Commands:** `/lisa retry` · `/lisa status` · `/lisa help`");
  });

  it.each([
    ["queued", "a free worker"],
    ["running", "the agents and the gates; this comment updates as they progress"],
    ["blocked", "you: `/lisa fix [notes]`, `/lisa skip` or `/lisa abort` for the blocked steps"],
    ["accepted", "the pull requests to be merged"],
    [
      "stopped",
      "you: `/lisa redirect <guidance>` or `/lisa continue` to start pass 4; approve [acme/api#5](https://github.com/acme/api/pull/5) to accept it as it stands, or close it to end the run",
    ],
  ] as const)("when %s, waits for %s", (state, waiting) => {
    expect(lineStartingWith(renderTrackingComment(trackingView({ state })), "**Waiting for:**")).toBe(
      `**Waiting for:** ${waiting}`,
    );
  });

  it("after an abort with no pull request and no refinements, offers only a redirect: nothing to close, nothing to continue", () => {
    const view = trackingView({
      state: "stopped",
      pass: 1,
      canContinue: false,
      steps: [step({ state: "skipped", prUrl: undefined })],
    });
    const text = renderTrackingComment(view);
    expect(lineStartingWith(text, "**Waiting for:**")).toBe("**Waiting for:** you: `/lisa redirect <guidance>` to start pass 2");
    expect(lineStartingWith(text, "**Commands:**")).toBe(
      "**Commands:** `/lisa redirect <guidance>` · `/lisa status` · `/lisa help`",
    );
  });

  it("after an abort at the last pass, says so instead of offering a pass that would be refused", () => {
    const view = trackingView({
      state: "stopped",
      pass: 5,
      maxPasses: 5,
      canContinue: false,
      steps: [step({ state: "skipped" })],
    });
    expect(lineStartingWith(renderTrackingComment(view), "**Waiting for:**")).toBe(
      "**Waiting for:** you: pass 5 of 5 was the last: raise `limits.max_passes` in `.github/lisa.yml` for another",
    );
  });

  it("offers /lisa continue only when the pass proposed refinements", () => {
    const text = renderTrackingComment(trackingView({ state: "review", canContinue: false }));
    expect(lineStartingWith(text, "**Commands:**")).toBe(
      "**Commands:** `/lisa redirect <guidance>` · `/lisa accept` (accept without approvals) · `/lisa status` · `/lisa help`",
    );
  });

  it("shows a session a person stopped as stopped by them, not as the agent crashing", () => {
    const stopped = step({
      state: "skipped",
      sessions: [
        {
          iteration: 2,
          provider: "claude",
          purpose: "revise",
          state: "stopped",
          durationMs: 3_000,
          costUsd: 0,
          stoppedBy: { actor: "ann", how: "`/lisa abort`" },
        },
      ],
    });
    const text = renderTrackingComment(trackingView({ state: "stopped", steps: [stopped] }));
    expect(text).toContain("— ⏹️ stopped — pull request: https://github.com/acme/api/pull/5");
    expect(text).toContain("  - ⏹️ Agent session 2: claude, revising · 3s · $0.00 · stopped by @ann (`/lisa abort`)");
    expect(text).not.toContain("crashed");
    expect(text).not.toContain("❌");
  });

  it("uses the engine's own Waiting for line when given", () => {
    expect(renderTrackingComment(trackingView({ waitingFor: "GitHub to finish a merge" }))).toContain(
      "**Waiting for:** GitHub to finish a merge",
    );
  });

  it.each([
    [
      "running",
      "`/lisa redirect <guidance>` (given to the agent at work, else queued for the next pass) · `/lisa abort` · `/lisa status` · `/lisa help`",
    ],
    [
      "blocked",
      "`/lisa fix [notes]` · `/lisa skip` · `/lisa abort` · `/lisa redirect <guidance>` · `/lisa status` · `/lisa help`",
    ],
    [
      "review",
      "`/lisa redirect <guidance>` · `/lisa continue` · `/lisa accept` (accept without approvals) · `/lisa status` · `/lisa help`",
    ],
    ["stopped", "`/lisa redirect <guidance>` · `/lisa continue` · `/lisa status` · `/lisa help`"],
  ] as const)("when %s, lists the commands that apply", (state, commands) => {
    expect(lineStartingWith(renderTrackingComment(trackingView({ state })), "**Commands:**")).toBe(`**Commands:** ${commands}`);
  });

  it("lists no commands once the run is over", () => {
    const text = renderTrackingComment(trackingView({ state: "merged" }));
    expect(text).not.toContain("**Commands:**");
    expect(text).not.toContain("**Waiting for:**");
  });

  it("stops offering another pass at the last one", () => {
    const text = renderTrackingComment(trackingView({ pass: 5, maxPasses: 5 }));
    expect(lineStartingWith(text, "**Commands:**")).toBe(
      "**Commands:** `/lisa accept` (accept without approvals) · `/lisa status` · `/lisa help` · pass 5 of 5 was the last (`limits.max_passes`; raise it in `.github/lisa.yml`)",
    );
  });

  it("stays under GitHub's limit with 5,000 steps, many sessions and huge outputs, saying what it cut", () => {
    const huge = "x".repeat(1_000_000);
    const steps = Array.from({ length: 5_000 }, (_, i) =>
      step({
        position: i + 1,
        repo: `acme/repo-${i}`,
        state: "blocked",
        blockReason: huge,
        scope: huge,
        gate: { ...docsGate, repo: `acme/repo-${i}`, number: i + 1 },
        sessions: Array.from({ length: 100 }, (_, n) => ({
          iteration: n + 1,
          provider: "claude",
          purpose: "fix_gates",
          state: "failed" as const,
          costUsd: 0.1,
          failureKind: huge,
        })),
        lastGateFailure: i < 10 ? { command: "npm test", output: `${huge}\n`.repeat(20) } : undefined,
      }),
    );
    const text = renderTrackingComment(
      trackingView({
        state: "blocked",
        steps,
        error: huge,
        queuedGuidance: Array.from({ length: 1_000 }, () => ({ author: "bob", source: "review", excerpt: huge })),
        history: Array.from({ length: 1_000 }, (_, i) => ({ pass: i + 1, trigger: huge, by: "bob", outcome: huge, costUsd: 1 })),
      }),
    );
    expect(text.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    expect(text.startsWith("<!-- lisa:tracking run=12 -->\n### Lisa · pass 3 · ⛔ Blocked")).toBe(true);
    expect(text).toContain("- …and 4,950 more steps; each pull request's comments show its passes");
    expect(text).toContain("  - …90 earlier sessions");
    expect(text).toContain("…gate failures in 7 more steps are in their pull requests.");
    expect(text).toContain("· …and 4,980 more");
    expect(text).toContain("- …and 980 more\n");
    // The sessions of the last steps shown go first; the note stands where they were.
    expect(text).toMatch(
      new RegExp(`  - ❌ Agent session \\d+: [^\n]+\n\n${CUT_NOTE}\n\n- \\[ \\] Step \\d+: \`acme/repo-\\d+\``),
    );
    expect(text).toMatch(/\n\*\*Commands:\*\* `\/lisa fix \[notes\]`.*$/);
  });
});
