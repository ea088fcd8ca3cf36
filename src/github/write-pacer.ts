import { setTimeout as delay } from "node:timers/promises";
import type { ProbotOctokit } from "probot";

/** What a write is to GitHub's limits: null for a read, which is not paced. */
export interface WriteKind {
  creates: boolean;
  priority: boolean;
}

/** A budget held a write back this long: the minute's or hour's content-creating writes so far. */
export interface LongWait {
  installationId: number;
  waitMs: number;
  /** When the write's slot (or its next try) comes. */
  until: number;
  minute: number;
  hour: number;
  limitedBy: "minute" | "hour";
}

/** The store's reservation of an installation's write slots (store/write-slots.ts), in plain values. */
export interface SlotReserver {
  reserve(request: WriteKind & { installationId: number; horizonMs: number }): Promise<
    ({ at: number } | { retryAt: number }) & {
      minute: number;
      hour: number;
      limitedBy?: "minute" | "hour";
    }
  >;
  /** The write of slot `at` goes out now (`sentAt`, its slot moved there), or must wait until `retryAt`. */
  send(request: { installationId: number; at: number; marginMs: number }): Promise<{ sentAt: number } | { retryAt: number }>;
}

/**
 * How long a write's send may trail the store's record of it (the transaction's return). Sends
 * are recorded this much more than 1 s apart, so the spacing holds at the socket too.
 */
export const SEND_MARGIN_MS = 25;
/** How many times a send is recorded again when the store answered later than the margin. */
const MAX_SLOW_SENDS = 3;

export interface WritePacerOptions {
  slots: SlotReserver;
  installationId: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** How far ahead an ordinary write may reserve: a write a reviewer waits for waits at most about this long behind them. */
  horizonMs?: number;
  /** A write held back longer than this by a content budget is reported through `onLongWait`, once. */
  longWaitMs?: number;
  onLongWait?: (wait: LongWait) => void;
}

export type WritePacer = (kind: WriteKind) => Promise<number>;

/**
 * Waits until the installation's next write slot in the store (store/write-slots.ts), shared by
 * every Lisa process: 1 s between writes, 80 content-creating writes a minute, 500 an hour. A write a
 * reviewer waits for (the pull request, the review request) takes the earliest slot however far
 * ahead; the others reserve only within `horizonMs` and otherwise ask again later, so they never
 * queue in front of it by more than that. Resolves with the slot's time.
 */
export function createWritePacer(options: WritePacerOptions): WritePacer {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => delay(ms));
  const horizonMs = options.horizonMs ?? 2_000;
  const longWaitMs = options.longWaitMs ?? 30_000;
  // This process's writes ask for their slots one after another, in the order they came: the store
  // answers each in its own time, and writes asked for together must not overtake one another.
  let asked: Promise<unknown> = Promise.resolve();
  const reserve = (kind: WriteKind) => {
    const answer = asked.then(() => options.slots.reserve({ installationId: options.installationId, horizonMs, ...kind }));
    asked = answer.catch(() => undefined);
    return answer;
  };
  return async (kind) => {
    const started = now();
    let told = false;
    for (;;) {
      const answer = await reserve(kind);
      const until = "at" in answer ? answer.at : answer.retryAt;
      if (!told && answer.limitedBy && until - started >= longWaitMs) {
        told = true;
        options.onLongWait?.({
          installationId: options.installationId,
          waitMs: until - started,
          until,
          minute: answer.minute,
          hour: answer.hour,
          limitedBy: answer.limitedBy,
        });
      }
      const wait = until - now();
      if (wait > 0) await sleep(wait);
      if ("at" in answer) return send(answer.at);
    }
  };

  // Spacing is measured from when each write goes out, not from its slot: a write woken late
  // must not bring the next one closer than the gap (the store holds the send times of all processes).
  async function send(slot: number): Promise<number> {
    let at = slot;
    for (let slow = 0; ; ) {
      const answer = await options.slots.send({ installationId: options.installationId, at, marginMs: SEND_MARGIN_MS });
      if ("retryAt" in answer) {
        const wait = answer.retryAt - now();
        if (wait > 0) await sleep(wait);
        continue;
      }
      // The store's answer took longer than the spacing's margin: recorded again, closer to the send;
      // a few times at most, or a store (or event loop) slower than the margin would hold it for good.
      if (now() - answer.sentAt <= SEND_MARGIN_MS || ++slow > MAX_SLOW_SENDS) return answer.sentAt;
      at = answer.sentAt;
    }
  }
}

const READS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);
/** Lisa's writes a reviewer waits for: opening the pull request and asking for review. */
const PRIORITY = [/^\/repos\/[^/]+\/[^/]+\/pulls$/, /^\/repos\/[^/]+\/[^/]+\/pulls\/[^/]+\/requested_reviewers$/];
/** Token requests are the App's, not the installation's writes. */
const AUTH = /^\/app\/installations\/[^/]+\/access_tokens$/;

/**
 * How a request counts against GitHub's limits. GitHub names no list of "content-creating" requests,
 * so every POST counts (each of Lisa's creates something people see: an issue comment, a pull
 * request, a review request or reply, a label, a reaction, a check run); PATCH, PUT and DELETE edit,
 * merge or remove and only keep the 1 s spacing. A GraphQL request is a write only as a mutation.
 */
export function classifyRequest(request: { method: string; url: string; query?: unknown }): WriteKind | null {
  const method = request.method.toUpperCase();
  if (READS.has(method)) return null;
  const path = new URL(request.url, "http://github.test").pathname.replace(/^\/api\/v3(?=\/)/, "");
  if (AUTH.test(path)) return null;
  if (path === "/graphql" || path.endsWith("/api/graphql")) {
    return /^\s*mutation\b/.test(String(request.query ?? "")) ? { creates: false, priority: false } : null;
  }
  return { creates: method === "POST", priority: method === "POST" && PRIORITY.some((route) => route.test(path)) };
}

type Hookable = { hook: InstanceType<typeof ProbotOctokit>["hook"] };

/** Makes every write of `octokit` wait for its slot before it is sent; reads go at once. */
export function paceWrites<T extends Hookable>(octokit: T, pace: WritePacer): T {
  octokit.hook.wrap("request", async (request, options) => {
    const kind = classifyRequest(options);
    if (kind) await pace(kind);
    return request(options);
  });
  return octokit;
}
