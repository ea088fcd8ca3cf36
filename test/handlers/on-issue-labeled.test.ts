import { describe, expect, it } from "vitest";
import { onIssueLabeled } from "../../src/handlers/on-issue-labeled.ts";

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
