import { describe, expect, it } from "vitest";
import { onIssueComment } from "../../src/handlers/on-issue-comment.ts";
import { commentPayload } from "./webhook-examples.ts";

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

describe("onIssueComment with GitHub's sample payload", () => {
  it("turns a /lisa command on issue #1 of Codertocat/Hello-World into a command", () => {
    expect(onIssueComment(commentPayload("Thanks!\r\n/lisa redirect use the v2 API"))).toEqual({
      key: "comment:492700400",
      command: {
        kind: "command",
        installationId: 2,
        owner: "Codertocat",
        repo: "Hello-World",
        number: 1,
        isPullRequest: false,
        sender: "Codertocat",
        command: { name: "redirect", word: "redirect", text: "use the v2 API" },
        where: "comment",
        commentId: 492700400,
        reviewId: null,
        url: "https://github.com/Codertocat/Hello-World/issues/1#issuecomment-492700400",
        createdAt: "2019-05-15T15:20:21Z",
      },
    });
  });

  it("knows a comment in a pull request's conversation", () => {
    const payload = commentPayload("/lisa redirect add a test");
    payload.issue.pull_request = { url: "https://api.github.com/repos/Codertocat/Hello-World/pulls/1" };
    expect(onIssueComment(payload)).toMatchObject({ command: { isPullRequest: true, command: { name: "redirect" } } });
  });

  it("ignores the sample's own comment, which has no command", () => {
    const payload = commentPayload("You are totally right! I'll get this fixed right away.");
    expect(onIssueComment(payload)).toEqual({ ignored: "not a /lisa command" });
  });

  it.each(["edited", "deleted"])("ignores a comment %s", (action) => {
    expect(onIssueComment(commentPayload("/lisa abort", action))).toEqual({ ignored: `comment ${action}` });
  });

  it("ignores a comment written by a bot account", () => {
    const payload = commentPayload("/lisa abort");
    payload.comment.user = { login: "lisa[bot]", type: "Bot" };
    expect(onIssueComment(payload)).toEqual({ ignored: "comment by a bot" });
  });

  it("gives the same key to the same comment redelivered and another to another comment", () => {
    const keyOf = (id: number) => {
      const payload = commentPayload("/lisa status");
      payload.comment.id = id;
      return (onIssueComment(payload) as { key: string }).key;
    };
    expect(keyOf(1)).toBe(keyOf(1));
    expect(keyOf(2)).not.toBe(keyOf(1));
  });
});
