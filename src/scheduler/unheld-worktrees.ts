import path from "node:path";
import type { CoreDeps } from "../deps.ts";
import { isDatabaseUnavailable } from "../store/sql-driver.ts";
import type { RunState } from "../store/store.ts";
import { listWorktrees } from "../workspace/list-worktrees.ts";
import { dropOrphanBranchesIn } from "../workspace/orphan-branches.ts";
import { sweepWorktrees } from "../workspace/sweep-worktrees.ts";

/**
 * The run a worktree folder belongs to, by its name: `run-<id>-step-<n>` and `run-<id>-plan` are
 * Lisa's (deliver-step.ts, plan-run.ts), `lisa-<id>-…` a CLI's own (chooseNativeWorktree).
 */
export function runOfWorktree(folder: string): number | undefined {
  const id = /^(?:run|lisa)-(\d+)-/.exec(path.basename(folder))?.[1];
  return id === undefined ? undefined : Number(id);
}

/** The states in which a run's worktrees are still wanted by the worker that ran it. */
const WORKTREES_KEPT: ReadonlySet<RunState> = new Set(["queued", "running", "failed", "blocked"]);

/**
 * Removes the worktrees on this worker's disk of runs another worker claimed since (it took them
 * over, or they were handed back and it runs them now, or they ended there), and of its own runs
 * that came to rest without running here. Each worker has a disk of its own, so nobody else
 * removes them; and a run this worker takes up again later must not pick up its old copy (a
 * worktree found is reused). Runs `held` here are never touched. Returns the folders removed; a
 * failure to remove is logged, and the next sweep tries again.
 */
export async function sweepUnheldWorktrees(
  deps: Pick<CoreDeps, "store" | "workspace" | "workerName" | "log">,
  held: (runId: number) => boolean,
): Promise<string[]> {
  const { store, workerName } = deps;
  const elsewhere = async (folder: string) => {
    const runId = runOfWorktree(folder);
    if (runId === undefined || held(runId)) return false;
    const run = await store.runs.get(runId);
    // A run of this worker's that came to rest while it was not running here (`/lisa abort` handled
    // after a restart) needs its worktrees no more either, unless `/lisa retry` or `/lisa fix` may resume it.
    return run !== undefined && (run.worker !== workerName || !WORKTREES_KEPT.has(run.state));
  };
  try {
    const doomed = new Set<string>();
    for (const folder of await listWorktrees(deps.workspace)) if (await elsewhere(folder)) doomed.add(folder);
    if (doomed.size === 0) {
      // The branch a removal cut short left has no folder to doom, and the start-up sweep's look may have been skipped.
      await dropOrphanBranchesIn(deps.workspace);
      return [];
    }
    // Asked again as each folder comes: a run this worker took up meanwhile is held now.
    const removed = await sweepWorktrees(deps.workspace, {
      has: async (folder) => !doomed.has(folder) || !(await elsewhere(folder)),
    });
    deps.log.info({ removed }, "removed the worktrees of runs other workers hold");
    return removed;
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw error;
    deps.log.warn({ err: error }, "could not remove the worktrees of runs other workers hold");
    return [];
  }
}
