import type { Store } from "../store/store.ts";
import { issueOfCommand, issueOfRun } from "./command-issue.ts";
import type { CommandQueue } from "./command-queue.ts";

/**
 * Whether a command on run `runId`'s issue is still pending. Where pg-boss hands commands out beside
 * runs, the command goes first (a `/lisa abort` said before a restart stops the run instead of
 * finding it resumed), as where one process drains every command before it claims a run.
 */
export async function commandWaitsFor(store: Store, runId: number): Promise<boolean> {
  const run = await store.runs.get(runId);
  if (!run) return false;
  for (const command of await store.commands.pendingRows())
    if ((await issueOfCommand(store, command)) === issueOfRun(run)) return true;
  return false;
}

/**
 * Queues again the commands stored before `before` and still pending: a send lost on its way (a
 * web process stopped, the database away) is made now; one queued already is left as it is.
 */
export async function requeuePending(store: Store, queue: CommandQueue, before: number): Promise<void> {
  for (const command of await store.commands.pendingSince(before))
    await queue.send(command.id, await issueOfCommand(store, command));
}
