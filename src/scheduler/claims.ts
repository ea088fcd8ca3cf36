import type { Store } from "../store/store.ts";

/**
 * Which worker runs which run. One process with SQLite needs nothing but the store (LocalClaims);
 * workers sharing PostgreSQL are handed runs by pg-boss, which renews their leases (BossClaims), so
 * a run is never run twice and a dead worker's runs are taken over. (Commands reach workers through the
 * CommandQueue: command-queue.ts.)
 */
export interface WorkClaims {
  /** Whether other processes share the work (and runs can be taken over). */
  readonly shared: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Starts handing this worker runs, once its recovery is done: `handed` wakes its loop to take them. */
  work(handed: () => void): Promise<void>;
  /** Stops handing runs out (the worker is stopping); those it holds stay held until released. */
  stopWork(): Promise<void>;
  /** Up to `n` run ids this worker now holds and has not taken up yet, of the queued runs `offered`. */
  take(n: number): Promise<number[]>;
  /** Gives up the claim on a run this worker held (the run ended, or was handed back). */
  release(runId: number): Promise<void>;
  /** Gives back the claim on a run this worker took but will not start yet: it is claimable again at once, as it stands. */
  defer(runId: number): Promise<void>;
  /** Makes queued runs claimable (a run handed back, retried or redirected). */
  offer(runIds: readonly number[]): Promise<void>;
  /** Runs this worker's previous process held when it died: claimable now, not after their lease. */
  reclaim(runIds: readonly number[]): Promise<void>;
}

/** The embedded default: one process, one store, nothing to share. */
export class LocalClaims implements WorkClaims {
  readonly shared = false;
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  // One process: its loop asks the store (take) whenever it is woken.
  async work(): Promise<void> {}
  async stopWork(): Promise<void> {}

  async take(n: number): Promise<number[]> {
    return (await this.#store.runs.inState("queued")).slice(0, n).map((run) => run.id);
  }

  async release(): Promise<void> {}
  async defer(): Promise<void> {}
  async offer(): Promise<void> {}
  async reclaim(): Promise<void> {}
}
