import { describe, expect, it } from "vitest";
import { onIssueLabeled } from "../../src/handlers/on-issue-labeled.ts";
import { labeledPayload } from "./webhook-examples.ts";

const payload = {
  installation: { id: 9 },
  repository: { name: "api", default_branch: "main", owner: { login: "acme" } },
  issue: { number: 4, title: "Add a health endpoint", body: null },
  label: { name: "lisa" },
  sender: { login: "alice", type: "User" },
};

describe("onIssueLabeled", () => {
  it("keeps what the worker needs to decide", () => {
    expect(onIssueLabeled(payload)).toMatchObject({
      command: {
        installationId: 9,
        owner: "acme",
        repo: "api",
        defaultBranch: "main",
        issue: { number: 4, title: "Add a health endpoint", body: "" },
        label: "lisa",
        sender: "alice",
      },
    });
  });

  it.each([
    ["a bot sender", { ...payload, sender: { login: "lisa[bot]", type: "Bot" } }, "sender lisa[bot] is a bot"],
    ["no installation", { ...payload, installation: undefined }, "not delivered to an installation"],
    ["no label", { ...payload, label: undefined }, "no label in payload"],
  ])("ignores %s", (_what, input, reason) => {
    expect(onIssueLabeled(input)).toEqual({ ignored: reason });
  });
});

describe("onIssueLabeled with GitHub's sample payload", () => {
  it("keeps issue #1 of Codertocat/Hello-World and its label", () => {
    expect(onIssueLabeled(labeledPayload())).toMatchObject({
      key: expect.stringMatching(/^labeled:186853002:1:bug:/),
      command: {
        installationId: 2,
        owner: "Codertocat",
        repo: "Hello-World",
        defaultBranch: "master",
        issue: { number: 1, title: "Spelling error in the README file" },
        label: "bug",
        sender: "Codertocat",
      },
    });
  });

  it("ignores a label on a pull request (GitHub sends issues.labeled for those too)", () => {
    const payload = labeledPayload();
    payload.issue.pull_request = { url: "https://api.github.com/repos/Codertocat/Hello-World/pulls/1" };
    expect(onIssueLabeled(payload)).toEqual({ ignored: "labeled a pull request, not an issue" });
  });

  it("gives the same key to the same label event redelivered", () => {
    const keyOf = () => (onIssueLabeled(labeledPayload()) as { key: string }).key;
    expect(keyOf()).toBe(keyOf());
  });

  it("gives another key to another label, or to the label added again later", () => {
    const keyOf = (patch: (p: ReturnType<typeof labeledPayload>) => void) => {
      const payload = labeledPayload();
      patch(payload);
      return (onIssueLabeled(payload) as { key: string }).key;
    };
    const first = keyOf(() => undefined);
    expect(keyOf((p) => Object.assign(p, { label: { name: "lisa" } }))).not.toBe(first);
    expect(keyOf((p) => Object.assign(p.issue, { updated_at: "2019-05-16T09:00:00Z" }))).not.toBe(first);
  });
});
