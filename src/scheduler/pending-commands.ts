import type { Store } from "../store/store.ts";
import { issueOfCommand } from "./command-issue.ts";
import type { CommandQueue } from "./command-queue.ts";

/**
 * The issues with a command still pending. Where pg-boss hands commands out beside runs, the
 * command goes first (a `/lisa abort` said before a restart stops the run instead of finding it
 * resumed), as where one process drains every command before it claims a run.
 */
export async function pendingIssues(store: Store): Promise<Set<string>> {
  const issues = new Set<string>();
  for (const command of await store.commands.pendingRows()) issues.add(await issueOfCommand(store, command));
  return issues;
}

/**
 * Queues again the commands stored before `before` and still pending: a send lost on its way (a
 * web process stopped, the database away) is made now; one queued already is left as it is.
 */
export async function requeuePending(store: Store, queue: CommandQueue, before: number): Promise<void> {
  for (const command of await store.commands.pendingSince(before))
    await queue.send(command.id, await issueOfCommand(store, command), command.priority);
}
