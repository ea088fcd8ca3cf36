import type {
  EnsuredPullRequest,
  GitHubReader,
  MergeMethod,
  MergeResult,
  PullRequestState,
  RepoRef,
} from "../github/github-port.ts";
import { publisherOf } from "../github/github-publisher.ts";

// Every write Lisa makes to a pull request. Each takes what the caller has just read of the PR and
// writes only what differs, so a pass resumed after a stop repeats no write GitHub already shows.

/** The newest pull request from `pr.head` into `pr.base`, open or not, or one opened now (`created`). */
export const ensurePullRequest = (
  gh: GitHubReader,
  ref: RepoRef,
  pr: { title: string; body: string; head: string; base: string; draft?: boolean },
): Promise<EnsuredPullRequest> => publisherOf(gh).ensurePullRequest(ref, pr);

/** The pull request shows `wanted`'s title and body; nothing is written where `current` shows them already. */
export async function ensurePullRequestText(
  gh: GitHubReader,
  ref: RepoRef,
  current: Pick<PullRequestState, "number" | "title" | "body">,
  wanted: { title?: string; body: string },
): Promise<void> {
  if (wanted.body === current.body && (wanted.title === undefined || wanted.title === current.title)) return;
  await publisherOf(gh).updatePullRequest(ref, current.number, wanted);
}

/** The pull request is a draft, or ready for review, as `draft` says (GraphQL: REST cannot). */
export async function ensureDraft(
  gh: GitHubReader,
  current: Pick<PullRequestState, "nodeId" | "draft">,
  draft: boolean,
): Promise<void> {
  if (current.draft !== draft) await publisherOf(gh).setDraft(current.nodeId, draft);
}

/** Asks `logins` for a review; GitHub ignores those asked already. */
export const requestReviewers = (gh: GitHubReader, ref: RepoRef, number: number, logins: string[]): Promise<void> =>
  publisherOf(gh).requestReviewers(ref, number, logins);

/** Merges exactly `sha` by `method`; a refusal comes back as a result, with GitHub's status and words. */
export const mergePullRequest = (
  gh: GitHubReader,
  ref: RepoRef,
  number: number,
  sha: string,
  method: MergeMethod,
): Promise<MergeResult> => publisherOf(gh).mergePullRequest(ref, number, sha, method);
