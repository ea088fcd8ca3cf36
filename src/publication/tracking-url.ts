import type { RunRow } from "../store/store.ts";

/**
 * The tracking comment's address as GitHub writes an issue comment's `html_url`:
 * `<web origin>/<owner>/<repo>/issues/<n>#issuecomment-<id>`. The web origin (github.com, or a
 * GitHub Enterprise host) is taken from an address GitHub gave for the same installation.
 */
export function trackingCommentUrl(
  run: Pick<RunRow, "owner" | "repo" | "issue_number" | "comment_id">,
  seen: (string | null | undefined)[],
): string | undefined {
  if (run.comment_id === null) return undefined;
  for (const url of seen) {
    if (!url) continue;
    try {
      const { origin } = new URL(url);
      return `${origin}/${run.owner}/${run.repo}/issues/${run.issue_number}#issuecomment-${run.comment_id}`;
    } catch {}
  }
  return undefined;
}
