import { ProbotOctokit } from "probot";
import { readAllPages } from "../../github/read-all-pages.ts";
import { quietLog } from "../github-api.ts";
import type { Check } from "./check.ts";

/**
 * An installation on selected repositories reads an organization-wide config (`<owner>/.github`,
 * which `_extends` and the fallback for a repository without its own name) only if `.github` is
 * among them: otherwise those repositories run on the defaults, silently.
 */
export async function orgConfigCheck(
  octokit: InstanceType<typeof ProbotOctokit>,
  baseUrl: string,
  installation: { id: number; account?: { login?: string } | null },
): Promise<Check> {
  const owner = installation.account?.login ?? `#${installation.id}`;
  const name = `${owner}/.github`;
  try {
    const { token } = (await octokit.rest.apps.createInstallationAccessToken({ installation_id: installation.id })).data;
    const asInstallation = new ProbotOctokit({
      auth: { token },
      baseUrl,
      log: quietLog,
      retry: { enabled: false },
      throttle: { enabled: false },
    });
    const repositories = await readAllPages(
      asInstallation as never,
      asInstallation.rest.apps.listReposAccessibleToInstallation,
      {},
      (page) => page.repositories,
    );
    return repositories.some((repo) => repo.name === ".github")
      ? { name, status: "ok", detail: "in the installation: an organization-wide .github/lisa.yml there is read" }
      : {
          name,
          status: "warn",
          detail: "not in the installation, which has selected repositories: an organization-wide config there is never read",
          fix: `If ${owner} keeps .github/lisa.yml in its .github repository, add that repository to the installation.`,
        };
  } catch (error) {
    return { name, status: "warn", detail: `could not list the installation's repositories: ${(error as Error).message}` };
  }
}
