import type { Octokit } from "@octokit/rest";
import { cutMarkdown } from "../reporting/fit-to-limit.ts";
import type { CheckReport, GitHubPort } from "./github-port.ts";

/** The checks API bounds a summary one character below a comment's body. */
const CHECK_SUMMARY_LIMIT = 65_535;

/** The port's check runs over Octokit. */
export function octokitChecks(octokit: Octokit): Pick<GitHubPort, "findCheckRun" | "ensureCheckRun" | "updateCheckRun"> {
  const findCheckRun: GitHubPort["findCheckRun"] = async ({ owner, repo }, sha, name) => {
    const { data } = await octokit.rest.checks.listForRef({ owner, repo, ref: sha, check_name: name, per_page: 1 });
    const [found] = data.check_runs;
    return found ? { id: found.id, status: found.status } : undefined;
  };
  return {
    findCheckRun,
    async ensureCheckRun(ref, sha, name, report) {
      // One check run per head, even across a crash between the look and the write.
      const found = await findCheckRun(ref, sha, name);
      if (found) {
        await octokit.rest.checks.update({ ...ref, check_run_id: found.id, ...checkFields(report) });
        return found.id;
      }
      const { data } = await octokit.rest.checks.create({ ...ref, name, head_sha: sha, ...checkFields(report) });
      return data.id;
    },
    async updateCheckRun({ owner, repo }, id, report) {
      await octokit.rest.checks.update({ owner, repo, check_run_id: id, ...checkFields(report) });
    },
  };
}

/** The checks API's fields for a report: a conclusion completes the run, its absence keeps it in progress. */
function checkFields(report: CheckReport) {
  return {
    ...(report.conclusion ? { status: "completed" as const, conclusion: report.conclusion } : { status: "in_progress" as const }),
    ...(report.detailsUrl ? { details_url: report.detailsUrl } : {}),
    output: { title: report.title, summary: cutMarkdown(report.summary, CHECK_SUMMARY_LIMIT) },
  };
}
