import type { CommandRow } from "../store/rows.ts";
import type { CommandGesture, Gesture } from "./gesture.ts";

/** How the outcome of a command that failed begins (Worker's drain writes it). */
export const FAILED_OUTCOME = "error: ";

/** Commands written this close together, same words by the same person on the same issue, may be one request. */
export const COALESCE_WINDOW_MS = 10_000;

/**
 * The earlier command that `command` repeats, if any. A hundred `/lisa retry` comments posted at
 * once (a script, a double-clicked button, a stuck client) are one retry with one answer: without
 * this, the first retries and the other 99 each get a reply that the run is already running.
 * The same words are a new request once what the first one started has come to rest: `/lisa
 * continue` again after the pass it started has reached the gate, however soon. GitHub dates
 * comments to the second, too coarse to tell a flood from a quick second request by time alone.
 * `earlier` are recent commands, newest first; `cameToRest(from, to)` says whether the run
 * came to rest (review, blocked, failed, …) between those two times.
 */
export async function repeatedCommand(
  command: CommandRow,
  earlier: readonly CommandRow[],
  cameToRest: (from: number, to: number) => Promise<boolean>,
): Promise<CommandRow | undefined> {
  const gesture = gestureOf(command);
  if (gesture?.kind !== "command") return undefined;
  const at = Date.parse(gesture.createdAt);
  for (const row of earlier) {
    const other = gestureOf(row);
    if (
      other?.kind === "command" &&
      sameRequest(gesture, other) &&
      Math.abs(Date.parse(other.createdAt) - at) <= COALESCE_WINDOW_MS &&
      // Said again after the first one failed (and said so), it is a new try, not part of a flood.
      !(row.outcome?.startsWith(FAILED_OUTCOME) && row.finished_at !== null && command.created_at > row.finished_at) &&
      (row.finished_at === null || !(await cameToRest(row.finished_at, command.created_at)))
    )
      return row;
  }
  return undefined;
}

const gestureOf = (row: CommandRow): Gesture | undefined => (row.kind === "gesture" ? (row.request as Gesture) : undefined);

const sameRequest = (a: CommandGesture, b: CommandGesture) =>
  a.installationId === b.installationId &&
  a.owner.toLowerCase() === b.owner.toLowerCase() &&
  a.repo.toLowerCase() === b.repo.toLowerCase() &&
  a.number === b.number &&
  a.sender === b.sender &&
  a.command.name === b.command.name &&
  // The same words: a bare `/lisa` right after `/lisa help` asks again in other words, and is answered.
  a.command.word === b.command.word &&
  a.command.text === b.command.text;
