/**
 * Whether a GitHub API error is worth trying again later: a server error, a rate limit (429), or a
 * 403 for a secondary rate limit (it says so, or names a time to retry after). A 403 for a missing
 * permission, a 404 or a 422 will answer the same way however often Lisa asks.
 */
export function isTransientGitHubError(error: unknown): boolean {
  const { status, message, response } = (error ?? {}) as {
    status?: number;
    message?: string;
    response?: { headers?: Record<string, string | undefined> };
  };
  if (typeof status !== "number") return false;
  if (status >= 500 || status === 429) return true;
  return status === 403 && (/rate limit/i.test(message ?? "") || response?.headers?.["retry-after"] !== undefined);
}
