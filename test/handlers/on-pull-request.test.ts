import { describe, expect, it } from "vitest";
import { onPullRequest } from "../../src/handlers/on-pull-request.ts";
import { OWNER, type PullRequestPayload, pullRequestPayload, REPO } from "./webhook-examples.ts";

const BEFORE = "f95f852bd8fca8fcc58a9a2d6c842781e32a215e";
const AFTER = "ec26c3e57ca3a959ca5aad62de7213c562f8c821";
const origin = { kind: "pull_request", installationId: 2, owner: OWNER, repo: REPO, number: 2, isPullRequest: true };

const merged = (): PullRequestPayload => {
  const payload = pullRequestPayload("closed");
  payload.pull_request.merged = true;
  return payload;
};

describe("onPullRequest", () => {
  it("keeps a human's push with the commits before and after it (rule 19)", () => {
    expect(onPullRequest(pullRequestPayload("synchronize"))).toEqual({
      key: `pull_request:279147437:synchronize:${AFTER}`,
      command: { ...origin, sender: "Codertocat", action: "synchronize", merged: false, before: BEFORE, after: AFTER },
    });
  });

  it.each([
    ["a Bot account", { login: "lisa[bot]", type: "Bot" }],
    ["a [bot] login", { login: "lisa[bot]", type: "User" }],
  ])("ignores a push by %s: Lisa knows its own pushes", (_who, sender) => {
    const payload = pullRequestPayload("synchronize");
    payload.sender = sender;
    expect(onPullRequest(payload)).toEqual({ ignored: "Lisa's own push" });
  });

  it("keeps a pull request closed without merging (rule 21)", () => {
    expect(onPullRequest(pullRequestPayload("closed"))).toEqual({
      key: "pull_request:279147437:closed:2019-05-15T15:21:18Z",
      command: { ...origin, sender: "Codertocat", action: "closed", merged: false, before: null, after: AFTER },
    });
  });

  it("tells a merge from a close (rule 23)", () => {
    expect(onPullRequest(merged())).toMatchObject({ command: { action: "closed", merged: true } });
  });

  it("keeps a close or merge whoever did it, a bot included", () => {
    const payload = merged();
    payload.sender = { login: "mergify[bot]", type: "Bot" };
    expect(onPullRequest(payload)).toMatchObject({ command: { action: "closed", merged: true, sender: "mergify[bot]" } });
  });

  it("keeps a reopened pull request (rule 22)", () => {
    expect(onPullRequest(pullRequestPayload("reopened"))).toMatchObject({ command: { action: "reopened", merged: false } });
  });

  it.each(["opened", "labeled", "edited", "ready_for_review", "converted_to_draft", "review_requested"])(
    "ignores a pull request %s",
    (action) => {
      const payload = pullRequestPayload(action === "edited" ? "opened" : action);
      payload.action = action;
      expect(onPullRequest(payload)).toEqual({ ignored: `pull_request ${action}` });
    },
  );

  it.each<[string, (p: PullRequestPayload) => void]>([
    ["not from a lisa/ branch", (p) => Object.assign(p.pull_request.head, { ref: "changes" })],
    ["from a fork", (p) => Object.assign(p.pull_request.head, { repo: { full_name: "mallory/Hello-World" } })],
  ])("ignores a push to a pull request %s", (_which, patch) => {
    const payload = pullRequestPayload("synchronize");
    patch(payload);
    expect(onPullRequest(payload)).toEqual({ ignored: "not one of Lisa's pull requests" });
  });

  describe("event key", () => {
    const keyOf = (payload: PullRequestPayload) => (onPullRequest(payload) as { key: string }).key;

    it.each(["synchronize", "closed", "reopened"])("is the same for the same %s redelivered", (action) => {
      expect(keyOf(pullRequestPayload(action))).toBe(keyOf(pullRequestPayload(action)));
    });

    it("differs for another push to the same pull request", () => {
      const next = pullRequestPayload("synchronize");
      next.before = AFTER;
      next.after = "77aa1100000000000000000000000000000000aa";
      expect(keyOf(next)).not.toBe(keyOf(pullRequestPayload("synchronize")));
    });

    it("differs for a second close after a reopen", () => {
      const again = pullRequestPayload("closed");
      again.pull_request.updated_at = "2019-05-16T09:00:00Z";
      expect(keyOf(again)).not.toBe(keyOf(pullRequestPayload("closed")));
    });

    it("differs between a close and a reopen", () => {
      expect(keyOf(pullRequestPayload("closed"))).not.toBe(keyOf(pullRequestPayload("reopened")));
    });
  });
});
