import { setTimeout as delay } from "node:timers/promises";
import type { Probot } from "probot";
import { pagesOf } from "../github/read-all-pages.ts";
import type { Store } from "../store/store.ts";

/** Deliveries are looked at from this long before the store was found gone: GitHub's clock and the loss's noticing differ. */
const LOOK_BEFORE_MS = 60_000;

/** How far back GitHub lets an App ask for a delivery again. */
const REDELIVERABLE_MS = 3 * 24 * 3_600_000;

/**
 * When the delivery log is read after start-up: at once, then again for redeliveries that found Lisa
 * not reachable yet (a load balancer that has not sent it traffic yet fails them as GitHub's first try failed).
 */
const START_UP_ROUNDS_MS = [0, 5_000, 30_000];

/**
 * At start-up: asks again for each webhook no Lisa answered since the last one this store took (a
 * deploy's gap, a crash, a host down), at most as far back as GitHub redelivers, in a few rounds. A
 * store that never took a webhook has missed none it knew of. Returns how many redeliveries were
 * asked for; rejects with an AbortError once `signal` aborts.
 */
export async function redeliverSinceLastStored(
  app: Probot,
  store: Store,
  now: () => number,
  signal: AbortSignal,
  rounds = START_UP_ROUNDS_MS,
): Promise<number> {
  const last = await store.commands.lastStoredAt();
  if (last === undefined) return 0;
  // Fixed before the first round: the redeliveries it asks for are stored, and move the newest command on.
  const since = Math.max(last, now() - REDELIVERABLE_MS);
  let asked = 0;
  for (const pause of rounds) {
    await delay(pause, undefined, { signal });
    asked += await redeliverMissed(app, store, since);
  }
  return asked;
}

/** An attempt in the App's delivery log, as Lisa reads it. */
interface Attempt {
  id: number;
  guid: string;
  delivered_at: string;
  status_code: number;
}

const answered = (attempt: Attempt) => attempt.status_code >= 200 && attempt.status_code < 300;
/** Lisa away (5xx) or never reached (GitHub logs 0); a 4xx refused the delivery itself, and would again. */
const lost = (attempt: Attempt) => attempt.status_code >= 500 || attempt.status_code === 0;

/**
 * Asks GitHub to deliver again each webhook Lisa could not take while its store was away (answered
 * 503 since `since`): GitHub never redelivers on its own. The App's delivery log is read newest
 * first, cursor-paged, back to `since`; a delivery one of whose attempts was answered needs nothing.
 * Each attempt is taken in the store before it is asked for, so no restart or other process asks twice.
 * Returns how many redeliveries were asked for.
 */
export async function redeliverMissed(app: Probot, store: Store, since: number): Promise<number> {
  const client = await app.auth();
  const from = since - LOOK_BEFORE_MS;
  const attempts: Attempt[] = [];
  for await (const page of pagesOf(client as never, client.rest.apps.listWebhookDeliveries, {})) {
    attempts.push(...page);
    if (page.length === 0 || page.some((attempt) => Date.parse(attempt.delivered_at) < from)) break;
  }
  const done = new Set(attempts.filter(answered).map((attempt) => attempt.guid));
  // The newest failed attempt of each delivery that none answered, since the store went away.
  const missed = new Map<string, Attempt>();
  for (const attempt of attempts) {
    if (!lost(attempt) || done.has(attempt.guid) || Date.parse(attempt.delivered_at) < from) continue;
    if (!missed.has(attempt.guid)) missed.set(attempt.guid, attempt);
  }
  let asked = 0;
  for (const attempt of missed.values()) {
    if (!(await store.redeliveries.take(attempt.id, attempt.guid))) continue;
    await client.rest.apps.redeliverWebhookDelivery({ delivery_id: attempt.id });
    asked += 1;
  }
  return asked;
}
