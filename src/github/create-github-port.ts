import type { Octokit } from "@octokit/rest";
import type { ConfigFileCache } from "../config/resolve-config.ts";
import { asGitHubError } from "./github-error.ts";
import type { GitHubPort } from "./github-publisher.ts";
import { octokitChecks } from "./octokit-checks.ts";
import { octokitCi } from "./octokit-ci.ts";
import { octokitIssues } from "./octokit-issues.ts";
import { octokitPulls } from "./octokit-pulls.ts";
import { octokitRepos } from "./octokit-repos.ts";
import { octokitReviews } from "./octokit-reviews.ts";
import type { PageCache } from "./page-cache.ts";

/**
 * The GitHub port over an installation-authenticated Octokit, and a function that mints a fresh
 * installation token for git. With `configCache`, config files are read conditionally (config-cache.ts);
 * with `pageCache`, the CI and check-run lists Lisa polls (read-all-pages.ts).
 * `self` is the login of a person's token (`lisa run`); without it, Lisa is the App's bot, whose
 * id `appId` tells (its check runs are found by it).
 */
export function createGitHubPort(
  octokit: Octokit,
  mintToken: () => Promise<string>,
  {
    self,
    configCache,
    appId,
    pageCache,
  }: { self?: string; configCache?: ConfigFileCache; appId?: () => Promise<number>; pageCache?: PageCache } = {},
): GitHubPort {
  return throwingGitHubErrors({
    installationToken: mintToken,
    ...octokitRepos(octokit, configCache),
    ...octokitIssues(octokit, self),
    ...octokitChecks(octokit, {
      ...(appId ? { appId } : {}),
      person: self !== undefined,
      ...(pageCache ? { pages: pageCache } : {}),
    }),
    ...octokitCi(octokit, { ...(appId ? { appId } : {}), ...(pageCache ? { pages: pageCache } : {}) }),
    ...octokitPulls(octokit),
    ...octokitReviews(octokit, self),
  });
}

/** The port whose every method turns Octokit's report of a failed request into a GitHubError on its way out. */
function throwingGitHubErrors(port: GitHubPort): GitHubPort {
  const wrapped = Object.entries(port).map(([name, method]: [string, (...args: unknown[]) => Promise<unknown>]) => [
    name,
    async (...args: unknown[]) => {
      try {
        return await method(...args);
      } catch (error) {
        throw asGitHubError(error) ?? error;
      }
    },
  ]);
  return Object.fromEntries(wrapped) as GitHubPort;
}
