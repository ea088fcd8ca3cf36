import type { Octokit } from "@octokit/rest";
import { branchRules } from "./branch-rules.ts";
import { statusOf } from "./github-error.ts";
import type { CiCheckRun } from "./github-port.ts";
import type { GitHubPort } from "./github-publisher.ts";
import type { PageCache } from "./page-cache.ts";
import { pagesOf, readAllPages } from "./read-all-pages.ts";

/**
 * The port's reads of a pull request's CI over Octokit. Lisa's own check runs and suites (those of
 * the App whose id `appId` gives) are left out: her "Lisa" check is no CI of the pull request.
 * With `pages`, the lists polled are read conditionally (read-all-pages.ts).
 */
export function octokitCi(
  octokit: Octokit,
  { appId, pages }: { appId?: () => Promise<number>; pages?: PageCache },
): Pick<GitHubPort, "ciOf" | "checkAnnotations" | "jobLog" | "requiredChecks"> {
  return {
    async ciOf(ref, sha) {
      const own = appId ? await appId() : undefined;
      // Every page of each, asked for on its ETag (a 304 is free of rate limit): a failure on the second page of 150 check runs closes the gate as surely as one on the first.
      const [runs, suites, statuses] = await Promise.all([
        unlessRefused(
          readAllPages(
            octokit,
            octokit.rest.checks.listForRef,
            { ...ref, ref: sha, filter: "latest" },
            (page) => page.check_runs,
            pages,
          ),
          [],
        ),
        unlessRefused(
          readAllPages(octokit, octokit.rest.checks.listSuitesForRef, { ...ref, ref: sha }, (page) => page.check_suites, pages),
          [],
        ),
        unlessRefused(
          readAllPages(octokit, octokit.rest.repos.getCombinedStatusForRef, { ...ref, ref: sha }, (page) => page.statuses, pages),
          [],
        ),
      ]);
      // The newest run of each name: a re-run replaces the run it repeats.
      const newest = new Map<string, CiCheckRun>();
      for (const run of [...runs].sort((a, b) => b.id - a.id)) {
        const runApp = run.app?.id ?? null;
        if (runApp === own || newest.has(run.name)) continue;
        newest.set(run.name, {
          id: run.id,
          name: run.name,
          appId: runApp,
          status: run.status,
          conclusion: run.conclusion ?? null,
          title: run.output.title ?? null,
          summary: run.output.summary ?? null,
          text: run.output.text ?? null,
          detailsUrl: run.details_url ?? null,
          startedAt: run.started_at ?? null,
        });
      }
      return {
        runs: [...newest.values()],
        suites: suites
          .filter((suite) => (suite.app?.id ?? null) !== own)
          .map((suite) => ({
            id: suite.id,
            appId: suite.app?.id ?? null,
            status: suite.status,
            runs: suite.latest_check_runs_count ?? 0,
            createdAt: suite.created_at ?? null,
          })),
        statuses: statuses.map((status) => ({
          context: status.context,
          state: status.state,
          description: status.description ?? null,
          targetUrl: status.target_url ?? null,
          createdAt: status.created_at,
        })),
      };
    },
    async checkAnnotations(ref, checkRunId, max) {
      // Pages until `max` are read: a check may carry thousands, and a few tell the agent enough.
      const annotations = [];
      for await (const page of pagesOf(octokit, octokit.rest.checks.listAnnotations, { ...ref, check_run_id: checkRunId })) {
        annotations.push(...page);
        if (annotations.length >= max) break;
      }
      return annotations
        .slice(0, max)
        .map(
          (a) =>
            `${a.path}:${a.start_line}: ${a.annotation_level ?? "failure"}: ${a.title ? `${a.title}: ` : ""}${a.message ?? ""}`,
        );
    },
    async jobLog(ref, checkRunId) {
      try {
        const { data } = await octokit.rest.actions.downloadJobLogsForWorkflowRun({ ...ref, job_id: checkRunId });
        return typeof data === "string" ? data : Buffer.from(data as ArrayBuffer).toString("utf8");
      } catch (error) {
        // No job behind this check run, or its log has expired: the check's own output stands in.
        const status = statusOf(error);
        if (status === 403 || status === 404 || status === 410) return undefined;
        throw error;
      }
    },
    // Required by classic branch protection or by a ruleset: a repository may use both.
    async requiredChecks(ref, branch) {
      const [{ data }, rules] = await Promise.all([
        unlessRefused(octokit.rest.repos.getBranch({ ...ref, branch }), { data: { protection: undefined } }),
        branchRules(octokit, ref, branch),
      ]);
      const classic = data.protection?.required_status_checks;
      const ruleset = (rules ?? []).flatMap((rule) =>
        rule.type === "required_status_checks"
          ? (rule.parameters?.required_status_checks ?? []).map((check) => check.context)
          : [],
      );
      return [...new Set([...(classic?.contexts ?? []), ...(classic?.checks ?? []).map((check) => check.context), ...ruleset])];
    },
  };
}

/**
 * What GitHub answers, or `empty` when it refuses (403): an installation whose owner has not yet
 * accepted `statuses` or `actions` reads the CI it may, and Lisa waits for that (`lisa doctor` says what is missing).
 */
async function unlessRefused<T, E>(request: Promise<T>, empty: E): Promise<T | E> {
  try {
    return await request;
  } catch (error) {
    if (statusOf(error) === 403) return empty;
    throw error;
  }
}
