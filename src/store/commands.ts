import { commandMac, hasValidMac } from "./command-mac.ts";
import type { Database } from "./database.ts";
import type { CommandRow } from "./rows.ts";
import { join, type Sql, sql } from "./sql.ts";

/** A command's priority: one surely for Lisa. */
export const SURE_COMMAND = 0;
/** A label only a stale read of the repository's config says is not Lisa's (config-cache.ts labelTriage). */
export const UNSURE_COMMAND = -1;

/** The most commands one INSERT writes (8 values each: SQLite binds at most 32,766). */
const INSERTED_AT_ONCE = 200;

/** A command's signed fields and the VALUES tuple that writes it. */
interface Inserted {
  row: { delivery_id: string; event_key: string | null };
  values: Sql;
}

/** Where a command stands in the queue: its priority, and the issue whose order it keeps. */
export interface CommandPlace {
  priority: number;
  issue: string | null;
}

/**
 * The webhook commands waiting to be handled, one row per delivery: signed when stored, checked
 * before they run (command-mac.ts).
 */
export class CommandRecords {
  readonly #db: Database;
  readonly #key: Buffer;

  constructor(db: Database, key: Buffer) {
    this.#db = db;
    this.#key = key;
  }

  /**
   * Records a webhook command once per delivery id and, when given, once per event key (the same
   * event redelivered under a new id). The new row's id; undefined when it was recorded before.
   */
  async add(
    deliveryId: string,
    kind: string,
    payload: unknown,
    eventKey?: string,
    place: CommandPlace = { priority: SURE_COMMAND, issue: null },
  ): Promise<number | undefined> {
    const row = {
      delivery_id: deliveryId,
      event_key: eventKey ?? null,
      kind,
      payload: JSON.stringify(payload),
      created_at: this.#db.now(),
    };
    const values = sql`(${row.delivery_id}, ${row.event_key}, ${row.kind}, ${row.payload}, ${row.created_at}, ${commandMac(this.#key, row)}, ${place.priority}, ${place.issue})`;
    if (this.#db.inTransaction) return this.#insert([{ row, values }]).then(([id]) => id);
    return new Promise((resolve, reject) => {
      this.#waiting.push({ row, values, resolve, reject });
      // The first of a turn's arrivals waits for the turn's end, and takes the rest into its INSERT.
      if (this.#waiting.length === 1)
        this.#writing = this.#writing.then(() => new Promise(setImmediate)).then(() => this.#insertWaiting());
    });
  }

  /** Commands of webhooks that arrived while the last INSERT was under way, or in the same turn: written together, one commit. */
  readonly #waiting: (Inserted & { resolve: (id: number | undefined) => void; reject: (error: unknown) => void })[] = [];
  #writing: Promise<void> = Promise.resolve();

  async #insertWaiting(): Promise<void> {
    while (this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, INSERTED_AT_ONCE);
      try {
        const ids = await this.#insert(batch);
        for (const [i, command] of batch.entries()) command.resolve(ids[i]);
      } catch (error) {
        for (const command of batch) command.reject(error);
      }
    }
  }

  /** Each command's new id, in order; undefined for one recorded before, in the store or earlier in `commands`. */
  async #insert(commands: Inserted[]): Promise<(number | undefined)[]> {
    const keys = new Set<string>();
    const fresh = commands.map(({ row }) => {
      const seen = keys.has(`d:${row.delivery_id}`) || (row.event_key !== null && keys.has(`e:${row.event_key}`));
      keys.add(`d:${row.delivery_id}`);
      if (row.event_key !== null) keys.add(`e:${row.event_key}`);
      return !seen;
    });
    const { rows } = await this.#db
      .statements()
      .run<{ id: number; delivery_id: string }>(
        sql`INSERT INTO commands (delivery_id, event_key, kind, payload, created_at, mac, priority, issue) VALUES ${join(commands.filter((_, i) => fresh[i]).map((command) => command.values))} ON CONFLICT DO NOTHING RETURNING id, delivery_id`,
      );
    // RETURNING's order is SQLite's to choose: each row is found by its delivery.
    const ids = new Map(rows.map((row) => [row.delivery_id, Number(row.id)]));
    return commands.map(({ row }, i) => (fresh[i] ? ids.get(row.delivery_id) : undefined));
  }

  async get(id: number): Promise<CommandRow | undefined> {
    const row = await this.#db.get<StoredCommand>(sql`SELECT * FROM commands WHERE id = ${id}`);
    return row && decodeCommand(row);
  }

  /** Every pending command, oldest first. */
  async pendingRows(): Promise<CommandRow[]> {
    return decodeCommands(this.#db.all(sql`SELECT * FROM commands WHERE state = 'pending' ORDER BY id`));
  }

  /** Pending commands stored before `before`, oldest first: those a job library may never have been told of. */
  async pendingSince(before: number): Promise<CommandRow[]> {
    return decodeCommands(
      this.#db.all(sql`SELECT * FROM commands WHERE state = 'pending' AND created_at < ${before} ORDER BY id`),
    );
  }

  /** Whether Lisa wrote this command row: its MAC is valid. Anyone else who can write the database cannot make one. */
  isGenuine(command: CommandRow): boolean {
    return hasValidMac(this.#key, command);
  }

  /**
   * The pending commands that may run now, up to `limit`, surest first, then oldest (one waiting to
   * be tried again waits its turn). An unsure command of an issue with a surer one pending is taken
   * at that one's priority: the issue's commands stay in order, and the surer one is not held back.
   */
  async ready(limit = 200): Promise<CommandRow[]> {
    return decodeCommands(
      this.#db.all(
        sql`SELECT * FROM commands c WHERE c.state = 'pending' AND (c.not_before IS NULL OR c.not_before <= ${this.#db.now()})
        ORDER BY CASE WHEN c.priority < ${SURE_COMMAND} AND EXISTS (SELECT 1 FROM commands l WHERE l.state = 'pending' AND l.issue = c.issue AND l.priority > c.priority)
          THEN ${SURE_COMMAND} ELSE c.priority END DESC, c.id LIMIT ${limit}`,
      ),
    );
  }

  /** When the newest command was stored: the last time a webhook reached this store, if one ever did. */
  async lastStoredAt(): Promise<number | undefined> {
    const row = await this.#db.get<{ at: number | null }>(sql`SELECT MAX(created_at) AS at FROM commands`);
    return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
  }

  /** Pending commands, those waiting to be tried again included. */
  async pending(): Promise<number> {
    return (await this.#db.get<{ n: number }>(sql`SELECT COUNT(*) AS n FROM commands WHERE state = 'pending'`))?.n ?? 0;
  }

  /** Counts a failed try of a command and sets when the next may start. */
  async retryLater(id: number, notBefore: number): Promise<void> {
    await this.#db.run(sql`UPDATE commands SET attempts = attempts + 1, not_before = ${notBefore} WHERE id = ${id}`);
  }

  /** Up to `limit` gestures (commands, reviews, pushes) recorded before command `id`, newest first. */
  async gesturesBefore(id: number, limit: number): Promise<CommandRow[]> {
    return decodeCommands(
      this.#db.all(sql`SELECT * FROM commands WHERE id < ${id} AND kind = 'gesture' ORDER BY id DESC LIMIT ${limit}`),
    );
  }

  async finish(id: number, outcome: string): Promise<void> {
    await this.#db.run(
      sql`UPDATE commands SET state = 'done', outcome = ${outcome}, finished_at = ${this.#db.now()} WHERE id = ${id}`,
    );
  }
}

type StoredCommand = Omit<CommandRow, "request">;

/** A command row with its payload decoded; a payload that is not JSON (a row Lisa did not write) decodes to undefined. */
function decodeCommand(row: StoredCommand): CommandRow {
  let request: unknown;
  try {
    request = JSON.parse(row.payload);
  } catch {
    request = undefined;
  }
  return { ...row, request };
}

const decodeCommands = async (rows: Promise<StoredCommand[]>): Promise<CommandRow[]> => (await rows).map(decodeCommand);
