import { checkRunJson } from "./check-runs.ts";
import { type EmulatorContext, emit } from "./context.ts";
import { branchSha, inHistoryOf } from "./git-repos.ts";
import { type Account, isPull, type Repo } from "./state.ts";
import type { Delivery } from "./webhooks.ts";

/**
 * A person presses "Re-run" on a check run: GitHub sends `check_run.rerequested` to the App that
 * made it (only to it), with the run as it stands and the open pull requests whose branch holds
 * its head (GitHub matches them by the suite's head branch, so a head pushed over still names its PR).
 */
export async function rerequestCheckRun(
  context: EmulatorContext,
  repo: Repo,
  checkRunId: number,
  sender: Account,
): Promise<Delivery> {
  const run = repo.checkRuns.get(checkRunId);
  if (!run) throw new Error(`no check run ${checkRunId} in ${repo.fullName}`);
  if (run.appId !== context.appId) throw new Error(`check run ${checkRunId} is another App's: GitHub sends it no rerequest`);
  const base = context.links().base;
  const pullRequests = [];
  for (const issue of repo.issues.values()) {
    if (!isPull(issue) || issue.state !== "open") continue;
    const head = (await branchSha(repo.gitDir, issue.pull.head)) ?? issue.pull.headSha;
    const onBase = await inHistoryOf(repo.gitDir, run.headSha, `refs/heads/${issue.pull.base}`);
    if (head !== run.headSha && (onBase || !(await inHistoryOf(repo.gitDir, run.headSha, head)))) continue;
    pullRequests.push({
      id: issue.pull.id,
      number: issue.number,
      url: `${base}/repos/${repo.fullName}/pulls/${issue.number}`,
      head: { ref: issue.pull.head, sha: head, repo: { id: repo.id, name: repo.name, url: `${base}/repos/${repo.fullName}` } },
      base: {
        ref: issue.pull.base,
        sha: issue.pull.baseSha,
        repo: { id: repo.id, name: repo.name, url: `${base}/repos/${repo.fullName}` },
      },
    });
  }
  return emit(context, "check_run", repo, sender, {
    action: "rerequested",
    check_run: { ...checkRunJson(context, repo, run), pull_requests: pullRequests },
  });
}
