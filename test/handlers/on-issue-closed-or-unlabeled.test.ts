import { describe, expect, it } from "vitest";
import { onIssueClosedOrUnlabeled } from "../../src/handlers/on-issue-closed-or-unlabeled.ts";
import { closedPayload, unlabeledPayload } from "./webhook-examples.ts";

describe("onIssueClosedOrUnlabeled with GitHub's sample payloads", () => {
  it("keeps the label taken off issue #1 and who took it", () => {
    expect(onIssueClosedOrUnlabeled(unlabeledPayload())).toEqual({
      key: expect.stringMatching(/^issue:186853002:1:unlabeled:bug:2019-/),
      command: {
        kind: "issue",
        installationId: 2,
        owner: "Codertocat",
        repo: "Hello-World",
        number: 1,
        isPullRequest: false,
        sender: "Codertocat",
        action: "unlabeled",
        label: "bug",
      },
    });
  });

  it("keeps a close, without a label", () => {
    expect(onIssueClosedOrUnlabeled(closedPayload())).toMatchObject({
      key: "issue:186853002:1:closed::2021-10-11T16:40:56Z",
      command: { kind: "issue", action: "closed", label: null, number: 1, sender: "Codertocat" },
    });
  });

  it("keys the same change once, and two closes of the issue (at two times) twice", () => {
    const keyOf = (payload: ReturnType<typeof closedPayload>) => {
      const triage = onIssueClosedOrUnlabeled(payload);
      return "key" in triage ? triage.key : undefined;
    };
    const again = closedPayload();
    again.issue.updated_at = "2021-10-12T09:00:00Z";
    expect(keyOf(closedPayload())).toBe(keyOf(closedPayload()));
    expect(keyOf(again)).toBe("issue:186853002:1:closed::2021-10-12T09:00:00Z");
  });

  it.each([
    ["a bot sender", { ...unlabeledPayload(), sender: { login: "renovate[bot]", type: "Bot" } }, "sender renovate[bot] is a bot"],
    ["no installation", { ...closedPayload(), installation: undefined }, "not delivered to an installation"],
    ["an unlabel without its label", { ...unlabeledPayload(), label: undefined }, "no label in payload"],
    ["a reopen", { ...closedPayload(), action: "reopened" }, "issues reopened"],
    [
      "a pull request",
      { ...closedPayload(), issue: { ...closedPayload().issue, pull_request: { url: "…" } } },
      "a pull request, not an issue",
    ],
  ])("ignores %s", (_what, input, reason) => {
    expect(onIssueClosedOrUnlabeled(input)).toEqual({ ignored: reason });
  });
});
