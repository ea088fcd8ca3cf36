/**
 * A request to GitHub that failed: the one error the GitHub port throws for an HTTP failure, so
 * callers ask `error instanceof GitHubError` and read `status` and `transient` instead of guessing
 * at the shape of Octokit's errors.
 */
export class GitHubError extends Error {
  override readonly name = "GitHubError";
  /** GitHub's HTTP status; 0 when no answer came (the network failed, the request timed out). */
  readonly status: number;
  /**
   * Worth trying again later: no answer, a server error, a rate limit (429), or a 403 for a
   * secondary rate limit (it says so, or names a time to retry after). A 403 for a missing
   * permission, a 404 or a 422 will answer the same way however often Lisa asks.
   */
  readonly transient: boolean;
  /** The request that failed, when Octokit says which it was. */
  readonly method: string | undefined;
  readonly url: string | undefined;

  constructor(message: string, fields: { status: number; transient: boolean; method?: string; url?: string; cause?: unknown }) {
    super(message, { cause: fields.cause });
    this.status = fields.status;
    this.transient = fields.transient;
    this.method = fields.method;
    this.url = fields.url;
  }
}

/** What Lisa reads of an error Octokit throws (its `RequestError`, or a fetch abort it stamps a status on). */
interface OctokitFailure extends Error {
  status: number;
  request?: { method?: string; url?: string };
  response?: { headers?: Record<string, string | undefined> };
}

/**
 * `error` as a GitHubError when it is Octokit's report of a failed request (an Error carrying a
 * numeric `status`); undefined for anything else (a bug, a full disk, a GraphQL error in a 200).
 */
export function asGitHubError(error: unknown): GitHubError | undefined {
  if (error instanceof GitHubError) return error;
  if (!(error instanceof Error) || typeof (error as Partial<OctokitFailure>).status !== "number") return undefined;
  const { status, message, request, response } = error as OctokitFailure;
  // Octokit says 500 when fetch itself failed; only an error with a response had an answer from GitHub.
  const answered = response !== undefined ? status : 0;
  return new GitHubError(message, {
    status: answered,
    transient: isTransient(answered, message, response?.headers),
    method: request?.method,
    url: request?.url,
    cause: error,
  });
}

/** The HTTP status of a failed request to GitHub (0: no answer), undefined for any other error. */
export const statusOf = (error: unknown) => asGitHubError(error)?.status;

function isTransient(status: number, message: string, headers: Record<string, string | undefined> | undefined): boolean {
  if (status === 0 || status >= 500 || status === 429) return true;
  return status === 403 && (/rate limit/i.test(message) || headers?.["retry-after"] !== undefined);
}
