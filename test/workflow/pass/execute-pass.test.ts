import { beforeAll, describe, expect, it } from "vitest";
import type { GitHubEmulator } from "../../../emulator/github-emulator.ts";
import { parseConfig } from "../../../src/config/parse-config.ts";
import type { CoreDeps } from "../../../src/deps.ts";
import type { GitHubPort } from "../../../src/github/github-publisher.ts";
import type { Manifest } from "../../../src/records/manifest.ts";
import { BODY_START } from "../../../src/reporting/pr-body.ts";
import { passMarker } from "../../../src/reporting/review-package.ts";
import { abortRun } from "../../../src/store/run-changes.ts";
import { blockStep, finishStep } from "../../../src/store/step-changes.ts";
import type { NewGuidance, Store } from "../../../src/store/store.ts";
import { type RunContext, StoppedError } from "../../../src/workflow/context/run-context.ts";
import { executePass } from "../../../src/workflow/pass/execute-pass.ts";
import { gitIn, tempDir } from "../../support/git-fixtures.ts";
import { inProcessGitHub, useMemoryStore } from "../../support/in-process-github.ts";
import { buildThrough, newRun } from "../../support/store-fixtures.ts";

// executePass without a Lisa process, a socket or an agent: the store in memory and the GitHub port
// over the emulator in this process. Each test puts a run, its pass and its step where a pass stands
// after its build (or blocked, or planned), and checks what the phases after it write to the store and
// to GitHub. Building a pending step needs git and an agent session: the end-to-end tests cover it.

const REPO = "acme/api";
const WEB = "acme/web";
const WORKER = "worker-1";
const REASON = "The gate `npm test` failed twice the same way.";

let github: GitHubEmulator;
let port: GitHubPort;
/** The tree of Lisa's change in each repository. */
const work = new Map<string, string>();
beforeAll(async () => {
  ({ github, port } = inProcessGitHub());
  for (const repo of [REPO, WEB]) {
    await github.createRepo(repo, { files: { "README.md": `# ${repo}\n` } });
    // Lisa's change, pushed once; each test's head is a commit of its own with that tree (its own check run).
    gitIn(github.gitDir(repo), "branch", "lisa-work", "main");
    await github.pushCommit(repo, "lisa-work", {
      files: { "health.ts": "export const health = () => 'ok';\n" },
      message: "Add health()",
      user: "lisa[bot]",
    });
    work.set(repo, gitIn(github.gitDir(repo), "rev-parse", "lisa-work^{tree}").trim());
  }
});

const openStore = useMemoryStore();

const manifest: Manifest = {
  title: "Add a health endpoint",
  what: "Adds GET /health answering ok.",
  open_questions: ["Should /health also check the database?"],
  recommendation: "continue",
  refinements: ["Report the build's version in /health"],
  pass_summary: "Added the route and its test.",
};

/** Lisa's commit on a branch of its own in `repo`, and the step's draft pull request for it, as a build leaves them. */
async function draftPullRequest(repo: string, issue: number) {
  const [owner = "", name = ""] = repo.split("/");
  const branch = `lisa/${issue}-add-a-health-endpoint`;
  const gitDir = github.gitDir(repo);
  const sha = gitIn(gitDir, "commit-tree", work.get(repo) ?? "", "-p", "main", "-m", `Add health() for #${issue}`).trim();
  gitIn(gitDir, "branch", branch, sha);
  const pull = await port.ensurePullRequest(
    { owner, repo: name },
    { title: "Add a health endpoint", body: "", head: branch, base: "main", draft: true },
  );
  return { owner, repo: name, branch, sha, pull };
}

/** The context executeRun would build for the run's current pass, on `store`, as worker `WORKER`. */
async function contextOf(store: Store, deps: CoreDeps, runId: number, raw: unknown): Promise<RunContext> {
  const run = await store.runs.get(runId);
  const pass = await store.passes.current(runId);
  if (!run || !pass) throw new Error("no run or pass");
  const workspace = {
    dataDir: tempDir("execute-pass"),
    gitBaseUrl: github.url,
    author: { name: "Lisa", email: "lisa@example.invalid" },
  };
  return {
    deps: { ...deps, workerName: WORKER, workspace },
    gh: port,
    run,
    pass,
    config: parseConfig(raw),
    secrets: [],
    network: new Map(),
    publish: () => {},
  };
}

/**
 * Ann's issue on acme/api and its run on this worker, a step in each of `repos` built: its pull
 * request open as a draft and its record for pass 1 `delivered` with the agent's manifest (at
 * `pushed`, Lisa's head, when told), or `blocked`. The pass ascends (or, with blocked steps, is
 * still building), as the build leaves it.
 */
async function builtRun(options: { raw?: unknown; blocked?: boolean; pushed?: boolean; repos?: string[] } = {}) {
  const { raw = {}, blocked = false, pushed = false, repos = [REPO] } = options;
  const { store, deps } = openStore();
  const issue = await github.createIssue(REPO, { title: "Add a health endpoint", user: "ann" });
  const pulls = [];
  for (const repo of repos) pulls.push(await draftPullRequest(repo, issue.number));
  const run = await store.runs.create(
    { ...newRun(issue.number, "ann"), issue_title: "Add a health endpoint", config: raw },
    pulls.map((p, index) => ({
      position: index + 1,
      owner: p.owner,
      repo: p.repo,
      branch: p.branch,
      baseBranch: "main",
      scope: null,
    })),
  );
  if (!run) throw new Error("no run");
  await store.runs.claim(WORKER, run.id);
  const pass = await store.passes.current(run.id);
  if (!pass) throw new Error("no pass");
  await store.passes.transition(pass.id, "start");
  await store.passes.transition(pass.id, "planned");
  const steps = await store.steps.of(run.id);
  for (const [index, step] of steps.entries()) {
    const { sha, pull } = pulls[index] ?? {};
    if (!sha || !pull) throw new Error("no pull request");
    await store.steps.move(step.id, "start");
    await store.steps.record(step.id, {
      manifest,
      pr_number: pull.number,
      pr_url: pull.url,
      pr_state: "open",
      head_sha: sha,
      draft: 1,
    });
    const at = { runId: run.id, stepId: step.id, passId: pass.id };
    if (blocked) {
      expect(await blockStep(store, at, REASON, { wip_sha: null })).toBe(true);
    } else {
      await buildThrough(store, step.id);
      expect(await finishStep(store, at, "delivered", pushed ? sha : null)).toBe(true);
    }
  }
  if (!blocked) expect(await store.passes.transition(pass.id, "built")).toBe(true);
  const held = async () => ({
    run: (await store.runs.get(run.id))?.state,
    pass: (await store.passes.get(run.id, 1))?.state,
    labels: github.labels(REPO, issue.number),
  });
  const [first] = pulls;
  const [step] = steps;
  if (!first || !step) throw new Error("no step");
  return {
    store,
    ctx: await contextOf(store, deps, run.id, raw),
    issue: issue.number,
    pull: first.pull.number,
    sha: first.sha,
    runId: run.id,
    passId: pass.id,
    stepId: step.id,
    stepIds: steps.map((s) => s.id),
    pulls: pulls.map((p) => p.pull.number),
    held,
  };
}

const pullOf = (number: number, repo = REPO) => github.pulls(repo).find((p) => p.number === number);
const packageOn = (pull: number, runId: number, pass: number, stepId: number, repo = REPO) =>
  github.comments(repo, pull).find((c) => c.body.startsWith(passMarker(runId, pass, stepId)))?.body;

const inline = (body: string): NewGuidance => ({
  delivery_id: `d-${body}`,
  source: "inline",
  owner: "acme",
  repo: "api",
  pr_number: 1,
  author: "bob",
  url: null,
  github_id: 7,
  path: "health.ts",
  line: 1,
  diff_hunk: null,
  outdated: 0,
  body,
});

describe("executePass: ascend and gate", () => {
  it("marks the pull request ready with its package, a review request, its body and check; the run waits for review", async () => {
    const { store, ctx, issue, pull, sha, runId, stepId, held } = await builtRun({ pushed: true });
    expect(pullOf(pull)?.draft).toBe(true);

    await executePass(ctx);

    expect(await held()).toEqual({ run: "review", pass: "at_gate", labels: ["lisa:review"] });
    expect(await store.passes.get(runId, 1)).toMatchObject({
      recommendation: manifest.recommendation,
      refinements: manifest.refinements,
      open_questions: manifest.open_questions,
    });
    const shown = pullOf(pull);
    expect(shown?.draft).toBe(false);
    expect(shown?.requested_reviewers.map((r) => r.login)).toEqual(["ann"]);
    expect(shown?.body).toContain(BODY_START);
    expect(shown?.body).toContain(manifest.what);
    expect(shown?.body).toContain(`Closes #${issue}`);
    const body = packageOn(pull, runId, 1, stepId);
    expect(body).toContain("👀 ready for review");
    expect(body).toContain(manifest.open_questions?.[0]);
    expect(body).toContain(manifest.refinements?.[0]);
    expect(body).toContain("**Agent recommendation:** CONTINUE");
    // The head Lisa pushed in this pass gets the check that says it is ready.
    expect(
      github
        .checkRuns(REPO)
        .filter((c) => c.head_sha === sha)
        .map((c) => [c.name, c.status, c.conclusion]),
    ).toEqual([["Lisa", "completed", "success"]]);
    // The step is recorded as GitHub shows it now, and the gate read from GitHub.
    expect(await store.steps.get(stepId)).toMatchObject({ draft: 0, gate: { status: "pending", number: pull } });
  });

  it("starts the next pass at once from guidance queued meanwhile, when a pass is left: no review label", async () => {
    const { store, ctx, pull, runId, held } = await builtRun({ raw: { limits: { max_passes: 3 } } });
    await store.guidance.add(runId, [inline("Rename it to /healthz")], undefined);

    await executePass(ctx);

    expect(await held()).toEqual({ run: "queued", pass: "superseded", labels: ["lisa:working"] });
    expect(await store.passes.get(runId, 1)).toMatchObject({
      recommendation: "continue",
      open_questions: manifest.open_questions,
    });
    expect(await store.passes.get(runId, 2)).toMatchObject({ state: "queued", trigger: "review", requested_by: "bob" });
    expect((await store.runs.get(runId))?.current_pass).toBe(2);
    expect(await store.guidance.queued(runId)).toEqual([]);
    // Pass 1 ascended all the same: its pull request is ready for the next pass to build on.
    expect(pullOf(pull)?.draft).toBe(false);
  });

  it("opens the gate with the guidance still queued when no pass is left (limits.max_passes)", async () => {
    const { store, ctx, runId, held } = await builtRun({ raw: { limits: { max_passes: 1 } } });
    await store.guidance.add(runId, [inline("Rename it to /healthz")], undefined);

    await executePass(ctx);

    expect(await held()).toEqual({ run: "review", pass: "at_gate", labels: ["lisa:review"] });
    expect((await store.guidance.queued(runId)).map((g) => g.body)).toEqual(["Rename it to /healthz"]);
    expect(await store.passes.get(runId, 2)).toBeUndefined();
  });
});

describe("executePass: blocked steps", () => {
  it("ends the pass blocked when no step is left to build: the label and the blocked package, the PR still a draft", async () => {
    const { ctx, pull, runId, stepId, held } = await builtRun({ blocked: true });
    expect(ctx.pass.state).toBe("building");

    await executePass(ctx);

    expect(await held()).toEqual({ run: "blocked", pass: "blocked", labels: ["lisa:blocked"] });
    const body = packageOn(pull, runId, 1, stepId);
    expect(body).toContain("⛔ blocked");
    expect(body).toContain(REASON);
    expect(pullOf(pull)?.draft).toBe(true);
    expect(pullOf(pull)?.requested_reviewers).toEqual([]);
  });
});

describe("executePass: a run stopped meanwhile", () => {
  it("throws StoppedError when the run is aborted while the pass ascends: the gate does not open, the next PR is left as it was", async () => {
    const { store, ctx, runId, passId, stepIds, pulls, held } = await builtRun({ repos: [REPO, WEB] });
    const [, web] = pulls;
    const [, webStep] = stepIds;
    if (web === undefined || webStep === undefined) throw new Error("no second pull request");
    // Someone aborts the run while the pass marks its first pull request ready.
    let aborted = false;
    const aborting: GitHubPort = {
      ...port,
      async setDraft(...args) {
        if (!aborted) aborted = (await abortRun(store, runId, passId, { actor: "ann", note: "/lisa abort" })) !== undefined;
        return port.setDraft(...args);
      },
    };

    await expect(executePass({ ...ctx, gh: aborting })).rejects.toThrow(StoppedError);

    expect(aborted).toBe(true);
    expect(await held()).toEqual({ run: "stopped", pass: "aborted", labels: ["lisa:working"] });
    expect(await store.passes.get(runId, 1)).toMatchObject({ recommendation: null, open_questions: null, refinements: null });
    // Nobody is asked to review a stopped run's next pull request.
    expect(pullOf(web, WEB)).toMatchObject({ draft: true, requested_reviewers: [] });
    expect(packageOn(web, runId, 1, webStep, WEB)).toBeUndefined();
  });

  it("throws StoppedError when another worker took the run over, and leaves the run and its pull request to it", async () => {
    const { store, ctx, runId, pull, held } = await builtRun();
    const stale = { ...ctx, deps: { ...ctx.deps, workerName: "worker-2" } };

    await expect(executePass(stale)).rejects.toThrow(StoppedError);

    expect(await held()).toEqual({ run: "running", pass: "ascending", labels: ["lisa:working"] });
    expect((await store.runs.get(runId))?.worker).toBe(WORKER);
    expect(pullOf(pull)).toMatchObject({ draft: true, requested_reviewers: [] });
  });
});

describe("executePass: review.plan", () => {
  it("waits for `/lisa proceed` once a multi-repository plan is recorded, building nothing", async () => {
    const { store, deps } = openStore();
    const issue = await github.createIssue(REPO, { title: "Show the API's health on the site", user: "ann" });
    const raw = { review: { plan: true } };
    const run = await store.runs.create({ ...newRun(issue.number, "ann"), config: raw }, [
      { position: 0, owner: "acme", repo: "api", branch: "", baseBranch: null, scope: null },
    ]);
    if (!run) throw new Error("no run");
    await store.runs.claim(WORKER, run.id);
    const pass = await store.passes.current(run.id);
    const [planning] = await store.steps.of(run.id);
    if (!pass || !planning) throw new Error("no pass or planning step");
    await store.passes.transition(pass.id, "start");
    // The planner's session is over: its plan recorded and the planning step delivered.
    await store.steps.move(planning.id, "start");
    const branch = `lisa/${issue.number}-health`;
    await store.passes.recordPlan(run.id, 1, { steps: [{ repo: REPO }, { repo: WEB }] }, [
      { position: 1, owner: "acme", repo: "api", branch, baseBranch: "main", scope: "the route" },
      { position: 2, owner: "acme", repo: "web", branch, baseBranch: "main", scope: "the page" },
    ]);
    expect(await store.steps.move(planning.id, "deliver", { phase: "done" })).toBe(true);
    const ctx = await contextOf(store, deps, run.id, raw);
    expect(ctx.pass.state).toBe("planning");

    await executePass(ctx);

    expect((await store.runs.get(run.id))?.state).toBe("plan_review");
    expect((await store.passes.current(run.id))?.state).toBe("plan_review");
    expect(github.labels(REPO, issue.number)).toEqual(["lisa:review"]);
    expect((await store.steps.of(run.id)).map((s) => [s.position, s.state])).toEqual([
      [0, "delivered"],
      [1, "pending"],
      [2, "pending"],
    ]);
  });
});
