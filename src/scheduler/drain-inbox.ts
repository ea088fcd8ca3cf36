/** What the inbox drain needs of its commands: where to find them, whose they are, how to handle one. */
export interface InboxSource<C extends { id: number }> {
  /** Pending commands that may be handled now, oldest first (those being handled included). */
  ready(): C[];
  /** The issue a command is about: commands of one issue are handled one at a time, in order. */
  issueOf(command: C): string;
  handle(command: C): Promise<void>;
  /** Whether new commands may still be started (the inbox's lock is held, the worker not stopped). */
  open(): boolean;
  /** Resolves when a command may have been stored since: the drain looks again. */
  arrival(): Promise<void>;
}

/**
 * Handles the ready commands oldest first, up to `limit` at once and never two of one issue at
 * once: a slow answer from GitHub on one issue no longer holds up every issue behind it, and the
 * commands of one issue still see each other's effects in the order they were said. A failure of
 * one handler stops new starts; the others finish, then it is thrown.
 */
export async function drainInbox<C extends { id: number }>(source: InboxSource<C>, limit: number): Promise<void> {
  const busy = new Map<number, { issue: string; handled: Promise<void> }>();
  // A command's issue is read once (its payload parsed, its pull request looked up), not on every look.
  const issues = new Map<number, string>();
  const issueOf = (command: C) => {
    let issue = issues.get(command.id);
    if (issue === undefined) {
      issue = source.issueOf(command);
      issues.set(command.id, issue);
    }
    return issue;
  };
  let failure: { error: unknown } | undefined;
  for (;;) {
    if (!failure && source.open()) {
      // Issues with a command being handled, or an older one waiting: what comes later waits behind it.
      const taken = new Set([...busy.values()].map((entry) => entry.issue));
      for (const command of source.ready()) {
        if (busy.size >= limit) break;
        if (busy.has(command.id)) continue;
        const issue = issueOf(command);
        if (taken.has(issue)) continue;
        taken.add(issue);
        const handled = source
          .handle(command)
          .catch((error: unknown) => {
            failure ??= { error };
          })
          .finally(() => {
            busy.delete(command.id);
            issues.delete(command.id);
          });
        busy.set(command.id, { issue, handled });
      }
    }
    if (busy.size === 0) break;
    await Promise.race([...busy.values()].map((entry) => entry.handled).concat(source.arrival()));
  }
  if (failure) throw failure.error;
}
