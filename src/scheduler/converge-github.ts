import type { CoreDeps } from "../deps.ts";
import { publishRunState } from "../publication/publish-state.ts";
import { publishTracking } from "../publication/publish-tracking.ts";
import { isDiskFull } from "../store/disk-full.ts";
import { isDatabaseUnavailable } from "../store/sql-driver.ts";

/** How long a state change must be old before another process of a shared store publishes it. */
const PUBLISH_GRACE_MS = 10_000;

/**
 * Brings GitHub to the store: tracking comments GitHub refused (publishTracking records them as
 * owed), and runs whose last state change GitHub does not show (Lisa stopped, or GitHub failed,
 * between the two; see publishRunState). One process at a time: the others would write the same.
 * Returns in how many ms to look again, when a change too recent to take over was left alone.
 */
export async function convergeGitHub(deps: CoreDeps, shared: boolean): Promise<number | undefined> {
  const { store, log } = deps;
  // Sharing the store, another process may be publishing a change it just made: give it time,
  // and look again once that time is up rather than at the next round.
  const settled = shared ? deps.now() - PUBLISH_GRACE_MS : Number.POSITIVE_INFINITY;
  try {
    const behind = await store.runs.behindOnGitHub();
    const settledRuns = behind.filter((run) => run.changed_at <= settled);
    await store.exclusively("tracking", async () => {
      for (const run of await store.runs.owingTracking()) {
        try {
          await publishTracking(deps, await deps.github(run.installation_id), run.id);
        } catch (error) {
          log.warn({ err: error, runId: run.id }, "could not write an owed tracking comment");
        }
      }
      for (const run of settledRuns) {
        try {
          await publishRunState(deps, await deps.github(run.installation_id), run.id);
          log.info({ runId: run.id, state: run.state }, "GitHub brought up to the run's state");
        } catch (error) {
          log.warn({ err: error, runId: run.id }, "could not bring GitHub up to the run's state; tried again later");
        }
      }
    });
    return settledRuns.length < behind.length ? PUBLISH_GRACE_MS : undefined;
  } catch (error) {
    // What is owed stays in the store; the next round writes it.
    if (!isDatabaseUnavailable(error) && !isDiskFull(error)) throw error;
    return undefined;
  }
}
