import { generateKeyPairSync } from "node:crypto";
import { Probot } from "probot";
import { afterEach, describe, expect, it } from "vitest";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import { LisaOctokit } from "../../src/github/lisa-octokit.ts";
import { tempDir } from "../support/git-fixtures.ts";

let github: GitHubEmulator | undefined;
afterEach(async () => {
  await github?.stop();
  github = undefined;
});

async function client() {
  github = createGitHubEmulator({ reposRoot: tempDir("octokit-repos"), webhookSecret: "s" });
  await github.start();
  await github.createRepo("acme/api", { files: { "README.md": "# API\n" } });
  const octokit = new LisaOctokit({
    baseUrl: github.url,
    auth: { token: github.createInstallationToken() },
    // GitHub says "retry after 1 s"; the test waits 10 ms for each of its seconds.
    throttle: { retryAfterBaseValue: 10 },
    retry: { enabled: false },
  });
  return { github, octokit };
}

/** An installation's Octokit as `npm start` makes it: Probot's, with Lisa's Octokit. */
async function asNpmStart(emulator: GitHubEmulator) {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const probot = new Probot({ appId: 1, privateKey, baseUrl: emulator.url, Octokit: LisaOctokit, logLevel: "fatal" });
  return probot.auth(emulator.installationId);
}

const repoReads = (emulator: GitHubEmulator) =>
  emulator
    .requests()
    .filter((r) => r.path === "/repos/acme/api")
    .map((r) => r.status);

describe("LisaOctokit", () => {
  it("sends a request hit by a secondary rate limit again after GitHub's retry-after, and gets its answer", async () => {
    const { github: emulator, octokit } = await client();
    emulator.injectFault({ method: "GET", path: /^\/repos\/acme\/api$/, kind: "secondary_rate_limit", times: 2 });
    const { data } = await octokit.rest.repos.get({ owner: "acme", repo: "api" });
    expect(data.full_name).toBe("acme/api");
    expect(repoReads(emulator)).toEqual([403, 403, 200]);
  });

  it("wins over the throttling Probot sets up for `npm start`, which gives up at once", async () => {
    const { github: emulator } = await client();
    const octokit = await asNpmStart(emulator);
    emulator.injectFault({ method: "GET", path: /^\/repos\/acme\/api$/, kind: "secondary_rate_limit" });
    const { data } = await octokit.rest.repos.get({ owner: "acme", repo: "api" });
    expect(data.full_name).toBe("acme/api");
    expect(repoReads(emulator)).toEqual([403, 200]);
  });

  it("names itself Lisa first in its User-Agent, once, before Octokit's name, as GitHub asks an App to", async () => {
    const { github: emulator } = await client();
    const octokit = await asNpmStart(emulator);
    const sent: string[] = [];
    octokit.hook.after("request", (_response, options) => {
      sent.push(String(options.headers["user-agent"]));
    });
    await octokit.rest.repos.get({ owner: "acme", repo: "api" });
    // The installation token's request, then the read.
    expect(sent).toEqual([expect.stringMatching(/^lisa octokit-core\.js\/[\d.]+ /), sent[0]]);
  });

  it("gives up after two retries, so the caller can fail or retry the whole command", async () => {
    const { github: emulator, octokit } = await client();
    emulator.injectFault({ method: "GET", path: /^\/repos\/acme\/api$/, kind: "secondary_rate_limit", times: 10 });
    await expect(octokit.rest.repos.get({ owner: "acme", repo: "api" })).rejects.toMatchObject({ status: 403 });
    expect(repoReads(emulator)).toEqual([403, 403, 403]);
  });
});
