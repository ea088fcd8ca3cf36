import type { Job, PgBoss } from "pg-boss";
import type { Log } from "../security/redacting-log.ts";
import { splitSchema } from "../store/postgres-driver.ts";
import { DATABASE_UNAVAILABLE, isConnectionLoss } from "../store/sql-driver.ts";
import type { WorkClaims } from "./claims.ts";

/** The pg-boss queue of runs that may be claimed: one job per run. */
const RUNS = "lisa-runs";
/** How often a held claim's heartbeat is written: a claim outlives an outage up to a second shorter than its lease. */
const HEARTBEAT_REFRESH_SECONDS = 1;
/** How often pg-boss looks for runs NOTIFY did not announce: deferred, or retried after their worker died. */
const POLL_SECONDS = 1;
/** pg-boss's longest expiration: a run still held after it is taken over (see docs/scale-out.md). */
const MAX_HOLD_SECONDS = 24 * 60 * 60;
/** pg-boss reports each failed heartbeat and fetch: while PostgreSQL is away, said this often at most. */
const LOSS_WARNING_MS = 10_000;

export interface BossClaimsOptions {
  /** DATABASE_URL; pg-boss keeps its tables in the store's schema with `_jobs` after it. */
  databaseUrl: string;
  /** A claim not renewed for this long is taken over by another worker (pg-boss's heartbeat, ≥ 10 s). */
  leaseSeconds: number;
  /** Runs this worker holds at most. */
  concurrency: number;
  /** Whether this process claims work (a worker), or only keeps pg-boss's schema up to date (`lisa web`). */
  claims: boolean;
  /** Called when a claim this worker held was lost: another worker may be taking the run over. */
  onLost(runId: number): Promise<void>;
  /** Called when pg-boss's pool lost a connection (its pool opens another at its next statement). */
  onConnectionLost?(): void;
  log: Log;
}

/** A run's job this worker holds: pg-boss's handler for it waits until the claim is let go. */
interface Held {
  job: Job<{ runId: number }>;
  letGo(): void;
}

/**
 * Claims through pg-boss. The queue is `exclusive`: one job per key at most, queued or held, so a
 * run offered twice is one job and is claimed by one worker. pg-boss hands runs out (`work`, woken
 * by NOTIFY when a run is offered); each handler holds its job, and pg-boss writes its heartbeat,
 * until the worker lets the claim go. The heartbeat is the lease: when a worker dies pg-boss's
 * supervisor fails the job after it and retries it, so the next worker handed it takes the run over.
 */
export class BossClaims implements WorkClaims {
  readonly shared = true;
  // Loaded at start: pg-boss and its driver are some 20 MB of memory that a process on SQLite,
  // which never starts these claims, should not carry.
  #started: PgBoss | undefined;
  readonly #options: BossClaimsOptions;
  readonly #held = new Map<number, Held>();
  /** Runs handed to this worker that its loop has not taken yet (take). */
  #handed: number[] = [];
  #working = false;
  #stopping = false;
  #lossSaidAt = Number.NEGATIVE_INFINITY;

  constructor(options: BossClaimsOptions) {
    this.#options = options;
  }

  /** The pg-boss instance, once started: the command queue shares it (BossCommandQueue). */
  get boss(): PgBoss {
    if (!this.#started) throw new Error("BossClaims used before start()");
    return this.#started;
  }

  async start(): Promise<void> {
    const { PgBoss } = await import("pg-boss");
    const { connection, schema } = splitSchema(this.#options.databaseUrl);
    this.#started = new PgBoss({
      connectionString: connection,
      schema: `${schema}_jobs`,
      application_name: `lisa-claims ${schema}`,
      // Only workers look for claims that lapsed; a web process claims nothing.
      supervise: this.#options.claims,
      // A lapsed claim is found by the supervisor's pass over each queue, which runs no more often
      // than both intervals allow (pg-boss's default is a minute): a third of the lease.
      superviseIntervalSeconds: Math.max(1, Math.floor(this.#options.leaseSeconds / 3)),
      monitorIntervalSeconds: Math.max(1, Math.floor(this.#options.leaseSeconds / 3)),
      schedule: false,
      // A worker is woken the moment a run is offered or a command stored (both queues notify).
      useListenNotify: this.#options.claims,
      max: 4,
    } as ConstructorParameters<typeof PgBoss>[0]);
    this.boss.on("error", (error) => this.#reported(error));
    await this.boss.start();
    const runs = {
      heartbeatSeconds: Math.max(10, this.#options.leaseSeconds),
      expireInSeconds: MAX_HOLD_SECONDS,
      // Lisa counts restarts itself (MAX_RESTARTS) and gives up with a comment; pg-boss must not.
      retryLimit: 1_000_000,
      retryDelay: 0,
      notify: true,
    };
    await this.boss.createQueue(RUNS, { policy: "exclusive", ...runs });
    // A queue an older Lisa created keeps its settings otherwise (it did not notify).
    await this.boss.updateQueue(RUNS, runs);
  }

  /** pg-boss's errors: a lost connection is counted, and said once in a while rather than at every heartbeat. */
  #reported(error: Error): void {
    if (isConnectionLoss(error)) {
      this.#options.onConnectionLost?.();
      if (Date.now() - this.#lossSaidAt < LOSS_WARNING_MS) return;
      this.#lossSaidAt = Date.now();
    }
    this.#options.log.warn({ err: error }, "pg-boss reported an error");
  }

  /**
   * Starts taking runs: pg-boss hands this worker up to `concurrency` of them, and `handed` wakes
   * the worker's loop to take them up. Called once start-up's recovery is done.
   */
  async work(handed: () => void): Promise<void> {
    // A worker with room for no run (concurrency 0) still handles commands.
    if (!this.#options.claims || this.#options.concurrency < 1) return;
    this.#working = true;
    await this.boss.work<{ runId: number }>(
      RUNS,
      {
        localConcurrency: this.#options.concurrency,
        heartbeatRefreshSeconds: HEARTBEAT_REFRESH_SECONDS,
        pollingIntervalSeconds: POLL_SECONDS,
        notifyPollingIntervalSeconds: POLL_SECONDS,
      },
      async ([job]) => {
        if (!job) return;
        // Thrown, the job fails and is retried at once, by a worker that is not stopping.
        if (!this.#working) throw new Error("this worker is stopping");
        const runId = job.data.runId;
        let letGo = () => {};
        const claimed = new Promise<void>((resolve) => {
          letGo = resolve;
        });
        const held: Held = { job, letGo };
        this.#held.set(runId, held);
        job.signal.addEventListener("abort", () => this.#lost(runId, held), { once: true });
        this.#handed.push(runId);
        handed();
        // Completed or failed by release or defer (or lost) before this returns: pg-boss's own
        // settle after it then finds nothing active to settle.
        await claimed;
      },
    );
  }

  /** Stops taking runs; those handed and not yet taken are given back at once. Held runs stay held. */
  async stopWork(): Promise<void> {
    if (!this.#working) return;
    this.#working = false;
    await unlessLost(this.boss.offWork(RUNS, { wait: false }));
    for (const runId of this.#handed.splice(0)) await this.defer(runId);
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    this.#working = false;
    if (!this.#started) return;
    // Claims still held are failed by pg-boss as it stops, and retried at once by another worker.
    await this.boss.stop({ graceful: false, close: true, timeout: 5_000 });
  }

  async offer(runIds: readonly number[]): Promise<void> {
    for (const runId of runIds) await unlessLost(this.boss.send(RUNS, { runId }, { singletonKey: `run-${runId}` }));
  }

  async take(n: number): Promise<number[]> {
    return n <= 0 ? [] : this.#handed.splice(0, n);
  }

  async release(runId: number): Promise<void> {
    await this.#settle(runId, (job) => this.boss.complete(RUNS, job));
  }

  async defer(runId: number): Promise<void> {
    // Failed, the job is retried at once (the queue's retryDelay is 0), by whichever worker fetches next.
    await this.#settle(runId, (job) =>
      this.boss.fail(RUNS, job, { reason: "deferred: a command on the run's issue goes first" }),
    );
  }

  /**
   * Settles a held job (fenced to the attempt fetched) and lets its handler return. Let go before the write, so a heartbeat that
   * finds it settled meanwhile is no lost claim; held again if the write could not be made.
   */
  async #settle(runId: number, settle: (job: Held["job"]) => Promise<unknown>): Promise<void> {
    const held = this.#held.get(runId);
    if (!held) return;
    this.#held.delete(runId);
    try {
      await unlessLost(settle(held.job));
    } catch (error) {
      this.#held.set(runId, held);
      throw error;
    }
    held.letGo();
  }

  /** pg-boss found a held job no longer this worker's (its heartbeat was missed): another may be taking the run over. */
  #lost(runId: number, held: Held): void {
    if (this.#stopping || this.#held.get(runId) !== held) return;
    this.#held.delete(runId);
    this.#handed = this.#handed.filter((handed) => handed !== runId);
    held.letGo();
    this.#options.onLost(runId).catch((error) => this.#options.log.error({ err: error, runId }, "could not stop a lost run"));
  }

  /** Fails the jobs still active for these runs, so pg-boss retries them at once instead of after the lease. */
  async reclaim(runIds: readonly number[]): Promise<void> {
    for (const runId of runIds) {
      const jobs = await unlessLost(this.boss.findJobs(RUNS, { key: `run-${runId}` }));
      const active = jobs.filter((job) => job.state === "active").map((job) => job.id);
      if (active.length) await unlessLost(this.boss.fail(RUNS, active, { reason: "its worker restarted" }));
    }
  }
}

/** pg-boss's own errors when its pool cannot reach PostgreSQL, as the store's: the database is unavailable. */
export async function unlessLost<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!isConnectionLoss(error)) throw error;
    throw Object.assign(new Error(`pg-boss: the database is unavailable (${(error as Error).message})`), {
      code: DATABASE_UNAVAILABLE,
      cause: error,
    });
  }
}
