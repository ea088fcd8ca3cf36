import { describe, expect, it } from "vitest";
import { asGitHubError, GitHubError } from "../../src/github/github-error.ts";

/** An error as Octokit's RequestError reports an answer from GitHub. */
function answered(status: number, message: string, headers: Record<string, string> = {}) {
  return Object.assign(new Error(message), {
    name: "HttpError",
    status,
    request: { method: "PATCH", url: "https://api.github.com/repos/acme/api/issues/comments/7", headers: {} },
    response: { status, url: "https://api.github.com/repos/acme/api/issues/comments/7", headers, data: { message } },
  });
}

/** An error as Octokit reports a request fetch could not send or GitHub never answered: a 500 without a response. */
function unanswered(message: string) {
  return Object.assign(new Error(message), {
    name: "HttpError",
    status: 500,
    request: { method: "GET", url: "https://api.github.com/repos/acme/api", headers: {} },
  });
}

describe("asGitHubError", () => {
  it("keeps the status, the message, the request and the original", () => {
    const original = answered(404, "Not Found - https://docs.github.com/rest");
    const error = asGitHubError(original);
    expect(error).toBeInstanceOf(GitHubError);
    expect(error).toMatchObject({
      name: "GitHubError",
      status: 404,
      transient: false,
      message: "Not Found - https://docs.github.com/rest",
      method: "PATCH",
      url: "https://api.github.com/repos/acme/api/issues/comments/7",
    });
    expect(error?.cause).toBe(original);
  });

  it.each([
    ["a server error", answered(502, "Server Error")],
    ["an unavailable GitHub", answered(503, "Unavailable")],
    ["a rate limit", answered(429, "API rate limit exceeded")],
    ["a 403 saying it is a secondary rate limit", answered(403, "You have exceeded a secondary rate limit.")],
    ["a 403 naming a time to retry after", answered(403, "Forbidden", { "retry-after": "60" })],
  ])("calls %s transient", (_, original) => {
    expect(asGitHubError(original)).toMatchObject({ status: original.status, transient: true });
  });

  it.each([
    ["a 403 for a missing permission", answered(403, "Resource not accessible by integration")],
    ["a 404", answered(404, "Not Found")],
    ["a 422", answered(422, "Validation Failed")],
  ])("does not call %s transient", (_, original) => {
    expect(asGitHubError(original)).toMatchObject({ status: original.status, transient: false });
  });

  it("gives status 0 to a request GitHub never answered, and calls it transient", () => {
    expect(asGitHubError(unanswered("connect ECONNREFUSED 127.0.0.1:443"))).toMatchObject({
      status: 0,
      transient: true,
      message: "connect ECONNREFUSED 127.0.0.1:443",
      method: "GET",
    });
    // A timeout: fetch's abort, on which Octokit stamps a 500 and nothing else.
    const aborted = Object.assign(new DOMException("This operation was aborted", "AbortError"), { status: 500 });
    expect(asGitHubError(aborted)).toMatchObject({ status: 0, transient: true, method: undefined });
  });

  it.each([
    ["an error of Lisa's own", new Error("git push failed")],
    ["a GraphQL error in a 200", Object.assign(new Error("GraphQL Rate Limit Exceeded"), { response: { status: 200 } })],
    ["something not an Error", { status: 502, message: "Server Error" }],
    ["nothing", undefined],
  ])("does not convert %s", (_, error) => {
    expect(asGitHubError(error)).toBeUndefined();
  });

  it("hands a GitHubError back as it is", () => {
    const error = new GitHubError("Not Found", { status: 404, transient: false });
    expect(asGitHubError(error)).toBe(error);
  });
});
