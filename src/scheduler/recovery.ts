import type { CoreDeps } from "../deps.ts";
import { processIdentity } from "../process/process-identity.ts";
import { killGroup } from "../providers/run-agent.ts";
import { refreshGate } from "../review/refresh-gate.ts";
import type { RunRow, StepState } from "../store/rows.ts";
import { interruptRun } from "../store/run-changes.ts";
import { abandonRun } from "../workflow/pass/execute-run.ts";
import { sweepWorktrees } from "../workspace/sweep-worktrees.ts";
import type { WorkClaims } from "./claims.ts";

/** How often a run may be resumed after Lisa stopped in the middle of it before it is failed. */
export const MAX_RESTARTS = 2;

/** Steps whose worktree a resumed run goes on in. */
const RESUMABLE_STEPS: ReadonlySet<StepState> = new Set(["pending", "running", "blocked", "failed"]);

/** What an issue is told when a run is given up after Lisa stopped during it once too often. */
export const tooManyRestarts = (restarts: number) =>
  `Lisa stopped during this run ${restarts + 1} times, so it gave up instead of trying again. Comment \`/lisa retry\` to try once more.`;

/** What recovery needs of the worker it starts. */
export interface Recovering {
  claims: WorkClaims;
  stopSessions(runId: number): Promise<void>;
  /** Keeps the worktrees of stopped runs within their disk budget. */
  trimKept(): Promise<string[]>;
}

/**
 * Sessions the earlier process left running are marked interrupted; its running runs are queued
 * again to resume, or failed with a comment once they have been resumed MAX_RESTARTS times.
 * Worktrees that belong to no open run that can resume (queued, failed, blocked) are swept.
 */
export async function recoverAlone(deps: CoreDeps, worker: Recovering): Promise<void> {
  const { store, log } = deps;
  const interrupted = await store.sessions.interruptAll();
  // Agents run in their own process groups, so they outlive a Lisa that was killed; stop them
  // before a resumed session works in the same worktree. Only the very process that was
  // recorded: after a reboot, its pid may be someone else's.
  for (const session of interrupted) {
    if (session.pid && session.pid_identity && processIdentity(session.pid) === session.pid_identity) {
      killGroup(session.pid, "SIGKILL");
    }
  }
  for (const run of await store.runs.inState("running")) {
    if (run.restarts >= MAX_RESTARTS) {
      await abandonRun(deps, run.id, tooManyRestarts(run.restarts)).catch((error) =>
        log.error({ err: error, runId: run.id }, "could not report abandoned run"),
      );
    } else {
      if (await interruptRun(store, run.id, { session: "Lisa stopped during this session", restart: true }))
        log.info({ runId: run.id }, "resuming a run interrupted by a restart");
      else log.info({ runId: run.id }, "a run to resume had changed meanwhile; it stands as it is");
    }
  }
  await refreshGates(deps);
  const swept = [...(await sweep(deps, await store.runs.inState("queued", "failed", "blocked"))), ...(await worker.trimKept())];
  if (interrupted.length || swept.length) log.info({ interrupted: interrupted.length, swept }, "recovered after restart");
}

/**
 * A worker sharing PostgreSQL recovers only what is its own, since other workers' runs are running
 * too: the agents its earlier process left on this machine are stopped, and that process's claims
 * are given up at once, so its runs are taken over (by any worker, this one included) without
 * waiting for their leases. Their worktrees stay until another worker claims the run (the unheld
 * sweep removes them then): this worker may take its run up again, and resumes in them.
 */
export async function recoverShared(deps: CoreDeps, worker: Recovering): Promise<void> {
  const { store, log, workerName } = deps;
  const mine = (await store.runs.inState("running")).filter((run) => run.worker === workerName);
  for (const run of mine) await worker.stopSessions(run.id);
  // This worker's name is its own (host and data directory): the process that held these is gone.
  await worker.claims.reclaim(mine.map((run) => run.id));
  // A running run with no claim at all (its job lost, or recorded by a Lisa before PostgreSQL) is
  // offered, to be taken over; one another worker holds is left to it (one job per run).
  await worker.claims.offer((await store.runs.inState("running")).map((run) => run.id));
  await refreshGates(deps);
  // The worktrees of runs given up are kept: this worker may well take them up again, and no
  // other has moved them on yet. Once another worker claims one, the unheld sweep removes it.
  const swept = [
    ...(await sweep(deps, [...(await store.runs.inState("queued", "failed", "blocked")), ...mine])),
    ...(await worker.trimKept()),
  ];
  if (mine.length || swept.length) log.info({ runs: mine.map((run) => run.id), swept }, "recovered after restart");
}

/** Reviews may have come while Lisa was down, and GitHub does not redeliver on its own: read the gates again. */
async function refreshGates(deps: CoreDeps): Promise<void> {
  const { store, log } = deps;
  for (const run of await store.runs.inState("review", "accepted", "stopped")) {
    try {
      await refreshGate(deps, await deps.github(run.installation_id), run.id, { note: "start-up" });
    } catch (error) {
      log.warn({ err: error, runId: run.id }, "could not read the review gate at start-up");
    }
  }
}

async function sweep(deps: CoreDeps, open: RunRow[]): Promise<string[]> {
  const { store } = deps;
  // A failed or blocked run is still open: `/lisa retry` or `/lisa fix` resumes it where it
  // stood, and its worktree holds the work of that step (the agent's edits, an unpushed commit).
  // A step that is over (its plan recorded, its branch delivered) needs its worktree no more: a
  // stop between recording that and removing the worktree left it there for good.
  const keep = new Set(
    (await Promise.all(open.map((run) => store.steps.of(run.id))))
      .flat()
      .filter((step) => RESUMABLE_STEPS.has(step.state))
      .flatMap((step) => [step.worktree, step.native_worktree].filter((dir): dir is string => dir !== null)),
  );
  return sweepWorktrees(deps.workspace, keep);
}
