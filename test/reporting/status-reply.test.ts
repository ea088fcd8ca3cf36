import { describe, expect, it } from "vitest";
import { gateStatus, renderStatusReply } from "../../src/reporting/status-reply.ts";
import type { TrackingView } from "../../src/reporting/tracking-view.ts";
import type { PrGate } from "../../src/reporting/views.ts";

const gate = (overrides: Partial<PrGate> = {}): PrGate => ({
  repo: "acme/api",
  number: 5,
  url: "https://github.com/acme/api/pull/5",
  status: "pending",
  approvers: [],
  blockers: [],
  headSha: "1a2b3c4d5e6f",
  ...overrides,
});

const view = (overrides: Partial<TrackingView> = {}): TrackingView => ({
  runId: 3,
  state: "review",
  pass: 2,
  maxPasses: 5,
  requestedBy: "ann",
  elapsedMs: 1_000,
  costUsd: 0.5,
  limitUsd: 20,
  steps: [{ position: 1, repo: "acme/api", branch: "lisa/3-x", state: "delivered", gate: gate(), sessions: [] }],
  queuedGuidance: [],
  history: [],
  canContinue: false,
  secrets: [],
  ...overrides,
});

describe("gateStatus", () => {
  it.each([
    [gate({ status: "approved", approvers: ["ann"] }), "✅ approved by @ann at `1a2b3c4`"],
    [
      gate({ status: "changes_requested", blockers: ["bob"] }),
      "❌ changes requested by @bob; needs their approval, or the review dismissed",
    ],
    [gate(), "⏳ needs an approval at `1a2b3c4` from someone with write access"],
    [
      gate({ stale: ["ann"] }),
      "⏳ needs an approval at `1a2b3c4` from someone with write access (@ann approved an earlier head)",
    ],
    [
      gate({ approvers: ["ann"], githubDecision: "REVIEW_REQUIRED" }),
      "⏳ approved by @ann at `1a2b3c4`; GitHub's review rule still needs more approvals",
    ],
    [gate({ status: "merged" }), "🔀 merged"],
    [gate({ status: "dropped" }), "🚪 closed without merging: no longer part of the review"],
  ])("%# says what the pull request has and still needs", (g, text) => {
    expect(gateStatus(g)).toBe(text);
  });

  it("shows a login that is not GitHub's shape as code, so it neither mentions nor renders", () => {
    const text = gateStatus(gate({ status: "changes_requested", blockers: ["x <img src=a> @org/team"] }));
    expect(text).toContain("`x <img src=a> @org/team`");
  });
});

describe("renderStatusReply", () => {
  it("is one short comment: state in words, pass and limit, the gate, what Lisa waits for, the tracking link", () => {
    const text = renderStatusReply(view(), "https://github.com/acme/api/issues/9#issuecomment-77");
    expect(text.split("\n")).toEqual([
      "**Run 3 is waiting for review** · pass 2 of at most 5 · details in the [tracking comment](https://github.com/acme/api/issues/9#issuecomment-77)",
      "",
      "- [acme/api#5](https://github.com/acme/api/pull/5) ⏳ needs an approval at `1a2b3c4` from someone with write access",
      "",
      "**Waiting for:** your review: approve [acme/api#5](https://github.com/acme/api/pull/5) to accept the pass, or request changes",
    ]);
  });

  it("drops a link it cannot trust and says nothing is waited for once the run ended", () => {
    const text = renderStatusReply(view({ state: "merged" }), "javascript:alert(1)");
    expect(text).not.toContain("javascript");
    expect(text).toContain("**Waiting for:** nothing: the run has ended");
  });

  it("names a blocked step's reason, cleaned, and the commands that answer it", () => {
    const blocked = view({
      state: "blocked",
      steps: [
        {
          position: 1,
          repo: "acme/api",
          branch: "b",
          state: "blocked",
          blockReason: "gates red <script>x</script>",
          sessions: [],
        },
      ],
    });
    const text = renderStatusReply(blocked, undefined);
    expect(text).toContain("- acme/api: no pull request yet · ⛔ blocked: gates red");
    expect(text).not.toContain("<script>");
    expect(text).toContain("**Waiting for:** you: `/lisa fix [notes]`, `/lisa skip` or `/lisa abort` for the blocked steps");
  });
});
