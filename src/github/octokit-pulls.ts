import type { Octokit } from "@octokit/rest";
import { fitBody } from "./fit-body.ts";
import { asGitHubError, statusOf } from "./github-error.ts";
import type { MergeMethod, PullRequestState } from "./github-port.ts";
import type { GitHubPort } from "./github-publisher.ts";
import { readAllPages } from "./read-all-pages.ts";

type PullMethods =
  | "ensurePullRequest"
  | "updatePullRequest"
  | "getPullRequest"
  | "setDraft"
  | "mergeMethods"
  | "mergePullRequest";

/** The port's pull requests over Octokit: opening, reading, drafting and merging them. */
export function octokitPulls(octokit: Octokit): Pick<GitHubPort, PullMethods> {
  return {
    async ensurePullRequest({ owner, repo }, pr) {
      // Looked for first: the PR may exist from before a crash.
      const found = await readAllPages(
        octokit,
        octokit.rest.pulls.list,
        { owner, repo, head: `${owner}:${pr.head}`, base: pr.base, state: "all" },
        (page) => page,
      );
      const newest = found.sort((a, b) => b.number - a.number)[0];
      if (newest) return { ...pullState(newest), created: false };
      const opened = { state: "open" as const, merged: false, created: true };
      try {
        const { data } = await octokit.rest.pulls.create({ owner, repo, ...pr, body: fitBody(pr.body) });
        return { number: data.number, url: data.html_url, draft: data.draft ?? false, ...opened };
      } catch (error) {
        // Drafts need a paid plan on private repositories; GitHub answers 422 and Lisa opens a normal PR.
        if (!pr.draft || statusOf(error) !== 422 || !/draft/i.test((error as Error).message)) throw error;
        const { data } = await octokit.rest.pulls.create({ owner, repo, ...pr, body: fitBody(pr.body), draft: false });
        return { number: data.number, url: data.html_url, draft: false, ...opened };
      }
    },
    async updatePullRequest({ owner, repo }, number, pr) {
      await octokit.rest.pulls.update({
        owner,
        repo,
        pull_number: number,
        ...pr,
        ...(pr.body === undefined ? {} : { body: fitBody(pr.body) }),
      });
    },
    async getPullRequest({ owner, repo }, number) {
      const { data } = await octokit.rest.pulls.get({ owner, repo, pull_number: number });
      return pullState(data);
    },
    async setDraft(nodeId, draft) {
      const mutation = draft
        ? "mutation($id: ID!) { convertPullRequestToDraft(input: {pullRequestId: $id}) { pullRequest { isDraft } } }"
        : "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { isDraft } } }";
      await octokit.graphql(mutation, { id: nodeId });
    },
    async mergeMethods({ owner, repo }) {
      const { data } = await octokit.rest.repos.get({ owner, repo });
      // GitHub shows the settings only to some callers; one it does not show is taken as allowed.
      const allowed: [MergeMethod, boolean | undefined][] = [
        ["merge", data.allow_merge_commit],
        ["squash", data.allow_squash_merge],
        ["rebase", data.allow_rebase_merge],
      ];
      return allowed.filter(([, allows]) => allows !== false).map(([method]) => method);
    },
    async mergePullRequest({ owner, repo }, number, sha, method) {
      try {
        const { data } = await octokit.rest.pulls.merge({ owner, repo, pull_number: number, sha, merge_method: method });
        return data.merged ? { merged: true, message: data.message } : { merged: false, status: 200, message: data.message };
      } catch (error) {
        // A rate limit, a server error or no answer is worth another try; any other refusal is GitHub's last word.
        const failure = asGitHubError(error);
        if (failure && !failure.transient && failure.status >= 400 && failure.status < 500) {
          const said = (error as { response?: { data?: { message?: unknown } } }).response?.data?.message;
          return { merged: false, status: failure.status, message: typeof said === "string" ? said : failure.message };
        }
        throw error;
      }
    },
  };
}

/** What the pulls API answers that Lisa reads, in the list and in a single pull request alike. */
interface PullJson {
  number: number;
  html_url: string;
  state: string;
  merged?: boolean | null;
  merged_at?: string | null;
  draft?: boolean;
  node_id: string;
  title: string;
  body?: string | null;
  head: { sha: string; ref: string };
  base: { ref: string };
}

function pullState(pr: PullJson): PullRequestState {
  return {
    number: pr.number,
    url: pr.html_url,
    state: pr.state === "closed" ? "closed" : "open",
    merged: Boolean(pr.merged ?? pr.merged_at),
    draft: pr.draft ?? false,
    headSha: pr.head.sha,
    headRef: pr.head.ref,
    baseRef: pr.base.ref,
    nodeId: pr.node_id,
    title: pr.title,
    body: pr.body ?? "",
  };
}
