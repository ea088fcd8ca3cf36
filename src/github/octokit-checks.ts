import type { Octokit } from "@octokit/rest";
import { cutMarkdown } from "../reporting/fit-to-limit.ts";
import type { CheckReport, GitHubPort } from "./github-port.ts";

/** The checks API bounds a summary one character below a comment's body. */
const CHECK_SUMMARY_LIMIT = 65_535;

/** The port's check runs over Octokit. */
export function octokitChecks(octokit: Octokit): Pick<GitHubPort, "findCheckRun" | "createCheckRun" | "updateCheckRun"> {
  return {
    async findCheckRun({ owner, repo }, sha, name) {
      const { data } = await octokit.rest.checks.listForRef({ owner, repo, ref: sha, check_name: name, per_page: 1 });
      const [found] = data.check_runs;
      return found ? { id: found.id, status: found.status } : undefined;
    },
    async createCheckRun({ owner, repo }, sha, name, report) {
      const { data } = await octokit.rest.checks.create({ owner, repo, name, head_sha: sha, ...checkFields(report) });
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
