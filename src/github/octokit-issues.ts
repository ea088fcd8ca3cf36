import type { Octokit } from "@octokit/rest";
import { coalescedEdits } from "./coalesced-edits.ts";
import { fitBody } from "./fit-body.ts";
import { statusOf } from "./github-error.ts";
import type { GitHubPort } from "./github-publisher.ts";
import { pagesOf, readAllPages } from "./read-all-pages.ts";

type IssueMethods =
  | "addReaction"
  | "findComment"
  | "createComment"
  | "updateComment"
  | "labelsOf"
  | "addLabels"
  | "setLabels"
  | "removeLabel"
  | "ensureIssueClosed"
  | "addCommentReaction";

/** Every port's comment edits in this process, by host and comment: ports are made per command and run. */
const edits = coalescedEdits();

/** The port's issue methods over Octokit: comments, reactions and labels (a pull request is an issue here too). */
export function octokitIssues(octokit: Octokit, self: string | undefined): Pick<GitHubPort, IssueMethods> {
  // Lisa's own comments: an App's are a bot's, and no person can write as one; with a person's
  // token (`lisa run`), they are that person's, and only theirs count.
  const isMine = (user: { type?: string; login?: string } | null | undefined) =>
    self === undefined ? user?.type === "Bot" : user?.login?.toLowerCase() === self.toLowerCase();
  return {
    async ensureIssueClosed({ owner, repo }, issue) {
      const { data } = await octokit.rest.issues.get({ owner, repo, issue_number: issue });
      if (data.state === "closed") return false;
      await octokit.rest.issues.update({ owner, repo, issue_number: issue, state: "closed", state_reason: "completed" });
      return true;
    },
    async addReaction({ owner, repo }, issue, content) {
      await octokit.rest.reactions.createForIssue({ owner, repo, issue_number: issue, content });
    },
    async findComment({ owner, repo }, issue, marker) {
      for await (const page of pagesOf(octokit, octokit.rest.issues.listComments, { owner, repo, issue_number: issue })) {
        const found = page.find((comment) => comment.body?.includes(marker) && isMine(comment.user));
        if (found) return found.id;
      }
      return undefined;
    },
    async createComment({ owner, repo }, issue, body, lane) {
      const { data } = await octokit.rest.issues.createComment({
        owner,
        repo,
        issue_number: issue,
        body: fitBody(body),
        // The write pacer's lane (write-pacer.ts), when the caller names one.
        ...(lane ? { request: { lane } } : {}),
      });
      return data.id;
    },
    async updateComment({ owner, repo }, commentId, body) {
      const key = `${octokit.request.endpoint.DEFAULTS.baseUrl} ${owner}/${repo} ${commentId}`;
      await edits(key, body, async (newest) => {
        await octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body: fitBody(newest) });
      });
    },
    async labelsOf({ owner, repo }, issue) {
      const labels = await readAllPages(
        octokit,
        octokit.rest.issues.listLabelsOnIssue,
        { owner, repo, issue_number: issue },
        (page) => page,
      );
      return labels.map((label) => label.name);
    },
    async addLabels({ owner, repo }, issue, labels) {
      await octokit.rest.issues.addLabels({ owner, repo, issue_number: issue, labels });
    },
    async setLabels({ owner, repo }, issue, labels) {
      await octokit.rest.issues.setLabels({ owner, repo, issue_number: issue, labels });
    },
    async removeLabel({ owner, repo }, issue, name) {
      try {
        await octokit.rest.issues.removeLabel({ owner, repo, issue_number: issue, name });
      } catch (error) {
        if (statusOf(error) !== 404) throw error;
      }
    },
    async addCommentReaction({ owner, repo }, commentId, kind, content) {
      if (kind === "issue") await octokit.rest.reactions.createForIssueComment({ owner, repo, comment_id: commentId, content });
      else await octokit.rest.reactions.createForPullRequestReviewComment({ owner, repo, comment_id: commentId, content });
    },
  };
}
