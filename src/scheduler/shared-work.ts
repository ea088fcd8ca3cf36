import type { Log } from "../security/redacting-log.ts";
import { splitSchema } from "../store/postgres-driver.ts";
import type { Store } from "../store/store.ts";
import { BossClaims } from "./boss-claims.ts";
import { BossCommandQueue } from "./boss-commands.ts";
import { LocalClaims, type WorkClaims } from "./claims.ts";
import { COMMAND_RETRY_MS, COMMANDS_AT_ONCE } from "./command-inbox.ts";
import { type CommandQueue, TABLE_QUEUE } from "./command-queue.ts";

export interface SharedWorkOptions {
  /** DATABASE_URL: without it, one process with SQLite shares nothing. */
  databaseUrl?: string | undefined;
  leaseSeconds?: number | undefined;
  /** Runs a worker executes at once. */
  concurrency: number;
  /** Whether this process takes work (a worker, or one process doing everything), or only stores it (`lisa web`). */
  takesWork: boolean;
  commandRetryMs?: number | undefined;
  /** A claim this worker held lapsed (Worker.claimLost). */
  onLost(runId: number): Promise<void>;
  onConnectionLost(): void;
  log: Log;
}

/**
 * How this process shares runs and commands with the others: through pg-boss on PostgreSQL (run
 * claims and the command queue on one pg-boss instance), through the store alone on SQLite.
 */
export function shareWork(store: Store, options: SharedWorkOptions): { claims: WorkClaims; commands: CommandQueue } {
  if (!options.databaseUrl) return { claims: new LocalClaims(store), commands: TABLE_QUEUE };
  const claims = new BossClaims({
    databaseUrl: options.databaseUrl,
    leaseSeconds: options.leaseSeconds ?? 30,
    concurrency: options.concurrency,
    claims: options.takesWork,
    onLost: options.onLost,
    onConnectionLost: options.onConnectionLost,
    log: options.log,
  });
  const commands = new BossCommandQueue({
    boss: () => claims.boss,
    schema: splitSchema(options.databaseUrl).schema,
    concurrency: COMMANDS_AT_ONCE,
    retryMs: options.commandRetryMs ?? COMMAND_RETRY_MS,
    log: options.log,
  });
  return { claims, commands };
}
