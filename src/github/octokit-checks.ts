import type { Octokit } from "@octokit/rest";
import { cutMarkdown } from "../reporting/fit-to-limit.ts";
import type { CheckReport } from "./github-port.ts";
import type { GitHubPort } from "./github-publisher.ts";
import type { PageCache } from "./page-cache.ts";
import { readAllPages } from "./read-all-pages.ts";

/** The checks API bounds a summary one character below a comment's body. */
const CHECK_SUMMARY_LIMIT = 65_535;

/**
 * The port's check runs over Octokit, those of the App whose id `appId` gives: another App's check
 * of the same name is not Lisa's to update. A person's token (`lisa run`) writes none: GitHub
 * takes check runs from Apps only.
 */
export function octokitChecks(
  octokit: Octokit,
  { appId, person, pages }: { appId?: () => Promise<number>; person: boolean; pages?: PageCache },
): Pick<GitHubPort, "findCheckRun" | "ensureCheckRun" | "updateCheckRun" | "createCheckRun"> {
  const findCheckRun: GitHubPort["findCheckRun"] = async ({ owner, repo }, sha, name) => {
    if (person) return undefined;
    const app = appId ? { app_id: await appId() } : {};
    // The newest by id: GitHub promises no order, and a head re-run often enough has more than a page.
    const runs = await readAllPages(
      octokit,
      octokit.rest.checks.listForRef,
      { owner, repo, ref: sha, check_name: name, ...app },
      (page) => page.check_runs,
      pages,
    );
    const found = runs.sort((a, b) => b.id - a.id)[0];
    return found ? { id: found.id, status: found.status } : undefined;
  };
  return {
    findCheckRun,
    async ensureCheckRun(ref, sha, name, report) {
      if (person) return undefined;
      // One check run per head, even across a crash between the look and the write.
      const found = await findCheckRun(ref, sha, name);
      if (found) {
        await octokit.rest.checks.update({ ...ref, check_run_id: found.id, ...checkFields(report) });
        return found.id;
      }
      const { data } = await octokit.rest.checks.create({ ...ref, name, head_sha: sha, ...checkFields(report) });
      return data.id;
    },
    async createCheckRun(ref, sha, name, report) {
      if (person) return undefined;
      const { data } = await octokit.rest.checks.create({ ...ref, name, head_sha: sha, ...checkFields(report) });
      return data.id;
    },
    async updateCheckRun({ owner, repo }, id, report) {
      if (person) return;
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
