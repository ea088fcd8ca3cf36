// Over 250 lines: the worker's loop, its timers and its stopping share one state (stopped,
// pumping, idle waiters); the runs it executes are in run-executions.ts, its commands in command-inbox.ts.

import type { CoreDeps } from "../deps.ts";
import { processIdentity } from "../process/process-identity.ts";
import { killGroup } from "../providers/run-agent.ts";
import { isDiskFull } from "../store/disk-full.ts";
import { isDatabaseUnavailable } from "../store/sql-driver.ts";
import { rerunGates } from "../workflow/step/rerun-gates.ts";
import { LocalClaims, type WorkClaims } from "./claims.ts";
import { CommandInbox } from "./command-inbox.ts";
import { issueOfPayload } from "./command-issue.ts";
import { type CommandQueue, TABLE_QUEUE } from "./command-queue.ts";
import { convergeGitHub } from "./converge-github.ts";
import { pendingIssues, requeuePending } from "./pending-commands.ts";
import { recoverAlone, recoverShared } from "./recovery.ts";
import { RunExecutions } from "./run-executions.ts";
import { sweepUnheldWorktrees } from "./unheld-worktrees.ts";

/**
 * How often a worker sharing PostgreSQL looks for what no notification announces: a queued run whose
 * offer was refused (its previous job still settling), runs the database's loss cut short, the sweeps
 * below. Runs and commands themselves are handed out by pg-boss, woken by NOTIFY.
 */
export const SWEEP_MS = 3_000;

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
  readonly #runs: RunExecutions;
  /** 👀 reactions on their way to GitHub (acknowledge). */
  readonly #acknowledgements = new Set<Promise<void>>();
  readonly #inbox: CommandInbox;
  readonly #claims: WorkClaims;
  readonly #commands: CommandQueue;
  readonly #onClaimLost: ((runId: number) => void) | undefined;
  readonly #publishRetryMs: number;
  #sweep: NodeJS.Timeout | undefined;
  /** When #pump next looks for worktrees of runs other workers hold (sweepUnheldWorktrees). */
  #unheldSweepAt = 0;
  /** When #pump next looks for commands the job library may not have been told of (#requeueStranded). */
  #strandedSweepAt = 0;
  #publishRetry: NodeJS.Timeout | undefined;
  #convergeAgain: NodeJS.Timeout | undefined;
  /** Start-up's recovery could not write to a full data disk: done before any other work, once it can. */
  #recoveryOwed = false;
  #pumping = false;
  #again = false;
  #stopped = true;
  #idleWaiters: (() => void)[] = [];

  constructor(deps: CoreDeps, options: WorkerOptions) {
    this.#deps = deps;
    this.#claims = options.claims ?? new LocalClaims(deps.store);
    this.#commands = options.commands ?? TABLE_QUEUE;
    this.#runs = new RunExecutions(deps, {
      claims: this.#claims,
      concurrency: options.concurrency,
      keptWorktreesBytes: options.keptWorktreesBytes ?? KEPT_WORKTREES_BYTES,
      waitingIssues: async () => (this.#commands.handsOut ? await pendingIssues(deps.store) : new Set()),
      stopSessions: (runId) => this.stopSessions(runId),
      ended: async () => {
        this.notify();
        await this.#settleIdle();
      },
    });
    this.#inbox = new CommandInbox(deps, {
      // Sessions a command stops (`/lisa abort`, a closed pull request) end as a person's doing.
      controls: {
        stopSessions: (runId, stepId) => this.stopSessions(runId, stepId, { byPerson: true }),
        acknowledge: (write) => this.acknowledge(write),
        rerunGates: (runId, stepId, asked) => rerunGates(deps, runId, stepId, asked),
      },
      ...(options.commandRetryMs === undefined ? {} : { retryMs: options.commandRetryMs }),
      beforeEach: () => this.#runs.recordUnrecorded(),
      due: () => this.notify(),
    });
    this.#onClaimLost = options.onClaimLost;
    this.#publishRetryMs = options.publishRetryMs ?? PUBLISH_RETRY_MS;
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
    if (this.#commands.handsOut)
      await this.#commands.work(async (id, attempt) => {
        const outcome = await this.#inbox.handleQueued(id, attempt);
        // The command may have queued a run: it is offered now.
        this.notify();
        return outcome;
      });
    await this.#claims.work(() => this.notify());
    if (this.#claims.shared) {
      this.#sweep = setInterval(() => this.notify(), SWEEP_MS);
      this.#sweep.unref();
    }
    this.#publishRetry = setInterval(() => {
      void this.#converge();
      // A disk that was full may have space again.
      if (this.#runs.owesFailures || this.#recoveryOwed) this.notify();
    }, this.#publishRetryMs);
    this.#publishRetry.unref();
    // What an earlier process left unwritten on GitHub (it stopped, or GitHub refused): written now.
    void this.#converge();
    this.notify();
  }

  /** Brings GitHub to the store (convergeGitHub), and looks again once changes other processes may be publishing have settled. */
  async #converge(): Promise<void> {
    try {
      const againInMs = await convergeGitHub(this.#deps, this.#claims.shared);
      if (againInMs !== undefined) this.#convergeAgainIn(againInMs);
    } catch (error) {
      // Started from timers and webhooks alike, with nobody to await it: what it owes stays in the
      // store for the next round, and an unexpected error must not end the process.
      this.#deps.log.error({ err: error }, "could not bring GitHub up to the store; the next round tries again");
    }
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
    this.#runs.forget(runId);
    await this.stopSessions(runId);
    this.#onClaimLost?.(runId);
  }

  /** Recovers from an earlier process that stopped mid-run (src/scheduler/recovery.ts). */
  async recover(): Promise<void> {
    const recovering = {
      claims: this.#claims,
      stopSessions: async (runId: number) => await this.stopSessions(runId),
      trimKept: () => this.#runs.trimKept(),
    };
    await (this.#claims.shared ? recoverShared(this.#deps, recovering) : recoverAlone(this.#deps, recovering));
  }

  /**
   * Kills the live agent sessions of a run, or of one of its steps (`/lisa abort`, a PR closed
   * mid-pass): those on this machine, known by more than their pid (another worker's pid may be
   * anyone's here). A session on another worker stops at that worker's next check of the run.
   * `byPerson`: they are recorded as stopped before the kill, which the agent would report as a crash.
   */
  async stopSessions(runId: number, stepId?: number, { byPerson = false } = {}): Promise<void> {
    const { sessions } = this.#deps.store;
    const running = byPerson ? await sessions.stop(runId, stepId) : await sessions.runningIn(runId);
    for (const session of running) {
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
  commandStored(command: { id: number; kind: string; payload: unknown; priority?: number }): void {
    this.#commands.enqueue(command.id, () => issueOfPayload(this.#deps.store, command), command.priority);
    this.notify();
  }

  /** Now and then, commands stored a while ago and still pending are queued again (requeuePending). */
  async #requeueStranded(): Promise<void> {
    const { store, now } = this.#deps;
    if (!this.#commands.handsOut || now() < this.#strandedSweepAt) return;
    this.#strandedSweepAt = now() + STRANDED_MS;
    await requeuePending(store, this.#commands, now() - STRANDED_MS);
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
    await this.#claims.stopWork();
    await this.#commands.stop();
    await Promise.allSettled([this.#runs.ended(), ...this.#acknowledgements]);
  }

  #clearRetryTimers(): void {
    clearInterval(this.#sweep);
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
    await this.#claims.stopWork();
    await this.#commands.stop();
    await this.#runs.shutdown(graceMs);
  }

  async #isIdle(): Promise<boolean> {
    const { store } = this.#deps;
    return (
      !this.#runs.busy &&
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
        await this.#runs.recordUnrecorded();
        await this.#runs.handBack();
        await this.#sweepUnheld();
        await this.#requeueStranded();
        // On SQLite one worker at a time drains the commands, in order: those on one issue must not race.
        if (!this.#commands.handsOut && (await this.#deps.store.commands.pending()) > 0)
          await this.#deps.store.exclusively("inbox", (held) => this.#drainCommands(held));
        await this.#runs.claim(() => this.#stopped);
      } while (this.#again && !this.#stopped);
    } catch (error) {
      // The database is gone for a moment, or the data disk is full: the worker looks again at its
      // next sweep or webhook. It is no crash of this worker.
      if (isDiskFull(error)) this.#deps.log.error({ err: error }, "the data disk is full; the worker looks for work again later");
      else if (isDatabaseUnavailable(error))
        this.#deps.log.warn({ err: error }, "the database is unavailable; the worker looks for work again at its next sweep");
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

  /**
   * Now and then, the worktrees of runs another worker holds now (handed back here and taken up
   * there, taken over after a lapsed claim) are removed from this disk. Called from #pump alone, so
   * no run is adopted meanwhile; the runs under way here are left alone.
   */
  async #sweepUnheld(): Promise<void> {
    if (!this.#claims.shared || this.#deps.now() < this.#unheldSweepAt) return;
    this.#unheldSweepAt = this.#deps.now() + UNHELD_SWEEP_MS;
    await sweepUnheldWorktrees(this.#deps, (runId) => this.#runs.holds(runId));
  }

  async #settleIdle(): Promise<void> {
    if (!this.#idleWaiters.length || !(await this.#isIdle())) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
