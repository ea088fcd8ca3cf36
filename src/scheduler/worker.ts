import type { CoreDeps } from "../deps.ts";
import { processIdentity } from "../process/process-identity.ts";
import { killAllAgents, killGroup } from "../providers/run-agent.ts";
import { abandonRun, executeRun } from "../runs/execute-run.ts";
import { DiskFullError, isDiskFull, type RunFailure, recordFailure } from "../store/disk-full.ts";
import type { RunRow } from "../store/rows.ts";
import { isDatabaseUnavailable } from "../store/sql-driver.ts";
import { LocalClaims, type WorkClaims } from "./claims.ts";
import { CommandInbox } from "./command-inbox.ts";
import { issueOfCommand, issueOfRun } from "./command-issue.ts";
import { type CommandQueue, TABLE_QUEUE } from "./command-queue.ts";
import { convergeGitHub } from "./converge-github.ts";
import { type KeptSizes, trimKeptWorktrees } from "./kept-worktrees.ts";
import { MAX_RESTARTS, recoverAlone, recoverShared, tooManyRestarts } from "./recovery.ts";
import { sweepUnheldWorktrees } from "./unheld-worktrees.ts";

/** How often a worker sharing PostgreSQL looks for work the others or `lisa web` stored. */
const POLL_MS = 1_000;

/** How often a worker sharing PostgreSQL looks for worktrees of runs other workers hold now. */
export const UNHELD_SWEEP_MS = 3_000;

/** A command still pending this long after it was stored may never have reached the job library: queued again (as often). */
const STRANDED_MS = 5_000;

/** How often what GitHub refused (or a stopped Lisa left unwritten) is written again. */
const PUBLISH_RETRY_MS = 30_000;

/** Disk the worktrees of failed and blocked runs may keep, unless configured. */
const KEPT_WORKTREES_BYTES = 10 * 1024 ** 3;

export interface WorkerOptions {
  concurrency: number;
  commandRetryMs?: number;
  /** Who handles which run; the store alone (one process) by default. */
  claims?: WorkClaims;
  /** How stored commands reach a worker; the commands table, drained here, by default. */
  commands?: CommandQueue;
  pollMs?: number;
  publishRetryMs?: number;
  /** Disk the worktrees of failed and blocked runs may keep (trimKeptWorktrees). */
  keptWorktreesBytes?: number;
  /** A claim on a run was lost (this worker froze past its lease); `lisa worker` exits, see main.ts. */
  onClaimLost?: (runId: number) => void;
}

/**
 * Executes what the webhook handlers stored: commands, and queued runs up to `concurrency` at a
 * time, in this process. Workers sharing PostgreSQL are handed commands by the command queue and
 * take runs through their claims (both pg-boss), so each command is handled once and each run by
 * one worker at a time.
 */
export class Worker {
  readonly #deps: CoreDeps;
  readonly #concurrency: number;
  readonly #active = new Map<number, Promise<void>>();
  /** 👀 reactions on their way to GitHub (acknowledge). */
  readonly #acknowledgements = new Set<Promise<void>>();
  readonly #inbox: CommandInbox;
  readonly #claims: WorkClaims;
  readonly #commands: CommandQueue;
  readonly #pollMs: number;
  readonly #onClaimLost: ((runId: number) => void) | undefined;
  readonly #publishRetryMs: number;
  readonly #keptWorktreesBytes: number;
  readonly #keptSizes: KeptSizes = new Map();
  #poll: NodeJS.Timeout | undefined;
  /** When #pump next looks for worktrees of runs other workers hold (sweepUnheldWorktrees). */
  #unheldSweepAt = 0;
  /** When #pump next looks for commands the job library may not have been told of (#requeueStranded). */
  #strandedSweepAt = 0;
  #publishRetry: NodeJS.Timeout | undefined;
  #convergeAgain: NodeJS.Timeout | undefined;
  /** Runs the database's loss cut short, with the worker that was running each (undefined: not started): handed back once it is back (#handBack). */
  readonly #cutShort = new Map<number, string | undefined>();
  /** Failures of runs that a full data disk kept from the store (the issue was told): written once it has space (#recordUnrecorded). */
  readonly #unrecorded = new Map<number, RunFailure>();
  /** The writing of #unrecorded under way, if any. */
  #recording: Promise<void> | undefined;
  /** Start-up's recovery could not write to a full data disk: done before any other work, once it can. */
  #recoveryOwed = false;
  #pumping = false;
  #again = false;
  #stopped = true;
  #idleWaiters: (() => void)[] = [];

  constructor(deps: CoreDeps, options: WorkerOptions) {
    this.#deps = deps;
    this.#concurrency = options.concurrency;
    this.#inbox = new CommandInbox(deps, {
      controls: this,
      ...(options.commandRetryMs === undefined ? {} : { retryMs: options.commandRetryMs }),
      beforeEach: () => this.#recordUnrecorded(),
      due: () => this.notify(),
    });
    this.#claims = options.claims ?? new LocalClaims(deps.store);
    this.#commands = options.commands ?? TABLE_QUEUE;
    this.#pollMs = options.pollMs ?? POLL_MS;
    this.#onClaimLost = options.onClaimLost;
    this.#publishRetryMs = options.publishRetryMs ?? PUBLISH_RETRY_MS;
    this.#keptWorktreesBytes = options.keptWorktreesBytes ?? KEPT_WORKTREES_BYTES;
  }

  /** Recovers from an earlier process that stopped mid-run, then starts taking work. */
  async start(): Promise<void> {
    try {
      await this.recover();
    } catch (error) {
      // Restarted onto a full data disk: Lisa stays up, to answer webhooks and to recover once there is space.
      if (!isDiskFull(error)) throw error;
      this.#deps.log.error({ err: error }, "the data disk is full: Lisa recovers the runs it left once the disk has space");
      this.#recoveryOwed = true;
    }
    this.#stopped = false;
    if (this.#commands.handsOut) await this.#commands.work((id, attempt) => this.#inbox.handleQueued(id, attempt));
    // Other processes queue runs (and, on SQLite, store commands): look for them now and then.
    if (this.#claims.shared) {
      this.#poll = setInterval(() => this.notify(), this.#pollMs);
      this.#poll.unref();
    }
    this.#publishRetry = setInterval(() => {
      void this.#converge();
      // A disk that was full may have space again.
      if (this.#unrecorded.size > 0 || this.#recoveryOwed) this.notify();
    }, this.#publishRetryMs);
    this.#publishRetry.unref();
    // What an earlier process left unwritten on GitHub (it stopped, or GitHub refused): written now.
    void this.#converge();
    this.notify();
  }

  /** Brings GitHub to the store (convergeGitHub), and looks again once changes other processes may be publishing have settled. */
  async #converge(): Promise<void> {
    const againInMs = await convergeGitHub(this.#deps, this.#claims.shared);
    if (againInMs !== undefined) this.#convergeAgainIn(againInMs);
  }

  /** One more round of #converge in `ms`, unless one is due already; stop() cancels it. */
  #convergeAgainIn(ms: number): void {
    if (this.#convergeAgain || this.#stopped) return;
    this.#convergeAgain = setTimeout(() => {
      this.#convergeAgain = undefined;
      void this.#converge();
    }, ms);
    this.#convergeAgain.unref();
  }

  /** This worker's claim on a run lapsed: another worker may take it over, so its agents stop here. */
  async claimLost(runId: number): Promise<void> {
    this.#deps.log.error({ runId }, "this worker's claim on the run lapsed; another worker takes it over");
    // Whoever takes it over runs it now: this worker hands nothing back for it.
    this.#cutShort.delete(runId);
    await this.stopSessions(runId);
    this.#onClaimLost?.(runId);
  }

  /** Recovers from an earlier process that stopped mid-run (src/scheduler/recovery.ts). */
  async recover(): Promise<void> {
    const recovering = {
      claims: this.#claims,
      stopSessions: async (runId: number) => await this.stopSessions(runId),
      trimKept: () => this.#trimKept(),
    };
    await (this.#claims.shared ? recoverShared(this.#deps, recovering) : recoverAlone(this.#deps, recovering));
  }

  /** Keeps the worktrees of stopped runs within their disk budget; a failure to measure or remove is logged. */
  #trimKept(): Promise<string[]> {
    return trimKeptWorktrees(this.#deps, this.#keptWorktreesBytes, this.#keptSizes).catch((error) => {
      this.#deps.log.warn({ err: error }, "could not keep the worktrees of stopped runs within their disk budget");
      return [];
    });
  }

  /**
   * Kills the live agent sessions of a run, or of one of its steps (`/lisa abort`, a PR closed
   * mid-pass): those on this machine, known by more than their pid (another worker's pid may be
   * anyone's here). A session on another worker stops at that worker's next check of the run.
   */
  async stopSessions(runId: number, stepId?: number): Promise<void> {
    for (const session of await this.#deps.store.sessions.runningIn(runId)) {
      if (stepId !== undefined && session.step_id !== stepId) continue;
      if (!session.pid) continue;
      const here = session.pid_identity !== null && processIdentity(session.pid) === session.pid_identity;
      if (here || !this.#claims.shared) killGroup(session.pid, "SIGKILL");
    }
    // A run stopped while it was not running here leaves its worktrees to the unheld sweep: soon.
    this.#unheldSweepAt = 0;
    this.#again = true;
  }

  /** A 👀 on its way: the commands and runs after it go on, and idle() and stop() wait for it. */
  acknowledge(write: Promise<void>): void {
    const tracked: Promise<void> = write
      .catch(() => undefined)
      .finally(async () => {
        this.#acknowledgements.delete(tracked);
        await this.#settleIdle();
      });
    this.#acknowledgements.add(tracked);
  }

  /** Whether the worker takes work: started, and not stopping. */
  get running(): boolean {
    return !this.#stopped;
  }

  /**
   * A command was stored (a webhook, `lisa run`): the job library is told of it, or this worker,
   * which drains the table, is woken.
   */
  commandStored(command: { id: number; kind: string; payload: unknown }): void {
    const row = { ...command, payload: JSON.stringify(command.payload) };
    this.#commands.enqueue(command.id, () => issueOfCommand(this.#deps.store, row));
    this.notify();
  }

  /**
   * Now and then, commands stored a while ago and still pending are queued again: a send lost on
   * its way (a web process stopped, the database away) is made now; one queued already is left.
   */
  async #requeueStranded(): Promise<void> {
    const { store, now } = this.#deps;
    if (!this.#commands.handsOut || now() < this.#strandedSweepAt) return;
    this.#strandedSweepAt = now() + STRANDED_MS;
    for (const command of await store.commands.pendingSince(now() - STRANDED_MS))
      await this.#commands.send(command.id, await issueOfCommand(store, command));
  }

  /** Wakes the worker: new commands or runs may be waiting. */
  notify(): void {
    if (this.#stopped) return;
    this.#inbox.arrived();
    void this.#pump();
  }

  /** Resolves once nothing is pending, queued or running. */
  async idle(): Promise<void> {
    if (await this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops taking new work and waits for the runs under way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clearRetryTimers();
    await this.#commands.stop();
    await Promise.allSettled([...this.#active.values(), ...this.#acknowledgements]);
  }

  #clearRetryTimers(): void {
    clearInterval(this.#poll);
    clearInterval(this.#publishRetry);
    clearTimeout(this.#convergeAgain);
    this.#inbox.stop();
  }

  /**
   * Stops for a deploy or a shutdown (SIGTERM): takes no new work, gives the runs under way
   * `graceMs` to finish, then hands the rest back. Each is queued again as it stands, its live
   * sessions marked interrupted and their processes (agents, gates, git) killed, so the next start
   * resumes it. A deploy is not a crash: it does not count toward MAX_RESTARTS, which would
   * abandon a long run after three deploys.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.#stopped = true;
    this.#clearRetryTimers();
    await this.#commands.stop();
    const finished = Promise.allSettled(this.#active.values());
    if (await settlesWithin(finished, graceMs)) return;
    const { store, log } = this.#deps;
    const handedBack = [...this.#active.keys()];
    const note = this.#claims.shared
      ? "This worker is shutting down; the run resumes on another worker"
      : "Lisa is shutting down; the run resumes when it starts again";
    let sessions = 0;
    for (const runId of handedBack) {
      await store.runs.transition(runId, "interrupt", { note });
      sessions += (await store.sessions.interruptRun(runId, "Lisa stopped during this session")).length;
    }
    killAllAgents();
    log.info({ runs: handedBack, sessions }, "shutting down: runs handed back to resume");
    // What the runs do on their way out (a last tracking-comment edit) gets a little longer.
    await settlesWithin(finished, 10_000);
    // Claimable again only now: another worker must not resume a run this one is still leaving.
    await this.#claims.offer(handedBack);
  }

  async #isIdle(): Promise<boolean> {
    const { store } = this.#deps;
    return (
      this.#active.size === 0 &&
      this.#cutShort.size === 0 &&
      this.#acknowledgements.size === 0 &&
      !this.#pumping &&
      (this.#stopped || ((await store.commands.pending()) === 0 && (await store.runs.inState("queued")).length === 0))
    );
  }

  async #pump(): Promise<void> {
    if (this.#pumping) {
      this.#again = true;
      return;
    }
    this.#pumping = true;
    try {
      do {
        this.#again = false;
        if (this.#recoveryOwed) {
          await this.recover();
          this.#recoveryOwed = false;
        }
        await this.#recordUnrecorded();
        await this.#handBack();
        await this.#sweepUnheld();
        await this.#requeueStranded();
        // On SQLite one worker at a time drains the commands, in order: those on one issue must not race.
        if (!this.#commands.handsOut && (await this.#deps.store.commands.pending()) > 0)
          await this.#deps.store.exclusively("inbox", (held) => this.#drainCommands(held));
        await this.#claimRuns();
      } while (this.#again && !this.#stopped);
    } catch (error) {
      // The database is gone for a moment, or the data disk is full: the worker looks again at its
      // next poll or webhook. It is no crash of this worker.
      if (isDiskFull(error)) this.#deps.log.error({ err: error }, "the data disk is full; the worker looks for work again later");
      else if (isDatabaseUnavailable(error))
        this.#deps.log.warn({ err: error }, "the database is unavailable; the worker looks for work again at its next poll");
      else throw error;
    } finally {
      this.#pumping = false;
      await this.#settleIdle();
    }
  }

  /** Handles the stored commands for as long as this worker `held` the inbox's lock (CommandInbox). */
  #drainCommands(held: () => Promise<boolean>): Promise<void> {
    return this.#inbox.drain(async () => !this.#stopped && (await held()));
  }

  async #claimRuns(): Promise<void> {
    const { store } = this.#deps;
    if (this.#stopped || this.#active.size >= this.#concurrency) return;
    if (this.#claims.shared) await this.#claims.offer((await store.runs.inState("queued")).map((run) => run.id));
    const taken = await this.#claims.take(this.#concurrency - this.#active.size);
    for (const [index, runId] of taken.entries()) {
      if (await this.#commandWaits(runId)) {
        await this.#claims.defer(runId);
        continue;
      }
      let run: RunRow | undefined;
      try {
        run = this.#stopped ? undefined : await this.#adopt(runId);
      } catch (error) {
        // Claimed but not started: handed back with the rest once the database is back (#handBack).
        if (isDatabaseUnavailable(error)) for (const unstarted of taken.slice(index)) this.#cutShort.set(unstarted, undefined);
        throw error;
      }
      if (!run) {
        await this.#claims.release(runId);
        continue;
      }
      const execution = executeRun(this.#deps, run.id)
        .catch(async (error) => {
          if (isDatabaseUnavailable(error)) throw error;
          if (error instanceof DiskFullError) {
            this.#unrecorded.set(run.id, error.failure);
            return;
          }
          // executeRun reports its own failures; this is one before it could, e.g. no installation token.
          this.#deps.log.error({ err: error, runId: run.id }, "run crashed");
          const message = (error as Error).message;
          await this.#record({ runId: run.id, stepId: undefined, detail: message, message });
        })
        .then(async () => {
          // A run that stopped failed or blocked keeps its worktrees: the budget may be over now.
          const state = (await this.#deps.store.runs.get(run.id))?.state;
          if (state === "failed" || state === "blocked") await this.#trimKept();
          // A run handed back at shutdown is offered again once it has left (see shutdown).
          await this.#claims
            .release(run.id)
            .catch((error) => this.#deps.log.warn({ err: error, runId: run.id }, "could not release a claim"));
        })
        .catch((error) => {
          if (!isDatabaseUnavailable(error)) throw error;
          // Its claim stays held (and renewed) until the run is handed back: no other worker takes it over.
          this.#deps.log.warn({ err: error, runId: run.id }, "the database went away during the run; it resumes once it is back");
          this.#cutShort.set(run.id, this.#deps.workerName);
        })
        .finally(async () => {
          this.#active.delete(run.id);
          this.notify();
          await this.#settleIdle();
        });
      this.#active.set(run.id, execution);
    }
  }

  /**
   * Whether a command on the run's issue still waits for a worker. pg-boss hands commands out beside
   * runs: the command goes first (a `/lisa abort` said before a restart stops the run instead of
   * finding it resumed), as where one process drains every command before it claims a run.
   */
  async #commandWaits(runId: number): Promise<boolean> {
    const { store } = this.#deps;
    const run = this.#commands.handsOut ? await store.runs.get(runId) : undefined;
    if (!run) return false;
    for (const command of await store.commands.pendingRows())
      if ((await issueOfCommand(store, command)) === issueOfRun(run)) return true;
    return false;
  }

  /**
   * Marks a run this worker now holds as running here. A run still running under another worker's
   * name was that worker's until its claim lapsed (it died, or froze past its lease): it is taken
   * over like a run after a restart, from what is durable, and a restart is counted.
   */
  async #adopt(runId: number): Promise<RunRow | undefined> {
    const { store, workerName } = this.#deps;
    const run = await store.runs.get(runId);
    if (run?.state === "running" && this.#claims.shared) {
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
      await store.runs.takeOver(runId, note);
      this.#deps.log.warn({ runId, from: run.worker }, "took over a run whose worker stopped");
    }
    return store.runs.claim(workerName, runId);
  }

  /**
   * Now and then, the worktrees of runs another worker holds now (handed back here and taken up
   * there, taken over after a lapsed claim) are removed from this disk. Called from #pump alone, so
   * no run is adopted meanwhile; the runs under way here are left alone.
   */
  async #sweepUnheld(): Promise<void> {
    if (!this.#claims.shared || this.#deps.now() < this.#unheldSweepAt) return;
    this.#unheldSweepAt = this.#deps.now() + UNHELD_SWEEP_MS;
    await sweepUnheldWorktrees(this.#deps, (runId) => this.#active.has(runId) || this.#cutShort.has(runId));
  }

  /**
   * Queues again, as they stand, the runs the database's loss cut short (or that were claimed and
   * not yet started), as a shutdown hands runs back: their live sessions marked interrupted and
   * their agents stopped. A connection lost is not a crash: no restart is counted, and the run
   * resumes from what is durable, on any worker. One that had ended meanwhile only gives up its claim.
   */
  async #handBack(): Promise<void> {
    const { store, log } = this.#deps;
    // Each part may be done again: the database may go away again before the last.
    for (const [runId, runner] of [...this.#cutShort]) {
      await this.stopSessions(runId);
      // A run this worker was running that another took over during a long outage is that one's now.
      const takenOver = runner !== undefined && (await store.runs.get(runId))?.worker !== runner;
      if ((await store.runs.get(runId))?.state === "running" && !takenOver) {
        await store.sessions.interruptRun(runId, "the database connection was lost during this session");
        await store.runs.transition(runId, "interrupt", { note: "The database connection was lost during the run; it resumes" });
      }
      await this.#claims.release(runId);
      if ((await store.runs.get(runId))?.state === "queued") await this.#claims.offer([runId]);
      this.#cutShort.delete(runId);
      log.info({ runId }, "a run the database's loss cut short was queued again");
    }
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
  #recordUnrecorded(): Promise<void> {
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

  async #settleIdle(): Promise<void> {
    if (!this.#idleWaiters.length || !(await this.#isIdle())) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
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
