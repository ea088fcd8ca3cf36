import { afterEach, describe, expect, it } from "vitest";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { createGitHubPort } from "../../src/github/create-github-port.ts";
import { LisaOctokit } from "../../src/github/lisa-octokit.ts";
import { tempDir } from "../support/git-fixtures.ts";

// What a branch's rules ask for, read from GitHub's `GET /repos/{owner}/{repo}/rules/branches/{branch}`
// as the emulator answers it: how many approvals (issue 24, item 5), and which checks CI must pass
// (issue 25), beside those classic branch protection requires.

let github: GitHubEmulator | undefined;
afterEach(async () => {
  await github?.stop();
  github = undefined;
});

async function emulated() {
  const emulator = createGitHubEmulator({ reposRoot: tempDir("rules-repos"), webhookSecret: "s" });
  github = emulator;
  await emulator.start();
  await emulator.createRepo("acme/api", { files: { "README.md": "# API\n" }, requiredApprovals: 2 });
  await emulator.createRepo("acme/web", { files: { "README.md": "# Web\n" } });
  await emulator.createRepo("acme/site", {
    files: { "README.md": "# Site\n" },
    requiredChecks: ["build"],
    rulesetChecks: ["lint", "build"],
  });
  const octokit = new LisaOctokit({
    baseUrl: emulator.url,
    auth: { token: emulator.createInstallationToken() },
    retry: { enabled: false },
    throttle: { enabled: false },
  });
  return { gh: createGitHubPort(octokit as never, async () => "token"), emulator };
}

describe("requiredApprovals", () => {
  it("reads the pull_request rule's approval count on the branch it covers", async () => {
    const { gh, emulator } = await emulated();
    expect(await gh.requiredApprovals({ owner: "acme", repo: "api" }, "main")).toBe(2);
    expect(emulator.requests().filter((r) => r.path.includes("/rules/branches/"))).toEqual([
      expect.objectContaining({ method: "GET", path: "/repos/acme/api/rules/branches/main?per_page=100", status: 200 }),
    ]);
  });

  it("knows no count where no rule asks for one: another branch, a repository without rules, one GitHub will not show (404)", async () => {
    const { gh, emulator } = await emulated();
    expect(await gh.requiredApprovals({ owner: "acme", repo: "api" }, "feature/x")).toBeUndefined();
    expect(await gh.requiredApprovals({ owner: "acme", repo: "web" }, "main")).toBeUndefined();
    expect(await gh.requiredApprovals({ owner: "acme", repo: "gone" }, "main")).toBeUndefined();
    expect(emulator.requests().map((r) => r.status)).toEqual([200, 200, 404]);
  });
});

describe("requiredChecks", () => {
  it("takes the checks a ruleset requires beside those classic protection requires, each once", async () => {
    const { gh } = await emulated();
    expect((await gh.requiredChecks({ owner: "acme", repo: "site" }, "main")).sort()).toEqual(["build", "lint"]);
    expect(await gh.requiredChecks({ owner: "acme", repo: "web" }, "main")).toEqual([]);
  });
});
