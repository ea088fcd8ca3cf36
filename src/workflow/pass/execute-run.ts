import { configOf } from "../../config/run-config.ts";
import type { CoreDeps } from "../../deps.ts";
import { ConfigError, GitError, StepError } from "../../errors.ts";
import { asGitHubError, type GitHubError } from "../../github/github-error.ts";
import type { GitHubReader } from "../../github/github-port.ts";
import { redactSecrets } from "../../markdown/redact-secrets.ts";
import { endOpenChecks } from "../../publication/check-runs.ts";
import { publishRunState } from "../../publication/publish-state.ts";
import { publishTracking, type TrackingPublisher, trackingPublisher } from "../../publication/publish-tracking.ts";
import { setStateLabel } from "../../publication/state-labels.ts";
import {
  DiskFullError,
  diskFullMessage,
  diskNearlyFull,
  isDiskFull,
  type RunFailure,
  recordFailure,
} from "../../store/disk-full.ts";
import * as changes from "../../store/run-changes.ts";
import { isDatabaseUnavailable } from "../../store/sql-driver.ts";
import { type RunContext, StoppedError } from "../context/run-context.ts";
import { executePass } from "./execute-pass.ts";
import { followWriteWaits } from "./write-wait-notice.ts";

/**
 * Executes a claimed run from wherever it stands. This is the one failure boundary: whatever goes
 * wrong in the pass (including before its first step) ends with the run failed and the tracking
 * comment saying why, unless a human stopped the run meanwhile. A failure the store cannot record
 * (the data disk is full) is still said on the issue, and thrown as a DiskFullError for the worker
 * to record once the disk can take it.
 */
export async function executeRun(deps: CoreDeps, runId: number, tries?: GitHubTries): Promise<void> {
  let gh: GitHubReader | undefined;
  let outage: GitHubOutage | undefined;
  let tracking: TrackingPublisher | undefined;
  let unrecorded: DiskFullError | undefined;
  // Installation tokens join these as the run mints them.
  const secrets: string[] = [...deps.heldSecrets];
  // One last edit, after any under way, so the comment's last word is the final state; once.
  let lastWordSaid = false;
  const lastWord = async () => {
    if (tracking) {
      tracking.publish();
      await tracking.flush();
    } else if (gh) {
      await publishTracking(deps, gh, runId, secrets, unrecorded?.failure.message);
    }
    lastWordSaid = true;
  };
  try {
    const run = await deps.store.runs.get(runId);
    const pass = await deps.store.passes.current(runId);
    if (!run || !pass) throw new Error(`run ${runId} has no current pass`);
    gh = await deps.github(run.installation_id);
    const port = gh;
    // Until the store holds a failure it could not write, the comment shows it from here.
    const publisher = trackingPublisher(() =>
      publishTracking(deps, port, runId, secrets, unrecorded?.failure.message, writeWait()),
    );
    const writeWait = followWriteWaits(port, () => publisher.publish(), deps.now);
    tracking = publisher;
    const ctx: RunContext = {
      deps,
      gh: port,
      run,
      pass,
      config: configOf(pass),
      secrets,
      network: new Map(),
      publish: () => publisher.publish(),
    };
    await executePass(ctx);
    // Where the pass left the run (review, blocked, a plan to review, the next pass queued), on GitHub.
    await publishRunState(deps, port, runId, lastWord);
  } catch (error) {
    // Not the run's failure: the worker hands it back once the database is back (Worker.#handBack).
    if (isDatabaseUnavailable(error)) throw error;
    const state = (await deps.store.runs.get(runId))?.state;
    if (error instanceof StoppedError || state !== "running") {
      deps.log.info({ runId, reason: (error as Error).message }, "run stopped while it executed");
      // Whoever stopped it published that, maybe before this pass's own label writes landed: the
      // last word on GitHub is the store's (a stopped run's checks cancelled, its label taken off).
      if (gh)
        await publishRunState(deps, gh, runId, lastWord).catch((e) =>
          deps.log.warn({ err: e, runId }, "could not show on GitHub where the stopped run stands; it is written again later"),
        );
    } else if (tries && tries.attempt < tries.of && asGitHubError(error)?.transient) {
      // GitHub failing for a while is no fault of the run: it goes on from the store after a pause.
      outage = new GitHubOutage(asGitHubError(error) as GitHubError);
    } else {
      unrecorded = await failRun(deps, gh, runId, error, secrets, lastWord, tries);
    }
  } finally {
    if (!lastWordSaid) await lastWord();
  }
  if (unrecorded) throw unrecorded;
  if (outage) throw outage;
}

/** Which try this is at a run GitHub keeps failing (RunExecutions rides such failures out). */
export interface GitHubTries {
  attempt: number;
  of: number;
}

/** The run stopped because GitHub failed transiently, and stands running in the store: it goes on after a pause. */
export class GitHubOutage extends Error {
  override readonly name = "GitHubOutage";
  readonly failure: GitHubError;
  constructor(failure: GitHubError) {
    super(`GitHub failed during the run: ${failure.message}`, { cause: failure });
    this.failure = failure;
  }
}

/**
 * Records the failure on the step that was running and the run, and tells the issue. Returns the
 * failure the store could not record because the data disk is full: the issue is told all the same.
 */
async function failRun(
  deps: CoreDeps,
  gh: GitHubReader | undefined,
  runId: number,
  error: unknown,
  secrets: string[],
  lastWord: () => Promise<void>,
  tries?: GitHubTries,
): Promise<DiskFullError | undefined> {
  const steps = await deps.store.steps.of(runId);
  const failed = steps.find((step) => step.state === "running");
  const detail = explain(error, secrets, deps.workspace.dataDir, tries);
  // In a plan, say which step failed: the ones after it did not run.
  const message =
    failed && (failed.position === 0 || steps.length > 1)
      ? `${failed.position === 0 ? "Planning" : `Step ${failed.position} (${failed.owner}/${failed.repo})`} failed: ${detail}`
      : detail;
  deps.log.error({ err: error, runId }, "run failed");
  const failure: RunFailure = { runId, stepId: failed?.id, detail, message };
  try {
    await recordFailure(deps.store, failure);
  } catch (recording) {
    if (!isDiskFull(recording)) throw recording;
    deps.log.error({ err: recording, runId }, "the data disk is full: the run's failure is recorded once it has space");
    const run = await deps.store.runs.get(runId);
    // The store still says running: GitHub is told what it will say once it can write (the tracking
    // comment from executeRun's last edit), and the worker's convergence checks it then.
    if (gh && run) {
      await setStateLabel(gh, { owner: run.owner, repo: run.repo }, run.issue_number, "failed").catch((e) =>
        deps.log.warn({ err: e }, "could not set label"),
      );
      await endOpenChecks(deps, gh, runId, "failure", message, secrets);
    }
    return new DiskFullError(failure);
  }
  // GitHub failing here leaves the run behind on GitHub: the worker's convergence writes it later.
  if (!gh) return undefined;
  await publishRunState(deps, gh, runId, lastWord).catch((e) =>
    deps.log.warn({ err: e, runId }, "could not show the failure on GitHub; it is written again later"),
  );
  return undefined;
}

/** The sentence a human reads on the issue: ours verbatim, a full data disk said as such, anything else unexpected marked as such. */
function explain(error: unknown, secrets: readonly string[], dataDir: string, tries?: GitHubTries): string {
  const known = error instanceof StepError || error instanceof GitError || error instanceof ConfigError;
  const text = error instanceof Error ? error.message : String(error);
  const github = asGitHubError(error);
  if (github?.transient) {
    // Octokit ends its messages with a link to GitHub's documentation, which says nothing here.
    const said = github.message.replace(/ - https:\/\/docs\.github\.com\S*$/, "").slice(0, 300);
    const times = tries && tries.of > 1 ? `, ${tries.of} times over several minutes` : "";
    return redactSecrets(`GitHub kept failing while the run worked (${github.status || "no answer"} ${said})${times}.`, secrets);
  }
  // git tells a full disk as "unable to write new index file", and nothing more; a step's own message is taken at its word.
  if (isDiskFull(error) || (!(error instanceof StepError || error instanceof ConfigError) && diskNearlyFull(dataDir)))
    return redactSecrets(diskFullMessage(text.trim().slice(0, 600)), secrets);
  return redactSecrets(known ? text : `Lisa hit an unexpected error: ${text}`, secrets);
}

/** Ends a run that cannot go on (for example after repeated restarts) and says so on the issue. */
export async function abandonRun(deps: CoreDeps, runId: number, message: string): Promise<void> {
  const run = await deps.store.runs.get(runId);
  if (!run) return;
  const unfinished = (await deps.store.steps.of(runId)).filter((step) => step.state === "running" || step.state === "pending");
  const failed = await changes.failRun(
    deps.store,
    runId,
    message,
    unfinished.map((step) => ({ id: step.id, error: message })),
  );
  if (!failed)
    deps.log.warn({ runId }, "the run could not be failed: it had changed meanwhile; GitHub shows what the store says");
  await publishRunState(deps, await deps.github(run.installation_id), runId);
}
