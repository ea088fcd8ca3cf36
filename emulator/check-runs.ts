import { appJson } from "./apps.ts";
import { type EmulatorContext, tokenOf } from "./context.ts";
import { commitExists } from "./git-repos.ts";
import { paginate } from "./paginate.ts";
import {
  HttpError,
  notFound,
  type Route,
  type RouteRequest,
  type RouteResponse,
  stringField,
  validationFailed,
} from "./router.ts";
import { type CheckRun, type CheckSuite, now, type Repo } from "./state.ts";

type RepoRoute = (
  method: string,
  pattern: string,
  handler: (request: RouteRequest, repo: Repo) => RouteResponse | Promise<RouteResponse>,
) => Route;

const STATUSES = ["queued", "in_progress", "completed"] as const;
const CONCLUSIONS = ["action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out"];
/** GitHub's bound on a check run's `output.summary` and `output.text`. */
const OUTPUT_LIMIT = 65_535;

/** A check run as GitHub starts one: queued, with no output yet. */
export function queuedCheckRun(id: number, appId: number, name: string, headSha: string): CheckRun {
  return {
    id,
    appId,
    name,
    headSha,
    status: "queued",
    conclusion: null,
    detailsUrl: null,
    output: { title: null, summary: null },
    startedAt: now(),
    completedAt: null,
  };
}

export function checkRunJson(context: EmulatorContext, repo: Repo, run: CheckRun) {
  const links = context.links();
  const url = `${links.base}/repos/${repo.fullName}/check-runs/${run.id}`;
  const app = appJson(context, run.appId);
  const suite = run.suiteId === undefined ? undefined : repo.checkSuites.get(run.suiteId);
  return {
    id: run.id,
    node_id: Buffer.from(`CheckRun${run.id}`).toString("base64"),
    name: run.name,
    head_sha: run.headSha,
    app,
    external_id: "",
    url,
    html_url: `${links.base}/${repo.fullName}/runs/${run.id}`,
    // Without one of its own, GitHub points at the App's page.
    details_url: run.detailsUrl ?? app.external_url,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.startedAt,
    completed_at: run.completedAt,
    output: {
      title: run.output.title,
      summary: run.output.summary,
      text: run.output.text ?? null,
      annotations_count: run.annotations?.length ?? 0,
      annotations_url: `${url}/annotations`,
    },
    ...(suite
      ? {
          check_suite: {
            id: suite.id,
            node_id: Buffer.from(`CheckSuite${suite.id}`).toString("base64"),
            head_branch: suite.headBranch,
            head_sha: suite.headSha,
            status: suite.status,
            conclusion: suite.conclusion,
            url: `${links.base}/repos/${repo.fullName}/check-suites/${suite.id}`,
            before: null,
            after: suite.headSha,
            pull_requests: [],
            app,
            created_at: suite.createdAt,
            updated_at: suite.createdAt,
          },
        }
      : {}),
    pull_requests: [],
  };
}

/** A suite's status and conclusion follow its check runs: completed once they all are, failing if one fails. */
export function followRuns(repo: Repo, suite: CheckSuite): void {
  const runs = [...repo.checkRuns.values()].filter((run) => run.suiteId === suite.id);
  const done = runs.every((run) => run.status === "completed");
  suite.status = done ? "completed" : "in_progress";
  suite.conclusion = done ? (runs.every((run) => PASSING_CONCLUSIONS.has(run.conclusion ?? "")) ? "success" : "failure") : null;
}

/** Conclusions that fail neither a suite nor a required check, as branch protection reads them. */
export const PASSING_CONCLUSIONS: ReadonlySet<string> = new Set(["success", "neutral", "skipped"]);

/**
 * The checks API as Lisa uses it: create a check run on a commit, update it, list a commit's. Only
 * an App whose installation holds `checks: write` may write them (403 otherwise, as on GitHub, so
 * app.yml must ask for it), and only the App that created a run may update it (403 too); `head_sha` must be a commit of the repository; a completed run needs a
 * conclusion; the output is bounded as GitHub bounds it.
 */
export function checkRunRoutes(context: EmulatorContext, repoRoute: RepoRoute): Route[] {
  const mayWrite = (request: RouteRequest) => {
    // Only Apps write check runs; GitHub refuses a person's token whatever its scopes.
    if (context.tokenUsers.has(tokenOf(request.headers))) throw new HttpError(403, "You must authenticate via a GitHub App.");
    if (context.permissions.checks !== "write") throw new HttpError(403, "Resource not accessible by integration");
  };

  /** Applies `status`, `conclusion`, `details_url` and `output` of a request body to `run`. */
  const apply = (run: CheckRun, body: Record<string, unknown>) => {
    if (body.status !== undefined) {
      if (!STATUSES.includes(body.status as CheckRun["status"]))
        throw validationFailed("CheckRun", { field: "status", code: "invalid" });
      run.status = body.status as CheckRun["status"];
    }
    if (body.conclusion !== undefined) {
      if (!CONCLUSIONS.includes(body.conclusion as string))
        throw validationFailed("CheckRun", { field: "conclusion", code: "invalid" });
      run.conclusion = body.conclusion as string;
      // A conclusion completes the run, whatever status was said.
      run.status = "completed";
    }
    if (run.status === "completed" && run.conclusion === null)
      throw new HttpError(422, 'Invalid request.\n\n"conclusion" wasn\'t supplied.');
    if (run.status === "completed") run.completedAt ??= now();
    if (typeof body.details_url === "string") run.detailsUrl = body.details_url;
    if (body.output !== undefined) {
      const output = body.output as { title?: unknown; summary?: unknown };
      if (typeof output.title !== "string" || typeof output.summary !== "string")
        throw new HttpError(422, 'Invalid request.\n\n"title", "summary" weren\'t supplied.');
      if (output.summary.length > OUTPUT_LIMIT) throw validationFailed("CheckRun", { field: "output.summary", code: "too_long" });
      run.output = { title: output.title, summary: output.summary };
    }
  };

  return [
    repoRoute("POST", "/check-runs", async (request, repo) => {
      mayWrite(request);
      const body = (request.body ?? {}) as Record<string, unknown>;
      const name = stringField(body, "name", "CheckRun");
      const headSha = stringField(body, "head_sha", "CheckRun");
      if (!(await commitExists(repo.gitDir, headSha))) throw new HttpError(422, `No commit found for SHA: ${headSha}`);
      const run = queuedCheckRun(context.state.nextId(), context.appId, name, headSha);
      // It joins the suite GitHub made for the App at the push.
      const suite = [...repo.checkSuites.values()].find((s) => s.appId === context.appId && s.headSha === headSha);
      if (suite) run.suiteId = suite.id;
      apply(run, body);
      repo.checkRuns.set(run.id, run);
      if (suite) followRuns(repo, suite);
      return { status: 201, body: checkRunJson(context, repo, run) };
    }),

    repoRoute("PATCH", "/check-runs/:id", (request, repo) => {
      mayWrite(request);
      const run = repo.checkRuns.get(Number(request.params.id));
      if (!run) throw notFound();
      if (run.appId !== context.appId)
        throw new HttpError(
          403,
          `Invalid app_id \`${run.appId}\` - check run can only be modified by the GitHub App that created it.`,
        );
      apply(run, (request.body ?? {}) as Record<string, unknown>);
      const suite = run.suiteId === undefined ? undefined : repo.checkSuites.get(run.suiteId);
      if (suite) followRuns(repo, suite);
      return { status: 200, body: checkRunJson(context, repo, run) };
    }),

    repoRoute("GET", "/commits/:ref/check-runs", (request, repo) => {
      const name = request.query.get("check_name");
      const app = request.query.get("app_id");
      const runs = [...repo.checkRuns.values()]
        .filter(
          (run) =>
            run.headSha === request.params.ref &&
            (name === null || run.name === name) &&
            (app === null || run.appId === Number(app)),
        )
        .sort((a, b) => b.id - a.id)
        .map((run) => checkRunJson(context, repo, run));
      return paginate(runs, request, context.links().base, { wrap: (page) => ({ total_count: runs.length, check_runs: page }) });
    }),
  ];
}
