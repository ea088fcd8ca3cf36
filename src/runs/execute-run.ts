import { parseConfig } from "../config/parse-config.ts";
import { ConfigError, GitError, StepError } from "../errors.ts";
import type { GitHubPort } from "../github/github-port.ts";
import { redactSecrets } from "../markdown/redact-secrets.ts";
import { isDatabaseUnavailable } from "../store/sql-driver.ts";
import type { CoreDeps } from "./deps.ts";
import { executePass } from "./execute-pass.ts";
import { publishRunState } from "./publish-state.ts";
import { publishTracking, type TrackingPublisher, trackingPublisher } from "./publish-tracking.ts";
import { type RunContext, StoppedError } from "./run-context.ts";

/**
 * Executes a claimed run from wherever it stands. This is the one failure boundary: whatever goes
 * wrong in the pass (including before its first step) ends with the run failed and the tracking
 * comment saying why, unless a human stopped the run meanwhile.
 */
export async function executeRun(deps: CoreDeps, runId: number): Promise<void> {
  let gh: GitHubPort | undefined;
  let tracking: TrackingPublisher | undefined;
  // Installation tokens join these as the run mints them.
  const secrets: string[] = [...deps.heldSecrets];
  // One last edit, after any under way, so the comment's last word is the final state; once.
  let lastWordSaid = false;
  const lastWord = async () => {
    if (tracking) {
      tracking.publish();
      await tracking.flush();
    } else if (gh) {
      await publishTracking(deps, gh, runId, secrets);
    }
    lastWordSaid = true;
  };
  try {
    const run = deps.store.run(runId);
    const pass = deps.store.currentPass(runId);
    if (!run || !pass) throw new Error(`run ${runId} has no current pass`);
    gh = await deps.github(run.installation_id);
    const port = gh;
    const publisher = trackingPublisher(() => publishTracking(deps, port, runId, secrets));
    tracking = publisher;
    const ctx: RunContext = {
      deps,
      gh: port,
      run,
      pass,
      config: parseConfig(JSON.parse(pass.config)),
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
    const state = deps.store.run(runId)?.state;
    if (error instanceof StoppedError || state !== "running") {
      deps.log.info({ runId, reason: (error as Error).message }, "run stopped while it executed");
      // Whoever stopped it published that, maybe before this pass's own label writes landed: the
      // last word on GitHub is the store's (a stopped run's checks cancelled, its label taken off).
      if (gh)
        await publishRunState(deps, gh, runId, lastWord).catch((e) =>
          deps.log.warn({ err: e, runId }, "could not show on GitHub where the stopped run stands; it is written again later"),
        );
    } else {
      await failRun(deps, gh, runId, error, secrets, lastWord);
    }
  } finally {
    if (!lastWordSaid) await lastWord();
  }
}

/** Records the failure on the step that was running and the run, and tells the issue. */
async function failRun(
  deps: CoreDeps,
  gh: GitHubPort | undefined,
  runId: number,
  error: unknown,
  secrets: string[],
  lastWord: () => Promise<void>,
): Promise<void> {
  const steps = deps.store.steps(runId);
  const failed = steps.find((step) => step.state === "running");
  const detail = explain(error, secrets);
  // In a plan, say which step failed: the ones after it did not run.
  const message =
    failed && (failed.position === 0 || steps.length > 1)
      ? `${failed.position === 0 ? "Planning" : `Step ${failed.position} (${failed.owner}/${failed.repo})`} failed: ${detail}`
      : detail;
  deps.log.error({ err: error, runId }, "run failed");
  if (failed) deps.store.updateStep(failed.id, { state: "failed", error: detail });
  deps.store.updateRun(runId, { error: message });
  deps.store.transitionRun(runId, "fail", { note: message.slice(0, 500) });
  // GitHub failing here leaves the run behind on GitHub: the worker's convergence writes it later.
  if (!gh) return;
  await publishRunState(deps, gh, runId, lastWord).catch((e) =>
    deps.log.warn({ err: e, runId }, "could not show the failure on GitHub; it is written again later"),
  );
}

/** The sentence a human reads on the issue: ours verbatim, anything unexpected marked as such. */
function explain(error: unknown, secrets: readonly string[]): string {
  const known = error instanceof StepError || error instanceof GitError || error instanceof ConfigError;
  const text = error instanceof Error ? error.message : String(error);
  return redactSecrets(known ? text : `Lisa hit an unexpected error: ${text}`, secrets);
}

/** Ends a run that cannot go on (for example after repeated restarts) and says so on the issue. */
export async function abandonRun(deps: CoreDeps, runId: number, message: string): Promise<void> {
  const run = deps.store.run(runId);
  if (!run) return;
  for (const step of deps.store.steps(runId)) {
    if (step.state === "running" || step.state === "pending") deps.store.updateStep(step.id, { state: "failed", error: message });
  }
  deps.store.updateRun(runId, { error: message });
  deps.store.transitionRun(runId, "fail", { note: message });
  await publishRunState(deps, await deps.github(run.installation_id), runId);
}
