import type { GitHubEmulator } from "../../emulator/github-emulator.ts";
import { readConfigOf } from "../../src/config/run-config.ts";
import { STATE_LABELS, stateLabelOf } from "../../src/publication/state-labels.ts";
import { CHECK_NAME } from "../../src/reporting/check-summary.ts";
import { reportMarker } from "../../src/reporting/final-report.ts";
import { HEADLINE } from "../../src/reporting/tracking-comment.ts";
import { Store } from "../../src/store/store.ts";
import { trackingBody } from "../support/tracking-body.ts";

/**
 * Runs of the store at `storeLocation` whose GitHub side shows less than the store says, once every Lisa has stopped: the issue's
 * state label, the tracking comment's headline, the final report of an accepted or merged run, the
 * merge of a run accepted with `on_accept: merge` (or one the store has as merged), and a check run
 * still in progress on a run at rest. Each run counts once, with what lags written to `why`.
 */
export async function githubBehind(
  github: GitHubEmulator,
  storeLocation: string,
  why: (line: string) => void = () => {},
): Promise<number> {
  const store = new Store(storeLocation);
  let behind = 0;
  try {
    const atRest = ["plan_review", "blocked", "review", "accepted", "stopped", "failed", "merged", "closed"] as const;
    for (const run of await store.runs.inState(...atRest)) {
      const issue = `${run.owner}/${run.repo}`;
      const lags: string[] = [];
      const stateLabels = github
        .labels(issue, run.issue_number)
        .filter((label) => (Object.values(STATE_LABELS) as string[]).includes(label.toLowerCase()));
      const wanted = stateLabelOf(run.state);
      if (stateLabels.join() !== (wanted ?? "")) lags.push(`labels [${stateLabels.join(", ")}], not [${wanted ?? ""}]`);
      const headline = `pass ${run.current_pass} · ${HEADLINE[run.state]}`;
      if (!trackingBody(github, issue, run.issue_number).includes(headline))
        lags.push(`no "${headline}" in the tracking comment`);
      const comments = github.comments(issue, run.issue_number);
      if ((run.state === "accepted" || run.state === "merged") && !comments.some((c) => c.body.includes(reportMarker(run.id))))
        lags.push("no final report");
      const mergeOnAccept = (await readConfigOf(store, run.id)).review.on_accept === "merge";
      for (const step of await store.steps.of(run.id)) {
        if (step.pr_number === null) continue;
        const repo = `${step.owner}/${step.repo}`;
        const pull = github.pulls(repo).find((p) => p.number === step.pr_number);
        const shouldBeMerged =
          step.pr_state === "merged" || (mergeOnAccept && run.state === "accepted" && step.pr_state === "open");
        if (shouldBeMerged && !pull?.merged) lags.push(`${repo}#${step.pr_number} not merged`);
        const open = github
          .checkRuns(repo)
          .filter((check) => check.name === CHECK_NAME && check.head_sha === step.head_sha && check.status !== "completed");
        if (open.length > 0) lags.push(`check run on ${repo}@${step.head_sha} still ${open[0]?.status}`);
      }
      if (lags.length > 0) {
        behind += 1;
        why(`run ${run.id} (${run.state}): ${lags.join("; ")}`);
      }
    }
  } finally {
    await store.close();
  }
  return behind;
}
