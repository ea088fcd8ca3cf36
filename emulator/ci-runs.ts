import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { ACTIONS_APP_ID, appJson } from "./apps.ts";
import { checkRunJson, followRuns, queuedCheckRun } from "./check-runs.ts";
import { actorOf, type EmulatorContext, emit, emitInBackground, tokenOf } from "./context.ts";
import { type CommitInfo, commitExists, commitInfo, gitEnv, readPath } from "./git-repos.ts";
import { paginate } from "./paginate.ts";
import type { Route, RouteRequest, RouteResponse } from "./router.ts";
import { HttpError, notFound, stringField, validationFailed } from "./router.ts";
import {
  type Account,
  type CheckAnnotation,
  type CheckRun,
  type CheckSuite,
  type CiCheck,
  type CommitStatus,
  now,
  type Repo,
} from "./state.ts";

const run = promisify(execFile);

/** How long the emulator's CI takes to report when a check says nothing. */
const DEFAULT_DELAY_MS = 50;

type RepoRoute = (
  method: string,
  pattern: string,
  handler: (request: RouteRequest, repo: Repo) => RouteResponse | Promise<RouteResponse>,
) => Route;

/** The commits at the tips of the repository's branches. */
async function branchHeads(repo: Repo): Promise<{ branch: string; sha: string }[]> {
  const { stdout } = await run("git", ["for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads"], {
    cwd: repo.gitDir,
    env: gitEnv(),
  });
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [branch = "", sha = ""] = line.split(" ");
      return { branch, sha };
    });
}

/** Marks the heads the repository has now as run already: CI runs on pushes, not on the repository's creation. */
export async function ciBaseline(repo: Repo): Promise<void> {
  for (const { sha } of await branchHeads(repo)) repo.ciRan.add(sha);
}

/**
 * Runs the repository's declared CI on every branch head it has not run on: as GitHub does at push
 * time, the suite, its queued check runs and the pending statuses are there at once; each check
 * completes after its delay (tracked, so the emulator's idle waits for it) and sends its webhooks.
 */
export async function runCi(context: EmulatorContext, repo: Repo): Promise<void> {
  for (const { branch, sha } of await branchHeads(repo)) {
    if (repo.ciRan.has(sha)) continue;
    repo.ciRan.add(sha);
    const head = { branch, sha, commit: await commitInfo(repo.gitDir, sha) };
    for (const appId of checksApps(context)) emptySuite(context, repo, appId, head);
    const atPush = repo.ci.filter((check) => !check.appearsAfterMs);
    startChecks(context, repo, atPush, head);
    for (const check of repo.ci.filter((c) => c.appearsAfterMs)) {
      const later = new Promise((resolve) => setTimeout(resolve, check.appearsAfterMs)).then(() =>
        startChecks(context, repo, [check], head),
      );
      void context.webhooks.track(later).catch(() => undefined);
    }
  }
}

/** A branch head the emulator's CI runs on, with its commit. */
type PushedHead = { branch: string; sha: string; commit: CommitInfo };

/**
 * The Apps GitHub makes a suite for at each push: every installed App with `checks: write`, Lisa's
 * own included, whether or not it ever reports a check run there.
 */
function checksApps(context: EmulatorContext): number[] {
  const own = context.permissions.checks === "write" ? [context.appId] : [];
  return [...own, ...context.checksApps.map((app) => app.id)];
}

/** The queued suite with no check run GitHub creates for `appId` on a pushed head; most stay so for good. */
function emptySuite(context: EmulatorContext, repo: Repo, appId: number, head: PushedHead): CheckSuite {
  const suite: CheckSuite = {
    id: context.state.nextId(),
    appId,
    headSha: head.sha,
    headBranch: head.branch,
    status: "queued",
    conclusion: null,
    createdAt: now(),
    headCommit: head.commit,
  };
  repo.checkSuites.set(suite.id, suite);
  return suite;
}

/** A suite for the check runs among `checks` (GitHub Actions' one per workflow run), and each check started. */
function startChecks(context: EmulatorContext, repo: Repo, checks: CiCheck[], head: PushedHead): void {
  const suite = checks.some((check) => (check.as ?? "check_run") === "check_run")
    ? emptySuite(context, repo, ACTIONS_APP_ID, head)
    : undefined;
  for (const check of checks) startCheck(context, repo, check, head.sha, suite);
}

/** A human re-runs a check run (GitHub's "Re-run"): a new run of the same check, on the same commit. */
export function rerunCheck(context: EmulatorContext, repo: Repo, checkRunId: number, check: CiCheck): void {
  const old = repo.checkRuns.get(checkRunId);
  if (!old) throw new Error(`no check run ${checkRunId}`);
  const suite = old.suiteId === undefined ? undefined : repo.checkSuites.get(old.suiteId);
  if (suite) suite.status = "queued";
  startCheck(context, repo, check, old.headSha, suite);
}

function startCheck(context: EmulatorContext, repo: Repo, check: CiCheck, sha: string, suite: CheckSuite | undefined): void {
  const finish = (report: (outcome: Outcome) => Promise<void>) => {
    if (check.stuck) return;
    const done = new Promise((resolve) => setTimeout(resolve, check.delayMs ?? DEFAULT_DELAY_MS))
      .then(() => evaluate(repo, check, sha))
      .then(report);
    void context.webhooks.track(done).catch(() => undefined);
  };
  if ((check.as ?? "check_run") === "status") {
    const status: CommitStatus = {
      id: context.state.nextId(),
      sha,
      context: check.name,
      state: "pending",
      description: "Build started",
      targetUrl: null,
      createdAt: now(),
      updatedAt: now(),
    };
    repo.statuses.push(status);
    finish(async (outcome) => {
      status.state = outcome.passed ? "success" : "failure";
      status.description = outcome.passed ? "Build passed" : outcome.firstLine;
      status.targetUrl = `${context.links().base}/ci/${repo.fullName}/builds/${status.id}`;
      status.updatedAt = now();
      await emit(context, "status", repo, context.state.account("ci-bot[bot]"), await statusEvent(context, repo, status));
    });
    return;
  }
  const checkRun: CheckRun = {
    ...queuedCheckRun(context.state.nextId(), ACTIONS_APP_ID, check.name, sha),
    ...(suite ? { suiteId: suite.id } : {}),
  };
  repo.checkRuns.set(checkRun.id, checkRun);
  finish(async (outcome) => {
    checkRun.status = "completed";
    checkRun.conclusion = outcome.passed ? "success" : "failure";
    checkRun.completedAt = now();
    checkRun.output = outcome.passed
      ? { title: "Passed", summary: `${check.name} passed.`, text: null }
      : { title: "Failed", summary: `${check.name} failed: ${outcome.firstLine}`, text: null };
    checkRun.annotations = outcome.annotations;
    checkRun.log = outcome.log;
    const sender = context.state.account("github-actions[bot]");
    await emit(context, "check_run", repo, sender, {
      action: "completed",
      check_run: checkRunJson(context, repo, checkRun),
    });
    if (!suite) return;
    followRuns(repo, suite);
    if (suite.status !== "completed") return;
    await emit(context, "check_suite", repo, sender, { action: "completed", check_suite: suiteJson(repo, suite, context) });
  });
}

interface Outcome {
  passed: boolean;
  firstLine: string;
  annotations: CheckAnnotation[];
  log: string;
}

/** Whether the check passes at `sha`, and the log and annotations it reports. */
async function evaluate(repo: Repo, check: CiCheck, sha: string): Promise<Outcome> {
  const rule = check.failsWhile;
  const found = rule ? await readPath(repo.gitDir, sha, rule.file) : undefined;
  const lines = found?.type === "file" ? found.content.toString("utf8").split("\n") : [];
  const annotations: CheckAnnotation[] = [];
  lines.forEach((line, index) => {
    if (rule && line.includes(rule.text))
      annotations.push({
        path: rule.file,
        line: index + 1,
        level: "failure",
        message: `${rule.file} still contains "${rule.text}"`,
      });
  });
  const passed = annotations.length === 0;
  const steps = ["##[group]Run npm test", "> npm test"];
  const failure = annotations.map((a) => `${a.path}:${a.line}: ${a.message}`);
  const log = [
    ...steps,
    ...(passed ? ["ok"] : [...(check.log ? [check.log] : []), ...failure, "##[error]Process completed with exit code 1."]),
  ].join("\n");
  return { passed, firstLine: failure[0] ?? "ok", annotations, log: `${log}\n` };
}

function suiteJson(repo: Repo, suite: CheckSuite, context: EmulatorContext) {
  const url = `${context.links().base}/repos/${repo.fullName}/check-suites/${suite.id}`;
  return {
    id: suite.id,
    node_id: Buffer.from(`CheckSuite${suite.id}`).toString("base64"),
    head_sha: suite.headSha,
    head_branch: suite.headBranch,
    status: suite.status,
    conclusion: suite.conclusion,
    app: appJson(context, suite.appId),
    before: null,
    after: suite.headSha,
    head_commit: headCommitJson(suite.headCommit),
    pull_requests: [],
    created_at: suite.createdAt,
    updated_at: suite.createdAt,
    latest_check_runs_count: [...repo.checkRuns.values()].filter((r) => r.suiteId === suite.id).length,
    check_runs_url: `${url}/check-runs`,
    url,
  };
}

/** A commit as a check suite's `head_commit` shows it. */
const headCommitJson = (commit: CommitInfo) => ({
  id: commit.sha,
  tree_id: commit.tree,
  message: commit.message,
  timestamp: commit.committer.date,
  author: { name: commit.author.name, email: commit.author.email },
  committer: { name: commit.committer.name, email: commit.committer.email },
});

/** A commit as a `status` payload's `commit` shows it. */
function statusCommitJson(repo: Repo, commit: CommitInfo, context: EmulatorContext) {
  const api = `${context.links().base}/repos/${repo.fullName}`;
  const html = `${context.links().base}/${repo.fullName}`;
  return {
    sha: commit.sha,
    node_id: Buffer.from(`Commit:${commit.sha}`).toString("base64").replace(/=+$/, ""),
    commit: {
      author: commit.author,
      committer: commit.committer,
      message: commit.message,
      tree: { sha: commit.tree, url: `${api}/git/trees/${commit.tree}` },
      url: `${api}/git/commits/${commit.sha}`,
      comment_count: 0,
      verification: { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null },
    },
    url: `${api}/commits/${commit.sha}`,
    html_url: `${html}/commit/${commit.sha}`,
    comments_url: `${api}/commits/${commit.sha}/comments`,
    author: null,
    committer: null,
    parents: commit.parents.map((sha) => ({ sha, url: `${api}/commits/${sha}`, html_url: `${html}/commit/${sha}` })),
  };
}

function statusJson(status: CommitStatus) {
  return {
    id: status.id,
    context: status.context,
    state: status.state,
    description: status.description,
    target_url: status.targetUrl,
    created_at: status.createdAt,
    updated_at: status.updatedAt,
  };
}

/** A `status` payload: the status, its commit, the repository's name and the branches whose head it is. */
async function statusEvent(context: EmulatorContext, repo: Repo, status: CommitStatus) {
  const api = `${context.links().base}/repos/${repo.fullName}`;
  const branches = (await branchHeads(repo))
    .filter((head) => head.sha === status.sha)
    .map((head) => ({
      name: head.branch,
      commit: { sha: head.sha, url: `${api}/commits/${head.sha}` },
      protected: head.branch === repo.defaultBranch && repo.requiredChecks !== undefined,
    }));
  return {
    sha: status.sha,
    name: repo.fullName,
    ...statusJson(status),
    commit: statusCommitJson(repo, await commitInfo(repo.gitDir, status.sha), context),
    branches,
  };
}

const STATUS_STATES: readonly string[] = ["pending", "success", "failure", "error"];

/**
 * A commit status on `sha`, as `POST /statuses/{sha}` creates one for whoever may write it: 422
 * for a commit the repository lacks or a state GitHub does not know; sends `status`.
 */
export async function createStatus(
  context: EmulatorContext,
  repo: Repo,
  sha: string,
  body: unknown,
  creator: Account,
): Promise<CommitStatus> {
  const fields = (body ?? {}) as { state?: unknown; context?: unknown; description?: unknown; target_url?: unknown };
  const state = stringField(body, "state", "Status");
  if (!STATUS_STATES.includes(state)) throw validationFailed("Status", { field: "state", code: "invalid" });
  if (!(await commitExists(repo.gitDir, sha))) throw new HttpError(422, `No commit found for SHA: ${sha}`);
  const at = now();
  const status: CommitStatus = {
    id: context.state.nextId(),
    sha,
    context: typeof fields.context === "string" ? fields.context : "default",
    state: state as CommitStatus["state"],
    description: typeof fields.description === "string" ? fields.description : null,
    targetUrl: typeof fields.target_url === "string" ? fields.target_url : null,
    createdAt: at,
    updatedAt: at,
  };
  repo.statuses.push(status);
  emitInBackground(context, async () => emit(context, "status", repo, creator, await statusEvent(context, repo, status)));
  return status;
}

/** Whether the account may push to `repo`: its owner, or a collaborator with write, maintain or admin. */
function mayPush(repo: Repo, account: Account): boolean {
  if (repo.owner.type === "User" && repo.owner.login.toLowerCase() === account.login.toLowerCase()) return true;
  const role = repo.collaborators.get(account.login.toLowerCase())?.role;
  return role === "write" || role === "maintain" || role === "admin";
}

/**
 * What Lisa reads of a commit's CI, as GitHub answers it: its check suites, its combined status
 * (`statuses: read`), a check run's annotations, an Actions job's log (`actions: read`), and the
 * branch protection that names required checks.
 */
export function ciRoutes(context: EmulatorContext, repoRoute: RepoRoute): Route[] {
  const needs = (permission: string) => {
    if (!context.permissions[permission]) throw new HttpError(403, "Resource not accessible by integration");
  };
  return [
    /**
     * Anyone who may push writes a commit status: an installation with `statuses: write` (403
     * otherwise), a person with write access (404 otherwise, as GitHub hides what one may not change).
     */
    repoRoute("POST", "/statuses/:sha", async (request, repo) => {
      const person = context.tokenUsers.get(tokenOf(request.headers));
      if (person ? !mayPush(repo, person) : context.permissions.statuses !== "write") {
        throw person ? notFound() : new HttpError(403, "Resource not accessible by integration");
      }
      const status = await createStatus(context, repo, request.params.sha ?? "", request.body, actorOf(context, request.headers));
      const url = `${context.links().base}/repos/${repo.fullName}/statuses/${status.sha}`;
      return { status: 201, body: { ...statusJson(status), url }, headers: { location: url } };
    }),
    repoRoute("GET", "/commits/:ref/check-suites", (request, repo) => {
      const suites = [...repo.checkSuites.values()]
        .filter((suite) => suite.headSha === request.params.ref)
        .map((suite) => suiteJson(repo, suite, context));
      return paginate(suites, request, context.links().base, {
        wrap: (page) => ({ total_count: suites.length, check_suites: page }),
      });
    }),
    repoRoute("GET", "/commits/:ref/status", (request, repo) => {
      needs("statuses");
      // The newest status of each context, as GitHub's combined status shows them.
      const latest = new Map<string, CommitStatus>();
      for (const status of repo.statuses.filter((s) => s.sha === request.params.ref)) latest.set(status.context, status);
      const statuses = [...latest.values()];
      const state = statuses.some((s) => s.state === "failure" || s.state === "error")
        ? "failure"
        : statuses.every((s) => s.state === "success")
          ? "success"
          : "pending";
      // The combined state is of every context; `statuses` is one page of them, 100 unless asked otherwise.
      return paginate(statuses.map(statusJson), request, context.links().base, {
        defaultPerPage: 100,
        wrap: (page) => ({ state, sha: request.params.ref, total_count: statuses.length, statuses: page }),
      });
    }),
    repoRoute("GET", "/check-runs/:id/annotations", (request, repo) => {
      const checkRun = repo.checkRuns.get(Number(request.params.id));
      if (!checkRun) throw notFound();
      const body = (checkRun.annotations ?? []).map((a) => ({
        path: a.path,
        start_line: a.line,
        end_line: a.line,
        annotation_level: a.level,
        title: null,
        message: a.message,
        raw_details: null,
      }));
      return paginate(body, request, context.links().base);
    }),
    // As GitHub: a redirect to the log's download, a signed URL on another host good for a minute.
    repoRoute("GET", "/actions/jobs/:id/logs", (request, repo) => {
      needs("actions");
      const id = Number(request.params.id);
      if (repo.checkRuns.get(id)?.log === undefined) throw notFound();
      return { status: 302, headers: { location: context.logHost.signedUrl(repo.fullName, id) } };
    }),
    repoRoute("GET", "/branches/:branch", async (request, repo) => {
      const branch = request.params.branch ?? "";
      const heads = await branchHeads(repo);
      const head = heads.find((h) => h.branch === branch);
      if (!head) throw new HttpError(404, "Branch not found");
      const required = branch === repo.defaultBranch ? repo.requiredChecks : undefined;
      return {
        status: 200,
        body: {
          name: branch,
          commit: { sha: head.sha },
          protected: required !== undefined,
          protection: {
            enabled: required !== undefined,
            required_status_checks: {
              enforcement_level: required ? "non_admins" : "off",
              contexts: required ?? [],
              checks: (required ?? []).map((name) => ({ context: name, app_id: null })),
            },
          },
        },
      };
    }),
  ];
}
