import { describe, expect, it } from "vitest";
import { describeGate, describeGates, failedFirst } from "../../src/reporting/describe-gate.ts";
import { describePrGate } from "../../src/reporting/describe-pr-gate.ts";
import type { GateLine, PrGate } from "../../src/reporting/views.ts";

const green = (command: string): GateLine => ({ command, passed: true });
const red = (command: string): GateLine => ({ command, passed: false });

describe("describeGate", () => {
  it("marks a green gate, a red one, and a red one that was green in the previous pass", () => {
    expect(describeGate(green("npm test"), 3, [])).toBe("✅ `npm test`");
    expect(describeGate(red("npm test"), 3, [])).toBe("❌ `npm test`");
    expect(describeGate({ command: "npm test", passed: false, regressed: true }, 3, [])).toBe(
      "❌ `npm test` · ⚠️ regression: green in pass 2, red now",
    );
  });

  it("names the repository a gate ran in, where gates of several are listed together", () => {
    expect(describeGate({ ...green("npm test"), repo: "acme/web" }, 1, [])).toBe("✅ acme/web: `npm test`");
  });
});

describe("describeGate for a judge", () => {
  const criterion = "The README explains the option.";
  const judge = (change: Partial<NonNullable<GateLine["judge"]>>): GateLine => ({
    command: `judge: ${criterion}`,
    passed: change.verdict !== "FAIL",
    judge: { criterion, verdict: "PASS", reason: "It is in Usage.", provider: "gemini", ...change },
  });

  it("gives the verdict, the judge's sentence and where, and the FAIL a fix answered", () => {
    expect(describeGate(judge({}), 1, [])).toBe("✅ judge `The README explains the option.` (`gemini`): PASS `It is in Usage.`");
    expect(describeGate(judge({ verdict: "FAIL", reason: "Not documented.", file: "README.md", line: 4 }), 1, [])).toBe(
      "❌ judge `The README explains the option.` (`gemini`): FAIL `Not documented.` at `README.md:4`",
    );
    expect(describeGate(judge({ earlier: "Not documented." }), 1, [])).toBe(
      "✅ judge `The README explains the option.` (`gemini`): PASS `It is in Usage.` · after a FAIL this pass: `Not documented.`",
    );
    expect(describeGate(judge({ verdict: "SKIPPED", provider: undefined }), 1, [])).toBe(
      "⏭️ judge `The README explains the option.`: skipped, as this pass changed none of its paths",
    );
  });

  it("keeps the judge's sentence an inert code span: no mention, link, marker or secret gets out", () => {
    const reason = "`@acme/team` [x](javascript:alert(1)) <!-- lisa:tracking run=1 --> hunter2-secret ``` end";
    const line = describeGate(judge({ verdict: "FAIL", reason, file: "a`b.md" }), 1, ["hunter2-secret"]);
    expect(line).not.toContain("hunter2-secret");
    expect(line).not.toContain("<!-- lisa:");
    // Every part of the sentence sits inside one code span, whose fence is longer than any run inside it.
    const span = /FAIL (`+) (.*?) \1 at/.exec(line);
    expect(span?.[1]?.length).toBeGreaterThan(3);
    expect(span?.[2]).toContain("@acme/team");
    expect(span?.[2]).toContain("[x](javascript:alert(1))");
  });
});

describe("failedFirst", () => {
  it("keeps the order when every gate fits", () => {
    expect(failedFirst([green("a"), red("b")], 2)).toEqual({ shown: [green("a"), red("b")], more: "" });
  });

  it("shows the red gates first and says what the ones left out were", () => {
    expect(failedFirst([green("a"), red("b"), green("c")], 2)).toEqual({
      shown: [red("b"), green("a")],
      more: "…and 1 more gate, all green",
    });
    expect(failedFirst([red("a"), red("b"), red("c"), green("d")], 2).more).toBe("…and 2 more gates (1 red)");
  });
});

describe("describeGates", () => {
  it("puts at most 20 gates on one line", () => {
    const gates = Array.from({ length: 25 }, (_, i) => green(`g${i}`));
    expect(describeGates(gates, 1, [])).toMatch(/^✅ `g0` · .* · ✅ `g19` · …and 5 more gates, all green$/);
  });
});

describe("describePrGate", () => {
  const gate: PrGate = {
    repo: "acme/api",
    number: 5,
    url: "https://github.com/acme/api/pull/5",
    status: "approved",
    approvers: ["ann", "lisa[bot]"],
    blockers: [],
    headSha: "1a2b3c4d5e",
  };

  it("links the pull request and names its approvers at the head they approved", () => {
    expect(describePrGate(gate, { withSha: true })).toBe(
      "[acme/api#5](https://github.com/acme/api/pull/5) ✅ @ann, `lisa[bot]` at `1a2b3c4`",
    );
  });

  it("shortens the reference for pull requests of the same owner", () => {
    expect(describePrGate({ ...gate, status: "pending", approvers: [] }, { owner: "acme" })).toBe(
      "[api#5](https://github.com/acme/api/pull/5) ⏳ waiting",
    );
  });

  it.each<[Partial<PrGate>, string]>([
    [{ status: "changes_requested", blockers: ["bob"] }, "❌ changes requested by @bob"],
    [{ status: "merged" }, "🔀 merged"],
    [{ status: "dropped" }, "🚪 closed"],
    // Approved, short of GitHub's review rule (`review.accept: github`): the approval still counted.
    [{ status: "pending", approvers: ["ann"] }, "⏳ approved by @ann; GitHub's review rule still needs more approvals"],
    // GitHub's rules said how many approvals they want: the gate says how many more.
    [
      { status: "pending", approvers: ["ann"], requiredApprovals: 2 },
      "⏳ approved by @ann; GitHub's review rule needs 1 more approval",
    ],
    [
      { status: "pending", approvers: ["ann"], requiredApprovals: 3 },
      "⏳ approved by @ann; GitHub's review rule needs 2 more approvals",
    ],
    // Enough approvals by count, and GitHub still wants more (a code owner, a fresh approval): no count to give.
    [
      { status: "pending", approvers: ["ann", "bob"], requiredApprovals: 2 },
      "⏳ approved by @ann, @bob; GitHub's review rule still needs more approvals",
    ],
    [{ status: "pending", approvers: [], stale: ["bob"] }, "⏳ waiting: @bob approved an earlier head"],
  ])("describes %o as %s", (change, text) => {
    expect(describePrGate({ ...gate, ...change, url: "" })).toBe(`acme/api#5 ${text}`);
  });
});
