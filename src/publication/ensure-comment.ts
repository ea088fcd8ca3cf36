import { GitHubError } from "../github/github-error.ts";
import type { GitHubReader, RepoRef } from "../github/github-port.ts";
import { publisherOf } from "../github/github-publisher.ts";
import type { Lane } from "../github/write-pacer.ts";

// "Look before you create", in one place: every comment Lisa writes carries a marker (an HTML
// comment GitHub does not render), and a stop between creating it and recording its id cannot
// make a second one.

function withMarker(marker: string, body: string): string {
  return body.includes(marker) ? body : `${marker}\n${body}`;
}

/**
 * The comment that `marker` names shows `body`: edited where it is (`known`, else found by its
 * marker), or created (in the write lane `lane`, when named). A known comment someone deleted is
 * made again. Returns its id, to record.
 */
export async function ensureComment(
  gh: GitHubReader,
  ref: RepoRef,
  issue: number,
  marker: string,
  body: string,
  known?: number | null,
  lane?: Lane,
): Promise<number> {
  const text = withMarker(marker, body);
  const publisher = publisherOf(gh);
  if (known !== undefined && known !== null) {
    try {
      await publisher.updateComment(ref, known, text);
      return known;
    } catch (error) {
      if (!(error instanceof GitHubError && error.status === 404)) throw error;
    }
  }
  const found = await gh.findComment(ref, issue, marker);
  if (found === undefined) return publisher.createComment(ref, issue, text, lane);
  await publisher.updateComment(ref, found, text);
  return found;
}

/** Posts `body` once under `marker`; a comment already there is left as it is. True when posted now. */
export async function commentOnce(gh: GitHubReader, ref: RepoRef, issue: number, marker: string, body: string): Promise<boolean> {
  if ((await gh.findComment(ref, issue, marker)) !== undefined) return false;
  await publisherOf(gh).createComment(ref, issue, withMarker(marker, body));
  return true;
}

/** Posts a reply once per webhook delivery (a command's answer), however often the command is handled. */
export async function replyOnce(gh: GitHubReader, ref: RepoRef, issue: number, deliveryId: string, text: string): Promise<void> {
  await commentOnce(gh, ref, issue, `<!-- lisa:reply delivery=${deliveryId} -->`, text);
}

/** Answers in the thread of an inline comment (`thread`, the thread's first comment); the reply's id. */
export const replyInThread = (gh: GitHubReader, ref: RepoRef, pr: number, thread: number, body: string): Promise<number> =>
  publisherOf(gh).replyToReviewComment(ref, pr, thread, body);
