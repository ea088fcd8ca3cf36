import type { Store } from "../store/store.ts";

/** Queued and running work across every worker that shares the store: `lisa status` and `/healthz`. */
export interface WorkStatus {
  pendingCommands: number;
  queued: { run: number; issue: string }[];
  running: { run: number; issue: string; worker: string | null; sinceMs: number }[];
}

export async function workStatus(store: Store, now: number): Promise<WorkStatus> {
  const issue = (run: { owner: string; repo: string; issue_number: number }) => `${run.owner}/${run.repo}#${run.issue_number}`;
  return {
    pendingCommands: await store.commands.pending(),
    queued: (await store.runs.inState("queued")).map((run) => ({ run: run.id, issue: issue(run) })),
    running: (await store.runs.inState("running")).map((run) => ({
      run: run.id,
      issue: issue(run),
      worker: run.worker,
      sinceMs: now - run.updated_at,
    })),
  };
}

/** The status as lines for a terminal, grouped by worker. */
export function formatWorkStatus(status: WorkStatus): string {
  const lines = [
    `${status.pendingCommands} command(s) waiting, ${status.queued.length} run(s) queued, ${status.running.length} running`,
  ];
  for (const run of status.queued) lines.push(`  queued   run ${run.run}  ${run.issue}`);
  const byWorker = new Map<string, WorkStatus["running"]>();
  for (const run of status.running) {
    const worker = run.worker ?? "(unknown)";
    byWorker.set(worker, [...(byWorker.get(worker) ?? []), run]);
  }
  for (const [worker, runs] of byWorker) {
    lines.push(`  worker ${worker}: ${runs.length} running`);
    for (const run of runs) lines.push(`    run ${run.run}  ${run.issue}  for ${Math.round(run.sinceMs / 1000)} s`);
  }
  return lines.join("\n");
}
