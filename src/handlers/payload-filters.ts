/** What the webhook handlers share: the shape of their answer and the filters every payload goes through. */

export type Triage<T> = { command: T; key: string } | { ignored: string };

interface Account {
  login: string;
  type?: string;
}

/** Bots, Lisa included, never steer Lisa. */
export const isBot = (account: Account | null | undefined) =>
  account?.type === "Bot" || Boolean(account?.login.toLowerCase().endsWith("[bot]"));

/** Fields every `pull_request*` payload shares that Lisa filters on. */
export interface PullRequestPayloadPart {
  number: number;
  head: { ref: string; sha: string; repo: { full_name: string } | null };
}

/**
 * Lisa's pull requests come from `lisa/…` branches of the repository itself; reviews and pushes
 * on any other pull request are none of Lisa's business.
 */
export function isLisaPullRequest(pr: PullRequestPayloadPart, repository: { full_name: string }): boolean {
  return pr.head.ref.startsWith("lisa/") && pr.head.repo?.full_name.toLowerCase() === repository.full_name.toLowerCase();
}
