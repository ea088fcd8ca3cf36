/** What the inbox drain needs of its commands: where to find them, whose they are, how to handle one. */
export interface InboxSource<C extends { id: number }> {
  /** Pending commands that may be handled now, oldest first (those being handled included). */
  ready(): Promise<C[]>;
  /** The issue a command is about: commands of one issue are handled one at a time, in order. */
  issueOf(command: C): Promise<string>;
  handle(command: C): Promise<void>;
  /** Whether new commands may still be started (the inbox's lock is held, the worker not stopped). */
  open(): Promise<boolean>;
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
  const issueOf = async (command: C) => {
    let issue = issues.get(command.id);
    if (issue === undefined) {
      issue = await source.issueOf(command);
      issues.set(command.id, issue);
    }
    return issue;
  };
  let failure: { error: unknown } | undefined;
  for (;;) {
    // Asked for before looking, so a command stored while the drain looks is not missed.
    const arrived = source.arrival();
    if (!failure && (await source.open())) {
      // Issues with a command being handled, or an older one waiting: what comes later waits behind it.
      const taken = new Set([...busy.values()].map((entry) => entry.issue));
      for (const command of await source.ready()) {
        // Looking up an issue lets handlers run: one may have failed meanwhile.
        if (failure || busy.size >= limit) break;
        if (busy.has(command.id)) continue;
        const issue = await issueOf(command);
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
    // With every slot taken, a new arrival could start nothing: only a handler's end is waited for.
    const ends = [...busy.values()].map((entry) => entry.handled);
    await Promise.race(busy.size < limit ? ends.concat(arrived) : ends);
  }
  if (failure) throw failure.error;
}
