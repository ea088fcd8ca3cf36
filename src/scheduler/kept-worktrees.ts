import { existsSync } from "node:fs";
import type { CoreDeps } from "../deps.ts";
import { publishTracking } from "../publication/publish-tracking.ts";
import { diskUsage } from "../workspace/disk-usage.ts";
import { removeWorktree } from "../workspace/remove-worktree.ts";

/** A kept worktree's size, as measured while its run last stood still (`updated_at`). */
export type KeptSizes = Map<string, { runUpdatedAt: number; bytes: number }>;

/**
 * A failed or blocked run keeps its steps' worktrees, so that `/lisa retry` or `/lisa fix` goes on
 * with the agent's unpushed work. Runs nobody comes back to would fill the disk: past `budgetBytes`,
 * the worktrees of the runs that ended longest ago are removed, and their issues say so (a retry
 * then runs those sessions again). Returns the folders removed.
 *
 * `sizes` carries measurements from one call to the next: a stopped run's worktree does not change
 * until the run moves again, so each is walked once, not again at every run that stops.
 */
export async function trimKeptWorktrees(deps: CoreDeps, budgetBytes: number, sizes: KeptSizes): Promise<string[]> {
  const { store } = deps;
  const removed: string[] = [];
  const seen = new Set<string>();
  let used = 0;
  const newestFirst = (await store.runs.inState("failed", "blocked")).sort((a, b) => b.updated_at - a.updated_at);
  for (const run of newestFirst) {
    let dropped = false;
    for (const step of await store.steps.of(run.id)) {
      // Another worker's folders are not on this machine, and its budget is its own.
      for (const dir of [step.worktree, step.native_worktree]) {
        if (!dir || !existsSync(dir)) continue;
        // Once the budget is spent, older worktrees go without being measured.
        const size = used < budgetBytes ? await sizeOf(dir, run.updated_at, sizes) : Number.POSITIVE_INFINITY;
        if (used + size <= budgetBytes) {
          seen.add(dir);
          used += size;
          continue;
        }
        // A retry may have taken the run up meanwhile. Read just before the removal queues for the
        // repository's lock, which the retry's own worktree set-up waits for too.
        if ((await store.runs.get(run.id))?.state !== run.state) break;
        await removeWorktree(deps.workspace, { owner: step.owner, repo: step.repo }, { path: dir });
        removed.push(dir);
        dropped = true;
      }
    }
    if (!dropped) continue;
    await store.events.add(run.id, "work_dropped", {
      note: "Lisa removed this run's worktrees to stay within the disk kept for stopped runs (`LISA_KEPT_WORKTREES_MB`): work that was not pushed is done again on `/lisa retry` or `/lisa fix`.",
    });
    await publishTracking(deps, await deps.github(run.installation_id), run.id).catch((error) =>
      deps.log.warn({ err: error, runId: run.id }, "could not say on the issue that the run's work was removed"),
    );
  }
  for (const dir of sizes.keys()) if (!seen.has(dir)) sizes.delete(dir);
  return removed;
}

async function sizeOf(dir: string, runUpdatedAt: number, sizes: KeptSizes): Promise<number> {
  const known = sizes.get(dir);
  if (known?.runUpdatedAt === runUpdatedAt) return known.bytes;
  const bytes = await diskUsage(dir);
  sizes.set(dir, { runUpdatedAt, bytes });
  return bytes;
}
