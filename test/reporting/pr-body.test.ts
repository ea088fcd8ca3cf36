import { describe, expect, it } from "vitest";
import { GITHUB_BODY_LIMIT } from "../../src/markdown/sanitize-markdown.ts";
import { CUT_NOTE } from "../../src/reporting/fit-to-limit.ts";
import {
  BODY_END,
  BODY_START,
  mergePrBody,
  type PassRowView,
  type PrBodyView,
  renderPrBodySection,
} from "../../src/reporting/pr-body.ts";

function bodyView(overrides: Partial<PrBodyView> = {}): PrBodyView {
  return {
    issueRef: "#12",
    issueTitle: "List items from the v2 API",
    manifest: {
      title: "Use the v2 items endpoint",
      what: "The item list calls `/v2/items`.",
      why: "v1 is retired in June.",
      key_changes: ["`src/api.ts` calls `/v2/items`", "A test covers the new response"],
      testing: "Ran the unit tests.",
    },
    agentSummary: "Done.",
    files: [{ path: "src/api.ts", added: 30, deleted: 8 }],
    gates: [{ command: "npm test", passed: true }],
    passes: [
      row({ pass: 1, startedBy: "label by @ann", outcome: "superseded" }),
      row({ pass: 2, startedBy: "redirect by @bob", guidanceExcerpt: "use v2 | not v1", outcome: "delivered" }),
    ],
    closing: "closes",
    secrets: [],
    ...overrides,
  };
}

function row(overrides: Partial<PassRowView>): PassRowView {
  return {
    pass: 1,
    startedBy: "label by @ann",
    commits: 3,
    added: 42,
    deleted: 10,
    gates: "green",
    costUsd: 0.84,
    outcome: "delivered",
    ...overrides,
  };
}

const count = (text: string, part: string) => text.split(part).length - 1;

describe("renderPrBodySection", () => {
  it("is wrapped in Lisa's markers", () => {
    const section = renderPrBodySection(bodyView());
    expect(section.startsWith(`${BODY_START}\n`)).toBe(true);
    expect(section.endsWith(`\n${BODY_END}`)).toBe(true);
    expect(count(section, "<!-- lisa:")).toBe(2);
  });

  it("describes the current state with What, Why, Key changes and Testing", () => {
    const section = renderPrBodySection(bodyView());
    expect(section).toContain(
      [
        "### What",
        "",
        "The item list calls `/v2/items`.",
        "",
        "### Why",
        "",
        "v1 is retired in June.",
        "",
        "### Key changes",
        "",
        "- `src/api.ts` calls `/v2/items`",
        "- A test covers the new response",
        "",
        "### Testing",
        "",
        "The agent's account of its testing:",
        "",
        "> Ran the unit tests.",
        "",
        "Gates run by Lisa:",
        "",
        "- `npm test` passed (run by Lisa)",
      ].join("\n"),
    );
  });

  it("quotes the agent's account of its testing, so a line imitating Lisa's gate lines stays the agent's", () => {
    const forged = "- `npm test` passed (run by Lisa)\n- `npm run e2e` passed (run by Lisa)";
    const section = renderPrBodySection(bodyView({ manifest: { title: "T", what: "W", testing: forged }, gates: [] }));
    const lines = section.split("\n");
    // Every line that says "run by Lisa" is inside the agent's quotation: Lisa ran no gate here.
    expect(lines.filter((line) => line.includes("passed (run by Lisa)"))).toEqual([
      "> - `npm test` passed (run by Lisa)",
      "> - `npm run e2e` passed (run by Lisa)",
    ]);
    expect(section).toContain("Gates run by Lisa:\n\n- No gate commands are configured for this repository.");
  });

  it("falls back to the agent's summary, the issue and the changed files without a manifest", () => {
    const section = renderPrBodySection(bodyView({ manifest: undefined, agentSummary: "Switched the list to v2." }));
    expect(section).toContain("### What\n\nSwitched the list to v2.\n");
    expect(section).toContain("### Why\n\nRequested in #12: List items from the v2 API\n");
    expect(section).toContain("### Key changes\n\n- `src/api.ts` (+30 −8)\n");
  });

  it("says a failed gate is a regression when it passed in the previous pass", () => {
    const section = renderPrBodySection(bodyView({ gates: [{ command: "npm test", passed: false, regressed: true }] }));
    expect(section).toContain("- `npm test` failed, a regression: it passed in the previous pass (run by Lisa)");
  });

  it("has a Passes table with one row per pass, escaping pipes in the guidance", () => {
    const section = renderPrBodySection(bodyView());
    expect(section).toContain(
      [
        "### Passes",
        "",
        "| Pass | Started by | Guidance | Commits (+/−) | Gates | Cost | Outcome |",
        "|---|---|---|---|---|---|---|",
        "| 1 | label by @ann | — | 3 (+42 −10) | ✅ | $0.84 | superseded |",
        "| 2 | redirect by @bob | use v2 \\| not v1 | 3 (+42 −10) | ✅ | $0.84 | delivered |",
      ].join("\n"),
    );
  });

  it("shows who started a pass as code when the name is not a GitHub login", () => {
    const section = renderPrBodySection(bodyView({ passes: [row({ startedBy: "redirect by @evil|name" })] }));
    expect(section).toContain("| 1 | redirect by `evil\\|name` |");
  });

  it("lists the related pull requests with their gate status and says Part of for the others", () => {
    const section = renderPrBodySection(
      bodyView({
        closing: "part_of",
        related: {
          position: 2,
          of: 3,
          siblings: [
            { position: 1, repo: "acme/api", url: "https://github.com/acme/api/pull/5", status: "approved" },
            { position: 2, repo: "acme/web", url: "https://github.com/acme/web/pull/7", status: "pending" },
            { position: 3, repo: "acme/docs", url: null },
          ],
        },
      }),
    );
    expect(section).toContain(
      [
        "### Related pull requests",
        "",
        "This is step 2 of 3 of the plan for #12.",
        "",
        "- Step 1, `acme/api`: https://github.com/acme/api/pull/5 · ✅ approved",
        "- Step 3, `acme/docs`: not opened yet",
        "",
        "Part of #12",
        BODY_END,
      ].join("\n"),
    );
    expect(section).not.toContain("Closes");
  });

  it("closes the issue from the one pull request that should", () => {
    expect(renderPrBodySection(bodyView({ issueRef: "acme/api#12" }))).toContain("\nCloses acme/api#12\n<!-- lisa:body:end -->");
  });

  it("says which pass is in progress and, once accepted, after how many passes", () => {
    expect(renderPrBodySection(bodyView({ inProgress: 3 }))).toContain(
      `${BODY_START}\n🚧 Pass 3 in progress: this description is updated when it ends.\n`,
    );
    expect(renderPrBodySection(bodyView({ acceptedAfter: 3 }))).toContain(`${BODY_START}\n✅ Accepted after 3 passes.\n`);
    expect(renderPrBodySection(bodyView({ acceptedAfter: 1 }))).toContain("✅ Accepted after 1 pass.");
  });

  it("never lets the agent forge the end marker or add HTML, whatever it writes", () => {
    const section = renderPrBodySection(
      bodyView({
        manifest: {
          title: "t",
          what: `Done. ${BODY_END} Now trust me.\n\n\`\`\`\n${BODY_END}\n\`\`\`\n\n\`${BODY_START}\`\n\n<img src=x onerror=alert(1)>`,
          key_changes: [`${BODY_END}`, "<script>alert(1)</script>"],
          testing: "\\<!-- lisa:body:end -->",
        },
        passes: [row({ guidanceExcerpt: `${BODY_END} @org/team` })],
      }),
    );
    expect(count(section, BODY_START)).toBe(1);
    expect(count(section, BODY_END)).toBe(1);
    expect(section.endsWith(BODY_END)).toBe(true);
    expect(section).not.toMatch(/<img|<script/);
    expect(section).not.toMatch(/(^|[^\w`])@org\/team/m);
  });

  it("stays within GitHub's limit with huge inputs, keeping both markers and the closing line", () => {
    const huge = "lorem ipsum ".repeat(100_000);
    const section = renderPrBodySection(
      bodyView({
        manifest: { title: huge, what: huge, why: huge, key_changes: Array.from({ length: 10_000 }, () => huge), testing: huge },
        files: Array.from({ length: 10_000 }, (_, i) => ({ path: `f${i}`, added: 1, deleted: 1 })),
        gates: Array.from({ length: 100 }, (_, i) => ({ command: `gate ${i} ${"x".repeat(300)}`, passed: true })),
        passes: Array.from({ length: 500 }, (_, i) => row({ pass: i + 1, guidanceExcerpt: huge })),
      }),
    );
    expect(section.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    expect(section.startsWith(BODY_START)).toBe(true);
    expect(section).toContain(CUT_NOTE);
    expect(section.endsWith(`Closes #12\n${BODY_END}`)).toBe(true);
  });
});

describe("mergePrBody", () => {
  const section = `${BODY_START}\nnew section\n${BODY_END}`;

  it("uses the section alone when the pull request has no body yet", () => {
    expect(mergePrBody(null, section)).toBe(section);
    expect(mergePrBody("  \n", section)).toBe(section);
  });

  it("replaces only the text between the markers, keeping a human's text before and after it", () => {
    const existing = `Reviewer notes: see the design doc.\n\n${BODY_START}\nold section\n${BODY_END}\n\n- [ ] QA sign-off`;
    expect(mergePrBody(existing, section)).toBe(
      `Reviewer notes: see the design doc.\n\n${BODY_START}\nnew section\n${BODY_END}\n\n- [ ] QA sign-off`,
    );
  });

  it("gives the same body when the same section is merged twice", () => {
    const existing = `Before\n${BODY_START}\nold\n${BODY_END}\nAfter`;
    const once = mergePrBody(existing, section);
    expect(mergePrBody(once, section)).toBe(once);
  });

  it("replaces a legacy body without markers whole, since Lisa wrote it", () => {
    const legacy = "### What\n\nOld text\n\n### Why\n\nBecause\n\nCloses #12";
    expect(mergePrBody(legacy, section)).toBe(section);
  });

  it("keeps the text before a start marker whose end marker a human deleted", () => {
    expect(mergePrBody(`Human\n${BODY_START}\nold section`, section)).toBe(`Human\n${section}`);
  });

  it("keeps the text after an end marker whose start marker a human deleted", () => {
    expect(mergePrBody(`old section\n${BODY_END}\nHuman`, section)).toBe(`${section}\nHuman`);
  });

  it("ignores a start marker a human quoted above Lisa's section", () => {
    const existing = `Note: Lisa writes between ${BODY_START} and the end.\n\n${BODY_START}\nold\n${BODY_END}\nAfter`;
    expect(mergePrBody(existing, section)).toBe(
      `Note: Lisa writes between ${BODY_START} and the end.\n\n${BODY_START}\nnew section\n${BODY_END}\nAfter`,
    );
  });

  it("ignores an end marker a human quoted above Lisa's section", () => {
    const existing = `Do not edit above ${BODY_END} please.\n\n${BODY_START}\nold\n${BODY_END}\nAfter`;
    expect(mergePrBody(existing, section)).toBe(`Do not edit above ${BODY_END} please.\n\n${section}\nAfter`);
  });

  it("keeps the human's text intact when an agent tried to end Lisa's section early", () => {
    const hostile = renderPrBodySection(
      bodyView({
        manifest: { title: "t", what: `\`\`\`\n${BODY_END}\nFAKE HUMAN TEXT\n\`\`\`\n\nand \`${BODY_END}\`` },
      }),
    );
    const first = mergePrBody(`Human before\n\n${BODY_START}\nold\n${BODY_END}\n\nHuman after`, hostile);
    const clean = renderPrBodySection(bodyView());
    expect(mergePrBody(first, clean)).toBe(`Human before\n\n${clean}\n\nHuman after`);
  });

  it("wraps a section that lacks the markers in them", () => {
    expect(mergePrBody(null, "plain")).toBe(`${BODY_START}\nplain\n${BODY_END}`);
  });

  it("cuts Lisa's section, never the human's text, to stay within GitHub's limit, keeping the reference to the issue", () => {
    const human = "h".repeat(55_000);
    const big = renderPrBodySection(bodyView({ manifest: { title: "t", what: "w\n\n".repeat(20_000) } }));
    expect(big.length).toBeGreaterThan(GITHUB_BODY_LIMIT - 60_000);
    const merged = mergePrBody(`${human}\n${BODY_START}\nold\n${BODY_END}\n${human.slice(0, 5_000)}`, big);
    expect(merged.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    expect(merged.startsWith(`${human}\n${BODY_START}\n`)).toBe(true);
    expect(merged.endsWith(`${CUT_NOTE}\n\nCloses #12\n${BODY_END}\n${human.slice(0, 5_000)}`)).toBe(true);
  });

  it("keeps the markers even when the human's text alone nearly fills the limit", () => {
    const human = "h".repeat(65_500);
    const merged = mergePrBody(`${human}\n${BODY_START}\nold\n${BODY_END}`, renderPrBodySection(bodyView()));
    expect(merged.length).toBeLessThanOrEqual(GITHUB_BODY_LIMIT);
    expect(count(merged, BODY_START)).toBe(1);
    expect(count(merged, BODY_END)).toBe(1);
  });
});
