// Over 250 lines: the runs this process executes, their retries and their interruption share one map of live runs.
import type { CoreDeps } from "../deps.ts";
import { killAllAgents } from "../providers/run-agent.ts";
import { DiskFullError, isDiskFull, type RunFailure, recordFailure } from "../store/disk-full.ts";
import type { RunRow } from "../store/rows.ts";
import { interruptRun } from "../store/run-changes.ts";
import { isDatabaseUnavailable } from "../store/sql-driver.ts";
import { abandonRun, executeRun, GitHubOutage } from "../workflow/pass/execute-run.ts";
import type { WorkClaims } from "./claims.ts";
import { issueOfRun } from "./command-issue.ts";
import { type KeptSizes, trimKeptWorktrees } from "./kept-worktrees.ts";
import { MAX_RESTARTS, tooManyRestarts } from "./recovery.ts";

/** Tries a run gets at riding out GitHub failing transiently (5xx, no answer, rate limits) before it fails. */
const GITHUB_TRIES = 5;
/** The first pause before such a run goes on; each next one doubles (15 s + 30 s + 1 min + 2 min). */
export const RUN_RETRY_MS = 15_000;

export interface RunExecutionsOptions {
  claims: WorkClaims;
  concurrency: number;
  /** Disk the worktrees of failed and blocked runs may keep (trimKeptWorktrees). */
  keptWorktreesBytes: number;
  /** The issues with a command still waiting: their runs are given back until it is handled (issueOfRun keys). */
  waitingIssues(): Promise<ReadonlySet<string>>;
  /** Stops the live agent sessions of a run (the worker's RunControls). */
  stopSessions(runId: number): Promise<void>;
  /** An execution ended: the worker looks for more work, and tells whoever waits for it to be idle. */
  ended(): Promise<void>;
}

/**
 * The runs this worker executes, up to `concurrency` at a time: claimed, adopted (a run a dead
 * worker left is taken over), executed, and given back when Lisa stops. What an execution cannot
 * write when it ends is kept here until it can: a failure a full data disk kept from the store, a
 * run the database's loss cut short.
 */
export class RunExecutions {
  readonly #deps: CoreDeps;
  readonly #options: RunExecutionsOptions;
  readonly #active = new Map<number, Promise<void>>();
  readonly #keptSizes: KeptSizes = new Map();
  /** Runs the database's loss cut short, with the worker that was running each (undefined: not started): handed back once it is back (handBack). */
  readonly #cutShort = new Map<number, string | undefined>();
  /** Failures of runs that a full data disk kept from the store (the issue was told): written once it has space (recordUnrecorded). */
  readonly #unrecorded = new Map<number, RunFailure>();
  /** The writing of #unrecorded under way, if any. */
  #recording: Promise<void> | undefined;
  /** Ends the pauses of runs riding out a GitHub failure: the worker is handing them back. */
  readonly #pauses = new AbortController();

  constructor(deps: CoreDeps, options: RunExecutionsOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  /** Whether a run is under way here, or waits here to be handed back. */
  holds(runId: number): boolean {
    return this.#active.has(runId) || this.#cutShort.has(runId);
  }

  get busy(): boolean {
    return this.#active.size > 0 || this.#cutShort.size > 0;
  }

  /** Whether failures wait for the data disk to have space. */
  get owesFailures(): boolean {
    return this.#unrecorded.size > 0;
  }

  /** Settles once the runs under way have ended. */
  async ended(): Promise<void> {
    await Promise.allSettled(this.#active.values());
  }

  /** This worker's claim on a run lapsed: whoever takes it over runs it now, and nothing is handed back for it. */
  forget(runId: number): void {
    this.#cutShort.delete(runId);
  }

  /** Claims as many runs as there is room for, and starts each, unless the worker is `stopped` meanwhile. */
  async claim(stopped: () => boolean): Promise<void> {
    const { claims, concurrency } = this.#options;
    const { store } = this.#deps;
    if (stopped() || this.#active.size >= concurrency) return;
    if (claims.shared) await claims.offer((await store.runs.inState("queued")).map((run) => run.id));
    const taken = await claims.take(concurrency - this.#active.size);
    let waiting: ReadonlySet<string> | undefined;
    for (const [index, runId] of taken.entries()) {
      let run: RunRow | undefined;
      try {
        // Asked once a round, and only when a run was taken: it reads every pending command.
        waiting ??= await this.#options.waitingIssues();
        const taking = waiting.size > 0 ? await store.runs.get(runId) : undefined;
        // Given back as it stands, to be taken again at once: by this worker once the command is
        // handled, by another if this one is stopping.
        if (stopped() || (taking && waiting.has(issueOfRun(taking)))) {
          await claims.defer(runId);
          continue;
        }
        run = await this.#adopt(runId);
      } catch (error) {
        // Claimed but not started: handed back with the rest once the database is back (handBack).
        if (isDatabaseUnavailable(error)) for (const unstarted of taken.slice(index)) this.#cutShort.set(unstarted, undefined);
        throw error;
      }
      if (run) this.#active.set(run.id, this.#execute(run));
      else await claims.release(runId);
    }
  }

  #execute(run: RunRow): Promise<void> {
    const deps = this.#deps;
    return this.#rideOutGitHub(run.id)
      .catch(async (error) => {
        if (isDatabaseUnavailable(error)) throw error;
        if (error instanceof DiskFullError) {
          this.#unrecorded.set(run.id, error.failure);
          return;
        }
        // executeRun reports its own failures; this is one before it could, e.g. no installation token.
        deps.log.error({ err: error, runId: run.id }, "run crashed");
        const message = (error as Error).message;
        await this.#record({ runId: run.id, stepId: undefined, detail: message, message });
      })
      .then(async () => {
        // A run that stopped failed or blocked keeps its worktrees: the budget may be over now.
        const state = (await deps.store.runs.get(run.id))?.state;
        if (state === "failed" || state === "blocked") await this.trimKept();
        // A run handed back at shutdown is offered again once it has left (see shutdown).
        await this.#options.claims
          .release(run.id)
          .catch((error) => deps.log.warn({ err: error, runId: run.id }, "could not release a claim"));
      })
      .catch((error) => {
        if (!isDatabaseUnavailable(error)) throw error;
        // Its claim stays held (and renewed) until the run is handed back: no other worker takes it over.
        deps.log.warn({ err: error, runId: run.id }, "the database went away during the run; it resumes once it is back");
        this.#cutShort.set(run.id, deps.workerName);
      })
      .finally(async () => {
        this.#active.delete(run.id);
        await this.#options.ended();
      });
  }

  /**
   * Executes a run, and again from the store after a pause each time GitHub failed it transiently,
   * up to GITHUB_TRIES; the last try fails the run as any error does. The claim is held meanwhile.
   */
  async #rideOutGitHub(runId: number): Promise<void> {
    const deps = this.#deps;
    const firstPause = deps.runRetryMs ?? RUN_RETRY_MS;
    for (let attempt = 1; ; attempt++) {
      try {
        return await executeRun(deps, runId, { attempt, of: GITHUB_TRIES });
      } catch (error) {
        if (!(error instanceof GitHubOutage)) throw error;
        const pauseMs = firstPause * 2 ** (attempt - 1);
        deps.log.warn({ err: error.failure, runId, attempt, pauseMs }, "GitHub failed during the run; it goes on after a pause");
        await pause(pauseMs, this.#pauses.signal);
        // Stopped meanwhile (a person, or this worker handing it back), or taken over: not this execution's any more.
        const run = await deps.store.runs.get(runId);
        if (run?.state !== "running" || run.worker !== deps.workerName) return;
      }
    }
  }

  /**
   * Marks a run this worker now holds as running here. A run still running under another worker's
   * name was that worker's until its claim lapsed (it died, or froze past its lease): it is taken
   * over like a run after a restart, from what is durable, and a restart is counted.
   */
  async #adopt(runId: number): Promise<RunRow | undefined> {
    const { store, workerName } = this.#deps;
    const run = await store.runs.get(runId);
    if (run?.state === "running" && this.#options.claims.shared) {
      if (run.restarts >= MAX_RESTARTS) {
        await abandonRun(this.#deps, run.id, tooManyRestarts(run.restarts)).catch((error) =>
          this.#deps.log.error({ err: error, runId }, "could not report abandoned run"),
        );
        return undefined;
      }
      const note =
        run.worker === workerName
          ? `Worker ${workerName} restarted during this run and resumes it.`
          : `Worker ${run.worker ?? "unknown"} stopped renewing its claim on this run; worker ${workerName} took it over.`;
      if (await store.runs.takeOver(runId, note))
        this.#deps.log.warn({ runId, from: run.worker }, "took over a run whose worker stopped");
      else this.#deps.log.info({ runId }, "a run to take over had stopped running meanwhile");
    }
    return store.runs.claim(workerName, runId);
  }

  /**
   * Queues again, as they stand, the runs the database's loss cut short (or that were claimed and
   * not yet started), as a shutdown hands runs back: their live sessions marked interrupted and
   * their agents stopped. A connection lost is not a crash: no restart is counted, and the run
   * resumes from what is durable, on any worker. One that had ended meanwhile only gives up its claim.
   */
  async handBack(): Promise<void> {
    const { store, log } = this.#deps;
    // Each part may be done again: the database may go away again before the last.
    for (const [runId, runner] of [...this.#cutShort]) {
      await this.#options.stopSessions(runId);
      // A run this worker was running that another took over during a long outage is that one's now.
      const takenOver = runner !== undefined && (await store.runs.get(runId))?.worker !== runner;
      if ((await store.runs.get(runId))?.state === "running" && !takenOver) {
        const note = "The database connection was lost during the run; it resumes";
        const session = "the database connection was lost during this session";
        if (!(await interruptRun(store, runId, { session, note }))) log.info({ runId }, "the run had changed meanwhile");
      }
      await this.#options.claims.release(runId);
      if ((await store.runs.get(runId))?.state === "queued") await this.#options.claims.offer([runId]);
      this.#cutShort.delete(runId);
      log.info({ runId }, "a run the database's loss cut short was queued again");
    }
  }

  /**
   * Gives the runs under way `graceMs` to finish, then hands the rest back (Worker.shutdown): each
   * queued again as it stands, its live sessions marked interrupted and their processes killed.
   */
  async shutdown(graceMs: number): Promise<void> {
    const finished = this.ended();
    if (await settlesWithin(finished, graceMs)) return;
    const { store, log } = this.#deps;
    const handedBack = [...this.#active.keys()];
    // Said on the issue as what the run waits for (trackingView): in the past, as it is read afterwards.
    const note = this.#options.claims.shared
      ? `worker ${this.#deps.workerName} was stopped (SIGTERM) during this run; another worker resumes it where it stood`
      : "Lisa was stopped (SIGTERM) during this run; it resumes where it stood when Lisa starts again";
    let sessions = 0;
    for (const runId of handedBack) {
      const handed = await interruptRun(store, runId, { session: "Lisa stopped during this session", note });
      if (handed) sessions += handed.sessions;
      else log.info({ runId }, "a run to hand back had ended meanwhile");
    }
    killAllAgents();
    this.#pauses.abort();
    log.info({ runs: handedBack, sessions }, "shutting down: runs handed back to resume");
    // What the runs do on their way out (a last tracking-comment edit) gets a little longer.
    await settlesWithin(finished, 10_000);
    // Claimable again only now: another worker must not resume a run this one is still leaving.
    await this.#options.claims.offer(handedBack);
  }

  /** Writes a run's failure to the store, or keeps it for later while the data disk is full. */
  async #record(failure: RunFailure): Promise<void> {
    try {
      await recordFailure(this.#deps.store, failure);
    } catch (error) {
      if (!isDiskFull(error)) throw error;
      this.#deps.log.error(
        { err: error, runId: failure.runId },
        "the data disk is full: the run's failure is recorded once it has space",
      );
      this.#unrecorded.set(failure.runId, failure);
    }
  }

  /**
   * Writes the failures a full data disk kept from the store, before any command is handled (a
   * `/lisa retry` of such a run finds it failed). Their runs still stand running there, run by no
   * one: an execution still winding down (releasing its claim) is let finish first.
   */
  recordUnrecorded(): Promise<void> {
    // Commands handled at once all wait for the same writing: none of them may find the run running.
    this.#recording ??= this.#recordAll().finally(() => {
      this.#recording = undefined;
    });
    return this.#recording;
  }

  async #recordAll(): Promise<void> {
    const { store, log, workerName } = this.#deps;
    for (let next = this.#unrecorded.entries().next(); !next.done; next = this.#unrecorded.entries().next()) {
      const [runId, failure] = next.value;
      await this.#active.get(runId)?.catch(() => undefined);
      const run = await store.runs.get(runId);
      // Another worker took the run over meanwhile (this one froze past its lease): it is that one's to end.
      if (run?.state === "running" && run.worker === workerName) await recordFailure(store, failure);
      this.#unrecorded.delete(runId);
      log.info({ runId }, "recorded a run's failure that the full data disk had kept from the store");
    }
  }

  /** Keeps the worktrees of stopped runs within their disk budget; a failure to measure or remove is logged. */
  trimKept(): Promise<string[]> {
    return trimKeptWorktrees(this.#deps, this.#options.keptWorktreesBytes, this.#keptSizes).catch((error) => {
      this.#deps.log.warn({ err: error }, "could not keep the worktrees of stopped runs within their disk budget");
      return [];
    });
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(resolve, ms);
    timer.unref();
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** Whether `work` settles within `ms`. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = await Promise.race([work.then(() => true as const), timeout]);
  clearTimeout(timer);
  return settled;
}
