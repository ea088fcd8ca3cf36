import type { Octokit } from "@octokit/rest";
import { CONFIG_PATH } from "../config/parse-config.ts";

export interface RepoRef {
  owner: string;
  repo: string;
}

/** `owner/name` as a reference; the config schema has already checked the shape. */
export function parseRepoRef(fullName: string): RepoRef {
  const [owner = "", repo = ""] = fullName.split("/");
  return { owner, repo };
}

export interface PullRequestRef {
  number: number;
  url: string;
}

/**
 * The GitHub operations Lisa's core needs, for one installation. The core depends on this small
 * object of functions, never on Probot, so it can be driven by a fake or the real API alike.
 */
export interface GitHubPort {
  installationToken(): Promise<string>;
  /** Parsed `.github/lisa.yml` from the default branch; null when there is none. */
  readConfig(ref: RepoRef): Promise<unknown>;
  defaultBranch(ref: RepoRef): Promise<string>;
  /** The collaborator's role name: admin, maintain, write, triage, read, or none. */
  roleOf(ref: RepoRef, username: string): Promise<string>;
  addReaction(ref: RepoRef, issue: number, content: "eyes" | "rocket"): Promise<void>;
  findComment(ref: RepoRef, issue: number, marker: string): Promise<number | undefined>;
  createComment(ref: RepoRef, issue: number, body: string): Promise<number>;
  updateComment(ref: RepoRef, commentId: number, body: string): Promise<void>;
  addLabels(ref: RepoRef, issue: number, labels: string[]): Promise<void>;
  removeLabel(ref: RepoRef, issue: number, label: string): Promise<void>;
  findPullRequest(ref: RepoRef, branch: string): Promise<PullRequestRef | undefined>;
  createPullRequest(ref: RepoRef, pr: { title: string; body: string; head: string; base: string }): Promise<PullRequestRef>;
  updatePullRequest(ref: RepoRef, number: number, pr: { title: string; body: string }): Promise<void>;
}

type OctokitWithConfig = Octokit & {
  config: {
    get(options: { owner: string; repo: string; path: string }): Promise<{ config: unknown; files: { config: unknown }[] }>;
  };
};

/**
 * The GitHub port over an installation-authenticated Octokit (Probot's, with its config plugin),
 * and a function that mints a fresh installation token for git.
 */
export function createGitHubPort(octokit: OctokitWithConfig, mintToken: () => Promise<string>): GitHubPort {
  return {
    installationToken: mintToken,
    async readConfig({ owner, repo }) {
      const { config, files } = await octokit.config.get({ owner, repo, path: CONFIG_PATH });
      // The loader answers `{}` for a missing file; Lisa wants to know it was missing.
      return files.some((file) => file.config !== null) ? config : null;
    },
    async defaultBranch({ owner, repo }) {
      const { data } = await octokit.rest.repos.get({ owner, repo });
      return data.default_branch;
    },
    async roleOf({ owner, repo }, username) {
      try {
        const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username });
        // `permission` folds maintain into write and triage into read; `role_name` does not.
        return data.role_name ?? data.permission;
      } catch (error) {
        if ((error as { status?: number }).status === 404) return "none";
        throw error;
      }
    },
    async addReaction({ owner, repo }, issue, content) {
      await octokit.rest.reactions.createForIssue({ owner, repo, issue_number: issue, content });
    },
    async findComment({ owner, repo }, issue, marker) {
      for await (const { data } of octokit.paginate.iterator(octokit.rest.issues.listComments, {
        owner,
        repo,
        issue_number: issue,
        per_page: 100,
      })) {
        const found = data.find((comment) => comment.body?.includes(marker) && comment.user?.type === "Bot");
        if (found) return found.id;
      }
      return undefined;
    },
    async createComment({ owner, repo }, issue, body) {
      const { data } = await octokit.rest.issues.createComment({ owner, repo, issue_number: issue, body });
      return data.id;
    },
    async updateComment({ owner, repo }, commentId, body) {
      await octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body });
    },
    async addLabels({ owner, repo }, issue, labels) {
      await octokit.rest.issues.addLabels({ owner, repo, issue_number: issue, labels });
    },
    async removeLabel({ owner, repo }, issue, name) {
      try {
        await octokit.rest.issues.removeLabel({ owner, repo, issue_number: issue, name });
      } catch (error) {
        if ((error as { status?: number }).status !== 404) throw error;
      }
    },
    async findPullRequest({ owner, repo }, branch) {
      const { data } = await octokit.rest.pulls.list({ owner, repo, head: `${owner}:${branch}`, state: "open", per_page: 1 });
      const pr = data[0];
      return pr ? { number: pr.number, url: pr.html_url } : undefined;
    },
    async createPullRequest({ owner, repo }, pr) {
      const { data } = await octokit.rest.pulls.create({ owner, repo, ...pr });
      return { number: data.number, url: data.html_url };
    },
    async updatePullRequest({ owner, repo }, number, pr) {
      await octokit.rest.pulls.update({ owner, repo, pull_number: number, ...pr });
    },
  };
}
