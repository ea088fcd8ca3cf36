import type { Job, PgBoss } from "pg-boss";
import type { Log } from "../deps.ts";
import { splitSchema } from "../store/postgres-driver.ts";
import { DATABASE_UNAVAILABLE, isConnectionLoss } from "../store/sql-driver.ts";
import type { WorkClaims } from "./claims.ts";

/** The pg-boss queue of runs that may be claimed: one job per run. */
const RUNS = "lisa-runs";
/** How soon a renewal that could not run is tried again. */
const RENEWAL_RETRY_MS = 1_000;
/** pg-boss's longest expiration: a run still held after it is taken over (see docs/scale-out.md). */
const MAX_HOLD_SECONDS = 24 * 60 * 60;

export interface BossClaimsOptions {
  /** DATABASE_URL; pg-boss keeps its tables in the store's schema with `_jobs` after it. */
  databaseUrl: string;
  /** A claim not renewed for this long is taken over by another worker (pg-boss's heartbeat, ≥ 10 s). */
  leaseSeconds: number;
  /** Whether this process claims work (a worker), or only keeps pg-boss's schema up to date (`lisa web`). */
  claims: boolean;
  /** Called when a claim this worker held was lost: another worker may be taking the run over. */
  onLost(runId: number): Promise<void>;
  /** Called when pg-boss's pool lost a connection (its pool opens another at its next statement). */
  onConnectionLost?(): void;
  log: Log;
}

/**
 * Claims through pg-boss. The queue is `exclusive`: one job per key at most, queued or held, so a
 * run offered twice is one job and is claimed by one worker. A held job's heartbeat is its lease:
 * renewed every third of it, and when a worker dies pg-boss's supervisor fails the job after the
 * lease and retries it, so the next worker to fetch it takes the run over.
 */
export class BossClaims implements WorkClaims {
  readonly shared = true;
  // Loaded at start: pg-boss and its driver are some 20 MB of memory that a process on SQLite,
  // which never starts these claims, should not carry.
  #started: PgBoss | undefined;
  readonly #options: BossClaimsOptions;
  readonly #held = new Map<number, Job<{ runId: number }>>();
  #renewal: NodeJS.Timeout | undefined;
  #renewalRetry: NodeJS.Timeout | undefined;
  #renewalsFailing = false;

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
      // A worker is woken the moment a command is stored (BossCommandQueue's queue notifies).
      useListenNotify: this.#options.claims,
      max: 4,
    } as ConstructorParameters<typeof PgBoss>[0]);
    this.boss.on("error", (error) => {
      if (isConnectionLoss(error)) this.#options.onConnectionLost?.();
      this.#options.log.warn({ err: error }, "pg-boss reported an error");
    });
    await this.boss.start();
    await this.boss.createQueue(RUNS, {
      policy: "exclusive",
      heartbeatSeconds: Math.max(10, this.#options.leaseSeconds),
      expireInSeconds: MAX_HOLD_SECONDS,
      // Lisa counts restarts itself (MAX_RESTARTS) and gives up with a comment; pg-boss must not.
      retryLimit: 1_000_000,
      retryDelay: 0,
    });
    if (this.#options.claims) {
      const every = (this.#options.leaseSeconds * 1000) / 3;
      this.#renewal = setInterval(() => void this.#renew(), every);
      this.#renewal.unref();
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#renewal);
    clearTimeout(this.#renewalRetry);
    if (!this.#started) return;
    await this.boss.stop({ graceful: false, close: true, timeout: 5_000 });
  }

  async offer(runIds: readonly number[]): Promise<void> {
    for (const runId of runIds) await unlessLost(this.boss.send(RUNS, { runId }, { singletonKey: `run-${runId}` }));
  }

  async take(n: number): Promise<number[]> {
    if (n <= 0) return [];
    const jobs = await unlessLost(this.boss.fetch<{ runId: number }>(RUNS, { batchSize: n }));
    for (const job of jobs) this.#held.set(job.data.runId, job);
    return jobs.map((job) => job.data.runId);
  }

  async release(runId: number): Promise<void> {
    const job = this.#held.get(runId);
    if (!job) return;
    this.#held.delete(runId);
    await unlessLost(this.boss.complete(RUNS, job));
  }

  async defer(runId: number): Promise<void> {
    const job = this.#held.get(runId);
    if (!job) return;
    this.#held.delete(runId);
    // Failed, the job is retried at once (the queue's retryDelay is 0), by whichever worker fetches next.
    await unlessLost(this.boss.fail(RUNS, job, { reason: "deferred: a command on the run's issue goes first" }));
  }

  /** Fails the jobs still active for these runs, so pg-boss retries them at once instead of after the lease. */
  async reclaim(runIds: readonly number[]): Promise<void> {
    for (const runId of runIds) {
      const jobs = await unlessLost(this.boss.findJobs(RUNS, { key: `run-${runId}` }));
      const active = jobs.filter((job) => job.state === "active").map((job) => job.id);
      if (active.length) await unlessLost(this.boss.fail(RUNS, active, { reason: "its worker restarted" }));
    }
  }

  /**
   * Renews every held claim; one pg-boss no longer counts as this worker's is lost. A renewal that
   * could not run (the database away) is tried again within a second, not a third of a lease
   * later, so a claim outlives an outage shorter than its lease.
   */
  async #renew(): Promise<void> {
    let failed = false;
    for (const [runId, job] of [...this.#held]) {
      try {
        const touched = await this.boss.touch(RUNS, job);
        if ((touched as { affected?: number }).affected === 0 && this.#held.get(runId) === job) {
          this.#held.delete(runId);
          // Not awaited: stopping the run's sessions must not hold up the renewal of the other claims.
          this.#options
            .onLost(runId)
            .catch((error) => this.#options.log.error({ err: error, runId }, "could not stop a lost run"));
        }
      } catch (error) {
        // A renewal that could not run says nothing of the claim; the next one may. Said once until one runs.
        if (!this.#renewalsFailing && !failed) this.#options.log.warn({ err: error, runId }, "could not renew a claim");
        failed = true;
      }
    }
    this.#renewalsFailing = failed;
    if (failed && !this.#renewalRetry) {
      this.#renewalRetry = setTimeout(() => {
        this.#renewalRetry = undefined;
        void this.#renew();
      }, RENEWAL_RETRY_MS);
      this.#renewalRetry.unref();
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
