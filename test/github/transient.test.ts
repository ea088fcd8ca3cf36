import { describe, expect, it } from "vitest";
import { isTransientGitHubError } from "../../src/github/transient.ts";

describe("isTransientGitHubError", () => {
  it.each([
    [{ status: 502, message: "Server Error" }],
    [{ status: 503, message: "Unavailable" }],
    [{ status: 429, message: "API rate limit exceeded" }],
    [{ status: 403, message: "You have exceeded a secondary rate limit." }],
    [{ status: 403, message: "Forbidden", response: { headers: { "retry-after": "60" } } }],
  ])("tries %j again", (error) => {
    expect(isTransientGitHubError(error)).toBe(true);
  });

  it.each([
    [{ status: 403, message: "Resource not accessible by integration" }],
    [{ status: 404, message: "Not Found" }],
    [{ status: 422, message: "Validation Failed" }],
    [new Error("git push failed")],
    [undefined],
  ])("does not try %j again", (error) => {
    expect(isTransientGitHubError(error)).toBe(false);
  });
});
