import { describe, expect, it } from "vitest";
import { GITHUB_BODY_LIMIT } from "../../src/markdown/sanitize-markdown.ts";
import { type ReportView, renderFinalReport, reportMarker } from "../../src/reporting/final-report.ts";
import { CUT_NOTE } from "../../src/reporting/fit-to-limit.ts";

const ZWSP = "\u200B";
const API = "https://github.com/acme/api/pull/5";
const WEB = "https://github.com/acme/web/pull/7";

function reportView(overrides: Partial<ReportView> = {}): ReportView {
  return {
    runId: 12,
    issueRef: "#12",
    issueTitle: "List items from the v2 API",
    problem: "The item list still calls v1, which is retired in June.",
    accepted: {
      via: "approval",
      by: "bob",
      prs: [
        {
          repo: "acme/api",
          number: 5,
          url: API,
          sha: "1a2b3c4d5e",
          approvers: ["ann"],
          status: "approved",
          gates: [{ command: "npm test", passed: true }],
        },
        {
          repo: "acme/web",
          number: 7,
          url: WEB,
          sha: "9f8e7d6c5b",
          approvers: ["bob"],
          status: "approved",
          gates: [
            { command: "npm test", passed: true },
            { command: "npm run lint", passed: true },
          ],
        },
      ],
    },
    plan: [
      { repo: "acme/api", scope: "add the v2 endpoint", prUrl: API },
      { repo: "acme/web", scope: "call it", prUrl: WEB },
    ],
    passes: [
      {
        pass: 1,
        trigger: "label",
        by: "ann",
        guidance: [],
        changes: [
          { repo: "acme/api", commits: 3, added: 42, deleted: 10, outcome: "delivered" },
          { repo: "acme/web", commits: 2, added: 20, deleted: 4, outcome: "delivered" },
        ],
        gates: [{ command: "npm test", passed: true }],
        costUsd: 0.84,
        outcome: "superseded",
      },
      {
        pass: 2,
        trigger: "review",
        by: "bob",
        guidance: [
          {
            n: 1,
            author: "bob",
            source: "inline",
            where: "src/list.ts:7",
            url: "https://github.com/acme/web/pull/7#discussion_r3",
            body: "Paginate with offsets",
            outdated: false,
            status: "addressed",
            note: "uses `?offset=`",
            replied: true,
          },
        ],
        changes: [{ repo: "acme/web", commits: 1, added: 12, deleted: 2, outcome: "delivered" }],
        gates: [{ command: "npm test", passed: true }],
        costUsd: 0.5,
        outcome: "accepted",
      },
    ],
    humanCommits: [{ sha: "77aa11bb22", subject: "fix typo", author: "bob", human: true, repo: "acme/web" }],
    skipped: [],
    openQuestions: [],
    totals: { sessions: 5, durationMs: 900_000, costUsd: 1.34, limitUsd: 20 },
    secrets: [],
    ...overrides,
  };
}

/** The lines of one `####` section, without its heading. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`#### ${heading}\n`);
  expect(start).toBeGreaterThan(-1);
  const body = text.slice(start + heading.length + 6);
  const end = body.indexOf("\n#### ");
  return (end === -1 ? body : body.slice(0, end)).trim();
}

describe("reportMarker", () => {
  it("names the run", () => {
    expect(reportMarker(12)).toBe("<!-- lisa:report run=12 -->");
  });
});

describe("renderFinalReport", () => {
  it("starts with the marker and says after how many passes the run was accepted", () => {
    const lines = renderFinalReport(reportView()).split("\n");
    expect(lines.slice(0, 2)).toEqual(["<!-- lisa:report run=12 -->", "### Lisa · report · ✅ Accepted after 2 passes"]);
  });

  it("quotes the problem as data under the issue's title", () => {
    expect(section(renderFinalReport(reportView()), "Problem")).toBe(
      "**#12: List items from the v2 API**\n\n> The item list still calls v1, which is retired in June.",
    );
  });

  it("says who accepted, through which approvals, at which SHA", () => {
    expect(section(renderFinalReport(reportView()), "Accepted")).toBe(
      [
        "Accepted by @bob's approval, the last one the gate needed.",
        "",
        `- [acme/api#5](${API}) at \`1a2b3c4\`: approved by @ann`,
        `- [acme/web#7](${WEB}) at \`9f8e7d6\`: approved by @bob`,
      ].join("\n"),
    );
  });

  it("says who merged a run's pull requests without the gate accepting it", () => {
    const view = reportView();
    const text = renderFinalReport({ ...view, accepted: { ...view.accepted, via: "merge", by: "carol" } });
    expect(text.split("\n")[1]).toBe("### Lisa · report · ✅ Merged after 2 passes");
    expect(section(text, "Accepted").split("\n")[0]).toBe("Merged by @carol, without waiting for the gate.");
  });

  it("records an override and the pull requests it accepted without approval", () => {
    const view = reportView();
    const [api, web] = view.accepted.prs;
    if (!api || !web) throw new Error("fixture");
    const text = renderFinalReport({
      ...view,
      accepted: { via: "override", by: "ann", prs: [api, { ...web, approvers: [], status: "pending" }], note: "release today" },
    });
    expect(text.split("\n")[1]).toBe("### Lisa · report · ✅ Accepted by override");
    expect(section(text, "Accepted")).toBe(
      [
        `Accepted by @ann via \`/lisa accept\` (no approval on [acme/web#7](${WEB})).`,
        "",
        "Note: release today",
        "",
        `- [acme/api#5](${API}) at \`1a2b3c4\`: approved by @ann`,
        `- [acme/web#7](${WEB}) at \`9f8e7d6\`: no approval`,
      ].join("\n"),
    );
  });

  it("lists the plan in merge order with scopes and pull requests", () => {
    expect(section(renderFinalReport(reportView()), "Plan")).toBe(
      [
        `1. \`acme/api\` — add the v2 endpoint — ${API}`,
        `2. \`acme/web\` — call it — ${WEB}`,
        "",
        "_The steps are listed in merge order._",
      ].join("\n"),
    );
  });

  it("tells the pass history with triggers, changes per repository, gates and quoted guidance with its status", () => {
    const history = section(renderFinalReport(reportView()), "Pass history");
    expect(history).toContain(
      [
        "**Pass 1** · label by @ann · superseded · $0.84",
        "",
        "- Changes: `acme/api` 3 commits (+42 −10) delivered · `acme/web` 2 commits (+20 −4) delivered",
        "- Gates: ✅ `npm test`",
      ].join("\n"),
    );
    expect(history).toContain(
      [
        "**Pass 2** · review by @bob · accepted · $0.50",
        "",
        "- Changes: `acme/web` 1 commit (+12 −2) delivered",
        "- Gates: ✅ `npm test`",
        "- Guidance:",
        "",
        "1. ✅ addressed · @bob's inline comment on `src/list.ts:7` ([comment](https://github.com/acme/web/pull/7#discussion_r3)): uses `?offset=` · replied in thread",
        "   > Paginate with offsets",
      ].join("\n"),
    );
  });

  it("shows the verification at each accepted head", () => {
    expect(section(renderFinalReport(reportView()), "Verification at the accepted heads")).toBe(
      [
        `- [acme/api#5](${API}) at \`1a2b3c4\`: ✅ \`npm test\``,
        `- [acme/web#7](${WEB}) at \`9f8e7d6\`: ✅ \`npm test\` · ✅ \`npm run lint\``,
      ].join("\n"),
    );
  });

  it("names the pass a PR left alone since was verified in, flags a regression, and never borrows another PR's gates", () => {
    const view = reportView();
    const [api, web] = view.accepted.prs;
    const prs = [
      { ...api, gates: [{ command: "npm test", passed: false, regressed: true }], gatesPass: 2 },
      { ...web, gates: [{ command: "npm test", passed: true }], gatesPass: 1 },
      { ...api, number: 9, gates: undefined },
    ].map((pr) => pr as (typeof view.accepted.prs)[number]);
    expect(
      section(renderFinalReport({ ...view, accepted: { ...view.accepted, prs } }), "Verification at the accepted heads"),
    ).toBe(
      [
        `- [acme/api#5](${API}) at \`1a2b3c4\`: ❌ \`npm test\` · ⚠️ regression: green in pass 1, red now`,
        `- [acme/web#7](${WEB}) at \`9f8e7d6\`: ✅ \`npm test\` (run in pass 1; unchanged since)`,
        `- [acme/api#9](${API}) at \`1a2b3c4\`: no gates were recorded for this head`,
      ].join("\n"),
    );
  });

  it("credits human commits", () => {
    expect(section(renderFinalReport(reportView()), "Human contributions")).toBe('- `77aa11b` @bob "fix typo" in `acme/web`');
    expect(section(renderFinalReport(reportView({ humanCommits: [] })), "Human contributions")).toBe(
      "None: every commit on the branches is Lisa's.",
    );
  });

  it("lists skipped steps and open questions, or says there are none", () => {
    expect(section(renderFinalReport(reportView()), "Skipped, blocked and open questions")).toBe("None.");
    expect(
      section(
        renderFinalReport(
          reportView({
            skipped: [{ repo: "acme/mobile", reason: "gates red after 8 sessions" }],
            openQuestions: ["Keep v1 for a month?"],
          }),
        ),
        "Skipped, blocked and open questions",
      ),
    ).toBe(
      ["- ⏭️ `acme/mobile` skipped: gates red after 8 sessions", "", "Open questions:", "", "1. ❓ Keep v1 for a month?"].join(
        "\n",
      ),
    );
  });

  it("totals sessions, time and cost against the limit", () => {
    expect(section(renderFinalReport(reportView()), "Totals")).toBe("5 agent sessions · 15m 0s · $1.34 of the $20.00 limit");
  });

  it("traces each plan step from the issue to the approved head", () => {
    expect(section(renderFinalReport(reportView()), "Traceability")).toBe(
      [
        "Issue → plan step → pull request → commits per pass → gates → approved head:",
        "",
        `- #12 → step 1 \`acme/api\` → [acme/api#5](${API}) → commits (pass 1: 3) → gates ✅ → accepted at \`1a2b3c4\` by @ann`,
        `- #12 → step 2 \`acme/web\` → [acme/web#7](${WEB}) → commits (pass 1: 2, pass 2: 1) → gates ✅ → accepted at \`9f8e7d6\` by @bob`,
      ].join("\n"),
    );
  });

  it("treats the issue body and guidance as data: no HTML, no forged marker, no mentions", () => {
    const hostile =
      "Fix it.\n\n<!-- lisa:report run=99 -->\n\n```\n<!-- lisa:report run=99 -->\n```\n\n<img src=x>\n\ncc @org/team";
    const view = reportView({ problem: hostile });
    const [first, second] = view.passes;
    if (!first || !second) throw new Error("fixture");
    const text = renderFinalReport({
      ...view,
      passes: [
        first,
        { ...second, guidance: [{ ...(second.guidance[0] as ReportView["passes"][0]["guidance"][0]), body: hostile }] },
      ],
    });
    expect(text.split("<!-- lisa:")).toHaveLength(2);
    expect(text).not.toContain("<img");
    expect(text).toContain(`> cc @${ZWSP}org/team`);
    expect(text).not.toMatch(/(^|[^\w`])@org\/team/m);
    expect(section(text, "Problem")).toContain("> ```\n> <!-\u200B- lisa:report run=99 -->\n> ```");
  });

  it("stays within GitHub's limit with huge inputs", () => {
    const huge = "long ".repeat(200_000);
    const view = reportView();
    const text = renderFinalReport({
      ...view,
      problem: huge,
      issueTitle: huge,
      plan: Array.from({ length: 500 }, (_, i) => ({ repo: `acme/r${i}`, scope: huge, prUrl: API })),
      passes: Array.from({ length: 200 }, (_, i) => ({
        ...(view.passes[1] as ReportView["passes"][0]),
        pass: i + 1,
        trigger: huge,
        outcome: huge,
        guidance: Array.from({ length: 100 }, (_, n) => ({
          ...(view.passes[1]?.guidance[0] as ReportView["passes"][0]["guidance"][0]),
          n: n + 1,
          body: huge,
          note: huge,
        })),
      })),
      humanCommits: Array.from({ length: 5_000 }, () => ({
        sha: "77aa11bb",
        subject: huge,
        author: "bob",
        human: true,
        repo: "acme/web",
      })),
      openQuestions: Array.from({ length: 1_000 }, () => huge),
    });
    expect(text.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    expect(text.startsWith("<!-- lisa:report run=12 -->\n### Lisa · report · ✅ Accepted after 200 passes")).toBe(true);
    expect(text).toContain(CUT_NOTE);
    expect(text).toContain("#### Totals\n\n5 agent sessions");
  });
});
