import type { Octokit } from "@octokit/rest";
import { type ConfigFileCache, type ConfigFileRef, type ConfigFileText, resolveConfig } from "../config/resolve-config.ts";
import { ConfigError } from "../errors.ts";
import { statusOf } from "./github-error.ts";
import type { GitHubPort } from "./github-publisher.ts";
import { ifChanged } from "./if-changed.ts";

const STANDARD_ROLES: ReadonlySet<string> = new Set(["admin", "maintain", "write", "triage", "read"]);

/** The port's reads of a repository over Octokit: its config file, its default branch, a collaborator's role. */
export function octokitRepos(
  octokit: Octokit,
  configCache: ConfigFileCache | undefined,
): Pick<GitHubPort, "readConfig" | "defaultBranch" | "roleOf"> {
  return {
    readConfig: (ref, options) =>
      resolveConfig((file, etag) => readConfigFile(octokit, file, etag), ref, configCache, options?.since),
    async defaultBranch({ owner, repo }) {
      const { data } = await octokit.rest.repos.get({ owner, repo });
      return data.default_branch;
    },
    async roleOf({ owner, repo }, username) {
      try {
        const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username });
        // `permission` folds maintain into write and triage into read; `role_name` does not, but a
        // custom role has its own name there, and then `permission` tells what it inherits.
        return data.role_name && STANDARD_ROLES.has(data.role_name) ? data.role_name : data.permission;
      } catch (error) {
        if (statusOf(error) === 404) return "none";
        throw error;
      }
    },
  };
}

/** A config file's text from the default branch, asked for with `If-None-Match` when an ETag is held. */
async function readConfigFile(octokit: Octokit, file: ConfigFileRef, etag: string | null): Promise<ConfigFileText | "unchanged"> {
  try {
    const answer = await ifChanged(etag, (headers) =>
      octokit.request("GET /repos/{owner}/{repo}/contents/{path}", { ...file, mediaType: { format: "raw" }, headers }),
    );
    if (answer === "unchanged") return answer;
    // Asked for raw, a file is text; a directory or a submodule comes back as JSON.
    if (typeof answer.data !== "string") throw new ConfigError(`\`${file.owner}/${file.repo}:${file.path}\` is not a file`);
    return { etag: answer.headers.etag ?? null, content: answer.data };
  } catch (error) {
    if (statusOf(error) === 404) return { etag: null, content: null };
    throw error;
  }
}
