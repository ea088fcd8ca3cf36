import { readConfigOf } from "../config/run-config.ts";
import type { CoreDeps } from "../deps.ts";
import type { GitHubReader } from "../github/github-port.ts";
import { endOpenChecks, STOPPED_BEFORE_REVIEW } from "./check-runs.ts";
import { proposeMemoryPulls } from "./memory-pull-request.ts";
import { publishAcceptance, publishFinalReport, publishWithdrawal } from "./publish-acceptance.ts";
import { publishTracking } from "./publish-tracking.ts";
import { closeIssue, setStateLabel } from "./state-labels.ts";

/** Publications under way in this process, per store and run: a second waits for the first (one report, one merge). */
const underWay = new WeakMap<object, Map<number, Promise<void>>>();

/**
 * Brings GitHub to what the store says of a run: the state label, the final report of an accepted
 * or merged run, an accepted run's drafts made ready and its merge, the check runs of a run that
 * ended before its gate, and the tracking comment (`publish`); then records the state change as
 * published. Every part reads before it writes, so it is the same whether it follows the state
 * change at once or comes after a crash between the two (Worker's convergence).
 */
export function publishRunState(
  deps: CoreDeps,
  gh: GitHubReader,
  runId: number,
  publish: () => Promise<void> | void = () => publishTracking(deps, gh, runId),
): Promise<void> {
  const runs = underWay.get(deps.store) ?? new Map<number, Promise<void>>();
  underWay.set(deps.store, runs);
  const previous = runs.get(runId) ?? Promise.resolve();
  const next = previous.catch(() => undefined).then(() => publishNow(deps, gh, runId, publish));
  runs.set(runId, next);
  const forget = () => {
    if (runs.get(runId) === next) runs.delete(runId);
  };
  next.then(forget, forget);
  return next;
}

async function publishNow(deps: CoreDeps, gh: GitHubReader, runId: number, publish: () => Promise<void> | void): Promise<void> {
  const { store } = deps;
  // Read first: a state change after this one is published by whoever makes it.
  const event = await store.runs.lastTransition(runId);
  const run = await store.runs.get(runId);
  if (!run) return;
  const ref = { owner: run.owner, repo: run.repo };
  if (run.state === "accepted" || run.state === "merged") {
    // Read once for the report, the merge and the memory pull requests.
    const config = await readConfigOf(store, runId);
    await publishFinalReport(deps, gh, runId, config);
    if (run.state === "accepted") await publishAcceptance(deps, gh, runId, config);
    // After the merge `on_accept` may make, so the memory builds on the default branch as it is then; the report links it.
    if (await proposeMemoryPulls(deps, gh, runId, config)) await publishFinalReport(deps, gh, runId, config);
  }
  if (run.state === "review") await publishWithdrawal(deps, gh, runId);
  // Every pull request of the run merged: the issue is done (a plan's PRs only say "Part of" it).
  if (run.state === "merged") await closeIssue(gh, ref, run.issue_number);
  await setStateLabel(gh, ref, run.issue_number, run.state);
  if (run.state === "failed") await endOpenChecks(deps, gh, runId, "failure", run.error ?? "The run failed.", deps.heldSecrets);
  if (run.state === "stopped") await endOpenChecks(deps, gh, runId, "cancelled", STOPPED_BEFORE_REVIEW, deps.heldSecrets);
  await publish();
  await store.runs.markPublished(runId, event);
}
