/**
 * How a stored command reaches the worker that handles it. On SQLite the worker drains the
 * commands table itself (CommandInbox), woken by the webhook handler in the same process; workers
 * sharing PostgreSQL are handed each command by pg-boss (BossCommandQueue), one at a time per
 * issue, in the order the commands were stored.
 */
export interface CommandQueue {
  /** Whether the job library hands commands to workers; false: the worker drains the table itself. */
  readonly handsOut: boolean;
  start(): Promise<void>;
  /**
   * A command row was stored: it waits for a worker behind the earlier commands of its issue, and
   * behind the surer commands of other issues (its row's priority).
   * The webhook's answer does not wait for this: the row is durable, and found again if it is lost.
   */
  enqueue(commandId: number, issue: () => Promise<string>, priority?: number): void;
  /** Queues a stored command row again; one already queued is left as it is. */
  send(commandId: number, issue: string, priority?: number): Promise<void>;
  /**
   * Hands this worker commands until stopped, several at once and never two of one issue at once.
   * `handle` answers "retry" for a command to be tried again later, still ahead of its issue's later ones.
   */
  work(handle: (commandId: number, attempt: number) => Promise<"done" | "retry">): Promise<void>;
  /** Stops handing commands out, once those under way are handled. */
  stop(): Promise<void>;
}

/** The embedded default: the commands table is the queue, and the worker drains it (CommandInbox). */
export const TABLE_QUEUE: CommandQueue = {
  handsOut: false,
  start: async () => {},
  enqueue: () => {},
  send: async () => {},
  work: async () => {},
  stop: async () => {},
};
