import { describe, expect, it } from "vitest";
import { onIssueComment } from "../../src/handlers/on-issue-comment.ts";

const payload = (body: string, overrides: object = {}) => ({
  action: "created",
  installation: { id: 3 },
  repository: { name: "api", owner: { login: "acme" } },
  issue: { number: 7 },
  comment: { id: 55, body, user: { type: "User" } },
  sender: { login: "alice", type: "User" },
  ...overrides,
});

describe("onIssueComment", () => {
  it.each([
    ["/lisa retry", "retry", ""],
    ["/LISA Retry", "retry", ""],
    ["Thanks!\n/lisa redirect use the v2 API\nplease", "redirect", "use the v2 API\nplease"],
    ["/lisa", "help", ""],
    ["/lisa frobnicate now", "unknown", "now"],
  ])("reads %j as command %j with text %j", (body, name, text) => {
    expect(onIssueComment(payload(body))).toMatchObject({
      key: "comment:55",
      command: { kind: "command", command: { name, text }, number: 7, sender: "alice", isPullRequest: false, commentId: 55 },
    });
  });

  it("knows a comment on a pull request", () => {
    expect(onIssueComment(payload("/lisa status", { issue: { number: 9, pull_request: {} } }))).toMatchObject({
      command: { isPullRequest: true },
    });
  });

  it.each([
    ["a comment without a command", payload("lisa retry please")],
    ["a command not at the start of a line", payload("try /lisa retry")],
    ["a word that only starts with /lisa", payload("/lisafoo retry")],
    ["a bot's comment", payload("/lisa retry", { sender: { login: "lisa[bot]", type: "Bot" } })],
    ["an edited comment", payload("/lisa retry", { action: "edited" })],
  ])("ignores %s", (_what, input) => {
    expect(onIssueComment(input)).toHaveProperty("ignored");
  });
});
