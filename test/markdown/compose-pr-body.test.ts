import { describe, expect, it } from "vitest";
import { composePrBody, composePrTitle } from "../../src/markdown/compose-pr-body.ts";

const issue = { number: 12, title: "Health endpoint" };

describe("composePrBody", () => {
  it("builds What, Why, Key changes and Testing from the manifest", () => {
    const body = composePrBody({
      issue,
      issueRef: "#12",
      manifest: {
        title: "Add /health",
        what: "Adds a `/health` endpoint.",
        why: "Load balancers need it.",
        key_changes: ["`src/health.ts` — new handler", "`test/health.test.ts` — covers it"],
        testing: "Ran the tests.",
      },
      agentSummary: "ignored",
      changedFiles: [],
      gates: [{ command: "npm test", passed: true }],
      secrets: [],
    });
    expect(body).toBe(
      [
        "### What",
        "Adds a `/health` endpoint.",
        "### Why",
        "Load balancers need it.",
        "### Key changes",
        "- `src/health.ts` — new handler\n- `test/health.test.ts` — covers it",
        "### Testing",
        "Ran the tests.\n\n- `npm test` passed (run by Lisa)",
        "Closes #12",
      ].join("\n\n"),
    );
  });

  it("falls back to the agent's summary and the changed files without a manifest", () => {
    const body = composePrBody({
      issue,
      issueRef: "#12",
      manifest: undefined,
      agentSummary: "# Summary\nAdded the endpoint.",
      changedFiles: [{ path: "src/health.ts", added: 20, deleted: 1 }],
      gates: [],
      secrets: [],
    });
    expect(body).toContain("### What\n\n#### Summary\n\nAdded the endpoint.");
    expect(body).toContain("### Why\n\nRequested in #12: Health endpoint");
    expect(body).toContain("- `src/health.ts` (+20 −1)");
    expect(body).toContain("- No gate commands are configured for this repository.");
  });

  it("keeps agent headings below its own sections and redacts known secrets", () => {
    const body = composePrBody({
      issue,
      issueRef: "#12",
      manifest: { title: "t", what: "## Pretend section\nsecret-value-123 here" },
      agentSummary: "",
      changedFiles: [],
      gates: [],
      secrets: ["secret-value-123"],
    });
    expect(body).toContain("#### Pretend section");
    expect(body).not.toContain("secret-value-123");
  });
});

describe("composePrTitle", () => {
  it("is one line of plain text", () => {
    expect(composePrTitle(issue, { title: "Add\n  *health*  endpoint", what: "x" }, [])).toBe("Add *health* endpoint");
    expect(composePrTitle(issue, undefined, [])).toBe("Health endpoint");
  });
});
