import { beforeAll, describe, expect, it } from "vitest";
import type { GitHubEmulator } from "../../emulator/github-emulator.ts";
import type { GitHubPort } from "../../src/github/github-publisher.ts";
import { refreshGate } from "../../src/review/refresh-gate.ts";
import { gitIn } from "../support/git-fixtures.ts";
import { inProcessGitHub, useMemoryStore } from "../support/in-process-github.ts";
import { newRun } from "../support/store-fixtures.ts";

// refreshGate without a process, a socket or Lisa's git: the store in memory and the GitHub port
// over the emulator in this process. The gate reads the pull request and its reviews from GitHub
// each time, and moves the run when they say so.

const REPO = "acme/api";
const ref = { owner: "acme", repo: "api" };

let github: GitHubEmulator;
let port: GitHubPort;
let sha: string;
beforeAll(async () => {
  ({ github, port } = inProcessGitHub());
  await github.createRepo(REPO, { files: { "README.md": "# API\n" } });
  github.addCollaborator(REPO, "bob", "write");
  github.addCollaborator(REPO, "rita", "read");
  // Lisa's commit, pushed once: each test's branch points at it (a git ref, no clone or push per test).
  gitIn(github.gitDir(REPO), "branch", "lisa-work", "main");
  ({ sha } = await github.pushCommit(REPO, "lisa-work", {
    files: { "health.ts": "export const health = () => 'ok';\n" },
    message: "Add health()",
    user: "lisa[bot]",
  }));
});

const openStore = useMemoryStore();

/** Ann's issue, its run at the gate in the store, and the step's pull request open on GitHub. */
async function runInReview() {
  const issue = await github.createIssue(REPO, { title: "Add a health endpoint", user: "ann" });
  const branch = `lisa/${issue.number}-add-a-health-endpoint`;
  gitIn(github.gitDir(REPO), "branch", branch, sha);
  const pull = await port.ensurePullRequest(ref, { title: "Add a health endpoint", body: "", head: branch, base: "main" });
  const { store, deps } = openStore();
  const run = await store.runs.create({ ...newRun(issue.number, "ann"), config: {} }, [
    { position: 1, owner: "acme", repo: "api", branch, baseBranch: "main", scope: null },
  ]);
  if (!run) throw new Error("no run");
  await store.runs.transition(run.id, "claim");
  const pass = await store.passes.current(run.id);
  for (const event of ["start", "planned", "built", "gate_open"] as const) await store.passes.transition(pass?.id ?? 0, event);
  await store.runs.transition(run.id, "gate_open");
  const [step] = await store.steps.of(run.id);
  if (!step) throw new Error("no step");
  await store.steps.record(step.id, { pr_number: pull.number, pr_url: pull.url, pr_state: "open", head_sha: sha });
  return { deps, store, issue: issue.number, pull: pull.number, runId: run.id, stepId: step.id };
}

describe("refreshGate", () => {
  it("accepts the run on a writer's approval of the head, and shows it on the issue", async () => {
    const { deps, store, issue, pull, runId } = await runInReview();
    await github.submitReview(REPO, pull, { state: "APPROVED", user: "bob" });

    expect(await refreshGate(deps, port, runId, { actor: "bob" })).toBe("accept");

    expect((await store.runs.get(runId))?.state).toBe("accepted");
    expect(github.labels(REPO, issue)).toEqual(["lisa:accepted"]);
    expect(github.comments(REPO, issue).some((c) => c.body.includes(`<!-- lisa:report run=${runId}`))).toBe(true);
    const [step] = await store.steps.of(runId);
    expect(step?.gate).toMatchObject({ status: "approved", approvers: ["bob"], number: pull });
  });

  it("counts a reader's approval for nothing: the run waits for review", async () => {
    const { deps, store, issue, pull, runId } = await runInReview();
    await github.submitReview(REPO, pull, { state: "APPROVED", user: "rita" });

    expect(await refreshGate(deps, port, runId, { actor: "rita" })).toBe("wait");

    expect((await store.runs.get(runId))?.state).toBe("review");
    expect(github.labels(REPO, issue)).toEqual([]);
  });

  it("closes the run when its one pull request is closed unmerged, and drops the step", async () => {
    const { deps, store, pull, runId } = await runInReview();
    await github.closePull(REPO, pull, "bob");

    expect(await refreshGate(deps, port, runId, { actor: "bob" })).toBe("closed");

    expect((await store.runs.get(runId))?.state).toBe("closed");
    const [step] = await store.steps.of(runId);
    expect(step).toMatchObject({ pr_state: "closed", state: "dropped" });
  });

  it("reads GitHub, not a webhook: an approval whose event never came still accepts at the next refresh", async () => {
    const { deps, store, pull, runId } = await runInReview();
    expect(await refreshGate(deps, port, runId)).toBe("wait");
    await github.submitReview(REPO, pull, { state: "APPROVED", user: "bob" });

    expect(await refreshGate(deps, port, runId)).toBe("accept");
    expect((await store.runs.get(runId))?.state).toBe("accepted");
  });
});
