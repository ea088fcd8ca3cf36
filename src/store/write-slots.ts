import type { Database } from "./database.ts";
import { sql } from "./sql.ts";
import type { SqlStatements } from "./sql-driver.ts";

/**
 * GitHub's documented limits on an installation's writes (REST API best practices and secondary
 * rate limits): one second between mutating requests, 80 content-creating requests a minute and
 * 500 an hour. Every process of a fleet reserves its writes here, so the limits hold for all of them.
 */
export const WRITE_GAP_MS = 1_000;
export const CREATES_PER_MINUTE = 80;
export const CREATES_PER_HOUR = 500;
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

export interface SlotRequest {
  installationId: number;
  /** Whether the write creates content (counts against the minute and hour budgets). */
  creates: boolean;
  /** A write a reviewer waits for: it may take a slot however far ahead; others only within `horizonMs`. */
  priority: boolean;
  /** How far ahead of now an ordinary write may reserve; beyond it, it asks again at `retryAt`. */
  horizonMs: number;
  /**
   * The spacing between writes; WRITE_GAP_MS unless told. At 1 s no minute can hold more than 60
   * writes, so the minute budget only binds at a shorter spacing; it is kept so it holds whatever the spacing.
   */
  gapMs?: number;
}

/**
 * Content-creating slots reserved in the minute and hour that end at the earliest slot the spacing
 * allowed (80 or 500 when that budget was full), and which budget pushed the slot back.
 */
export interface SlotLoad {
  minute: number;
  hour: number;
  limitedBy?: "minute" | "hour";
}

/** A slot taken (`at`), or none yet: an ordinary write asks again at `retryAt`. */
export type SlotAnswer = ({ at: number } | { retryAt: number }) & SlotLoad;

/**
 * Takes the earliest slot of the installation that GitHub's limits allow, at `now` or later. Run
 * inside one store transaction (which serializes writers on both databases), so two processes never
 * take slots closer than the spacing. Creating writes are reserved in time order, so counting the
 * budgets over the window that ends at the slot is exact; other writes may fill a gap between slots.
 */
export async function reserveWriteSlot(db: SqlStatements, now: number, request: SlotRequest): Promise<SlotAnswer> {
  // Slots older than an hour count against nothing any more.
  await db.run(sql`DELETE FROM write_slots WHERE at <= ${now - HOUR_MS}`);
  const slots = await db.all<{ at: number; creates: number }>(
    sql`SELECT at, creates FROM write_slots WHERE installation_id = ${request.installationId} ORDER BY at`,
  );
  const creating = slots.filter((s) => s.creates === 1).map((s) => Number(s.at));
  let at = request.creates ? Math.max(now, creating.at(-1) ?? now) : now;
  let limitedBy: SlotLoad["limitedBy"];
  let load: { minute: number; hour: number } | undefined;
  for (;;) {
    at = firstGap(
      slots.map((s) => Number(s.at)),
      at,
      request.gapMs ?? WRITE_GAP_MS,
    );
    if (!request.creates) break;
    const inMinute = creating.filter((t) => t > at - MINUTE_MS);
    const inHour = creating.filter((t) => t > at - HOUR_MS);
    load ??= { minute: inMinute.length, hour: inHour.length };
    // The slot waits until enough of the oldest creations in its window have left it.
    const minuteFull = inMinute.length >= CREATES_PER_MINUTE;
    const hourFull = inHour.length >= CREATES_PER_HOUR;
    if (!minuteFull && !hourFull) break;
    if (hourFull) {
      at = Math.max(at, (inHour[inHour.length - CREATES_PER_HOUR] ?? at) + HOUR_MS);
      limitedBy = "hour";
    }
    if (minuteFull) {
      at = Math.max(at, (inMinute[inMinute.length - CREATES_PER_MINUTE] ?? at) + MINUTE_MS);
      limitedBy ??= "minute";
    }
  }
  const counted = { ...(load ?? { minute: 0, hour: 0 }), ...(limitedBy ? { limitedBy } : {}) };
  if (!request.priority && at > now + request.horizonMs) return { retryAt: at - request.horizonMs, ...counted };
  await db.run(
    sql`INSERT INTO write_slots (installation_id, at, creates) VALUES (${request.installationId}, ${at}, ${request.creates ? 1 : 0})`,
  );
  return { at, ...counted };
}

/** A write about to go out at the slot it reserved (`at`): sent now, or held until `retryAt`. */
export type SendAnswer = { sentAt: number } | { retryAt: number };

/**
 * Records that the write whose slot was `at` goes out `now`, unless another write of the
 * installation went out (or is due) less than the gap and `marginMs` (what a send may trail its
 * record) before now: then it waits until that has passed since that one. A write woken late would
 * otherwise go out closer than the gap to the next, whose slot was reserved from this one's; its
 * slot moves to its send time, so the next measures from that.
 */
export async function sendAtSlot(
  db: SqlStatements,
  now: number,
  request: { installationId: number; at: number; marginMs: number },
): Promise<SendAnswer> {
  const gap = WRITE_GAP_MS + request.marginMs;
  const near = await db.all<{ at: number }>(
    sql`SELECT at FROM write_slots WHERE installation_id = ${request.installationId} AND at > ${now - gap} AND at <= ${now} AND at <> ${request.at}`,
  );
  if (near.length > 0) return { retryAt: Math.max(...near.map((slot) => Number(slot.at))) + gap };
  await db.run(sql`UPDATE write_slots SET at = ${now} WHERE installation_id = ${request.installationId} AND at = ${request.at}`);
  return { sentAt: now };
}

/** The earliest time at or after `from` that is `gap` or more from every reserved slot (sorted). */
function firstGap(sorted: readonly number[], from: number, gap: number): number {
  let at = from;
  for (const slot of sorted) {
    if (slot <= at - gap) continue;
    if (slot >= at + gap) break;
    at = slot + gap;
  }
  return at;
}

/** The write slots of each installation, reserved by every process of the fleet. */
export class WriteSlotRecords {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** Takes an installation's next write slot GitHub's limits allow, in one transaction under the installation's lock. */
  reserve(request: SlotRequest): Promise<SlotAnswer> {
    return this.#db.tx(() => reserveWriteSlot(this.#db.statements(), this.#db.now(), request), `slots:${request.installationId}`);
  }

  /** The write of slot `at` goes out now, or waits: see sendAtSlot. Under the same lock as reserve. */
  send(request: { installationId: number; at: number; marginMs: number }): Promise<SendAnswer> {
    return this.#db.tx(() => sendAtSlot(this.#db.statements(), this.#db.now(), request), `slots:${request.installationId}`);
  }
}
