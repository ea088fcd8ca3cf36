import path from "node:path";
import { afterEach } from "vitest";
import { createGitHubEmulator, type GitHubEmulator } from "../../emulator/github-emulator.ts";
import type { CoreDeps } from "../../src/deps.ts";
import { createGitHubPort } from "../../src/github/create-github-port.ts";
import type { GitHubPort } from "../../src/github/github-publisher.ts";
import { LisaOctokit } from "../../src/github/lisa-octokit.ts";
import { Store } from "../../src/store/store.ts";
import { gitIn, tempDir } from "./git-fixtures.ts";
import { newRun, oneStep } from "./store-fixtures.ts";

/**
 * The GitHub port Lisa's workflow is handed, over the emulator's routes and state in this process:
 * Octokit's requests go to the emulator's `fetch`, not over a socket, so a unit test of the middle
 * layer sees what GitHub would show (and the emulator's request log) in milliseconds. No git and
 * no webhooks: the emulator's repositories take their files at creation only.
 */
export function inProcessGitHub(): { github: GitHubEmulator; port: GitHubPort } {
  const github = createGitHubEmulator({ reposRoot: tempDir("in-process-repos"), webhookSecret: "in-process-webhook-secret" });
  github.startInProcess();
  const octokit = new LisaOctokit({
    baseUrl: github.url,
    auth: { token: github.createInstallationToken() },
    request: { fetch: github.fetch },
    retry: { enabled: false },
    throttle: { enabled: false },
  });
  const port = createGitHubPort(octokit as never, async () => github.createInstallationToken(), {
    appId: async () => github.appId,
  });
  return { github, port };
}

const silent = { info() {}, warn() {}, error() {}, debug() {}, child: () => silent };

/**
 * A store in memory for each test that opens one, closed after it, with the part of CoreDeps the
 * publication and the review gate read (the store, the clock, the held secrets, a silent log).
 */
export function useMemoryStore(): () => { store: Store; deps: CoreDeps } {
  let store: Store | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });
  return () => {
    const opened = new Store(":memory:");
    store = opened;
    return { store: opened, deps: { store: opened, now: () => Date.now(), heldSecrets: [], log: silent } as unknown as CoreDeps };
  };
}

/**
 * Ann's issue titled `title` on acme/api, a branch of Lisa's for it with one commit adding `file`,
 * and in `store` a run for it whose one step works on that branch.
 */
export async function runOnBranch(github: GitHubEmulator, store: Store, title: string, file: string) {
  const issue = await github.createIssue("acme/api", { title, user: "ann" });
  const branch = `lisa/${issue.number}-${path.basename(file, ".ts")}`;
  gitIn(github.gitDir("acme/api"), "branch", branch, "main");
  await github.pushCommit("acme/api", branch, { files: { [file]: "export const ok = 1;\n" }, message: title, user: "lisa[bot]" });
  const run = await store.runs.create(
    { ...newRun(issue.number, "ann"), issue_title: title },
    oneStep(issue.number).map((step) => ({ ...step, branch })),
  );
  const pass = run && (await store.passes.current(run.id));
  const [step] = run ? await store.steps.of(run.id) : [];
  if (!run || !pass || !step) throw new Error("no run");
  return { issue: issue.number, branch, run, pass, step };
}
