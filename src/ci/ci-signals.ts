/** `owner/repo@sha`, lower-cased as GitHub names are case-insensitive. */
export const ciKey = (owner: string, repo: string, sha: string) => `${owner}/${repo}@${sha}`.toLowerCase();

/**
 * Wakes a run waiting for a commit's CI when a `check_run`, `check_suite` or `status` webhook about
 * that commit reaches this process. Only a hint: a waiter polls on its own too, since a webhook may
 * be lost or reach another process.
 */
export class CiSignals {
  readonly #waiters = new Map<string, Set<() => void>>();

  /** Resolves after `ms`, or sooner when `key` is signalled. */
  wait(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.#waiters.get(key) ?? new Set();
      this.#waiters.set(key, waiters);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0) this.#waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });
  }

  signal(key: string): void {
    for (const wake of [...(this.#waiters.get(key) ?? [])]) wake();
  }
}
