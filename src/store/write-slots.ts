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

/** How long after its slot an earlier lane's unsent write holds later lanes back: past it, its process is taken for gone. */
const UNSENT_STALE_MS = 5_000;

export interface SlotRequest {
  installationId: number;
  /** Whether the write creates content (counts against the minute and hour budgets). */
  creates: boolean;
  /**
   * The write's lane, lower first (write-pacer.ts names them): it takes a slot ahead of the unsent
   * writes of later lanes, and one of a later lane gives way to it when it is due within the gap.
   */
  lane: number;
  /** How far ahead of now the write may reserve; beyond it, it asks again at `retryAt`. */
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

/** A slot taken (`at`, the row `slot`), or none yet: a write of a bounded lane asks again at `retryAt`. */
export type SlotAnswer = ({ at: number; slot: number } | { retryAt: number }) & SlotLoad;

/**
 * Takes the earliest slot of the installation that GitHub's limits allow, at `now` or later, among
 * the slots sent and those of its lane or an earlier one (a later lane's unsent slot gives way at
 * its send). Run inside one store transaction (which serializes writers on both databases), so two
 * processes never take slots closer than the spacing. The budgets count every creating slot in the
 * window that ends at the slot; creating writes of a lane are reserved in time order, and other
 * writes may fill a gap between slots.
 */
export async function reserveWriteSlot(db: SqlStatements, now: number, request: SlotRequest): Promise<SlotAnswer> {
  // Slots older than an hour count against nothing any more.
  await db.run(sql`DELETE FROM write_slots WHERE at <= ${now - HOUR_MS}`);
  const all = await db.all<{ at: number; creates: number; lane: number; sent: number }>(
    sql`SELECT at, creates, lane, sent FROM write_slots WHERE installation_id = ${request.installationId} ORDER BY at`,
  );
  const lane = request.lane;
  const slots = all.filter((s) => s.sent === 1 || s.lane <= lane);
  const creating = all.filter((s) => s.creates === 1).map((s) => Number(s.at));
  const lastAhead = slots.filter((s) => s.creates === 1).at(-1);
  let at = request.creates ? Math.max(now, Number(lastAhead?.at ?? now)) : now;
  let limitedBy: SlotLoad["limitedBy"];
  let load: { minute: number; hour: number } | undefined;
  for (;;) {
    at = firstGap(
      slots.map((s) => Number(s.at)),
      at,
      request.gapMs ?? WRITE_GAP_MS,
    );
    if (!request.creates) break;
    const inMinute = creating.filter((t) => t > at - MINUTE_MS && t <= at);
    const inHour = creating.filter((t) => t > at - HOUR_MS && t <= at);
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
  if (at > now + request.horizonMs) return { retryAt: at - request.horizonMs, ...counted };
  const { rows } = await db.run<{ id: number }>(
    sql`INSERT INTO write_slots (installation_id, at, creates, lane, sent) VALUES (${request.installationId}, ${at}, ${request.creates ? 1 : 0}, ${lane}, 0) RETURNING id`,
  );
  return { at, slot: Number(rows[0]?.id), ...counted };
}

/** A write about to go out at the slot it reserved (`at`): sent now, or held until `retryAt`. */
export type SendAnswer = { sentAt: number } | { retryAt: number };

/** A write about to go out: its installation, the slot it reserved (the row's id, and its time `at`) and its lane. */
export interface SendRequest {
  installationId: number;
  slot: number;
  at: number;
  lane: number;
  /** What a send may trail its record by. */
  marginMs: number;
}

/**
 * Records that the write of `slot` goes out `now`, unless another write of the
 * installation went out less than the gap and `marginMs` before now, or one ahead of it (of an
 * earlier lane, or of its lane with an earlier slot) is due within the gap or waits to go out:
 * then it waits a gap after that one. A write woken late
 * would otherwise go out closer than the gap to the next, whose slot was reserved from this one's;
 * its slot moves to its send time, so the next measures from that.
 */
export async function sendAtSlot(db: SqlStatements, now: number, request: SendRequest): Promise<SendAnswer> {
  const gap = WRITE_GAP_MS + request.marginMs;
  const lane = request.lane;
  // Sent within the gap; or not sent yet, not given up on, due within the gap, and ahead in the
  // order: of an earlier lane, or of this lane with an earlier slot.
  const near = await db.all<{ at: number; sent: number }>(
    sql`SELECT at, sent FROM write_slots WHERE installation_id = ${request.installationId} AND id <> ${request.slot}
          AND ((sent = 1 AND at > ${now - gap} AND at <= ${now})
            OR (sent = 0 AND at > ${now - UNSENT_STALE_MS} AND at < ${now + gap}
                AND (lane < ${lane} OR (lane = ${lane} AND at < ${request.at}))))`,
  );
  if (near.length > 0) {
    // One gap after the one sent, or after the later of the waiting one's slot and now.
    const after = near.map((slot) => (slot.sent === 1 ? Number(slot.at) : Math.max(Number(slot.at), now)));
    return { retryAt: Math.max(...after) + gap };
  }
  await db.run(sql`UPDATE write_slots SET at = ${now}, sent = 1 WHERE id = ${request.slot}`);
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

  /** The write of `slot` goes out now, or waits: see sendAtSlot. Under the same lock as reserve. */
  send(request: SendRequest): Promise<SendAnswer> {
    return this.#db.tx(() => sendAtSlot(this.#db.statements(), this.#db.now(), request), `slots:${request.installationId}`);
  }
}
