const tails = new Map<string, Promise<unknown>>();

/**
 * Runs `task` after every earlier task for the same key has settled. Git operations on one shared
 * repository (fetch, `worktree add`, `worktree prune`) race on its lock files without this.
 */
export function withRepoLock<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(task, task);
  const tail = run.catch(() => undefined);
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return run;
}
