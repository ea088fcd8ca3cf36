import { createHash } from "node:crypto";
import type { PgBoss } from "pg-boss";
import type { Log } from "../security/redacting-log.ts";
import { SURE_COMMAND } from "../store/commands.ts";
import { unlessLost } from "./boss-claims.ts";
import type { CommandQueue } from "./command-queue.ts";

/** The pg-boss queue of stored commands: one job per command row, keyed by its issue. */
const COMMANDS = "lisa-commands";
/** A worker that dies mid-command stops its heartbeat: the command is handed out again after this. */
const HEARTBEAT_SECONDS = 10;
/** How often a worker looks for a command NOTIFY did not announce (one retried, or unblocked behind another). */
const POLL_SECONDS = 1;
/** The most commands one INSERT queues. */
const SENT_AT_ONCE = 500;

/** A stored command not yet queued, and its issue's key once read. */
interface UnsentCommand {
  commandId: number;
  issue: () => Promise<string>;
  key?: string;
  priority: number;
}

export interface BossCommandQueueOptions {
  /** The pg-boss instance the run claims started (BossClaims). */
  boss: () => PgBoss;
  /** The store's schema: job ids are derived from it and the row's id. */
  schema: string;
  /** Commands handled at once by this worker, each on an issue of its own. */
  concurrency: number;
  /** The first pause before a command GitHub failed is tried again; it doubles each time. */
  retryMs: number;
  log: Log;
}

/**
 * Commands on PostgreSQL, through pg-boss. The queue is `key_strict_fifo` keyed by issue: the
 * commands of one issue are handed out one at a time, in the order they were stored, to whichever
 * worker asks first, and those of other issues go on beside them. NOTIFY wakes a worker when a
 * command is stored. The command row stays the record (its MAC, its outcome); the job only says
 * which row is next, so sending one twice is harmless.
 */
export class BossCommandQueue implements CommandQueue {
  readonly handsOut = true;
  readonly #options: BossCommandQueueOptions;
  /** Commands stored and not yet sent: sent in the order stored, without holding up the webhook's answer. */
  readonly #unsent: UnsentCommand[] = [];
  #sending: Promise<void> = Promise.resolve();
  #working = false;

  constructor(options: BossCommandQueueOptions) {
    this.#options = options;
  }

  async start(): Promise<void> {
    await this.#options.boss().createQueue(COMMANDS, {
      policy: "key_strict_fifo",
      notify: true,
      heartbeatSeconds: HEARTBEAT_SECONDS,
      // Lisa gives up on a command herself, and says so (CommandInbox); a job pg-boss failed would
      // hold the later commands of its issue back for ever.
      retryLimit: 1_000_000,
      retryDelay: Math.round(this.#options.retryMs / 1000),
      retryBackoff: true,
      retryDelayMax: 60,
    });
  }

  enqueue(commandId: number, issue: () => Promise<string>, priority = SURE_COMMAND): void {
    this.#unsent.push({ commandId, issue, priority });
    // Those stored while a send is under way go out together in the next: one INSERT for a flood.
    if (this.#unsent.length === 1) this.#sending = this.#sending.then(() => this.#sendUnsent());
  }

  async #sendUnsent(): Promise<void> {
    while (this.#unsent.length > 0) {
      const taken = this.#unsent.splice(0, SENT_AT_ONCE);
      let lost: UnsentCommand[] = taken;
      try {
        // Each command's issue is read once, also for one that waits for a later INSERT.
        const keyed = await Promise.all(taken.map(async (job) => ({ ...job, key: job.key ?? (await job.issue()) })));
        // Jobs of one INSERT share their creation time: an issue's later command waits for the next.
        const first = new Map<string, (typeof keyed)[number]>();
        for (const job of keyed) if (!first.has(job.key)) first.set(job.key, job);
        this.#unsent.unshift(...keyed.filter((job) => first.get(job.key) !== job));
        const now = [...first.values()];
        lost = now;
        await unlessLost(
          this.#options.boss().insert(
            COMMANDS,
            now.map((job) => this.#job(job.commandId, job.key, job.priority)),
          ),
        );
      } catch (error) {
        // The rows are durable: a worker queues them again when it finds them still pending (Worker).
        const commandIds = lost.map((job) => job.commandId);
        this.#options.log.warn({ err: error, commandIds }, "could not queue stored commands; a worker queues them later");
      }
    }
  }

  async send(commandId: number, issue: string, priority = SURE_COMMAND): Promise<void> {
    await unlessLost(this.#options.boss().insert(COMMANDS, [this.#job(commandId, issue, priority)]));
  }

  #job(commandId: number, issue: string, priority: number) {
    // The job's id is the row's own: a row queued twice is one job. pg-boss hands out each issue's
    // oldest job, the highest priority first.
    return { id: jobId(this.#options.schema, commandId), data: { commandId }, singletonKey: issue, priority };
  }

  async work(handle: (commandId: number, attempt: number) => Promise<"done" | "retry">): Promise<void> {
    this.#working = true;
    await this.#options.boss().work<{ commandId: number }>(
      COMMANDS,
      {
        localConcurrency: this.#options.concurrency,
        pollingIntervalSeconds: POLL_SECONDS,
        notifyPollingIntervalSeconds: POLL_SECONDS,
      },
      async ([job]) => {
        if (!job) return;
        // Thrown, the job is retried after pg-boss's pause, still ahead of its issue's later commands.
        if ((await handle(job.data.commandId, job.retryCount)) === "retry") throw new Error("GitHub failed; tried again later");
      },
    );
  }

  async stop(): Promise<void> {
    await this.#sending;
    if (this.#working) await this.#options.boss().offWork(COMMANDS, { wait: true });
    this.#working = false;
  }
}

/** A command row's job id: a UUID of the schema and the row, so the same row is one job. */
function jobId(schema: string, commandId: number): string {
  const hex = createHash("sha256").update(`lisa-command:${schema}:${commandId}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
