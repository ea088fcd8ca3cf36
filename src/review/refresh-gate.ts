import { readConfigOf } from "../config/run-config.ts";
import type { CoreDeps } from "../deps.ts";
import type { GitHubReader } from "../github/github-port.ts";
import { WRITE_ROLES } from "../github/permissions.ts";
import { publishRunState } from "../publication/publish-state.ts";
import { publishTracking } from "../publication/publish-tracking.ts";
import type { PrGate } from "../reporting/views.ts";
import type { PrState, RunRow } from "../store/rows.ts";
import { finishRun, reopenRun, withdrawRun } from "../store/run-changes.ts";
import { seePullRequest } from "../store/step-changes.ts";
import { evaluatePullRequest, type GateVerdict, gateVerdict, type PrStatus } from "./evaluate-gate.ts";
import { shownHead } from "./shown-head.ts";

/**
 * Reads every pull request of the run and its reviews from GitHub, records each PR's part of the
 * gate, and moves the run when the gate says so: accepted, back to review, merged or closed, and a
 * closed run back to review when one of its PRs is open again. It
 * reads REST each time instead of trusting webhooks, so a lost or reordered event changes nothing.
 * `publish` edits the tracking comment; by default at once, from a run through its coalescing publisher.
 */
export async function refreshGate(
  deps: CoreDeps,
  gh: GitHubReader,
  runId: number,
  cause: { actor?: string; note?: string } = {},
  publish: () => Promise<void> | void = () => publishTracking(deps, gh, runId),
): Promise<GateVerdict | undefined> {
  const { store } = deps;
  const run = await store.runs.get(runId);
  if (!run || run.state === "merged") return undefined;
  // A closed run comes back only while it is its issue's latest: a newer run owns the issue now.
  if (run.state === "closed" && (await store.runs.latestFor(run.owner, run.repo, run.issue_number))?.id !== run.id)
    return undefined;
  const config = await readConfigOf(store, runId);
  const roles = new Map<string, string>();
  const statuses: PrStatus[] = [];
  for (const step of await store.steps.of(runId)) {
    if (step.position === 0 || step.pr_number === null) continue;
    const ref = { owner: step.owner, repo: step.repo };
    const shown = await gh.getPullRequest(ref, step.pr_number);
    const pr = { ...shown, headSha: await shownHead(store, step, shown.headSha) };
    const reviews = pr.state === "open" && !pr.merged ? await gh.listReviews(ref, step.pr_number) : [];
    for (const review of reviews) {
      const key = `${step.owner}/${step.repo}:${review.user}`.toLowerCase();
      if (!roles.has(key) && review.userType !== "Bot") roles.set(key, await gh.roleOf(ref, review.user));
    }
    const github = config.review.accept === "github" && pr.state === "open" && !pr.merged;
    const reviewDecision = github ? await gh.reviewDecision(ref, step.pr_number) : null;
    const result = evaluatePullRequest(
      { state: pr.state, merged: pr.merged, headSha: pr.headSha, reviews, reviewDecision },
      {
        isWriter: (login) => WRITE_ROLES.has(roles.get(`${step.owner}/${step.repo}:${login}`.toLowerCase()) ?? "none"),
        requester: run.requested_by,
        excludeRequester: config.review.exclude_requester,
        accept: config.review.accept,
      },
    );
    // Approved, yet GitHub wants more: its rules say how many, so the gate can say how many more.
    const required =
      github && result.status === "pending" && result.approvers.length && reviewDecision === "REVIEW_REQUIRED"
        ? await gh.requiredApprovals(ref, pr.baseRef)
        : undefined;
    const gate: PrGate = {
      repo: `${step.owner}/${step.repo}`,
      number: step.pr_number,
      url: pr.url,
      status: result.status,
      approvers: result.approvers,
      blockers: result.blockers,
      headSha: pr.headSha,
      ...(result.stale.length ? { stale: result.stale } : {}),
      ...(github ? { githubDecision: reviewDecision } : {}),
      ...(required === undefined ? {} : { requiredApprovals: required }),
    };
    const prState: PrState = pr.merged ? "merged" : pr.state;
    // The note names the pull request (the cause's own note says only which event it was).
    if (prState !== step.pr_state)
      await store.events.add(runId, `pr_${prState}`, { ...cause, note: `${gate.repo}#${gate.number}` });
    await seePullRequest(store, step, { pr_state: prState, head_sha: pr.headSha, draft: pr.draft ? 1 : 0, gate });
    statuses.push(result.status);
  }
  const verdict = gateVerdict(statuses);
  let current = await store.runs.get(runId);
  if (!current) return verdict;
  let reopened: RunRow | undefined;
  if (current.state === "closed") {
    // A PR open again puts the run back before its gate; still all closed, nothing changed.
    if (!statuses.some((status) => status !== "dropped")) return verdict;
    reopened = await reopenRun(store, runId, cause);
    if (!reopened) return verdict;
    current = reopened;
  }
  const moved =
    verdict === "merged"
      ? await finishRun(store, runId, "merge", cause)
      : verdict === "closed"
        ? await finishRun(store, runId, "close", cause)
        : verdict === "accept" && (current.state === "review" || current.state === "stopped")
          ? await store.runs.accept(runId, { by: cause.actor ?? run.requested_by, via: "approval" })
          : verdict === "wait" && current.state === "accepted"
            ? await withdrawRun(deps.store, runId, cause)
            : undefined;
  if (moved || reopened) await publishRunState(deps, gh, runId, publish);
  else await publish();
  return verdict;
}
